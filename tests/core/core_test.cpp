// The evaluation core in process: loading a system and its --set values,
// typed errors, one run key per evaluation whoever asks, one definition of
// the breakdown, the evaluator registry, studies, and `poems check`'s checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "poems/components/closed_forms.h"
#include "poems/core/check.h"
#include "poems/core/error.h"
#include "poems/core/session.h"
#include "poems/core/study.h"
#include "poems/examples/examples.h"

using namespace poems;
using namespace poems::core;

namespace {

const std::string kSweep3D = std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl";

std::unique_ptr<System> load(std::vector<std::string> sets, const std::string& study = "") {
  examples::register_examples();
  SystemRequest r;
  r.files = {kSweep3D};
  r.sets = std::move(sets);
  r.study = study;
  return load_system(r);
}

template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(System, SetValuesAreSortedByWhatTheyBind) {
  const auto s = load({"npe_i=4", "Odin.L=26.5us", "compute=processor[measured]", "mk=2*5"});
  EXPECT_EQ(s->settings().parameters.at("npe_i").number, 4);
  EXPECT_EQ(s->settings().parameters.at("mk").number, 10);  // a PSL expression
  EXPECT_EQ(s->settings().overrides.at("Odin.L").number, 26500);
  EXPECT_EQ(s->settings().study.at("compute").str(), "processor[measured]");
  EXPECT_EQ(s->binding().at("npe_i"), 4);
  EXPECT_EQ(s->model().name.name, "Sweep3D");
  EXPECT_EQ(s->study_names().size(), 9u);  // the command line's own study is not one of them
}

TEST(System, ErrorsAreTyped) {
  EXPECT_EQ(error_of<UsageError>([] { load({"npe_i=4us"}); }),
            "--set npe_i=4us: 'npe_i' is a number (default 2); this value is a time");
  EXPECT_EQ(error_of<UsageError>([] { load({"npe_i"}); }),
            "--set: 'npe_i' is not NAME=VALUE (e.g. --set npe_i=4, --set Odin.L=5.3us)");
  EXPECT_EQ(error_of<UsageError>([] { load({"npe_i=4; }"}); }).rfind("--set npe_i: '4; }' is not a value", 0), 0u);
  EXPECT_NE(error_of<UsageError>([] { load({}, "scalling"); }).find("did you mean 'scaling'?"), std::string::npos);
  SystemRequest missing;
  missing.files = {"/nonexistent.psl"};
  try {
    load_system(missing);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), 1);
    EXPECT_NE(e.diagnostics().find("cannot open '/nonexistent.psl'"), std::string::npos) << e.diagnostics();
  }
}

TEST(Session, OneRunKeyWhicheverWayTheBindingIsGiven) {
  // In the study's context, or spelled out: the same evaluation, the same key.
  const auto in_study = load({"npe_i=4", "npe_j=4"}, "scaling_50");
  const auto spelled = load({"it_g=50", "jt_g=50", "kt=50", "mk=10", "mmi=3", "mm=6", "npe_i=4", "npe_j=4"});
  Store none({true, ""});
  SessionOptions odin;
  odin.choices.machine = "Odin";
  Session a(*in_study, {}, none), b(*spelled, odin, none);
  for (const char* paradigm : {"analytic[LogGP]", "simulation[MPI-Sim]"}) {
    CellRequest r;
    r.paradigm = paradigm;
    const Session::Prepared pa = a.prepare(r), pb = b.prepare(r);
    EXPECT_EQ(pa.key.canonical_text(), pb.key.canonical_text()) << paradigm;
    EXPECT_EQ(pa.key.binding["machine"]["L_ps"], 5'300'000);
    EXPECT_EQ(pa.key.binding["compute"][0]["ns_per_work"], 60.0);
  }
  // A study binding through run_study's request is that key too.
  const StudyPlan plan = plan_study(*in_study);
  CellRequest cell = cell_request(*in_study, plan.bindings[2]);  // (4, 4)
  cell.paradigm = "analytic[LogGP]";
  CellRequest direct;
  direct.paradigm = "analytic[LogGP]";
  EXPECT_EQ(a.prepare(cell).key.canonical_text(), a.prepare(direct).key.canonical_text());
}

TEST(Outcome, OneDefinitionOfTheBreakdown) {
  const Breakdown ns = Breakdown::of_ns(100, 60, 15);
  EXPECT_EQ(ns.sync_ns, 25);
  EXPECT_EQ(Breakdown::of_ns(100, 80, 30).sync_ns, 0);  // never negative
  const Breakdown ps = Breakdown::of_ps(100'500, 60'250, 15'125);
  EXPECT_EQ(ps.time_ns, 100.5);
  EXPECT_EQ(ps.sync_ns, 25.125);
  Outcome o;
  o.breakdown = ns;
  o.processes = 4;
  o.messages = 9;
  o.method = "closed-form";
  const db::Result r = record_of(o, false);
  EXPECT_EQ(*r.sync_ns, 25);
  EXPECT_EQ(r.extra["processes"], 4);
  const Outcome back = outcome_of(r);
  EXPECT_EQ(back.breakdown.sync_ns, 25);
  EXPECT_EQ(back.messages, 9u);
  EXPECT_EQ(back.method, "closed-form");
}

TEST(Evaluators, RegistryNamesAndClosedForms) {
  examples::register_examples();
  EXPECT_EQ(evaluator_named("analytic", "--paradigm").name, "analytic[LogGP]");
  EXPECT_EQ(error_of<UsageError>([] { evaluator_named("simulation", "--paradigm"); }),
            "--paradigm: 'simulation' is ambiguous: simulation[MPI-Sim], simulation[direct]; name one");
  EXPECT_NE(error_of<UsageError>([] {
              evaluator_named("simulation[MPI-sim]", "--paradigm");
            }).find("did you mean 'simulation[MPI-Sim]'?"),
            std::string::npos);
  // Closed forms are registered by the code that owns the model, not named by the core.
  EXPECT_EQ(components::closed_form_models(), std::vector<std::string>{"Sweep3D"});
}

TEST(Study, PlanAndCells) {
  const auto s = load({}, "latency");
  const StudyPlan plan = plan_study(*s);
  EXPECT_EQ(plan.paradigms, (std::vector<std::string>{"simulation[MPI-Sim]", "analytic[LogGP]"}));
  ASSERT_EQ(plan.bindings.size(), 20u);
  EXPECT_EQ(binding_text(plan.bindings[5]), "Odin.L=5300ns npe_i=10 npe_j=10");
  const CellRequest cell = cell_request(*s, plan.bindings[5]);
  EXPECT_EQ(cell.overrides.at("Odin.L").number, 5300);
  EXPECT_EQ(cell.parameters.at("npe_i"), 10);
}

TEST(Check, EverythingRunWouldReject) {
  examples::register_examples();
  const CheckResult ok = check_specification(kSweep3D);
  EXPECT_TRUE(ok.ok);
  EXPECT_EQ(ok.studies, 9u);
  const std::filesystem::path spec =
      std::filesystem::temp_directory_path() / ("poems_core_check_" + std::to_string(::getpid()) + ".psl");
  std::ofstream(spec) << "import \"" << kSweep3D << "\";\n"
                      << "study huge {\n  model Sweep3D on Odin;\n  set compute = processor[wg];\n"
                      << "  vary mk in 1 .. 10000000;\n  compare analytic[LogGP];\n}\n";
  const CheckResult huge = check_specification(spec.string());
  EXPECT_FALSE(huge.ok);
  ASSERT_FALSE(huge.frontend->diagnostics().all().empty());
  EXPECT_NE(huge.frontend->diagnostics().all().back().message.find("has more than 1000000 values"), std::string::npos);
  std::filesystem::remove(spec);
}
