// The MPI-distributed study runner (`mpirun -np R poems run SPEC --study S`,
// docs/scaleout.md): every rank loads the same system and plan; rank 0
// claims, stores and reports cells as run_study does (the one writer of the
// knowledge base) and hands them out one at a time to whichever rank is free
// (dynamic load balancing); every rank, rank 0 included, evaluates its cells
// in a forked worker process, so an evaluation that crashes is that cell's
// failure and the run goes on. MPI comes from libpoems_mpi_runner.so
// (mpi_runner/), dlopened here: `poems` itself links no MPI library.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "poems/core/parallel_study.h"

struct poems_mpi_transport;

namespace poems::core {

// This process is one of several ranks of an MPI job (OMPI_COMM_WORLD_SIZE
// or PMI_SIZE above 1; one rank alone is an ordinary run).
bool under_mpirun();

class MpiWorld {
 public:
  // Loads the plugin (POEMS_MPI_RUNNER, else <bin>/../lib/libpoems_mpi_runner.so)
  // and joins MPI_COMM_WORLD. Throws EvaluationError when it cannot.
  MpiWorld();
  ~MpiWorld();  // on rank 0 stop_others(); MPI_Finalize
  // Rank 0: tells every other rank that the study is over (once).
  void stop_others();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  const poems_mpi_transport& transport() const { return *transport_; }

 private:
  void* library_ = nullptr;
  const poems_mpi_transport* transport_ = nullptr;
  int rank_ = 0, size_ = 1;
  bool stopped_ = false;
};

// Rank 0's workers: every other rank, and one forked worker of its own.
std::unique_ptr<CellWorkers> mpi_workers(MpiWorld& world, Session& session, const StudyPlan& plan);
// What every other rank does: evaluates the cells rank 0 sends until it
// says stop. Without a session (this rank could not load the system or
// plan: `cannot` says why) each cell it is sent comes back failed with that
// reason, so that rank 0 goes on.
void serve_study(MpiWorld& world, Session* session, const StudyPlan* plan, const std::string& cannot = "");

// A rank of `poems run` under mpirun other than rank 0: loads the system of
// `request` with the session options `options` gives for it (no knowledge
// base: rank 0 is its one writer) and the plan of `paradigms`, then serves
// rank 0 (serve_study), also when it could not (each cell it is sent then
// fails with the reason). Prints nothing.
void serve_study_rank(MpiWorld& world, const SystemRequest& request,
                      const std::function<SessionOptions(const System&)>& options,
                      const std::vector<std::string>& paradigms);
// Measured runs need the whole machine: UsageError("--ranks") for a plan
// with a paradigm that is not modelled (measurement[mpirun]).
void check_distributable(const StudyPlan& plan);
// This process's arguments without --ranks and its value, for mpirun to
// start again (`poems run --ranks R`); UsageError("--ranks") unless this
// process is the `poems` executable.
std::vector<std::string> arguments_without_ranks();

// `poems run --ranks R`: runs `mpirun -np R <this executable> args` (args
// without --ranks) and returns its exit code.
int run_under_mpirun(int ranks, const std::vector<std::string>& args);

}  // namespace poems::core
