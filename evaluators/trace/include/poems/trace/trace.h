// A recorded MPI run as the replay needs it (docs/trace.md, "Replay"): for
// every rank, its program in order — computation between MPI calls, and the
// communication each call started or completed — with the traced matching
// of every message and every collective's instance on its communicator.
// Built from an OTF2 archive by read_trace() (poems/trace/otf2_read.h).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/schedule.h"

namespace poems::trace {

using taskgraph::Picoseconds;

// An archive that cannot be read or replayed: the message says what and where.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Collective operations as OTF2 names them; the replay lowers each to the
// taskgraph collectives library (docs/trace.md, "Collectives").
enum class Collective : std::uint8_t {
  Barrier,
  Bcast,
  Gather,
  Gatherv,
  Scatter,
  Scatterv,
  Allgather,
  Allgatherv,
  Alltoall,
  Alltoallv,
  Alltoallw,
  Allreduce,
  Reduce,
  ReduceScatter,
  Scan,
  Exscan,
  ReduceScatterBlock,
  CreateHandle,
  DestroyHandle,
  Other
};
const char* collective_name(Collective c);

enum class StepKind : std::uint8_t {
  Compute,     // time outside MPI calls: `value` picoseconds on the traced machine
  Send,        // a message sent to `peer`
  Recv,        // a receive of a message from `peer` (the traced source, wildcards resolved)
  Complete,    // the nonblocking operation `request` completed in this call
  Collective,  // a collective on `comm`; `value` its per-rank block in bytes (unified over the members)
};

inline constexpr std::uint32_t kNone = ~std::uint32_t{0};

// One step of a rank's program, 48 bytes. Steps with the same `call` come
// from one MPI call: what it starts, it starts at once, and the call ends
// when its blocking parts are done (docs/trace.md).
struct Step {
  StepKind kind = StepKind::Compute;
  bool nonblocking = false;  // Send/Recv with a request, completed by a later Complete step
  Collective collective = Collective::Other;
  bool dropped = false;           // left out of the replay (unmatched, incomplete; see Trace::warnings)
  std::uint32_t call = kNone;     // index into Rank::calls (kNone for Compute)
  std::int32_t peer = 0;          // Send/Recv: world rank; Collective: root in `comm`, -1 none
  std::int32_t tag = 0;           // Send/Recv
  std::uint32_t comm = 0;         // index into Trace::comms
  std::uint32_t request = kNone;  // Send/Recv nonblocking and Complete: the rank's request slot;
                                  // Collective: its sequence number on `comm`
  std::uint32_t message = kNone;  // Send/Recv: index into Trace::messages once matched
  std::uint32_t pad2 = 0;
  std::uint64_t value = 0;  // Compute: ps; Send/Recv: bytes; Collective: block bytes
  std::uint64_t cpu = 0;    // Compute: ps of the thread's CPU time, if the archive has it (Trace::cpu_time)
};

// One MPI call of a rank: its region, when it ran, which steps it holds.
struct CallRecord {
  std::uint32_t region = 0;          // index into Trace::regions
  Picoseconds enter = 0, leave = 0;  // since the trace's global offset
  std::uint32_t first_step = 0, end_step = 0;
};

struct Rank {
  std::vector<Step> steps;
  std::vector<CallRecord> calls;
  std::uint32_t request_slots = 0;  // nonblocking operations (Step::request < this)
  // The run: from the end of MPI_Init (else the first event) to the start of
  // MPI_Finalize (else the last event), since the trace's global offset.
  Picoseconds begin = 0, end = 0;
};

struct Communicator {
  std::string name;
  std::vector<std::uint32_t> members;  // world ranks in the communicator's rank order
  bool self = false;                   // MPI_COMM_SELF-like: each rank alone
};

// A message: its send and its receive step.
struct Message {
  std::uint32_t sender = 0, send_step = 0;
  std::uint32_t receiver = 0, recv_step = 0;
};

struct Trace {
  std::string path;                  // the anchor file read
  std::string creator;               // who wrote it ("poems trace", "Score-P 8.1", ...)
  std::vector<Rank> ranks;           // by MPI rank in the world
  std::vector<Communicator> comms;   // comms[0] is the world
  std::vector<std::string> regions;  // region names
  std::vector<Message> messages;
  std::uint64_t timer_resolution = 0;  // ticks per second in the archive
  std::vector<std::string> warnings;   // what was dropped or approximated while reading
  std::uint64_t events = 0;            // event records read
  bool cpu_time = false;               // computation also as CPU time (Step::cpu): a CPU-time metric was recorded

  std::uint64_t calls() const;
  Picoseconds compute() const;  // all ranks' Compute steps
  // The measured run: the earliest Rank::begin to the latest Rank::end.
  Picoseconds measured() const;
};

// Matches sends with receives per (sender, receiver, communicator, tag) in
// program order (MPI's non-overtaking rule; the receives with their traced
// sources and tags) and checks every collective instance against its
// communicator's members, unifying its block size. Unmatched messages and
// incomplete collectives are dropped with a warning in `trace.warnings`.
// read_trace() calls it; tests that build a Trace by hand call it too.
void link(Trace& trace);

}  // namespace poems::trace
