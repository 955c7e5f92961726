// `poems direct PROGRAM`: an MPI program (a binary built with poems-mpicxx,
// or a C/C++ source built with it) run on simulated ranks, on a machine read
// from PSL components (the same reading as a composition's), its result
// stored in the knowledge base like every evaluation.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "poems/base/temporary_directory.h"
#include "poems/core/direct_program.h"
#include "poems/core/machine.h"
#include "poems/core/store.h"
#include "poems/direct/runtime.h"

namespace poems::core {

// The PSL files machines are read from when none are given (registered by
// the examples, see examples/examples.cpp).
void set_default_machine_files(std::vector<std::string> files);
const std::vector<std::string>& default_machine_files();

struct DirectMachineRequest {
  std::vector<std::string> files;  // PSL files with the components ("" = the default machine files)
  std::string machine, processor;  // --machine, --processor
  std::string runtime;             // --runtime
  // The paradigm the program's messages are carried under: with --machine,
  // the runtime component accepting it sets the protocol (eager_limit,
  // handshake, semantics; docs/direct.md). "" = no runtime is read.
  std::string paradigm;
  std::optional<std::string> wg;  // --wg
  MachineOverrides overrides;     // -L ... --cpus --nics
  bool needs_processor = false;   // the program charges work (POEMS_Compute): find a Wg
};

struct DirectMachine {
  Machine machine;
  std::optional<processor::ProcessorSpec> processor;  // behind POEMS_Compute
  std::string runtime;                                // the runtime component read ("" = none)
  std::string description;                            // "Odin with MPI_direct, Wg=60ns from Opteron"
};

// LogGOPS of --machine (or the command line's) with the protocol of the MPI
// runtime accepting `paradigm` (--runtime, else the only one in the files;
// none: the machine's own S), then -S ... over both; the processor of
// --wg, of --processor, the one an imported model's compute requests reach
// (needs_processor; several Wg or none: UsageError), of the machine's file,
// or the only one with a Wg; named in the description only when
// needs_processor (measured computation uses none). Throws
// InputError for errors in the files (located), UsageError for an unknown
// or ambiguous component.
DirectMachine direct_machine(const DirectMachineRequest& request);

// How the program's ranks run, as the command line gives it (poems direct's
// --procs, --compute, --compute-scale, --stack-size, --isolation, --handover, --early, --host-cores,
// --epoch,
// --algorithm, --max-ranks-listed, --timeline, --receive-overhead).
struct DirectRunSettings {
  std::string procs;
  std::string compute = "measured";  // measured | model
  double compute_scale = 1;
  std::string stack = "256KiB";
  std::string isolation = "processes";  // processes | threads
  std::string handover = "one-cpu";     // one-cpu | spin | sleep
  std::string early = "on";             // on | off (DirectOptions::early_receive)
  std::string host_cores = "1";         // N, or auto (resolve_host_cores; `poems direct`'s default)
  std::int64_t epoch = -1;              // < 0: the host's time at the start
  std::vector<std::string> algorithms;  // OP=ALGORITHM
  std::size_t max_ranks_listed = 1024;
  std::string timeline;                    // "" = none; made absolute (the program writes it from its own directory)
  std::string receive_overhead = "match";  // match | wait (DirectOptions::receive_overhead_at_wait)
};
// The runtime's options on `machine`: UsageError naming the option for a
// value out of range or not understood. Progress is drawn by the program's
// process when this process has a progress scope (core/progress.h).
direct::DirectOptions direct_options(const DirectRunSettings& settings, const DirectMachine& machine);
// --host-cores auto (DirectOptions::host_cores 0 from direct_options): the
// CPUs this process may use, at most one per rank, for ranks as processes;
// 1 for one rank, ranks as threads, or a program that may ask for
// MPI_THREAD_MULTIPLE (its executable, `executable` its bytes, names
// MPI_Init_thread: granted on one host core only). Other values are kept.
// run_direct does this with the bytes it reads for the run's key.
void resolve_host_cores(direct::DirectOptions& options, std::string_view executable);

// A runnable program: `program` itself, or the binary poems-mpicxx built from it.
struct PreparedProgram {
  std::string binary;
  std::string compile_log;                  // the compiler's output
  std::vector<std::string> shared_globals;  // mutable globals every rank would share (docs/direct.md)
  std::shared_ptr<const base::TemporaryDirectory>
      build_directory;  // holds the binary built; removed with the last copy
};
// Throws InputError when the program is not an executable or a C/C++ source
// that compiles.
PreparedProgram prepare_program(const std::string& program);

struct DirectOutcome {
  DirectRun run;      // the program's result, or why there is none
  std::string error;  // "" = the run completed
  RunRecord::State record = RunRecord::State::NotStored;
  db::RowId run_id = 0;
  std::string store_error;
  std::string store_path;
};

// Runs `binary` as options.ranks simulated ranks and stores the run keyed by
// the program's bytes, the machine, the options and the arguments.
DirectOutcome run_direct(const std::string& program, const std::string& binary, const std::vector<std::string>& args,
                         const direct::DirectOptions& options, const Machine& machine, ProgramOutput output,
                         double timeout_seconds, Store& store);

}  // namespace poems::core
