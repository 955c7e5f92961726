// What the core decides for the commands that only parse and print: a study
// table's derived columns (finish_study_table), the one input of `poems
// simulate` and `analyze` (input_kind, EvaluationInput), and the error class
// of a recording that cannot start (record_trace).
#include <gtest/gtest.h>

#include <filesystem>

#include "poems/core/error.h"
#include "poems/core/evaluation_input.h"
#include "poems/core/study.h"
#include "poems/core/trace_record.h"
#include "poems/examples/examples.h"

using namespace poems;
using namespace poems::core;

namespace {

StudyCell cell_of(double time_ns) {
  StudyCell c;
  c.time_ns = time_ns;
  return c;
}

StudyRow row_of(std::uint32_t processes, double latency, double first_ns, double second_ns) {
  StudyRow r;
  r.processes = processes;
  r.binding = {{"L", base::Value::of_number(latency)}, {"npe", base::Value::of_number(processes)}};
  r.cells["a"] = cell_of(first_ns);
  r.cells["b"] = cell_of(second_ns);
  return r;
}

TEST(FinishStudyTable, SpeedupAgainstTheFewestProcessesOfTheGroup) {
  StudyTable t;
  t.paradigms = {"a", "b"};
  t.process_params = {"npe"};
  t.rows = {row_of(4, 1, 250, 300), row_of(1, 1, 1000, 1200), row_of(2, 2, 800, 800), row_of(8, 2, 200, 100)};
  finish_study_table(t);
  // Group L=1: its base is the row with 1 process; group L=2: the row with 2.
  EXPECT_EQ(study_group(t, t.rows[0]), "L=1;");
  EXPECT_DOUBLE_EQ(*t.rows[0].cells["a"].speedup, 4.0);
  EXPECT_DOUBLE_EQ(*t.rows[0].cells["a"].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(*t.rows[0].cells["b"].speedup, 4.0);
  EXPECT_DOUBLE_EQ(*t.rows[1].cells["a"].speedup, 1.0);
  EXPECT_DOUBLE_EQ(*t.rows[3].cells["a"].speedup, 4.0);
  EXPECT_DOUBLE_EQ(*t.rows[3].cells["a"].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(*t.rows[3].cells["b"].speedup, 8.0);
  EXPECT_DOUBLE_EQ(*t.rows[3].cells["b"].efficiency, 2.0);
  // b against a, in percent of a.
  EXPECT_DOUBLE_EQ(*t.rows[0].difference_pct, 20.0);
  EXPECT_DOUBLE_EQ(*t.rows[2].difference_pct, 0.0);
  EXPECT_DOUBLE_EQ(*t.rows[3].difference_pct, -50.0);
  EXPECT_DOUBLE_EQ(t.rows[3].differences_pct.at("b"), -50.0);
}

TEST(FinishStudyTable, FailedCellsHaveNoDerivedColumns) {
  StudyTable t;
  t.paradigms = {"a", "b", "c"};
  t.process_params = {"npe"};
  t.rows = {row_of(1, 1, 100, 150), row_of(2, 1, 50, 60)};
  t.rows[0].cells["c"] = cell_of(200);
  t.rows[1].cells["b"].error = "deadlock";
  t.rows[1].cells["c"] = cell_of(25);
  finish_study_table(t);
  EXPECT_FALSE(t.rows[1].cells["b"].speedup);
  EXPECT_FALSE(t.rows[1].difference_pct);
  EXPECT_EQ(t.rows[1].differences_pct.count("b"), 0u);
  EXPECT_DOUBLE_EQ(t.rows[1].differences_pct.at("c"), -50.0);
  EXPECT_DOUBLE_EQ(t.rows[0].differences_pct.at("c"), 100.0);
  EXPECT_DOUBLE_EQ(*t.rows[1].cells["c"].speedup, 8.0);
}

std::string usage_error(const InputRequest& r) {
  try {
    input_kind(r);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(EvaluationInput, ExactlyOneInput) {
  InputRequest r;
  r.command = "simulate";
  EXPECT_EQ(usage_error(r), "simulate: give exactly one of SPEC, --goal FILE, --collective NAME or --trace ARCHIVE");
  r.goal = "a.goal";
  EXPECT_EQ(input_kind(r), InputKind::Goal);
  r.collective.operation = "bcast";
  EXPECT_EQ(usage_error(r), "simulate: give exactly one of SPEC, --goal FILE, --collective NAME or --trace ARCHIVE");
  r.goal.clear();
  EXPECT_EQ(input_kind(r), InputKind::Collective);
  r.collective.operation.clear();
  r.system.files = {""};  // SPEC not given
  r.trace.archive = "run";
  EXPECT_EQ(input_kind(r), InputKind::Trace);
  r.trace.archive.clear();
  r.system.files = {"model.psl"};
  EXPECT_EQ(input_kind(r), InputKind::Model);
}

TEST(EvaluationInput, ReplayOptionsNeedATrace) {
  InputRequest r;
  r.command = "analyze";
  r.goal = "a.goal";
  r.trace.window = "MPI_Barrier#1..";
  EXPECT_EQ(usage_error(r), "--window: applies to a trace replay only; give --trace ARCHIVE");
  r.trace.window.clear();
  r.trace.cpu_time = true;
  EXPECT_EQ(usage_error(r), "--computation: applies to a trace replay only; give --trace ARCHIVE");
  r.goal.clear();
  r.trace.archive = "run";
  EXPECT_EQ(input_kind(r), InputKind::Trace);
}

TEST(EvaluationInput, ComponentsChooseOnlyAModel) {
  InputRequest r;
  r.command = "analyze";
  r.collective.operation = "bcast";
  r.store.disabled = true;
  r.session.choices.processor = "Opteron";
  try {
    EvaluationInput input(r);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.option(), "--machine");
  }
}

TEST(EvaluationInput, EvaluatesACollectiveAndNamesIt) {
  InputRequest r;
  r.command = "analyze";
  r.collective = {"bcast", "", "4", "1KiB", "0"};
  r.store.disabled = true;
  r.cell.paradigm = "analytic[LogGP]";
  EvaluationInput input(r);
  EXPECT_EQ(input.model(), "collective:bcast");
  EXPECT_EQ(input.system(), nullptr);
  const Cell cell = input.evaluate();
  EXPECT_TRUE(cell.ok()) << cell.error;
  EXPECT_GT(cell.outcome.breakdown.time_ns, 0);
}

TEST(EvaluationInput, LoadsAModel) {
  examples::register_examples();
  InputRequest r;
  r.command = "analyze";
  r.system.files = {std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"};
  r.system.sets = {"iterations=1"};
  r.session.choices.machine = "Odin";
  r.store.disabled = true;
  r.cell.paradigm = "analytic[LogGP]";
  EvaluationInput input(r);
  ASSERT_NE(input.system(), nullptr);
  EXPECT_EQ(input.model(), "Sweep3D");
  const Cell cell = input.evaluate();
  EXPECT_TRUE(cell.ok()) << cell.error;
  EXPECT_EQ(cell.evaluation.machine.network, "Odin");
}

template <class E>
std::string record_error(const trace::RecordOptions& options) {
  try {
    record_trace(options);
  } catch (const E& e) {
    return e.what();
  }
  return "no error of that class";
}

trace::RecordOptions recording(const std::string& mpirun) {
  trace::RecordOptions options;
  options.program = "/bin/true";
  options.output = (std::filesystem::temp_directory_path() / "poems_record_trace_test").string();
  std::filesystem::remove_all(options.output);
  options.mpirun = mpirun;
  options.library = "/bin/true";  // exists; these runs never load it
  return options;
}

TEST(RecordTrace, ARunThatCannotStartIsTheInputsError) {
  trace::RecordOptions options = recording("/bin/true");
  options.library = "/nonexistent/libpoems_trace_mpi.so";
  EXPECT_EQ(record_error<InputError>(options),
            "the interposition library '/nonexistent/libpoems_trace_mpi.so' does not exist (set POEMS_TRACE_LIBRARY)");
}

TEST(RecordTrace, ARunThatFailsOrWritesNoArchiveIsAnEvaluationFailure) {
  const trace::RecordOptions failing = recording("/bin/false");
  EXPECT_EQ(record_error<EvaluationError>(failing), "the traced run failed (exit code 1); no archive was written");
  const trace::RecordOptions silent = recording("/bin/true");
  EXPECT_EQ(record_error<EvaluationError>(silent), "the run wrote no archive in '" + silent.output +
                                                       "' (is it an MPI program, and does it call MPI_Finalize?)");
  std::filesystem::remove_all(silent.output);
}

}  // namespace
