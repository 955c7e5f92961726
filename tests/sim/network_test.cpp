// The simulator on machines of nodes and topologies (docs/network.md): each
// answer written out by hand from the rules, and the network path checked
// against the flat fast path where the two describe the same machine.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "poems/components/network.h"
#include "poems/taskgraph/collectives.h"
#include "sim_test_util.h"

namespace poems::sim {
namespace {

using namespace testing;
using components::MappingKind;
using components::Network;
using components::NetworkSpec;
using components::Switching;
using components::TopologyKind;

// L 5 us, o 1 us, g 2 us, G 1 ns/B, O 0, S 65535 B.
LogGOPS machine() { return params(5000, 1000, 2000, ns_per_byte(1), 0); }

SimulationResult run(const std::string& text, const NetworkSpec& spec, const LogGOPS& p = machine(),
                     Semantics semantics = Semantics::Matched) {
  auto s = goal(text);
  SimulationOptions o;
  o.params = p;
  o.semantics = semantics;
  o.network = std::make_shared<const Network>(spec);
  return s ? simulate(*s, o) : SimulationResult{};
}

// Rank 0 sends `bytes` to rank `to`, which receives them.
std::string send(std::uint32_t ranks, std::uint32_t to, std::uint64_t bytes) {
  std::string text = "num_ranks " + std::to_string(ranks) + "\n";
  for (std::uint32_t r = 0; r < ranks; ++r) {
    text += "rank " + std::to_string(r) + " {\n";
    if (r == 0) text += "l1: send " + std::to_string(bytes) + "b to " + std::to_string(to) + "\n";
    if (r == to) text += "l1: recv " + std::to_string(bytes) + "b from 0\n";
    text += "}\n";
  }
  return text;
}

NetworkSpec ranks_per_node(std::uint32_t n) {
  NetworkSpec spec;
  spec.mapping.ranks_per_node = n;
  return spec;
}

TEST(NetworkSim, TwoRanksOfOneNodePayTheSharedMemoryParameters) {
  NetworkSpec spec = ranks_per_node(2);
  spec.intra = params(300, 100, 50, 100'000, 0);  // G 0.1 ns/B
  // Arrival o + L = 400 ns; the receive o + (s-1)G = 100 + 99.9 ns.
  SimulationResult r = run(send(2, 1, 1000), spec);
  EXPECT_EQ(r.per_rank[1].finish, 599'900u);
  EXPECT_EQ(r.per_rank[0].finish, ns(100));
  // Ranks on two nodes: the network's o + L + o + (s-1)G = 7,999 ns.
  spec.mapping.ranks_per_node = 1;
  r = run(send(2, 1, 1000), spec);
  EXPECT_EQ(r.per_rank[1].finish, ns(7999));
}

TEST(NetworkSim, WithoutSharedMemoryParametersRanksOfOneNodeUseTheNetworks) {
  SimulationResult r = run(send(2, 1, 1000), ranks_per_node(2));
  EXPECT_EQ(r.per_rank[1].finish, ns(7999));
}

// 16 ranks of node 0 each send 1,000 B to their partner on node 1 at once:
// one NIC a node, so the sends leave g + (s-1)G = 2,999 ns apart, and the
// k-th served arrives at k*2999 + o + L and is received by o + (s-1)G later
// (node 1's NIC is free again exactly when the next arrives).
TEST(NetworkSim, SixteenRanksOfANodeShareItsNicAsASerializedBurst) {
  std::string text = "num_ranks 32\n";
  for (std::uint32_t r = 0; r < 32; ++r) {
    text += "rank " + std::to_string(r) + " {\n";
    if (r < 16)
      text += "l1: send 1000b to " + std::to_string(r + 16) + "\n";
    else
      text += "l1: recv 1000b from " + std::to_string(r - 16) + "\n";
    text += "}\n";
  }
  SimulationResult r = run(text, ranks_per_node(16));
  EXPECT_EQ(r.max_finish, ns(15 * 2999 + 7999));
  Picoseconds sum = 0;
  for (std::uint32_t k = 16; k < 32; ++k) sum += r.per_rank[k].finish;
  EXPECT_EQ(sum, ns(16 * 7999 + 2999 * (15 * 16 / 2)));
  // One rank a node: every message on its own NIC.
  r = run(text, ranks_per_node(1));
  EXPECT_EQ(r.max_finish, ns(7999));
}

TEST(NetworkSim, TwoRanksOnOneCoreDoubleAComputeBoundStep) {
  const std::string text = "num_ranks 2\nrank 0 {\nl1: calc 1000000\n}\nrank 1 {\nl1: calc 1000000\n}\n";
  NetworkSpec spec = ranks_per_node(2);
  spec.cores_per_node = 1;
  EXPECT_EQ(run(text, spec).max_finish, ns(2'000'000));
  spec.cores_per_node = 2;
  EXPECT_EQ(run(text, spec).max_finish, ns(1'000'000));
}

// Torus 4x4: node 10 is (2, 2), 4 hops from node 0. Links of 100 ns and
// the network's G (1 ns/B). A message alone arrives the switching time on
// its path after o + L, less the (s-1)G its receive charges: its receive
// completes at o + L + T(d, s) + o.
NetworkSpec torus(Switching kind) {
  NetworkSpec spec;
  spec.topology.kind = TopologyKind::Torus;
  spec.topology.dims = {4, 4};
  spec.topology.hop_latency = ns(100);
  spec.topology.link_per_byte = ns_per_byte(1);
  spec.switching.kind = kind;
  return spec;
}

TEST(NetworkSim, EachSwitchingTechniqueOnATorusTakesPuppetsFormula) {
  const std::string text = send(16, 10, 1000);
  // Cut-through, h = 0: 4*100 + 1000*1 = 1,400 ns.
  EXPECT_EQ(run(text, torus(Switching::VirtualCutThrough)).per_rank[10].finish, ns(1000 + 5000 + 1400 + 1000));
  // Packet: 4*(100 + 1000) = 4,400 ns.
  EXPECT_EQ(run(text, torus(Switching::Packet)).per_rank[10].finish, ns(1000 + 5000 + 4400 + 1000));
  // Circuit, c = 16: 4*(100 + 16) + 1000 = 1,464 ns; cut-through with h = 16 the same.
  NetworkSpec circuit = torus(Switching::Circuit);
  circuit.switching.control_bytes = 16;
  EXPECT_EQ(run(text, circuit).per_rank[10].finish, ns(1000 + 5000 + 1464 + 1000));
  NetworkSpec header = torus(Switching::VirtualCutThrough);
  header.switching.header_bytes = 16;
  EXPECT_EQ(run(text, header).per_rank[10].finish, ns(1000 + 5000 + 1464 + 1000));
  // Wormhole, f = 8: (4 - 1 + 125) * (100 + 8) = 13,824 ns.
  EXPECT_EQ(run(text, torus(Switching::Wormhole)).per_rank[10].finish, ns(1000 + 5000 + 13824 + 1000));
  // Node 1 is one hop away: cut-through 100 + 1000.
  EXPECT_EQ(run(send(16, 1, 1000), torus(Switching::VirtualCutThrough)).per_rank[1].finish,
            ns(1000 + 5000 + 1100 + 1000));
}

TEST(NetworkSim, TheResultCountsHopsAndBytesPerLinkClass) {
  SimulationResult r = run(send(16, 10, 1000), torus(Switching::VirtualCutThrough));
  ASSERT_TRUE(r.network.has_value());
  EXPECT_EQ(r.network->inter_node_messages, 1u);
  EXPECT_EQ(r.network->inter_node_bytes, 1000u);
  EXPECT_EQ(r.network->hops, 4u);  // (0,0) to (2,2): two links in x, then two in y
  using Classes = std::vector<std::pair<std::string, std::uint64_t>>;
  EXPECT_EQ(r.network->bytes_by_link_class, (Classes{{"x", 2000}, {"y", 2000}}));
  NetworkSpec node = ranks_per_node(2);
  r = run(send(2, 1, 1000), node);
  ASSERT_TRUE(r.network.has_value());
  EXPECT_EQ(r.network->intra_node_messages, 1u);
  EXPECT_EQ(r.network->inter_node_messages, 0u);
  // A flat machine reports none.
  EXPECT_FALSE(run_goal(send(2, 1, 1000), machine()).network.has_value());
}

// A rendezvous message (S = 512 B) waits for its request to cross the path:
// sync = L + T(d, 0) = 5,000 + 400; the payload then arrives sync + o + L + 401.
TEST(NetworkSim, ARendezvousRequestCrossesThePathToo) {
  LogGOPS p = machine();
  p.S = 512;
  SimulationResult r = run(send(16, 10, 1000), torus(Switching::VirtualCutThrough), p);
  EXPECT_EQ(r.per_rank[10].finish, ns(5400 + 1000 + 5000 + 401 + 1999));
  EXPECT_EQ(r.per_rank[0].finish, ns(5400 + 1000 + 5000 + 401));  // done when matched
}

TEST(NetworkSim, RoundRobinPlacesNeighbouringRanksOnDifferentNodes) {
  NetworkSpec spec = ranks_per_node(2);
  spec.mapping.kind = MappingKind::RoundRobin;
  spec.intra = params(300, 100, 50, 100'000, 0);
  // 4 ranks on 2 nodes: 0 and 2 share node 0, 1 and 3 node 1.
  EXPECT_EQ(run(send(4, 2, 1000), spec).per_rank[2].finish, 599'900u);
  EXPECT_EQ(run(send(4, 1, 1000), spec).per_rank[1].finish, ns(7999));
  spec.mapping.kind = MappingKind::Block;
  EXPECT_EQ(run(send(4, 1, 1000), spec).per_rank[1].finish, 599'900u);
}

// One rank a node on the complete network, taken through the network's
// path (a core count given makes the machine not flat): the same result
// as the flat fast path, rank by rank, on collectives of every kind.
TEST(NetworkSim, TheNetworkPathEqualsTheFlatPathOnTheSameMachine) {
  NetworkSpec same;
  same.cores_per_node = 1;
  for (auto op : {taskgraph::CollectiveOp::Allreduce, taskgraph::CollectiveOp::Bcast, taskgraph::CollectiveOp::Alltoall,
                  taskgraph::CollectiveOp::Barrier}) {
    for (std::uint64_t bytes : {8ull, 100000ull}) {
      taskgraph::CollectiveCall call;
      call.op = op;
      call.procs = 13;
      call.bytes = bytes;
      call.algorithm = taskgraph::algorithms_for(op).front();
      for (bool queuing : {true, false}) {  // the simulation, and the critical path
        SimulationOptions flat;
        flat.params = machine();
        flat.params.S = 4096;
        flat.resource_queuing = queuing;
        SimulationOptions net = flat;
        net.network = std::make_shared<const Network>(same);
        taskgraph::CollectiveSchedule a(call), b(call);
        const SimulationResult x = simulate(a, flat), y = simulate(b, net);
        ASSERT_EQ(x.per_rank.size(), y.per_rank.size());
        for (std::size_t r = 0; r < x.per_rank.size(); ++r) {
          EXPECT_EQ(x.per_rank[r].finish, y.per_rank[r].finish)
              << taskgraph::collective_op_name(op) << " rank " << r << " queuing " << queuing;
          EXPECT_EQ(x.per_rank[r].overhead, y.per_rank[r].overhead);
        }
        EXPECT_EQ(x.events, y.events);
      }
    }
  }
}

// Message-size regimes (docs/network.md): from 4,096 B between nodes L 100,
// o 200, g 300 ns, G 0.1 ns/B. 1,000 B: the machine's o + L + o + (s-1)G =
// 7,999 ns; 8,000 B: 200 + 100 + 200 + 799.9 = 1,299.9 ns, in the simulation
// and in the critical path.
TEST(NetworkSim, MessageSizeRegimesPriceEachMessageByItsSize) {
  NetworkSpec spec;
  spec.regimes = {{4096, params(100, 200, 300, 100'000, 0)}};
  for (bool queuing : {true, false}) {
    auto once = [&](std::uint64_t bytes) {
      auto s = goal(send(2, 1, bytes));
      SimulationOptions o;
      o.params = machine();
      o.resource_queuing = queuing;
      o.network = std::make_shared<const Network>(spec);
      return simulate(*s, o).per_rank[1].finish;
    };
    EXPECT_EQ(once(1000), ns(7999)) << queuing;
    EXPECT_EQ(once(4095), ns(1000 + 5000 + 1000 + 4094)) << queuing;
    EXPECT_EQ(once(8000), 1'299'900u) << queuing;
  }
  // Between ranks of one node the shared memory's own regimes: from 2,000 B
  // L 1,000, o 150 ns, G 0.05 ns/B; 4,000 B: 150 + 1,000 + 150 + 199.95.
  NetworkSpec node = ranks_per_node(2);
  node.intra = params(300, 100, 50, 100'000, 0);
  node.intra_regimes = {{2000, params(1000, 150, 50, 50'000, 0)}};
  EXPECT_EQ(run(send(2, 1, 1000), node).per_rank[1].finish, 599'900u);
  EXPECT_EQ(run(send(2, 1, 4000), node).per_rank[1].finish, 1'499'950u);
  // A rendezvous (S = 512 B kept from the node's set) waits for the regime's
  // L: sync 1,000, o 150, L 1,000, then o + 999 x 0.05; the sender is done
  // at the match, when the payload arrives.
  node.intra->S = 512;
  node.intra_regimes = {{1000, params(1000, 150, 50, 50'000, 0)}};
  const SimulationResult r = run(send(2, 1, 1000), node);
  EXPECT_EQ(r.per_rank[1].finish, 2'349'950u);
  EXPECT_EQ(r.per_rank[0].finish, ns(2150));
  // Without shared-memory parameters a node's ranks follow the network's regimes.
  NetworkSpec plain = ranks_per_node(2);
  plain.regimes = spec.regimes;
  EXPECT_EQ(run(send(2, 1, 8000), plain).per_rank[1].finish, 1'299'900u);
}

TEST(NetworkSim, MessageSizeRegimesAreCheckedAndKeptInTheRunKey) {
  NetworkSpec spec;
  spec.regimes = {{4096, params(100, 200, 300, 100'000, 0)}, {65536, params(50, 200, 300, 50'000, 0)}};
  const NetworkSpec back = components::network_spec_from_json(components::network_key_json(spec));
  ASSERT_EQ(back.regimes.size(), 2u);
  EXPECT_EQ(back.regimes[1].from_bytes, 65536u);
  EXPECT_EQ(back.regimes[1].params.G, 50'000u);
  EXPECT_FALSE(spec.flat());
  EXPECT_NE(components::network_key_json(spec), components::network_key_json(NetworkSpec{}));
  spec.regimes[1].from_bytes = 4096;
  try {
    Network n(spec);
    ADD_FAILURE() << "sizes that do not increase were taken";
  } catch (const components::NetworkError& e) {
    EXPECT_NE(std::string(e.what()).find("from_2 = 4096B is out of range; the regimes' sizes must be at least 1 byte "
                                         "and increase (from_2 > from_1)"),
              std::string::npos)
        << e.what();
  }
}

TEST(NetworkSim, TheLoggopsimSemanticsRefusesAMachineOfNodes) {
  auto s = goal(send(2, 1, 8));
  SimulationOptions o;
  o.params = machine();
  o.semantics = Semantics::Loggopsim;
  o.network = std::make_shared<const Network>(ranks_per_node(2));
  try {
    simulate(*s, o);
    FAIL() << "no error";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("runs under the matched semantics"), std::string::npos) << e.what();
  }
}

TEST(NetworkSim, MoreRanksThanTheNodesHoldIsAnError) {
  NetworkSpec spec = torus(Switching::VirtualCutThrough);
  spec.mapping.ranks_per_node = 1;
  auto s = goal(send(17, 1, 8));
  SimulationOptions o;
  o.params = machine();
  o.network = std::make_shared<const Network>(spec);
  EXPECT_THROW(simulate(*s, o), SimulationError);
}

}  // namespace
}  // namespace poems::sim
