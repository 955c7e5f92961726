// Studies evaluated by several workers at once (`poems run --jobs N`, and
// the MPI-distributed runner of mpi_runner/): this process stays the one
// writer of the knowledge base. It claims each cell's run when a worker is
// free for it (plan order, the longest cells early: core/handout_order.h),
// hands the evaluation to that worker, stores each result as soon as it
// arrives (so an interruption loses nothing already evaluated; a re-run
// reuses it), and reports cells and builds the table in plan order, so the
// output is the serial run's. Evaluations that measure this host
// (measurement[mpirun]) run here alone, with every worker idle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "poems/core/session.h"
#include "poems/core/study.h"

namespace poems::core {

// Where a study's cells are evaluated: processes holding the same system,
// session options and plan, addressed by a cell's index in the plan
// (binding index * paradigms + paradigm index).
class CellWorkers {
 public:
  virtual ~CellWorkers() = default;
  // How many cells may be under way at once.
  virtual std::size_t slots() const = 0;
  // Starts cell `index` on a free worker (there is one: fewer than slots()
  // are under way). `key` is the digest of the run key this process
  // prepared: the worker refuses to evaluate a cell it prepares otherwise.
  virtual void start(std::size_t index, const std::string& key) = 0;
  // How many started cells have not come back yet.
  virtual std::size_t busy() const = 0;
  // Waits up to `timeout_ms` (-1: as long as it takes) for a started cell:
  // its index and what it computed; nothing if none came back in time. A
  // worker that died is that cell's failure (and is replaced when needed).
  virtual std::optional<std::pair<std::size_t, Session::Computed>> next_within(int timeout_ms) = 0;
  std::pair<std::size_t, Session::Computed> next() { return *next_within(-1); }
};

// What a worker does with cell `index` of `plan`: prepare and compute it,
// without the knowledge base. Never throws (a bad request comes back as the
// cell's usage or input error). A cell whose run key is not `key` (compute
// rates timed anew by processor[measured] on another node) is not
// evaluated: its result would be stored under a key that does not say it.
Session::Computed compute_cell(Session& session, const StudyPlan& plan, std::size_t index, const std::string& key);
// The task of a worker on the wire: the cell's index and its key digest.
std::vector<std::uint8_t> task_bytes(std::size_t index, const std::string& key);
// Throws std::runtime_error for bytes that are not a task.
std::pair<std::size_t, std::string> task_of_bytes(const std::vector<std::uint8_t>& bytes);

// What a worker computes for task `index`: any work that needs no knowledge
// base (the recommender's gap-filling evaluations use it with their own
// tasks). Runs in the forked worker, on the memory it inherited; must not
// throw (an exception becomes the task's evaluation failure).
using TaskCompute = std::function<Session::Computed(std::size_t index, const std::string& key)>;
// `jobs` worker processes forked from this one, each computing the tasks it
// is given with `compute` (when the first task needs a worker, so it sees
// what this process prepared before); they die with this process.
std::unique_ptr<CellWorkers> fork_workers(TaskCompute compute, std::size_t jobs);

// `jobs` worker processes forked from this one (when the first cell needs
// one: the system is loaded and composed once). Each gets cells by index over
// a socket and sends back the computed cell; it dies with this process.
std::unique_ptr<CellWorkers> fork_workers(Session& session, const StudyPlan& plan, std::size_t jobs);

// run_study with the evaluations on `workers`; the same table, rows and
// progress as run_study(session, plan, progress).
StudyTable run_study(Session& session, const StudyPlan& plan, CellWorkers& workers,
                     const std::function<void(const StudyProgress&)>& progress = {});

// run_study on `jobs` forked workers; jobs <= 1 is the serial run_study.
StudyTable run_study_jobs(Session& session, const StudyPlan& plan, std::size_t jobs,
                          const std::function<void(const StudyProgress&)>& progress = {});

// --jobs's default: the cores of this machine (at least 1).
std::size_t default_jobs();

}  // namespace poems::core
