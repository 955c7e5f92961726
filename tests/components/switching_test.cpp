// PUPPET's switching formulas for a message alone on its path, with the
// values worked out by hand in the comments.
#include "poems/components/switching.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace poems::components {
namespace {

// l = 50 ns, G = 0.1 ns/B (10 GB/s) on every link.
constexpr Picoseconds kSwitchL = 50'000;
constexpr FemtosecondsPerByte kSwitchG = 100'000;

SwitchingModel model(Switching kind) {
  SwitchingModel m;
  m.kind = kind;
  m.header_bytes = 16;
  m.control_bytes = 8;
  m.flit_bytes = 8;
  return m;
}

std::string message_of(const auto& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(Switching, TorusFourByFourNodesZeroAndTenEachTechnique) {
  // Torus 4x4, nodes 0 (0,0) and 10 (2,2): 2 + 2 = 4 hops; s = 100 bytes.
  const PathCost path = uniform_path(4, kSwitchL, kSwitchG);
  EXPECT_EQ(path, (PathCost{4, 200'000, 50'000, 400'000, 100'000}));
  // Packet: 4·(50 ns + 100·0.1 ns) = 4·60 ns = 240 ns.
  EXPECT_EQ(model(Switching::Packet).time(path, 100), 240'000u);
  // Cut-through, h = 16: 4·(50 + 1.6) ns + 100·0.1 ns = 206.4 + 10 = 216.4 ns.
  EXPECT_EQ(model(Switching::VirtualCutThrough).time(path, 100), 216'400u);
  // Circuit, c = 8: 4·(50 + 0.8) ns + 10 ns = 213.2 ns.
  EXPECT_EQ(model(Switching::Circuit).time(path, 100), 213'200u);
  // Wormhole, f = 8: ceil(100/8) = 13 flits, (4 - 1 + 13)·(50 + 0.8) ns = 16·50.8 = 812.8 ns.
  EXPECT_EQ(model(Switching::Wormhole).time(path, 100), 812'800u);
}

TEST(Switching, ZeroHopsCostsNothing) {
  for (Switching kind : {Switching::Packet, Switching::VirtualCutThrough, Switching::Circuit, Switching::Wormhole})
    EXPECT_EQ(model(kind).time(PathCost{}, 1'000'000), 0u) << switching_name(kind);
}

TEST(Switching, CutThroughWithoutHeaderIsSumOfLatenciesPlusSizeOverBandwidth) {
  // SimGrid's lone flow: 3·50 ns + 1000 B / 10 GB/s = 150 + 100 = 250 ns.
  SwitchingModel m;  // cut-through, h = 0
  EXPECT_EQ(m.time(uniform_path(3, kSwitchL, kSwitchG), 1000), 250'000u);
}

TEST(Switching, WormholeEmptyMessageIsOneFlit) {
  // max(1, ceil(0/8)) = 1 flit: (2 - 1 + 1)·50.8 ns = 101.6 ns.
  EXPECT_EQ(model(Switching::Wormhole).time(uniform_path(2, kSwitchL, kSwitchG), 0), 101'600u);
  // 8 bytes, one flit exactly: same; 9 bytes: two flits, 3·50.8 = 152.4 ns.
  EXPECT_EQ(model(Switching::Wormhole).time(uniform_path(2, kSwitchL, kSwitchG), 8), 101'600u);
  EXPECT_EQ(model(Switching::Wormhole).time(uniform_path(2, kSwitchL, kSwitchG), 9), 152'400u);
}

TEST(Switching, LinksThatDifferUseSumsAndMaxima) {
  // Links (100 ns, 0.1 ns/B), (1 us, 1 ns/B), (100 ns, 0.1 ns/B); s = 1000.
  const PathCost path{3, 1'200'000, 1'000'000, 1'200'000, 1'000'000};
  SwitchingModel m;
  m.kind = Switching::Packet;  // 1200 ns + 1000·1.2 ns = 2400 ns
  EXPECT_EQ(m.time(path, 1000), 2'400'000u);
  m.kind = Switching::VirtualCutThrough;  // 1200 ns + 1000·1 ns (the slowest link) = 2200 ns
  EXPECT_EQ(m.time(path, 1000), 2'200'000u);
  m.kind = Switching::Circuit;  // c = 0: the same, 2200 ns
  EXPECT_EQ(m.time(path, 1000), 2'200'000u);
  m.kind = Switching::Wormhole;  // f = 8: (3 - 1 + 125)·(1000 + 8) ns = 127·1008 = 128016 ns (an upper bound)
  EXPECT_EQ(m.time(path, 1000), 128'016'000u);
}

TEST(Switching, PerByteTermsRoundHalfUpOncePerTerm) {
  // G = 1.5 ps/B on one link, l = 0.
  const PathCost path = uniform_path(1, 0, 1'500);
  SwitchingModel m;
  m.kind = Switching::Packet;
  EXPECT_EQ(m.time(path, 1), 2u);  // 1.5 ps -> 2
  EXPECT_EQ(m.time(path, 3), 5u);  // 4.5 ps -> 5
  m.kind = Switching::VirtualCutThrough;
  m.header_bytes = 1;
  EXPECT_EQ(m.time(path, 1), 4u);  // header 1.5 -> 2, body 1.5 -> 2: 4, not round(3.0) = 3
}

TEST(Switching, OverflowAndBadFlitAreErrors) {
  SwitchingModel m;
  m.kind = Switching::Packet;
  EXPECT_EQ(m.time(PathCost{1, kMaxSwitchingTime, kMaxSwitchingTime, 0, 0}, 0), kMaxSwitchingTime);
  EXPECT_EQ(message_of([&] {
              m.time(PathCost{1, kMaxSwitchingTime + 1, kMaxSwitchingTime + 1, 0, 0}, 0);
            }),
            "packet switching time of 0 bytes over 1 hops exceeds 2^62 ps");
  m.kind = Switching::Wormhole;
  EXPECT_THROW(m.time(uniform_path(4, kSwitchL, kSwitchG), ~std::uint64_t{0}), std::overflow_error);
  m.flit_bytes = 0;
  EXPECT_THROW(m.time(uniform_path(1, kSwitchL, kSwitchG), 10), std::invalid_argument);
  EXPECT_EQ(message_of([&] { m.time(uniform_path(1, kSwitchL, kSwitchG), 10); }),
            "wormhole switching needs a flit size of 1 byte or more, got 0");
}

TEST(Switching, Names) {
  for (Switching kind : {Switching::Packet, Switching::VirtualCutThrough, Switching::Circuit, Switching::Wormhole})
    EXPECT_EQ(parse_switching(switching_name(kind)), kind);
  EXPECT_STREQ(switching_name(Switching::VirtualCutThrough), "cut-through");
  EXPECT_EQ(parse_switching("store-and-forward"), Switching::Packet);
  EXPECT_EQ(parse_switching("virtual-cut-through"), Switching::VirtualCutThrough);
  EXPECT_EQ(parse_switching("Wormhole"), std::nullopt);
}

}  // namespace
}  // namespace poems::components
