// Max-min contention in the simulator (docs/network.md, "Contention"): each
// answer written out by hand from the rules. L 5 us, o 1 us, g 0, G 1 ns/B:
// a message's flow starts o + L after its send (plus its route's latency on
// a topology), moves s - 1 bytes at its max-min fair share of the NICs and
// links it crosses, and is received o later.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "poems/components/network.h"
#include "sim_test_util.h"

namespace poems::sim {
namespace {

using namespace testing;
using components::Contention;
using components::MappingKind;
using components::Network;
using components::NetworkSpec;
using components::TopologyKind;

LogGOPS contended_machine() { return params(5000, 1000, 0, ns_per_byte(1), 0); }

SimulationResult run_shared(const std::string& text, const NetworkSpec& spec,
                            Semantics semantics = Semantics::Matched) {
  auto s = goal(text);
  SimulationOptions o;
  o.params = contended_machine();
  o.semantics = semantics;
  o.network = std::make_shared<const Network>(spec);
  return s ? simulate(*s, o) : SimulationResult{};
}

// Each (from, to, bytes, delay): rank `from` computes `delay` ns, then sends
// to `to`, which receives.
struct Message {
  std::uint32_t from, to;
  std::uint64_t bytes, delay_ns = 0;
};
std::string messages(std::uint32_t ranks, const std::vector<Message>& list) {
  std::string text = "num_ranks " + std::to_string(ranks) + "\n";
  for (std::uint32_t r = 0; r < ranks; ++r) {
    text += "rank " + std::to_string(r) + " {\n";
    int label = 0;
    for (const Message& m : list) {
      if (m.from == r) {
        if (m.delay_ns) {
          text += "c" + std::to_string(label) + ": calc " + std::to_string(m.delay_ns) + "\n";
          text +=
              "s" + std::to_string(label) + ": send " + std::to_string(m.bytes) + "b to " + std::to_string(m.to) + "\n";
          text += "s" + std::to_string(label) + " requires c" + std::to_string(label) + "\n";
        } else {
          text +=
              "s" + std::to_string(label) + ": send " + std::to_string(m.bytes) + "b to " + std::to_string(m.to) + "\n";
        }
      }
      if (m.to == r)
        text += "r" + std::to_string(label) + ": recv " + std::to_string(m.bytes) + "b from " + std::to_string(m.from) +
                "\n";
      ++label;
    }
    text += "}\n";
  }
  return text;
}

NetworkSpec max_min(std::uint32_t ranks_per_node = 1) {
  NetworkSpec spec;
  spec.contention = Contention::MaxMin;
  spec.mapping.ranks_per_node = ranks_per_node;
  return spec;
}

TEST(ContentionSim, AMessageAloneCostsWhatLogGopsCharges) {
  // o + L + (s-1)G + o = 1,000 + 5,000 + 9,999 + 1,000.
  SimulationResult r = run_shared(messages(2, {{0, 1, 10000}}), max_min());
  EXPECT_EQ(r.per_rank[1].finish, ns(16999));
  ASSERT_TRUE(r.network.has_value());
  EXPECT_TRUE(r.network->contention);
  EXPECT_EQ(r.network->flows, 1u);
  NetworkSpec none;
  none.mapping.ranks_per_node = 1;
  none.cores_per_node = 1;  // not flat: the network path without contention
  EXPECT_EQ(run_shared(messages(2, {{0, 1, 10000}}), none).per_rank[1].finish, ns(16999));
}

// Two ranks of node 0 send 10,000 B each to their partners on node 1 at
// once: both flows cross node 0's NIC and node 1's, each at half the rate:
// o + L + 2(s-1)G + o = 26,998 ns for both.
TEST(ContentionSim, TwoFlowsThroughOneNicEachGetHalfItsBandwidth) {
  SimulationResult r = run_shared(messages(4, {{0, 2, 10000}, {1, 3, 10000}}), max_min(2));
  EXPECT_EQ(r.per_rank[2].finish, ns(26998));
  EXPECT_EQ(r.per_rank[3].finish, ns(26998));
  EXPECT_EQ(r.network->peak_flows, 2u);
}

// wire_overhead_bytes (SMPI's 16 bytes a message on the wire): alone a
// message costs what it did (the bytes come out of its latency); two flows
// through one NIC each carry s - 1 + 16 bytes at half the rate, so they are
// received 16 ns later: o + (L - 16G) + 2(s - 1 + 16)G + o = 27,014 ns.
TEST(ContentionSim, WireOverheadBytesShareTheLinksButNotALoneMessage) {
  NetworkSpec alone = max_min();
  alone.wire_overhead_bytes = 16;
  EXPECT_EQ(run_shared(messages(2, {{0, 1, 10000}}), alone).per_rank[1].finish, ns(16999));
  NetworkSpec two = max_min(2);
  two.wire_overhead_bytes = 16;
  SimulationResult r = run_shared(messages(4, {{0, 2, 10000}, {1, 3, 10000}}), two);
  EXPECT_EQ(r.per_rank[2].finish, ns(27014));
  EXPECT_EQ(r.per_rank[3].finish, ns(27014));
  NetworkSpec without = NetworkSpec{};
  without.wire_overhead_bytes = 16;
  try {
    Network n(without);
    FAIL() << "wire_overhead_bytes without contention was accepted";
  } catch (const components::NetworkError& e) {
    EXPECT_STREQ(e.what(),
                 "wire_overhead_bytes needs contention = \"max-min\": without contention a message's latency already "
                 "holds them");
  }
}

// A third sender computes 5 us first: its flow starts at 11 us, when the
// first two have 7,499 B left each; three at a third of the NIC, the first
// two end 3 x 7,499 ns later (33,497), the third, 2,500 B left, alone
// 2,500 ns after them.
TEST(ContentionSim, AThirdFlowJoiningLateSlowsTheFirstTwoFromThatMoment) {
  SimulationResult r = run_shared(messages(6, {{0, 3, 10000}, {1, 4, 10000}, {2, 5, 10000, 5000}}), max_min(3));
  EXPECT_EQ(r.per_rank[3].finish, ns(34497));
  EXPECT_EQ(r.per_rank[4].finish, ns(34497));
  EXPECT_EQ(r.per_rank[5].finish, ns(36997));
}

TEST(ContentionSim, FlowsOnDisjointNicsDoNotInteract) {
  SimulationResult r = run_shared(messages(4, {{0, 1, 10000}, {2, 3, 10000}}), max_min());
  EXPECT_EQ(r.per_rank[1].finish, ns(16999));
  EXPECT_EQ(r.per_rank[3].finish, ns(16999));
}

// 16 ranks of node 0 send 1,000 B each to ranks on 16 other nodes: the
// node's NIC carries 16 flows at a sixteenth each, so every message is
// received at o + L + 16(s-1)G + o = 22,984 ns. Without contention the NIC
// sends them one after the other: the first is received at 7,999 ns, the
// last at the same 22,984.
TEST(ContentionSim, SixteenRanksOfANodeShareItsInjection) {
  NetworkSpec spec = max_min();
  spec.mapping.kind = MappingKind::Wrap;
  for (std::uint32_t r = 0; r < 16; ++r) spec.mapping.wrap.push_back(0);
  for (std::uint32_t n = 1; n <= 16; ++n) spec.mapping.wrap.push_back(n);
  std::vector<Message> burst;
  for (std::uint32_t r = 0; r < 16; ++r) burst.push_back({r, 16 + r, 1000});
  SimulationResult r = run_shared(messages(32, burst), spec);
  for (std::uint32_t k = 16; k < 32; ++k) EXPECT_EQ(r.per_rank[k].finish, ns(22984)) << k;
  spec.contention = Contention::None;
  r = run_shared(messages(32, burst), spec);
  EXPECT_EQ(r.per_rank[16].finish, ns(7999));
  EXPECT_EQ(r.per_rank[31].finish, ns(22984));
}

// A ring of 4 nodes (hops 100 ns, links 1 ns/B, cut-through, NICs without
// a limit): 0 -> 2 and 1 -> 3 both cross link 1-2 the positive way, half
// each; 0 -> 2 and 2 -> 0 cross links 0-1 and 1-2 in opposite directions
// (2 -> 0 is a tie that goes the negative way, as SimGrid's torus routes),
// so they do not interact. The flow starts o + L + 2·100 + G (the route's
// latency) after the send.
TEST(ContentionSim, ALinkIsSharedPerDirection) {
  NetworkSpec spec = max_min();
  spec.topology.kind = TopologyKind::Ring;
  spec.topology.dims = {4};
  spec.topology.hop_latency = 100'000;
  spec.topology.link_per_byte = 1'000'000;
  spec.nic_per_byte = 0;
  SimulationResult shared = run_shared(messages(4, {{0, 2, 10000}, {1, 3, 10000}}), spec);
  EXPECT_EQ(shared.per_rank[2].finish, ns(6201 + 2 * 9999 + 1000));
  EXPECT_EQ(shared.per_rank[3].finish, ns(6201 + 2 * 9999 + 1000));
  SimulationResult opposite = run_shared(messages(4, {{0, 2, 10000}, {2, 0, 10000}}), spec);
  EXPECT_EQ(opposite.per_rank[0].finish, ns(6201 + 9999 + 1000));
  EXPECT_EQ(opposite.per_rank[2].finish, ns(6201 + 9999 + 1000));
}

// rtt_bytes, SimGrid's unequal sharing: on a ring of 8 (no hop latency,
// links 1 ns/B, NICs without a limit) 0 -> 3 (3 links) and 2 -> 4 (2 links)
// meet on link 2-3. Their penalties are 1,000 B x 3 ns/B and x 2 ns/B, so
// they take 2/5 and 3/5 of it from 6,001 ns (o + L + G): 2 -> 4's 9,999 B
// end 16,665 ns later, 0 -> 3 has 3,333 B left and takes the whole link.
// Equal shares end both at 6,001 + 2 x 9,999 ns.
TEST(ContentionSim, RttBytesShareALinkInInverseProportionToTheRoutes) {
  NetworkSpec spec = max_min();
  spec.topology.kind = TopologyKind::Ring;
  spec.topology.dims = {8};
  spec.topology.link_per_byte = 1'000'000;
  spec.nic_per_byte = 0;
  const std::string text = messages(8, {{0, 3, 10000}, {2, 4, 10000}});
  SimulationResult equal = run_shared(text, spec);
  EXPECT_EQ(equal.per_rank[3].finish, ns(6001 + 2 * 9999 + 1000));
  EXPECT_EQ(equal.per_rank[4].finish, ns(6001 + 2 * 9999 + 1000));
  spec.rtt_bytes = 1000;
  SimulationResult unequal = run_shared(text, spec);
  EXPECT_EQ(unequal.per_rank[4].finish, ns(6001 + 16665 + 1000));
  EXPECT_EQ(unequal.per_rank[3].finish, ns(6001 + 16665 + 3333 + 1000));
}

TEST(ContentionSim, RttBytesNeedMaxMinContention) {
  NetworkSpec spec;
  spec.rtt_bytes = 8775;
  try {
    Network n(spec);
    FAIL() << "rtt_bytes without contention was accepted";
  } catch (const components::NetworkError& e) {
    EXPECT_STREQ(e.what(), "rtt_bytes needs contention = \"max-min\": without contention no flows share a link");
  }
}

// A backbone twice a NIC's bandwidth, crossed by four flows from four nodes
// to four others: each gets half a NIC: o + L + 2(s-1)G + o.
TEST(ContentionSim, ABackboneIsSharedByEveryMessageBetweenNodes) {
  NetworkSpec spec = max_min();
  spec.backbone_per_byte = 500'000;
  SimulationResult r = run_shared(messages(8, {{0, 4, 10000}, {1, 5, 10000}, {2, 6, 10000}, {3, 7, 10000}}), spec);
  for (std::uint32_t k = 4; k < 8; ++k) EXPECT_EQ(r.per_rank[k].finish, ns(26998)) << k;
}

// A message that arrives before its receive is posted has its bytes in:
// the receive pays o alone (LogGOPS without contention charges o + (s-1)G then).
TEST(ContentionSim, AnUnexpectedMessagesBytesAreInWhenItsReceiveIsPosted) {
  const std::string text =
      "num_ranks 2\nrank 0 {\nl1: send 10000b to 1\n}\nrank 1 {\nc: calc 50000\nr: recv 10000b from 0\n"
      "r requires c\n}\n";
  EXPECT_EQ(run_shared(text, max_min()).per_rank[1].finish, ns(51000));
  NetworkSpec none;
  none.cores_per_node = 1;
  EXPECT_EQ(run_shared(text, none).per_rank[1].finish, ns(60999));
}

TEST(ContentionSim, TheLoggopsimSemanticsRefusesContention) {
  EXPECT_THROW(run_shared(messages(2, {{0, 1, 100}}), max_min(), Semantics::Loggopsim), SimulationLimitError);
}

}  // namespace
}  // namespace poems::sim
