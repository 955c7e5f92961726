// The PSL compiler stage: associative matching on the Sweep3D example (which
// component each request binds to, per study paradigm and compute setting),
// the TEDs of its evaluation plan and library coercions. Composition errors
// are files in tests/psl/errors/compose_*.psl (the error corpus test).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "poems/core/evaluation_plan.h"
#include "poems/psl/compiler.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/taskgraph/stg.h"

namespace fs = std::filesystem;
using namespace poems;

namespace {

const std::string kSweep3D = std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl";

psl::Value ref(const std::string& s) { return psl::Value::of_string(s, psl::Value::Kind::Ref); }

struct Composed {
  std::unique_ptr<psl::Frontend> fe = std::make_unique<psl::Frontend>();
  std::optional<psl::SystemModel> system;
  std::string errors;
};

Composed compose(const std::string& path, const psl::CompileRequest& request) {
  Composed c;
  EXPECT_TRUE(c.fe->load_files({path})) << path;
  const std::size_t before = c.fe->diagnostics().all().size();
  c.system = psl::compile_system(c.fe->program(), request, c.fe->mutable_diagnostics());
  for (std::size_t i = before; i < c.fe->diagnostics().all().size(); ++i)
    c.errors += c.fe->diagnostics().render(c.fe->diagnostics().all()[i]);
  return c;
}

psl::CompileRequest sweep3d_request(const std::string& paradigm, const std::string& compute) {
  psl::CompileRequest r;
  r.model = "Sweep3D";
  r.chosen = {"Odin"};
  r.study["paradigm"] = ref(paradigm);
  r.study["compute"] = ref(compute);
  return r;
}

std::string bound_to(const psl::SystemModel& s, const std::string& from, const std::string& request) {
  const psl::InterfaceBinding* b = s.request_of(s.find(from), request);
  return b ? s.instances[b->to].name + "." + s.instances[b->to].accepts[b->accepts].label : "(none)";
}

}  // namespace

TEST(Compiler, Sweep3DBindsByParadigmAndComputeSetting) {
  for (const auto& [paradigm, mpi] :
       {std::pair{"analytic[LogGP]", "MPI_analytic"}, std::pair{"simulation[MPI-Sim]", "MPI_simulated"}})
    for (const auto& [compute, cpu] :
         {std::pair{"processor[wg]", "Opteron"}, std::pair{"processor[measured]", "Opteron_measured"}}) {
      Composed c = compose(kSweep3D, sweep3d_request(paradigm, compute));
      ASSERT_TRUE(c.system) << c.errors;
      const psl::SystemModel& s = *c.system;
      EXPECT_EQ(bound_to(s, "KBlock", "cpu"), std::string(cpu) + ".accepts");
      EXPECT_EQ(bound_to(s, "SweepSend", "mpi"), std::string(mpi) + ".accepts");
      // The receive request conforms only to the accepts interface named recv.
      EXPECT_EQ(bound_to(s, "SweepRecv", "mpi"), std::string(mpi) + ".recv");
      EXPECT_EQ(bound_to(s, "SweepAllreduce", "mpi"), std::string(mpi) + ".collective");
      EXPECT_EQ(bound_to(s, mpi, "wire"), "Odin.accepts");
      // BigRed and the unused MPI model are never instantiated.
      EXPECT_EQ(s.find("BigRed"), psl::kNoInstance);
      EXPECT_EQ(s.instances.size(), 7u);
    }
}

TEST(Compiler, Sweep3DCoercionAndTaskNodes) {
  Composed c = compose(kSweep3D, sweep3d_request("analytic[LogGP]", "processor[wg]"));
  ASSERT_TRUE(c.system) << c.errors;
  const psl::InterfaceBinding* cpu = c.system->request_of(c.system->find("KBlock"), "cpu");
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(cpu->arguments.size(), 1u);
  EXPECT_EQ(cpu->arguments[0].parameter, "work");
  EXPECT_EQ(cpu->arguments[0].expression, "cells * angles");
  EXPECT_EQ(cpu->arguments[0].source, psl::ArgumentBinding::Source::Coerced);
  // The coercion evaluated for a task's arguments: 150^3 on 2x3, mk=10 -> 75*50*10 cells, 3 angles.
  auto args = psl::bind_arguments(*c.system, *cpu,
                                  {{"cells", psl::Value::of_number(37500)}, {"angles", psl::Value::of_number(3)}});
  EXPECT_EQ(args.at("work").number, 112500.0);
  // recv, recv, task, send, send, allreduce; each linked to its component.
  std::vector<std::string> kinds, components;
  for (const psl::TaskNodeLink& n : c.system->task_nodes) {
    kinds.push_back(n.kind);
    components.push_back(c.system->instances.at(n.component).name);
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"recv", "recv", "task", "send", "send", "allreduce"}));
  EXPECT_EQ(components,
            (std::vector<std::string>{"SweepRecv", "SweepRecv", "KBlock", "SweepSend", "SweepSend", "SweepAllreduce"}));
}

TEST(Compiler, Sweep3DPlanHasOneTedPerStaticNode) {
  Composed c = compose(kSweep3D, sweep3d_request("simulation[MPI-Sim]", "processor[wg]"));
  ASSERT_TRUE(c.system) << c.errors;
  auto graph = psl::lower_model(c.fe->program(), c.fe->sources(), "Sweep3D");
  core::EvaluationPlan plan = core::plan_evaluation(*c.system, graph);
  ASSERT_EQ(plan.teds.size(), graph.nodes.size() - 1);
  EXPECT_EQ(plan.communication, "simulation[MPI-Sim]");
  ASSERT_TRUE(plan.network);
  EXPECT_EQ(plan.network_component, "Odin");
  // Odin: L = 5.3us, o = 2.3us, g = 2us, G = 2.5ns/B, O = 1ns/B; the MPI eager limit 32768 B.
  EXPECT_EQ(plan.network->L, 5'300'000u);
  EXPECT_EQ(plan.network->o, 2'300'000u);
  EXPECT_EQ(plan.network->g, 2'000'000u);
  EXPECT_EQ(plan.network->G, 2'500'000u);
  EXPECT_EQ(plan.network->O, 1'000'000u);
  EXPECT_EQ(plan.network->S, 32768u);
  EXPECT_FALSE(plan.rendezvous_handshake);
  int compute = 0;
  for (const core::Ted& t : plan.teds) {
    EXPECT_FALSE(t.implicit) << t.node_text;
    if (t.kind == "compute") {
      ++compute;
      EXPECT_EQ(t.evaluator, "processor[wg]");
      EXPECT_EQ(t.chain, (std::vector<std::string>{"KBlock", "Opteron"}));
      EXPECT_EQ(t.parameters.at("Wg").number, 60.0);
      EXPECT_EQ(t.arguments.at("work"), "cells * angles");
    } else {
      EXPECT_EQ(t.evaluator, "simulation[MPI-Sim]") << t.node_text;
      EXPECT_EQ(t.chain.back(), "Odin");
    }
  }
  EXPECT_EQ(compute, 1);
}

TEST(Compiler, OverrideReplacesMachineParameter) {
  psl::CompileRequest r = sweep3d_request("analytic[LogGP]", "processor[wg]");
  r.overrides["Odin.L"] = psl::Value::of_number(26500, psl::kTime);
  Composed c = compose(kSweep3D, r);
  ASSERT_TRUE(c.system) << c.errors;
  auto graph = psl::lower_model(c.fe->program(), c.fe->sources(), "Sweep3D");
  EXPECT_EQ(core::plan_evaluation(*c.system, graph).network->L, 26'500'000u);
  // A value of the wrong unit is refused, naming the parameter.
  r.overrides["Odin.L"] = psl::Value::of_number(8, psl::kBytes);
  Composed bad = compose(kSweep3D, r);
  EXPECT_FALSE(bad.system);
  EXPECT_NE(bad.errors.find("cannot set Odin.L to 8B: it is declared as 5300ns"), std::string::npos) << bad.errors;
}

TEST(Compiler, StudyRequestTakesMachineAndSettings) {
  psl::Frontend fe;
  ASSERT_TRUE(fe.load_files({kSweep3D}));
  const psl::StudyDecl* st = fe.program().find_study("scaling");
  ASSERT_NE(st, nullptr);
  psl::CompileRequest r = psl::study_request(fe.program(), *st, "simulation[MPI-Sim]");
  EXPECT_EQ(r.model, "Sweep3D");
  EXPECT_EQ(r.chosen, std::vector<std::string>{"Odin"});
  EXPECT_EQ(r.study.at("compute").text, "processor[wg]");
  EXPECT_EQ(r.study.at("paradigm").text, "simulation[MPI-Sim]");
  EXPECT_EQ(r.study.count("mk"), 0u);  // model parameters bind the task graph, not the composition
}

TEST(Compiler, LibraryCoercionSuppliesMessageBytes) {
  const fs::path dir = fs::temp_directory_path() / "poems_compiler_test";
  fs::create_directories(dir);
  const fs::path file = dir / "library.psl";
  std::ofstream(file) << R"(model M {
  param P = 2;
  taskgraph g { processes { [p] : 0 <= p < P }; task pack : Send(doubles = 6, peer = 1, tag = 0); }
}
component Send in application[M] {
  accepts { profile { node_type = "pack"; } transaction send(doubles: int, peer: int, tag: int); protocol dataflow; }
  requests mpi { selector domain == runtime[MPI]; transaction mpi_send(peer, tag); protocol call_return; }
}
component Mpi in runtime[MPI] {
  accepts { profile { node_type = "mpi"; } transaction mpi_send(bytes: bytes, peer: int, tag: int) -> time; protocol call_return; }
}
)";
  psl::CompileRequest r;
  Composed c = compose(file.string(), r);
  ASSERT_TRUE(c.system) << c.errors;
  const psl::InterfaceBinding* b = c.system->request_of(c.system->find("Send"), "mpi");
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->arguments.size(), 3u);
  const psl::ArgumentBinding& bytes = b->arguments[0];
  EXPECT_EQ(bytes.parameter, "bytes");
  EXPECT_EQ(bytes.source, psl::ArgumentBinding::Source::Library);
  EXPECT_EQ(bytes.expression, "doubles * 8B");
  auto args = psl::bind_arguments(
      *c.system, *b,
      {{"doubles", psl::Value::of_number(6)}, {"peer", psl::Value::of_number(1)}, {"tag", psl::Value::of_number(0)}});
  EXPECT_EQ(args.at("bytes").number, 48.0);
  EXPECT_EQ(args.at("bytes").dimension, psl::kBytes);
}

// The application says what its work is made of: a request that leaves
// `work` out is refused (there is no library coercion for it).
TEST(Compiler, WorkIsNeverCoercedByTheLibrary) {
  const fs::path dir = fs::temp_directory_path() / "poems_compiler_test";
  fs::create_directories(dir);
  const fs::path file = dir / "no_work.psl";
  std::ofstream(file) << R"(model M {
  param P = 2;
  taskgraph g { processes { [p] : 0 <= p < P }; task t : K(cells = 6, angles = 7); }
}
component K in application[M] {
  accepts { profile { node_type = "k"; } transaction k(cells: int, angles: int); protocol dataflow; }
  requests cpu { selector domain == hardware[processor]; transaction execute_code_block(); protocol call_return; }
}
component Cpu in hardware[processor] {
  param Wg = 60ns;
  accepts { profile { evaluation = processor[wg]; } transaction execute_code_block(work: real) -> time; protocol call_return; }
}
)";
  psl::CompileRequest r;
  Composed c = compose(file.string(), r);
  EXPECT_FALSE(c.system);
  EXPECT_NE(c.errors.find("its parameter 'work: real' is not supplied by the request"), std::string::npos) << c.errors;
}

TEST(Compiler, JsonAndDotDescribeTheSystem) {
  Composed c = compose(kSweep3D, sweep3d_request("analytic[LogGP]", "processor[wg]"));
  ASSERT_TRUE(c.system) << c.errors;
  nlohmann::json j = psl::to_json(*c.system, c.fe->sources());
  EXPECT_EQ(j["model"], "Sweep3D");
  EXPECT_EQ(j["domains"]["runtime"], nlohmann::json::array({"MPI_analytic"}));
  EXPECT_EQ(j["bindings"].size(), 5u);
  EXPECT_EQ(j["task_nodes"].size(), 6u);
  const std::string dot = psl::to_dot(*c.system);
  EXPECT_NE(dot.find("cluster_hardware"), std::string::npos);
  EXPECT_NE(dot.find("execute_code_block (call_return)"), std::string::npos);
}

// A composition rooted at one component (poems direct's runtime): the
// runtime is instance 0, its wire request binds to the chosen machine, no
// model or task node is read, and the chosen machine excludes the other.
TEST(Compiler, ACompositionRootedAtARuntime) {
  psl::Frontend fe;
  ASSERT_TRUE(fe.load_files({kSweep3D}));
  const psl::ComponentDecl* runtime = fe.program().find_component("MPI_direct");
  ASSERT_NE(runtime, nullptr);
  for (const char* machine : {"Odin", "BigRed"}) {
    psl::CompileRequest r;
    r.model = "no such model";  // not read
    r.chosen = {machine};
    r.study["paradigm"] = ref("simulation[direct]");
    const std::size_t before = fe.diagnostics().all().size();
    const std::optional<psl::SystemModel> s =
        psl::compile_component(fe.program(), *runtime, r, fe.mutable_diagnostics());
    ASSERT_TRUE(s) << fe.diagnostics().all().size() - before << " errors";
    EXPECT_EQ(s->instances.at(0).name, "MPI_direct");
    EXPECT_EQ(bound_to(*s, "MPI_direct", "wire"), std::string(machine) + ".accepts");
    EXPECT_EQ(s->instances.size(), 2u);
    EXPECT_TRUE(s->task_nodes.empty());
    EXPECT_EQ(s->call_chain(0, "hardware").size(), 2u);
  }
  // A chosen component that does not exist is an error, as in compile_system.
  psl::CompileRequest r;
  r.chosen = {"Tyr"};
  EXPECT_FALSE(psl::compile_component(fe.program(), *runtime, r, fe.mutable_diagnostics()));
}
