// OTF2 archive → Trace. The MPI ranks are the members of the archive's
// OTF2_GROUP_TYPE_COMM_LOCATIONS group of paradigm MPI, in rank order (the
// standard layout Score-P and `poems trace` write); communicator groups list
// positions in that group, i.e. world ranks. Each rank's location is read
// on its own, in time order, after its local definitions (mapping tables).
#include "poems/trace/otf2_read.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include <otf2/otf2.h>

namespace poems::trace {

namespace fs = std::filesystem;

std::string anchor_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  if (!fs::is_directory(path, ec)) throw TraceError("'" + path + "' is neither an OTF2 anchor file nor a directory");
  std::vector<std::string> anchors;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".otf2") anchors.push_back(entry.path().string());
  if (anchors.empty()) throw TraceError("'" + path + "' holds no OTF2 anchor file (*.otf2)");
  if (anchors.size() > 1) {
    std::sort(anchors.begin(), anchors.end());
    throw TraceError("'" + path + "' holds " + std::to_string(anchors.size()) + " OTF2 anchor files (" + anchors[0] +
                     ", " + anchors[1] + ", ...); name one");
  }
  return anchors.front();
}

namespace {

// The ranges a trace's records must keep (docs/trace.md, section 3): MPI's
// tags, and message and collective sizes up to 2^53-1 bytes, as PSL's.
constexpr std::uint64_t kMaxTag = 0x7FFFFFFF;
constexpr std::uint64_t kMaxBytes = (std::uint64_t{1} << 53) - 1;

// A reference field's value as a message shows it: OTF2's undefined value by name.
std::string ref_text(std::uint64_t v) {
  if (v == OTF2_UNDEFINED_UINT32) return "4294967295 (OTF2's undefined value)";
  if (v == OTF2_UNDEFINED_UINT64) return "18446744073709551615 (OTF2's undefined value)";
  return std::to_string(v);
}

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Every file of the archive that OTF2 opens must be a regular file: opening a
// FIFO blocks forever and a device reads without end. A file that does not
// exist is left to OTF2, which reports it (or, for optional files, skips it).
void require_regular_file(const fs::path& file, const std::string& what) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw TraceError(file.string() + ": " + what + " cannot be examined: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    throw TraceError(file.string() + ": " + what + " is " + file_kind(st.st_mode) + ", not a regular file");
}

struct GroupDef {
  OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  std::vector<std::uint64_t> members;
};

struct RegionDef {
  std::string name;
  bool mpi = false;
};

struct CommDef {
  OTF2_StringRef name = OTF2_UNDEFINED_STRING;
  OTF2_GroupRef group = OTF2_UNDEFINED_GROUP;
};

struct MetricMember {
  OTF2_StringRef name = OTF2_UNDEFINED_STRING, unit = OTF2_UNDEFINED_STRING;
  OTF2_Base base = OTF2_BASE_DECIMAL;
  std::int64_t exponent = 0;
};

struct Definitions {
  std::unordered_map<OTF2_StringRef, std::string> strings;
  std::map<OTF2_MetricMemberRef, MetricMember> metric_members;
  std::map<OTF2_MetricRef, std::vector<OTF2_MetricMemberRef>> metric_classes;
  std::map<OTF2_RegionRef, std::pair<OTF2_StringRef, OTF2_Paradigm>> regions;
  std::map<OTF2_GroupRef, GroupDef> groups;
  std::map<OTF2_CommRef, CommDef> comms;
  std::uint64_t resolution = 0, offset = 0;
  std::set<OTF2_CommRef> inter_comms;
};

OTF2_CallbackCode on_clock(void* data, std::uint64_t resolution, std::uint64_t offset, std::uint64_t, std::uint64_t) {
  auto& d = *static_cast<Definitions*>(data);
  d.resolution = resolution;
  d.offset = offset;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_string(void* data, OTF2_StringRef self, const char* text) {
  static_cast<Definitions*>(data)->strings[self] = text ? text : "";
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_region(void* data, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
                            OTF2_RegionRole, OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef, std::uint32_t,
                            std::uint32_t) {
  static_cast<Definitions*>(data)->regions[self] = {name, paradigm};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_group(void* data, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm paradigm,
                           OTF2_GroupFlag, std::uint32_t count, const std::uint64_t* members) {
  GroupDef g;
  g.type = type;
  g.paradigm = paradigm;
  g.members.assign(members, members + count);
  static_cast<Definitions*>(data)->groups[self] = std::move(g);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_comm(void* data, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef,
                          OTF2_CommFlag) {
  static_cast<Definitions*>(data)->comms[self] = {name, group};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_metric_member(void* data, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef,
                                   OTF2_MetricType, OTF2_MetricMode, OTF2_Type, OTF2_Base base, std::int64_t exponent,
                                   OTF2_StringRef unit) {
  static_cast<Definitions*>(data)->metric_members[self] = {name, unit, base, exponent};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_metric_class(void* data, OTF2_MetricRef self, std::uint8_t count,
                                  const OTF2_MetricMemberRef* members, OTF2_MetricOccurrence, OTF2_RecorderKind) {
  static_cast<Definitions*>(data)->metric_classes[self].assign(members, members + count);
  return OTF2_CALLBACK_SUCCESS;
}

// The metric class holding a thread's CPU time, and its picoseconds per
// unit: ours ("poems: thread CPU time", ns) or Score-P's rusage ru_utime.
bool cpu_time_metric(const Definitions& d, OTF2_MetricRef& ref, double& ps_per_unit) {
  for (const auto& [cls, members] : d.metric_classes) {
    if (members.size() != 1) continue;
    auto m = d.metric_members.find(members.front());
    if (m == d.metric_members.end() || m->second.base != OTF2_BASE_DECIMAL) continue;
    auto text = [&](OTF2_StringRef s) {
      auto it = d.strings.find(s);
      return it == d.strings.end() ? std::string() : it->second;
    };
    const std::string name = text(m->second.name), unit = text(m->second.unit);
    if (name != "poems: thread CPU time" && name != "ru_utime") continue;
    double scale = unit == "s" ? 1 : unit == "ms" ? 1e-3 : unit == "us" ? 1e-6 : unit == "ns" ? 1e-9 : 0;
    if (scale == 0) continue;
    ref = cls;
    ps_per_unit = scale * 1e12 * std::pow(10.0, static_cast<double>(m->second.exponent));
    return true;
  }
  return false;
}

OTF2_CallbackCode on_inter_comm(void* data, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef, OTF2_GroupRef,
                                OTF2_CommRef, OTF2_CommFlag) {
  static_cast<Definitions*>(data)->inter_comms.insert(self);
  return OTF2_CALLBACK_SUCCESS;
}

Collective collective_of(OTF2_CollectiveOp op) {
  switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: return Collective::Barrier;
    case OTF2_COLLECTIVE_OP_BCAST: return Collective::Bcast;
    case OTF2_COLLECTIVE_OP_GATHER: return Collective::Gather;
    case OTF2_COLLECTIVE_OP_GATHERV: return Collective::Gatherv;
    case OTF2_COLLECTIVE_OP_SCATTER: return Collective::Scatter;
    case OTF2_COLLECTIVE_OP_SCATTERV: return Collective::Scatterv;
    case OTF2_COLLECTIVE_OP_ALLGATHER: return Collective::Allgather;
    case OTF2_COLLECTIVE_OP_ALLGATHERV: return Collective::Allgatherv;
    case OTF2_COLLECTIVE_OP_ALLTOALL: return Collective::Alltoall;
    case OTF2_COLLECTIVE_OP_ALLTOALLV: return Collective::Alltoallv;
    case OTF2_COLLECTIVE_OP_ALLTOALLW: return Collective::Alltoallw;
    case OTF2_COLLECTIVE_OP_ALLREDUCE: return Collective::Allreduce;
    case OTF2_COLLECTIVE_OP_REDUCE: return Collective::Reduce;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER: return Collective::ReduceScatter;
    case OTF2_COLLECTIVE_OP_SCAN: return Collective::Scan;
    case OTF2_COLLECTIVE_OP_EXSCAN: return Collective::Exscan;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: return Collective::ReduceScatterBlock;
    case OTF2_COLLECTIVE_OP_CREATE_HANDLE:
    case OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE: return Collective::CreateHandle;
    case OTF2_COLLECTIVE_OP_DESTROY_HANDLE:
    case OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE: return Collective::DestroyHandle;
    default: return Collective::Other;
  }
}

// One rank's block of a collective from its sizeSent/sizeReceived, under
// Score-P's counting (docs/trace.md): n members, this rank at `me`.
std::uint64_t block_estimate(Collective op, std::uint64_t sent, std::uint64_t received, std::uint64_t n,
                             std::uint64_t me, bool root) {
  if (n == 0) n = 1;
  switch (op) {
    case Collective::Bcast: return received > 0 ? received : sent / n;
    case Collective::Reduce:
    case Collective::Gather: return std::max(sent, received / n);
    case Collective::Scatter: return std::max(received, sent / n);
    case Collective::Gatherv: return root ? received / n : sent;
    case Collective::Scatterv: return root ? sent / n : received;
    case Collective::Allreduce:
    case Collective::Allgather:
    case Collective::Alltoall:
    case Collective::ReduceScatterBlock: return std::max(sent, received) / n;
    case Collective::Allgatherv: return received / n;
    case Collective::Alltoallv:
    case Collective::Alltoallw:
    case Collective::ReduceScatter: return sent / n;
    case Collective::Scan: return received / (me + 1);
    case Collective::Exscan: return me > 0 ? received / me : (n > 1 ? sent / (n - 1) : 0);
    default: return 0;
  }
}

struct Pending {
  std::uint32_t step = 0;
  std::uint32_t slot = 0;
};

// Builds one rank's steps from its location's events.
struct RankReader {
  Trace* trace = nullptr;
  std::uint32_t rank = 0;
  const std::map<OTF2_CommRef, std::uint32_t>* comm_index = nullptr;
  const std::set<OTF2_CommRef>* unreplayed_comms = nullptr;  // defined, but not replayed (intercommunicators)
  const std::map<OTF2_RegionRef, std::uint32_t>* region_index = nullptr;
  const std::vector<bool>* region_is_mpi = nullptr;
  std::uint64_t offset = 0, resolution = 1;
  std::uint32_t outside_region = 0;  // the synthetic region of MPI records outside any MPI call
  bool cpu_metric = false;           // the archive has a CPU-time metric, class `cpu_class`
  OTF2_MetricRef cpu_class = 0;
  double cpu_ps_per_unit = 0;
  Picoseconds cpu_now = 0, cpu_outside = 0;  // the thread's CPU time: latest, and at the last call's end
  bool cpu_seen = false;

  int depth = 0;
  bool started = false;
  bool computing = false;  // the last step is computation since the last call: extend it
  OTF2_TimeStamp last_outside = 0;
  std::uint32_t call = kNone;
  std::unordered_map<std::uint64_t, Pending> requests;
  std::uint64_t events = 0;
  std::uint64_t unreplayed_comm = 0, unknown_request = 0, nonblocking_collectives = 0, rma = 0;

  // The record being read, for messages, and the first one that is not
  // valid: it names what the archive does not define or leaves a range.
  const char* record = "";
  std::uint64_t position = 0;
  OTF2_TimeStamp time = 0, last_time = 0;
  std::string error;

  Rank& out() { return trace->ranks[rank]; }

  void at(const char* name, std::uint64_t event_position, OTF2_TimeStamp t) {
    record = name;
    position = event_position;
    time = t;
  }

  void fail(const std::string& what) {
    if (error.empty())
      error = "rank " + std::to_string(rank) + ", event record " + std::to_string(position) + " (" + record +
              " at time " + std::to_string(time) + "): " + what;
  }

  OTF2_CallbackCode result() const { return error.empty() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT; }

  Picoseconds ps(OTF2_TimeStamp t) const {
    const OTF2_TimeStamp since = t > offset ? t - offset : 0;
    return static_cast<Picoseconds>(static_cast<unsigned __int128>(since) * 1000000000000ull / resolution);
  }

  void seen(OTF2_TimeStamp t) {
    // OTF2 keeps a location's records in time order; reversed time would
    // make negative durations.
    if (events > 0 && t < last_time)
      fail("field time = " + std::to_string(t) + " is before the previous record's time " + std::to_string(last_time) +
           " (the timestamps go backwards)");
    last_time = std::max(last_time, t);
    ++events;
    if (!started) {
      started = true;
      last_outside = t;
      out().begin = ps(t);
    }
    out().end = std::max(out().end, ps(t));
  }

  void compute_until(OTF2_TimeStamp t) {
    if (t <= last_outside) return;
    const Picoseconds d = ps(t) - ps(last_outside);
    const Picoseconds cpu = cpu_now > cpu_outside ? cpu_now - cpu_outside : 0;
    cpu_outside = cpu_now;
    std::vector<Step>& steps = out().steps;
    if (computing) {
      steps.back().value += d;
      steps.back().cpu += cpu;
    } else if (d > 0) {
      Step s;
      s.kind = StepKind::Compute;
      s.value = d;
      s.cpu = cpu;
      steps.push_back(s);
      computing = true;
    }
    last_outside = t;
  }

  // Computation is never merged across a call, even one without steps: a
  // window may start or end at any call.
  void open_call(std::uint32_t region, OTF2_TimeStamp t) {
    compute_until(t);
    computing = false;
    CallRecord c;
    c.region = region;
    c.enter = c.leave = ps(t);
    c.first_step = c.end_step = static_cast<std::uint32_t>(out().steps.size());
    call = static_cast<std::uint32_t>(out().calls.size());
    out().calls.push_back(c);
  }

  void close_call(OTF2_TimeStamp t) {
    CallRecord& c = out().calls[call];
    c.leave = ps(t);
    c.end_step = static_cast<std::uint32_t>(out().steps.size());
    call = kNone;
    last_outside = t;
    cpu_outside = cpu_now;
  }

  // A metric record comes just before the enter or leave of the same time.
  void metric(OTF2_TimeStamp t, OTF2_MetricRef cls, std::uint8_t n, const OTF2_Type* types,
              const OTF2_MetricValue* values) {
    seen(t);
    if (!cpu_metric || cls != cpu_class || n != 1) return;
    const double v = types[0] == OTF2_TYPE_DOUBLE  ? values[0].floating_point
                     : types[0] == OTF2_TYPE_INT64 ? static_cast<double>(values[0].signed_int)
                                                   : static_cast<double>(values[0].unsigned_int);
    cpu_now = static_cast<Picoseconds>(v * cpu_ps_per_unit);
    if (!cpu_seen) cpu_outside = cpu_now;
    cpu_seen = true;
  }

  bool region_defined(OTF2_RegionRef region) {
    if (region_index->count(region)) return true;
    fail("field region = " + ref_text(region) + ": the archive defines no region " + ref_text(region));
    return false;
  }

  void enter(OTF2_TimeStamp t, OTF2_RegionRef region) {
    seen(t);
    if (!region_defined(region)) return;
    auto it = region_index->find(region);
    if (!(*region_is_mpi)[it->second]) return;  // user code: computation
    if (depth++ == 0) open_call(it->second, t);
  }

  void leave(OTF2_TimeStamp t, OTF2_RegionRef region) {
    seen(t);
    if (!region_defined(region)) return;
    auto it = region_index->find(region);
    if (!(*region_is_mpi)[it->second] || depth == 0) return;
    if (--depth == 0) close_call(t);
  }

  // A step of the current call (an implicit one if the record sits outside any MPI call).
  Step& add(Step s, OTF2_TimeStamp t) {
    const bool implicit = call == kNone;
    if (implicit) open_call(outside_region, t);
    s.call = call;
    out().steps.push_back(s);
    if (implicit) close_call(t);
    return out().steps.back();
  }

  // The replayed communicator `ref` names; false for one the archive
  // defines but the replay leaves out (counted), and for one it does not
  // define (an error).
  bool comm_of(OTF2_CommRef ref, std::uint32_t& index) {
    auto it = comm_index->find(ref);
    if (it != comm_index->end()) {
      index = it->second;
      return true;
    }
    if (unreplayed_comms->count(ref))
      ++unreplayed_comm;
    else
      fail("field communicator = " + ref_text(ref) + ": the archive defines no communicator " + ref_text(ref));
    return false;
  }

  std::uint32_t comm_size(std::uint32_t comm) const {
    const Communicator& c = trace->comms[comm];
    return c.self ? 1 : static_cast<std::uint32_t>(c.members.size());
  }

  void not_a_rank(const char* field, std::uint32_t value, std::uint32_t comm) {
    const std::uint32_t n = comm_size(comm);
    fail("field " + std::string(field) + " = " + ref_text(value) + ": not a rank of communicator '" +
         trace->comms[comm].name + "', which has " + std::to_string(n) + (n == 1 ? " rank (0)" : " ranks (0 to ") +
         (n == 1 ? "" : std::to_string(n - 1) + ")"));
  }

  // World rank of `peer` in communicator `comm`, or -1 (an error).
  std::int32_t world(std::uint32_t comm, std::uint32_t peer, const char* field) {
    const Communicator& c = trace->comms[comm];
    if (c.self && peer == 0) return static_cast<std::int32_t>(rank);
    if (!c.self && peer < c.members.size()) return static_cast<std::int32_t>(c.members[peer]);
    not_a_rank(field, peer, comm);
    return -1;
  }

  void check_range(const char* field, std::uint64_t value, std::uint64_t max, const char* range) {
    if (value > max) fail("field " + std::string(field) + " = " + std::to_string(value) + ": outside " + range);
  }

  // A point-to-point record's fields: its peer's world rank, or -1 if it is
  // left out (on an intercommunicator) or not valid (an error).
  std::int32_t p2p_peer(StepKind kind, std::uint32_t peer, OTF2_CommRef ref, std::uint32_t tag, std::uint64_t bytes,
                        std::uint32_t& comm) {
    comm = 0;
    if (!comm_of(ref, comm)) return -1;
    const std::int32_t world_peer = world(comm, peer, kind == StepKind::Send ? "receiver" : "sender");
    check_range("msgTag", tag, kMaxTag, "MPI's tags, 0 to 2147483647 (2^31-1)");
    check_range("msgLength", bytes, kMaxBytes, "the message sizes a trace may hold, 0 to 2^53-1 bytes");
    return world_peer;
  }

  void p2p(StepKind kind, OTF2_TimeStamp t, std::uint32_t peer, OTF2_CommRef ref, std::uint32_t tag,
           std::uint64_t bytes, bool nonblocking, std::uint64_t request) {
    seen(t);
    std::uint32_t comm = 0;
    Step s;
    s.kind = kind;
    s.peer = p2p_peer(kind, peer, ref, tag, bytes, comm);
    s.comm = comm;
    s.tag = static_cast<std::int32_t>(tag);
    s.value = bytes;
    s.dropped = s.peer < 0;
    if (nonblocking) {
      s.nonblocking = true;
      s.request = out().request_slots++;
    }
    add(s, t);
    if (nonblocking) requests[request] = {static_cast<std::uint32_t>(out().steps.size() - 1), s.request};
  }

  void irecv_request(OTF2_TimeStamp t, std::uint64_t request) {
    seen(t);
    Step s;
    s.kind = StepKind::Recv;
    s.nonblocking = true;
    s.peer = -1;  // known at completion
    s.request = out().request_slots++;
    add(s, t);
    requests[request] = {static_cast<std::uint32_t>(out().steps.size() - 1), s.request};
  }

  void complete(OTF2_TimeStamp t, std::uint64_t request) {
    seen(t);
    auto it = requests.find(request);
    if (it == requests.end()) {
      ++unknown_request;
      return;
    }
    Step s;
    s.kind = StepKind::Complete;
    s.request = it->second.slot;
    requests.erase(it);
    add(s, t);
  }

  void irecv_complete(OTF2_TimeStamp t, std::uint32_t sender, OTF2_CommRef ref, std::uint32_t tag, std::uint64_t bytes,
                      std::uint64_t request) {
    auto it = requests.find(request);
    if (it == requests.end()) {  // no request record: a receive at its completion
      p2p(StepKind::Recv, t, sender, ref, tag, bytes, false, 0);
      return;
    }
    Step& posted = out().steps[it->second.step];
    std::uint32_t comm = 0;
    posted.peer = p2p_peer(StepKind::Recv, sender, ref, tag, bytes, comm);
    posted.comm = comm;
    posted.tag = static_cast<std::int32_t>(tag);
    posted.value = bytes;
    posted.dropped = posted.peer < 0;
    complete(t, request);
  }

  void cancelled(OTF2_TimeStamp t, std::uint64_t request) {
    seen(t);
    auto it = requests.find(request);
    if (it == requests.end()) return;
    out().steps[it->second.step].dropped = true;
    requests.erase(it);
  }

  void collective(OTF2_TimeStamp t, OTF2_CollectiveOp op, OTF2_CommRef ref, std::uint32_t root, std::uint64_t sent,
                  std::uint64_t received) {
    seen(t);
    std::uint32_t comm = 0;
    Step s;
    s.kind = StepKind::Collective;
    s.collective = collective_of(op);
    if (op > OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE)
      fail("field collectiveOp = " + std::to_string(op) + ": not a collective operation of OTF2");
    const bool known = comm_of(ref, comm);
    if (known) {
      // A root names a rank of the communicator; the rooted operations need one.
      const bool rooted = s.collective == Collective::Bcast || s.collective == Collective::Reduce ||
                          s.collective == Collective::Gather || s.collective == Collective::Gatherv ||
                          s.collective == Collective::Scatter || s.collective == Collective::Scatterv;
      if (root < OTF2_COLLECTIVE_ROOT_THIS_GROUP && root >= comm_size(comm))
        not_a_rank("root", root, comm);
      else if (rooted && root >= OTF2_COLLECTIVE_ROOT_THIS_GROUP)
        fail("field root = " + ref_text(root) + ": a " + collective_name(s.collective) + " needs the rank of its root");
      check_range("sizeSent", sent, kMaxBytes, "the byte counts a trace may hold, 0 to 2^53-1 bytes");
      check_range("sizeReceived", received, kMaxBytes, "the byte counts a trace may hold, 0 to 2^53-1 bytes");
    }
    s.dropped =
        !known || !error.empty() || s.collective == Collective::DestroyHandle || s.collective == Collective::Other;
    s.comm = comm;
    s.peer = root >= OTF2_COLLECTIVE_ROOT_THIS_GROUP ? -1 : static_cast<std::int32_t>(root);
    if (!s.dropped) {
      const Communicator& c = trace->comms[comm];
      const std::uint64_t n = c.self ? 1 : c.members.size();
      auto me = std::find(c.members.begin(), c.members.end(), rank);
      const std::uint64_t position =
          c.self || me == c.members.end() ? 0 : static_cast<std::uint64_t>(me - c.members.begin());
      s.value = block_estimate(s.collective, sent, received, n, position,
                               s.peer >= 0 && static_cast<std::uint64_t>(s.peer) == position);
    }
    add(s, t);
  }

  void finish() {
    if (call != kNone) close_call(last_outside);
    // The run is what happens between MPI_Init and MPI_Finalize.
    Rank& me = out();
    if (!me.calls.empty()) {
      const std::string& first = trace->regions[me.calls.front().region];
      if (first == "MPI_Init" || first == "MPI_Init_thread") me.begin = me.calls.front().leave;
      if (trace->regions[me.calls.back().region] == "MPI_Finalize" && me.calls.size() > 1)
        me.end = me.calls.back().enter;
    }
    std::uint64_t open = 0;
    for (const auto& [id, p] : requests) {
      Step& s = out().steps[p.step];
      if (s.kind == StepKind::Recv) {
        s.dropped = true;  // its source and tag were never recorded
        ++open;
      }
    }
    auto note = [&](std::uint64_t n, const std::string& what) {
      if (n > 0) trace->warnings.push_back("rank " + std::to_string(rank) + ": " + std::to_string(n) + " " + what);
    };
    note(open, "nonblocking receives never completed in the trace; left out");
    note(unreplayed_comm, "records are on intercommunicators, which the replay leaves out");
    note(unknown_request, "completions name a request the trace never started; ignored");
    note(nonblocking_collectives, "nonblocking collective records are not replayed; their time counts as MPI time");
    note(rma, "one-sided (RMA) records are not replayed");
  }
};

#define POEMS_READER(data) (*static_cast<RankReader*>(data))
#define POEMS_RECORD(name) POEMS_READER(d).at(name, position, t)

OTF2_CallbackCode ev_enter(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*,
                           OTF2_RegionRef region) {
  POEMS_RECORD("Enter");
  POEMS_READER(d).enter(t, region);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_leave(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*,
                           OTF2_RegionRef region) {
  POEMS_RECORD("Leave");
  POEMS_READER(d).leave(t, region);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_send(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*,
                          std::uint32_t receiver, OTF2_CommRef comm, std::uint32_t tag, std::uint64_t bytes) {
  POEMS_RECORD("MpiSend");
  POEMS_READER(d).p2p(StepKind::Send, t, receiver, comm, tag, bytes, false, 0);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_isend(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*,
                           std::uint32_t receiver, OTF2_CommRef comm, std::uint32_t tag, std::uint64_t bytes,
                           std::uint64_t request) {
  POEMS_RECORD("MpiIsend");
  POEMS_READER(d).p2p(StepKind::Send, t, receiver, comm, tag, bytes, true, request);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_isend_complete(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d,
                                    OTF2_AttributeList*, std::uint64_t request) {
  POEMS_RECORD("MpiIsendComplete");
  POEMS_READER(d).complete(t, request);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_irecv_request(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d,
                                   OTF2_AttributeList*, std::uint64_t request) {
  POEMS_RECORD("MpiIrecvRequest");
  POEMS_READER(d).irecv_request(t, request);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_recv(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*,
                          std::uint32_t sender, OTF2_CommRef comm, std::uint32_t tag, std::uint64_t bytes) {
  POEMS_RECORD("MpiRecv");
  POEMS_READER(d).p2p(StepKind::Recv, t, sender, comm, tag, bytes, false, 0);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_irecv(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*,
                           std::uint32_t sender, OTF2_CommRef comm, std::uint32_t tag, std::uint64_t bytes,
                           std::uint64_t request) {
  POEMS_RECORD("MpiIrecv");
  POEMS_READER(d).irecv_complete(t, sender, comm, tag, bytes, request);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_cancelled(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*,
                               std::uint64_t request) {
  POEMS_RECORD("MpiRequestCancelled");
  POEMS_READER(d).cancelled(t, request);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_collective_end(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d,
                                    OTF2_AttributeList*, OTF2_CollectiveOp op, OTF2_CommRef comm, std::uint32_t root,
                                    std::uint64_t sent, std::uint64_t received) {
  POEMS_RECORD("MpiCollectiveEnd");
  POEMS_READER(d).collective(t, op, comm, root, sent, received);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_nonblocking_collective(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d,
                                            OTF2_AttributeList*, std::uint64_t) {
  POEMS_RECORD("NonBlockingCollectiveRequest");
  POEMS_READER(d).seen(t);
  ++POEMS_READER(d).nonblocking_collectives;
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_rma(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*,
                         OTF2_RmaWinRef, std::uint32_t, std::uint64_t, std::uint64_t) {
  POEMS_RECORD("RmaPut/RmaGet");
  POEMS_READER(d).seen(t);
  ++POEMS_READER(d).rma;
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_metric(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*,
                            OTF2_MetricRef cls, std::uint8_t n, const OTF2_Type* types,
                            const OTF2_MetricValue* values) {
  POEMS_RECORD("Metric");
  POEMS_READER(d).metric(t, cls, n, types, values);
  return POEMS_READER(d).result();
}
OTF2_CallbackCode ev_unknown(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t position, void* d, OTF2_AttributeList*) {
  POEMS_RECORD("an unknown record");
  POEMS_READER(d).seen(t);
  return POEMS_READER(d).result();
}

#undef POEMS_RECORD
#undef POEMS_READER

struct ReaderGuard {
  OTF2_Reader* reader;
  ~ReaderGuard() {
    if (reader) OTF2_Reader_Close(reader);
  }
};

void check(OTF2_ErrorCode code, const std::string& what, const std::string& path) {
  if (code != OTF2_SUCCESS) throw TraceError(path + ": " + what + ": " + OTF2_Error_GetDescription(code));
}

// OTF2 prints its internal errors to stderr; the reader reports its own,
// one line that names the archive.
OTF2_ErrorCode quiet(void*, const char*, std::uint64_t, const char*, OTF2_ErrorCode code, const char*, va_list) {
  return code;
}

// An anchor file starts with an OTF2 buffer header: two bytes, then "OTF2"
// (as libotf2 3.0 writes it).
bool has_otf2_header(const std::string& anchor) {
  std::ifstream in(anchor, std::ios::binary);
  char head[6] = {};
  return in.read(head, sizeof head) && std::string_view(head + 2, 4) == "OTF2";
}

}  // namespace

Trace read_trace(const std::string& path) {
  const std::string anchor = anchor_file(path);
  // libotf2 leaks its half-opened archive when the anchor is not OTF2 at all
  // (seen under LeakSanitizer), so such a file is refused before it is opened.
  if (!has_otf2_header(anchor)) throw TraceError(anchor + ": cannot be opened as an OTF2 archive");
  // OTF2's file names: ARCHIVE.def, and ARCHIVE/LOCATION.evt and .def.
  const fs::path archive_dir = fs::path(anchor).parent_path(), archive_name = fs::path(anchor).stem();
  const fs::path location_dir = archive_dir / archive_name;
  require_regular_file(archive_dir / (archive_name.string() + ".def"), "the archive's global definitions file");
  OTF2_Error_RegisterCallback(quiet, nullptr);
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (!reader) throw TraceError(anchor + ": cannot be opened as an OTF2 archive");
  ReaderGuard guard{reader};
  check(OTF2_Reader_SetSerialCollectiveCallbacks(reader), "cannot set up the reader", anchor);

  Trace trace;
  trace.path = anchor;
  char* creator = nullptr;
  if (OTF2_Reader_GetCreator(reader, &creator) == OTF2_SUCCESS && creator) {
    trace.creator = creator;
    free(creator);
  }

  // ---- global definitions
  Definitions defs;
  {
    OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader);
    if (!gdr) throw TraceError(anchor + ": the archive has no global definitions");
    OTF2_GlobalDefReaderCallbacks* cb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, on_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, on_region);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cb, on_inter_comm);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, on_metric_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, on_metric_class);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, cb, &defs);
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    std::uint64_t n = 0;
    check(OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &n), "cannot read the global definitions", anchor);
    OTF2_Reader_CloseGlobalDefReader(reader, gdr);
  }
  if (defs.resolution == 0) throw TraceError(anchor + ": the archive defines no clock (ClockProperties)");
  trace.timer_resolution = defs.resolution;

  // The MPI ranks: the locations group of paradigm MPI.
  const GroupDef* ranks = nullptr;
  for (const auto& [ref, g] : defs.groups)
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && g.paradigm == OTF2_PARADIGM_MPI) ranks = &g;
  if (!ranks || ranks->members.empty())
    throw TraceError(anchor + ": the archive has no MPI ranks (no group of type COMM_LOCATIONS with paradigm MPI)");
  const std::vector<std::uint64_t> locations = ranks->members;
  trace.ranks.resize(locations.size());

  // Communicators: members are positions in the locations group, i.e. world ranks.
  std::set<std::uint64_t> distinct;
  for (std::uint64_t loc : locations)
    if (!distinct.insert(loc).second)
      throw TraceError(anchor + ": the MPI ranks' locations group lists location " + std::to_string(loc) + " twice");

  // Communicators: members are positions in the locations group, i.e. world ranks.
  std::map<OTF2_CommRef, std::uint32_t> comm_index;
  std::set<OTF2_CommRef> unreplayed_comms = defs.inter_comms;
  for (const auto& [ref, c] : defs.comms) {
    Communicator comm;
    const auto name = defs.strings.find(c.name);
    comm.name = name != defs.strings.end() && !name->second.empty() ? name->second : "comm " + std::to_string(ref);
    auto g = defs.groups.find(c.group);
    if (g == defs.groups.end())
      throw TraceError(anchor + ": communicator '" + comm.name + "' (" + std::to_string(ref) + ") names group " +
                       ref_text(c.group) + ", which the archive does not define");
    if (g->second.type == OTF2_GROUP_TYPE_COMM_SELF) {
      comm.self = true;
    } else if (g->second.type == OTF2_GROUP_TYPE_COMM_GROUP) {
      std::vector<bool> member(locations.size(), false);
      for (std::uint64_t m : g->second.members) {
        if (m >= locations.size())
          throw TraceError(anchor + ": communicator '" + comm.name + "' names rank " + std::to_string(m) +
                           ", which the archive does not have (it has " + std::to_string(locations.size()) + " ranks)");
        if (member[m])
          throw TraceError(anchor + ": communicator '" + comm.name + "' lists rank " + std::to_string(m) + " twice");
        member[m] = true;
        comm.members.push_back(static_cast<std::uint32_t>(m));
      }
    } else {
      unreplayed_comms.insert(ref);  // defined, of a kind the replay does not know: its records are counted
      continue;
    }
    comm_index[ref] = static_cast<std::uint32_t>(trace.comms.size());
    trace.comms.push_back(std::move(comm));
  }
  if (!defs.inter_comms.empty())
    trace.warnings.push_back(std::to_string(defs.inter_comms.size()) +
                             " intercommunicators are defined; records on them are left out");

  // Regions: names, and which are MPI calls.
  std::map<OTF2_RegionRef, std::uint32_t> region_index;
  std::vector<bool> region_is_mpi;
  for (const auto& [ref, r] : defs.regions) {
    auto name = defs.strings.find(r.first);
    std::string text = name != defs.strings.end() ? name->second : "region " + std::to_string(ref);
    const bool mpi = r.second == OTF2_PARADIGM_MPI || (r.second == OTF2_PARADIGM_UNKNOWN && text.rfind("MPI_", 0) == 0);
    region_index[ref] = static_cast<std::uint32_t>(trace.regions.size());
    trace.regions.push_back(std::move(text));
    region_is_mpi.push_back(mpi);
  }
  const auto outside_region = static_cast<std::uint32_t>(trace.regions.size());
  trace.regions.push_back("(MPI record outside an MPI call)");
  region_is_mpi.push_back(true);

  // ---- local definitions (mapping tables), then each rank's events
  for (std::size_t r = 0; r < locations.size(); ++r) {
    const std::string loc = std::to_string(locations[r]);
    require_regular_file(location_dir / (loc + ".evt"), "the event file of rank " + std::to_string(r));
    require_regular_file(location_dir / (loc + ".def"), "the local definitions file of rank " + std::to_string(r));
  }
  for (std::uint64_t loc : locations) check(OTF2_Reader_SelectLocation(reader, loc), "bad location", anchor);
  const bool have_defs = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  check(OTF2_Reader_OpenEvtFiles(reader), "cannot open the event files", anchor);
  std::vector<OTF2_EvtReader*> evt(locations.size(), nullptr);
  for (std::size_t r = 0; r < locations.size(); ++r) {
    if (have_defs) {
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, locations[r]);
      if (dr) {
        std::uint64_t n = 0;
        OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &n);
        OTF2_Reader_CloseDefReader(reader, dr);
      }
    }
    evt[r] = OTF2_Reader_GetEvtReader(reader, locations[r]);
    if (!evt[r]) throw TraceError(anchor + ": no events for rank " + std::to_string(r));
  }
  if (have_defs) OTF2_Reader_CloseDefFiles(reader);

  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb, ev_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, ev_leave);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, ev_send);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, ev_isend);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, ev_isend_complete);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, ev_irecv_request);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, ev_recv);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, ev_irecv);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, ev_cancelled);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, ev_collective_end);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, ev_nonblocking_collective);
  OTF2_EvtReaderCallbacks_SetRmaPutCallback(cb, ev_rma);
  OTF2_EvtReaderCallbacks_SetRmaGetCallback(cb, ev_rma);
  OTF2_EvtReaderCallbacks_SetMetricCallback(cb, ev_metric);
  OTF2_EvtReaderCallbacks_SetUnknownCallback(cb, ev_unknown);
  OTF2_MetricRef cpu_class = 0;
  double cpu_ps_per_unit = 0;
  const bool cpu_metric = cpu_time_metric(defs, cpu_class, cpu_ps_per_unit);
  bool cpu_everywhere = cpu_metric;
  for (std::size_t r = 0; r < locations.size(); ++r) {
    RankReader rr;
    rr.trace = &trace;
    rr.rank = static_cast<std::uint32_t>(r);
    rr.comm_index = &comm_index;
    rr.unreplayed_comms = &unreplayed_comms;
    rr.region_index = &region_index;
    rr.region_is_mpi = &region_is_mpi;
    rr.offset = defs.offset;
    rr.resolution = defs.resolution;
    rr.outside_region = outside_region;
    rr.cpu_metric = cpu_metric;
    rr.cpu_class = cpu_class;
    rr.cpu_ps_per_unit = cpu_ps_per_unit;
    OTF2_Reader_RegisterEvtCallbacks(reader, evt[r], cb, &rr);
    std::uint64_t n = 0;
    const OTF2_ErrorCode code = OTF2_Reader_ReadAllLocalEvents(reader, evt[r], &n);
    if (!rr.error.empty()) {
      OTF2_EvtReaderCallbacks_Delete(cb);
      throw TraceError(anchor + ": " + rr.error);
    }
    if (code != OTF2_SUCCESS) {
      OTF2_EvtReaderCallbacks_Delete(cb);
      throw TraceError(anchor + ": cannot read the events of rank " + std::to_string(r) + ": " +
                       OTF2_Error_GetDescription(code));
    }
    rr.finish();
    cpu_everywhere = cpu_everywhere && rr.cpu_seen;
    trace.events += n;
    OTF2_Reader_CloseEvtReader(reader, evt[r]);
  }
  OTF2_EvtReaderCallbacks_Delete(cb);
  OTF2_Reader_CloseEvtFiles(reader);
  trace.cpu_time = cpu_everywhere;
  link(trace);
  return trace;
}

}  // namespace poems::trace
