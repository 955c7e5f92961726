// What one fuzz input must survive, for the CI driver (tests/fuzz/fuzz_test.cpp,
// which asserts every Outcome): the whole pipeline a command runs, with the
// properties of docs/limits.md checked. Each broken property comes back as
// Outcome::problem rather than a test failure here, so a fuzzing engine could
// drive these functions too (none is wired up: g++ has no -fsanitize=fuzzer).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <sstream>
#include <string>
#include <string_view>

#include "poems/base/limits.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/comm_check.h"
#include "poems/taskgraph/dtg.h"
#include "poems/taskgraph/goal.h"

namespace poems::fuzz {

struct Outcome {
  bool accepted = false;  // the input was valid (and evaluated)
  bool skipped = false;   // outside what this harness may run (none today)
  std::string problem;    // a broken property: a crash-free failure to report ("" if none)
};

// Process-wide limits for fuzzing: small budgets so no input can take long.
void set_fuzz_limits();

// PSL text as `path`: front end, then for a valid input every model's
// lowering, the static communication check, instantiation with its defaults
// and a simulation. Properties: no exception escapes but the documented
// ones; every error diagnostic is located; what would be printed is bounded
// and free of control characters.
Outcome check_psl(std::string_view text, const std::string& path = "fuzz.psl");

// GOAL text: the reader (within the fuzz memory limit, so a huge
// `num_ranks` is refused by its estimate), then (if valid) a simulation.
// Same properties.
Outcome check_goal(std::string_view text);

// Upper bound on what the diagnostics of one input may print.
inline constexpr std::size_t kMaxPrinted = 2u << 20;

// Definitions (header-only: tests/fuzz/fuzz_test.cpp is the one user).
namespace detail {

// Bounded, located, printable diagnostics.
inline std::string diagnostics_problem(const psl::DiagnosticEngine& diags) {
  for (const psl::Diagnostic& d : diags.all())
    if (d.severity == psl::Severity::Error && !d.location.valid())
      return "an error without a location: " + d.message.substr(0, 300);
  std::ostringstream out;
  diags.print(out);
  const std::string text = out.str();
  if (text.size() > kMaxPrinted)
    return "diagnostics of " + std::to_string(text.size()) + " bytes (more than " + std::to_string(kMaxPrinted) + ")";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f)
      return "a control character (" + std::to_string(u) + ") in the printed diagnostics";
  }
  if (diags.has_errors() && text.find(" generated.") == std::string::npos) return "errors without a summary line";
  return "";
}

// Runs a schedule through the simulator; the documented failures are fine.
inline std::string simulate(taskgraph::ScheduleSource& source) {
  try {
    sim::SimulationOptions options;
    options.memory_limit = taskgraph::default_instantiation_limits().memory_limit_bytes;
    sim::simulate(source, options, 4);
  } catch (const sim::SimulationError&) {
  } catch (const taskgraph::InstantiationError&) {
  }
  return "";
}

}  // namespace detail

using detail::diagnostics_problem;
using detail::simulate;

inline void set_fuzz_limits() {
  taskgraph::InstantiationLimits& l = taskgraph::default_instantiation_limits();
  l.memory_limit_bytes = std::uint64_t{256} << 20;
  l.max_operations = 200'000;
  l.max_loop_iterations = 100'000;
  base::isl_operation_budget() = 2'000'000;
}

inline Outcome check_psl(std::string_view text, const std::string& path) {
  Outcome o;
  try {
    psl::Frontend fe;
    o.accepted = fe.load_text(path, std::string(text));
    if (o.accepted == fe.diagnostics().has_errors()) return {o.accepted, false, "load_text and has_errors disagree"};
    if (std::string p = diagnostics_problem(fe.diagnostics()); !p.empty()) return {o.accepted, false, p};
    if (!o.accepted) return o;
    for (const psl::Module& m : fe.program().modules)
      for (const psl::ModelDecl& model : m.models) {
        if (model.taskgraphs.empty()) continue;
        std::shared_ptr<taskgraph::StaticTaskGraph> graph;
        try {
          graph = std::make_shared<taskgraph::StaticTaskGraph>(
              psl::lower_model(fe.program(), fe.sources(), model.name.name));
        } catch (const std::runtime_error&) {
          continue;  // a construct the lowering refuses, reported with its location
        }
        psl::DiagnosticEngine comm(fe.sources());
        taskgraph::check_communication(*graph, comm);
        if (std::string p = diagnostics_problem(comm); !p.empty()) return {true, false, "communication check: " + p};
        try {
          taskgraph::InstantiateOptions options;
          options.ns_per_work = 7.5;
          taskgraph::ModelSchedule schedule(graph, {}, options);
          taskgraph::collect_statistics(schedule);
          schedule.rewind();
          simulate(schedule);
        } catch (const taskgraph::InstantiationError&) {
          // a bad value, a limit: the documented refusal
        }
      }
  } catch (const std::bad_alloc&) {
    o.problem = "std::bad_alloc (a resource the limits should have bounded)";
  } catch (const std::exception& e) {
    o.problem = std::string("an exception escaped: ") + e.what();
  }
  return o;
}

inline Outcome check_goal(std::string_view text) {
  Outcome o;
  try {
    psl::SourceManager sources;
    const psl::FileId file = sources.add("fuzz.goal", std::string(text));
    psl::DiagnosticEngine diags(sources);
    // The memory the fuzz limits allow (256 MiB): `num_ranks 100000000` is refused, not allocated.
    taskgraph::GoalReadOptions options;
    options.memory_limit = taskgraph::default_instantiation_limits().memory_limit_bytes;
    std::unique_ptr<taskgraph::ExplicitSchedule> schedule = taskgraph::parse_goal(sources, file, diags, options);
    o.accepted = schedule != nullptr;
    if (o.accepted == diags.has_errors()) return {o.accepted, false, "parse_goal and has_errors disagree"};
    if (std::string p = diagnostics_problem(diags); !p.empty()) return {o.accepted, false, p};
    if (schedule && schedule->ranks() <= 4096) simulate(*schedule);
  } catch (const std::bad_alloc&) {
    o.problem = "std::bad_alloc (a resource the limits should have bounded)";
  } catch (const std::exception& e) {
    o.problem = std::string("an exception escaped: ") + e.what();
  }
  return o;
}

}  // namespace poems::fuzz
