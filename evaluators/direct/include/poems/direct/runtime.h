// Direct execution (`simulation[direct]`, DESIGN 5.3; MPI-Sim in POEMS
// section 4.3, the SMP-SIM paper): a real MPI program runs as P ranks on
// user-level threads in this process against the simulated MPI of <mpi.h>.
// Its MPI calls become operations of the simulator's engine (evaluators/sim,
// LogGOPS costs, MPI matching, collectives of the shared algorithm library),
// its computation between calls is timed on the host or charged through the
// processor model, and a call that must wait resumes only when the engine
// has simulated what it waits for. docs/direct.md has the details.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "poems/processor/processor_model.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/collectives.h"

namespace poems::direct {

enum class ComputeMode : std::uint8_t {
  Measured,  // host CPU time of the rank between MPI calls (× compute_scale), plus charges
  Model,     // only what the program charges (POEMS_Compute through the processor model, POEMS_Advance)
};

// How ranks are kept apart. Processes (the default): every rank is an OS
// process with its own globals, statics, thread-locals and C library state
// (getopt, errno, stdio), as under mpirun. Threads: user-level threads of
// one process that share all of them: faster and smaller, for programs that
// keep no per-rank state in globals; it must be asked for.
enum class Isolation : std::uint8_t { Processes, Threads };

// Processes: how the turn passes between the engine's process and a rank's.
// Only one of them runs at a time, so where they run decides what a
// hand-over costs (docs/direct.md, "Hand-overs").
enum class Handover : std::uint8_t {
  OneCpu,  // all on the host CPU the run starts on: a hand-over is a switch on that CPU
  Spin,    // on any CPU; the side that waits spins up to 50 us before it sleeps
  Sleep,   // on any CPU; the side that waits sleeps at once (a wake-up on another CPU)
};

inline constexpr std::uint32_t kMaxHostCores = 1024;  // DirectOptions::host_cores

struct DirectOptions {
  std::uint32_t ranks = 1;
  Isolation isolation = Isolation::Processes;
  Handover handover = Handover::OneCpu;  // processes only; not part of a run's key
  // Processes: how many host cores the ranks compute on at once. 1: one rank
  // or the engine runs at a time (handover applies). N > 1: every rank runs
  // as under mpirun, on the first N CPUs the run may use, waiting only for
  // what the engine must simulate first; the engine trails behind on their
  // operations, so every virtual time is the one of a run on one core
  // (docs/direct.md, "Ranks on several host cores"). Not part of a run's key.
  std::uint32_t host_cores = 1;
  // MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups this many consecutive
  // ranks (a simulated node; the LogGOPS model gives every rank its own NIC).
  std::uint32_t ranks_per_node = 1;
  // Processes: the shared region holding the runtime's state and messages in
  // flight (address space; pages are used as touched). 0: sized from the
  // ranks (`poems direct` passes --memory-limit here).
  std::size_t shared_bytes = 0;
  // The wall-clock time (seconds since 1970) the run starts at, for the
  // program's gettimeofday, clock_gettime(CLOCK_REALTIME) and time(); -1: the
  // host's time when the run starts. A fixed epoch makes programs that seed
  // with time() repeat.
  std::int64_t epoch_seconds = -1;
  sim::SimulationOptions sim;  // LogGOPS parameters, CPUs/NICs, handshake (observer is set internally)
  ComputeMode compute = ComputeMode::Measured;
  double compute_scale = 1.0;  // Measured: host CPU ns × scale = simulated ns
  // The processor model behind POEMS_Compute (e.g. processor[wg] with Wg).
  std::optional<processor::ProcessorSpec> processor;
  // Cost of an MPI_Test / MPI_Iprobe that finds nothing, so a polling loop
  // advances virtual time even when computation is not measured.
  taskgraph::Picoseconds poll_cost = 100'000;
  // When a receive's CPU overhead (o + (s-1)O) is paid. false: when its
  // message is matched (at the arrival, or at the post if it came first),
  // as Open MPI copies an eager message in the first call that sees it.
  // true: in the call that completes it for the program (MPI_Wait, a
  // successful MPI_Test, MPI_Recv), in the program's completion order, as
  // SimGrid's SMPI charges smpi/or (docs/network.md, "Beside SimGrid's SMPI").
  bool receive_overhead_at_wait = false;
  // A wait whose receive's message was sent already (and that only it can
  // match), or whose send is eager, lets the rank go on at once instead of
  // waiting for the engine to simulate the completion; the rank's next
  // operations still depend on it, so every virtual time is the same either
  // way (false: the test of that, tests/direct/early_receive_test.cpp).
  // Not part of a run's key.
  bool early_receive = true;
  // Collective algorithms by operation (default: the library's first).
  std::map<taskgraph::CollectiveOp, taskgraph::CollectiveAlgorithm> algorithms;
  std::size_t stack_bytes = std::size_t{256} << 10;  // threads: per rank (virtual; pages are touched on use)
  std::size_t max_stuck_listed = 16;
  // Show the engine's progress on stderr if it is a terminal (base/progress.h;
  // `poems direct` without --quiet). Not part of a run's key.
  bool progress = false;
  // Writes the simulated execution here (docs/trace.md section 7): NAME.otf2
  // as an OTF2 archive, any other name as a Chrome trace (JSON). Written by
  // the process that runs the engine; "" for none. Not part of a run's key.
  std::string timeline;
};

struct DirectResult {
  sim::SimulationResult sim;    // the engine's result: per-rank finish and breakdown, events, deadlocks
  std::vector<int> exit_codes;  // each rank's return value of main (or -1 if it never returned)
  // Empty if the run completed; else why it stopped (MPI_Abort, an MPI
  // error, an exception in a rank, a deadlock, an unsupported call).
  std::string error;
  int abort_code = 0;               // MPI_Abort's errorcode
  double host_seconds = 0;          // wall time of the whole run
  double measured_cpu_seconds = 0;  // host CPU time measured between MPI calls, all ranks
  std::uint64_t switches = 0;       // user-level thread switches
  std::uint64_t mpi_calls = 0;
  std::uint64_t early_completions = 0;  // receives and sends a wait completed early (DirectOptions::early_receive)
  std::size_t peak_rss_bytes = 0;       // of this process, at the end
  // Every process of the run together: with processes, the controller's peak
  // RSS plus each rank process's (a page shared by several, such as the
  // shared region's, counts in each that touched it: an upper bound of
  // what they held at once); with threads, peak_rss_bytes.
  std::size_t peak_rss_all_bytes = 0;
  std::string timeline_error;  // why DirectOptions::timeline could not be written ("" if it was, or none asked)
  // Processes the ranks left running (a daemon, a setsid'ed child), killed
  // when the run ended: how many, and the first few as "NAME (pid N)".
  std::uint32_t left_behind = 0;
  std::vector<std::string> left_behind_names;
  bool completed() const { return error.empty() && sim.completed; }
};

// A rank's program: main(argc, argv) of an MPI program.
using Program = std::function<int(int argc, char** argv)>;

// Runs `program` as options.ranks ranks (with processes, each rank is a
// fork of the calling process that runs `program` and ends). Never throws
// for the program's faults (they end up in DirectResult::error); throws
// std::invalid_argument for bad options, std::runtime_error when the ranks
// cannot be started, and sim::SimulationError for engine faults.
DirectResult run(const Program& program, const std::vector<std::string>& args, const DirectOptions& options);

// Whether a simulated rank is running now (on this thread).
bool in_rank();

// exit() called by a rank running as a thread (programs built with the
// poems-mpi* wrappers link exit to this): the rank ends there, as a process
// would; before MPI_Finalize that stops the run, as mpirun would. Never
// returns. Outside a thread rank it is exit().
[[noreturn]] void exit_rank(int code);

// The computation just done (or skipped) was `task`: under ComputeMode::Model
// it costs the processor model's time for it, under Measured nothing more
// (the C++ face of POEMS_Compute, with the task's own parameters).
void compute_task(const processor::TaskRequest& task);

}  // namespace poems::direct
