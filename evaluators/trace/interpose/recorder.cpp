// One OTF2 archive per run, one location per MPI process (docs/trace.md,
// "The archive"). Events go into OTF2's buffered writer (128 MiB per process
// before OTF2 flushes a chunk to disk); definitions are unified across the
// processes at MPI_Finalize: regions are the same fixed list everywhere,
// communicators are named by a key their members agree on when they are
// created, and every process writes a mapping table from its local
// communicator ids to the global ones.
#include "recorder.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <otf2/otf2.h>

#define OTF2_MPI_USE_PMPI
#include <otf2/OTF2_MPI_Collectives.h>

namespace poems::trace::interpose {

namespace {

constexpr std::uint64_t kWorldKey = 0, kSelfKey = 1;
// The metric's name; the replay reads CPU time from a metric of this name
// (or Score-P's ru_utime).
constexpr const char* kCpuTimeName = "poems: thread CPU time";
constexpr std::uint32_t kWorldId = 0, kSelfId = 1;

struct CommunicatorDef {
  std::uint64_t key = 0, parent_key = 0;
  std::vector<std::uint32_t> members;  // world ranks, in the communicator's rank order
};

struct Communicator {
  std::uint32_t local_id = 0;
  bool inter = false;
};

struct Request {
  std::uint64_t id = 0;
  bool is_send = false;
  bool persistent = false;
  bool active = false;
  bool cancelled = false;
  std::uint32_t comm = 0;  // local communicator id
  int peer = 0, tag = 0;   // persistent sends
  std::uint64_t bytes = 0;
};

struct State {
  bool on = false;
  bool cpu_time = false;    // POEMS_TRACE_CPU_TIME: the thread's CPU time at every MPI call's enter and leave
  bool all_threads = true;  // false under MPI_THREAD_MULTIPLE: only the init thread records
  pthread_t thread{};
  int rank = 0, size = 1;
  std::int64_t offset = 0;  // added to CLOCK_MONOTONIC (other hosts than rank 0's)
  Ticks last = 0, first = 0;
  OTF2_Archive* archive = nullptr;
  OTF2_EvtWriter* writer = nullptr;
  std::unordered_map<MPI_Comm, Communicator> comms;
  std::vector<CommunicatorDef> comm_defs;  // by local id
  std::unordered_map<MPI_Request, Request> requests;
  std::uint64_t next_request = 1;
  std::uint32_t created = 0;  // communicators this process created as rank 0 of the new one
  std::uint64_t skipped_inter = 0, skipped_unknown = 0;
  std::atomic<std::uint64_t> other_threads{0};
};

State* g = nullptr;

Ticks raw_clock() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Ticks>(ts.tv_sec) * 1000000000ull + static_cast<Ticks>(ts.tv_nsec);
}

// Event timestamps never go back on a location.
Ticks stamp() {
  Ticks t = now();
  if (t < g->last) t = g->last;
  g->last = t;
  return t;
}

// The calling thread's CPU time, as the metric the replay can use instead
// of wall time (PUPPET's measure: time the process was descheduled is not
// computation). A system call here: about 1.3 us on the development VM.
constexpr OTF2_MetricRef kCpuTimeMetric = 0;
void write_cpu_time(Ticks t) {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  OTF2_Type type = OTF2_TYPE_UINT64;
  OTF2_MetricValue value;
  value.unsigned_int = static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
  OTF2_EvtWriter_Metric(g->writer, nullptr, t, kCpuTimeMetric, 1, &type, &value);
}

// A region's enter or leave, with the CPU time just before it if asked for.
void enter_region(Region r, Ticks t) {
  if (g->cpu_time) write_cpu_time(t);
  OTF2_EvtWriter_Enter(g->writer, nullptr, t, static_cast<OTF2_RegionRef>(r));
}
void leave_region(Region r, Ticks t) {
  if (g->cpu_time) write_cpu_time(t);
  OTF2_EvtWriter_Leave(g->writer, nullptr, t, static_cast<OTF2_RegionRef>(r));
}

void warn(const char* what) { std::fprintf(stderr, "poems trace: rank %d: %s\n", g ? g->rank : -1, what); }

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return now(); }
OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

bool check(OTF2_ErrorCode code, const char* what) {
  if (code == OTF2_SUCCESS) return true;
  std::fprintf(stderr, "poems trace: rank %d: %s: %s\n", g ? g->rank : -1, what, OTF2_Error_GetName(code));
  return false;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::uint64_t boot_id_hash() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  if (id.empty()) id = host_name();
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Processes on one host share CLOCK_MONOTONIC; otherwise each finds its
// offset to rank 0's clock with ping-pongs (the one with the shortest round
// trip, its midpoint against rank 0's reading).
void synchronize_clocks() {
  std::uint64_t id = boot_id_hash(), lo = 0, hi = 0;
  PMPI_Allreduce(&id, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  PMPI_Allreduce(&id, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (lo == hi) return;
  constexpr int kRounds = 20;
  for (int r = 1; r < g->size; ++r) {
    if (g->rank == 0) {
      for (int i = 0; i < kRounds; ++i) {
        Ticks dummy = 0;
        PMPI_Recv(&dummy, 1, MPI_UINT64_T, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        Ticks t = raw_clock();
        PMPI_Send(&t, 1, MPI_UINT64_T, r, 0, MPI_COMM_WORLD);
      }
    } else if (g->rank == r) {
      Ticks best_rtt = ~Ticks{0};
      for (int i = 0; i < kRounds; ++i) {
        Ticks t0 = raw_clock(), remote = 0;
        PMPI_Send(&t0, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD);
        PMPI_Recv(&remote, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        Ticks t1 = raw_clock();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          g->offset = static_cast<std::int64_t>(remote) - static_cast<std::int64_t>(t0 + (t1 - t0) / 2);
        }
      }
    }
  }
}

std::vector<std::uint32_t> world_ranks_of(MPI_Comm comm) {
  MPI_Group group, world;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> local(static_cast<std::size_t>(n)), global(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) local[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(group, n, local.data(), world, global.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  return {global.begin(), global.end()};
}

// The local id of `comm`, or false if events on it cannot be recorded (an
// intercommunicator, or one made by a function the tracer does not wrap).
bool local_comm(MPI_Comm comm, std::uint32_t& id) {
  auto it = g->comms.find(comm);
  if (it == g->comms.end()) {
    ++g->skipped_unknown;
    return false;
  }
  if (it->second.inter) {
    ++g->skipped_inter;
    return false;
  }
  id = it->second.local_id;
  return true;
}

std::uint64_t received_bytes(const MPI_Status& status) {
  int count = 0;
  if (PMPI_Get_count(&status, MPI_BYTE, &count) != MPI_SUCCESS || count < 0) return 0;
  return static_cast<std::uint64_t>(count);
}

void open_archive(const char* dir) {
  g->archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
                                 OTF2_COMPRESSION_NONE);
  if (!g->archive) {
    warn("cannot create the OTF2 archive; this run is not traced");
    return;
  }
  bool ok = check(OTF2_Archive_SetFlushCallbacks(g->archive, &flush_callbacks, nullptr), "flush callbacks") &&
            check(OTF2_MPI_Archive_SetCollectiveCallbacks(g->archive, MPI_COMM_WORLD, MPI_COMM_NULL),
                  "collective callbacks") &&
            check(OTF2_Archive_SetCreator(g->archive, "poems trace"), "creator") &&
            check(OTF2_Archive_OpenEvtFiles(g->archive), "event files");
  if (ok) g->writer = OTF2_Archive_GetEvtWriter(g->archive, static_cast<OTF2_LocationRef>(g->rank));
  if (!g->writer) {
    warn("cannot open the OTF2 event writer; this run is not traced");
    OTF2_Archive_Close(g->archive);
    g->archive = nullptr;
  }
}

// ---- definitions at MPI_Finalize ---------------------------------------------------

class Strings {
 public:
  OTF2_StringRef operator()(const std::string& s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    auto id = static_cast<OTF2_StringRef>(all_.size());
    all_.push_back(s);
    ids_.emplace(s, id);
    return id;
  }
  void write(OTF2_GlobalDefWriter* w) const {
    for (std::size_t i = 0; i < all_.size(); ++i)
      OTF2_GlobalDefWriter_WriteString(w, static_cast<OTF2_StringRef>(i), all_[i].c_str());
  }

 private:
  std::vector<std::string> all_;
  std::unordered_map<std::string, OTF2_StringRef> ids_;
};

struct RegionInfo {
  const char* name;
  OTF2_RegionRole role;
};

constexpr RegionInfo kRegions[] = {
#define POEMS_TRACE_REGION_INFO(name, role) {#name, OTF2_REGION_ROLE_##role},
    POEMS_TRACE_REGIONS(POEMS_TRACE_REGION_INFO)
#undef POEMS_TRACE_REGION_INFO
};

// Every process's communicators (key, parent key, members) gathered at rank 0.
std::vector<CommunicatorDef> gather_communicators() {
  std::vector<std::uint64_t> mine;
  for (std::size_t i = 2; i < g->comm_defs.size(); ++i) {
    const CommunicatorDef& d = g->comm_defs[i];
    mine.push_back(d.key);
    mine.push_back(d.parent_key);
    mine.push_back(d.members.size());
    mine.insert(mine.end(), d.members.begin(), d.members.end());
  }
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(g->size)), displs(static_cast<std::size_t>(g->size));
  PMPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<std::uint64_t> all;
  if (g->rank == 0) {
    int total = 0;
    for (int i = 0; i < g->size; ++i) {
      displs[static_cast<std::size_t>(i)] = total;
      total += counts[static_cast<std::size_t>(i)];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(mine.data(), count, MPI_UINT64_T, all.data(), counts.data(), displs.data(), MPI_UINT64_T, 0,
               MPI_COMM_WORLD);
  std::vector<CommunicatorDef> defs;
  for (std::size_t at = 0; at + 3 <= all.size();) {
    CommunicatorDef d;
    d.key = all[at];
    d.parent_key = all[at + 1];
    const std::size_t n = all[at + 2];
    at += 3;
    for (std::size_t k = 0; k < n && at < all.size(); ++k) d.members.push_back(static_cast<std::uint32_t>(all[at++]));
    defs.push_back(std::move(d));
  }
  std::sort(defs.begin(), defs.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  defs.erase(std::unique(defs.begin(), defs.end(), [](const auto& a, const auto& b) { return a.key == b.key; }),
             defs.end());
  return defs;
}

OTF2_CommRef global_comm(const std::vector<std::uint64_t>& keys, std::uint64_t key) {
  if (key == kWorldKey) return kWorldId;
  if (key == kSelfKey) return kSelfId;
  auto it = std::lower_bound(keys.begin(), keys.end(), key);
  if (it == keys.end() || *it != key) return OTF2_UNDEFINED_COMM;
  return static_cast<OTF2_CommRef>(2 + (it - keys.begin()));
}

void write_global_definitions(const std::vector<CommunicatorDef>& comms, Ticks first, Ticks last,
                              const std::vector<std::uint64_t>& events, const std::vector<char>& hosts,
                              std::size_t host_len) {
  OTF2_GlobalDefWriter* w = OTF2_Archive_GetGlobalDefWriter(g->archive);
  if (!w) return warn("cannot write the global definitions");
  // A definition may only name strings defined before it: the definitions
  // are collected first (their strings numbered on the way), then written
  // after the strings.
  Strings str;
  std::vector<std::function<void()>> defs;
  const OTF2_StringRef empty = str("");
  timespec real, mono;
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  const std::int64_t real_ns = static_cast<std::int64_t>(real.tv_sec) * 1000000000 + real.tv_nsec;
  const std::int64_t mono_ns = static_cast<std::int64_t>(mono.tv_sec) * 1000000000 + mono.tv_nsec + g->offset;
  const auto realtime = static_cast<std::uint64_t>(real_ns - (mono_ns - static_cast<std::int64_t>(first)));
  defs.push_back([=] { OTF2_GlobalDefWriter_WriteClockProperties(w, 1000000000ull, first, last - first, realtime); });
  const OTF2_StringRef mpi = str("MPI");
  defs.push_back([=] { OTF2_GlobalDefWriter_WriteParadigm(w, OTF2_PARADIGM_MPI, mpi, OTF2_PARADIGM_CLASS_PROCESS); });
  if (g->cpu_time) {
    const OTF2_StringRef name = str(kCpuTimeName), what = str("CPU time of the thread (CLOCK_THREAD_CPUTIME_ID)"),
                         unit = str("s");
    defs.push_back([=] {
      OTF2_GlobalDefWriter_WriteMetricMember(w, 0, name, what, OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ACCUMULATED_START,
                                             OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, -9, unit);
      const OTF2_MetricMemberRef member = 0;
      OTF2_GlobalDefWriter_WriteMetricClass(w, kCpuTimeMetric, 1, &member, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                            OTF2_RECORDER_KIND_CPU);
    });
  }

  // System tree: the machine, one node per host, the processes under their host.
  std::vector<std::string> host_names;
  std::vector<OTF2_SystemTreeNodeRef> host_of(static_cast<std::size_t>(g->size));
  const OTF2_StringRef machine = str("machine"), node = str("node"), root_name = str("poems trace");
  defs.push_back(
      [=] { OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, root_name, machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE); });
  for (int r = 0; r < g->size; ++r) {
    std::string h(hosts.data() + static_cast<std::size_t>(r) * host_len, host_len);
    h.resize(std::strlen(h.c_str()));
    auto it = std::find(host_names.begin(), host_names.end(), h);
    if (it == host_names.end()) {
      host_names.push_back(h);
      const auto id = static_cast<OTF2_SystemTreeNodeRef>(host_names.size());
      const OTF2_StringRef name = str(h);
      defs.push_back([=] { OTF2_GlobalDefWriter_WriteSystemTreeNode(w, id, name, node, 0); });
      it = host_names.end() - 1;
    }
    host_of[static_cast<std::size_t>(r)] = static_cast<OTF2_SystemTreeNodeRef>(1 + (it - host_names.begin()));
  }
  for (int r = 0; r < g->size; ++r) {
    const OTF2_StringRef name = str("MPI Rank " + std::to_string(r));
    const OTF2_SystemTreeNodeRef parent = host_of[static_cast<std::size_t>(r)];
    defs.push_back([=] {
      OTF2_GlobalDefWriter_WriteLocationGroup(w, static_cast<OTF2_LocationGroupRef>(r), name,
                                              OTF2_LOCATION_GROUP_TYPE_PROCESS, parent, OTF2_UNDEFINED_LOCATION_GROUP);
    });
  }
  const OTF2_StringRef master = str("Master thread");
  for (int r = 0; r < g->size; ++r) {
    const std::uint64_t n = events[static_cast<std::size_t>(r)];
    defs.push_back([=] {
      OTF2_GlobalDefWriter_WriteLocation(w, static_cast<OTF2_LocationRef>(r), master, OTF2_LOCATION_TYPE_CPU_THREAD, n,
                                         static_cast<OTF2_LocationGroupRef>(r));
    });
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(Region::kCount); ++i) {
    const OTF2_StringRef name = str(kRegions[i].name);
    const OTF2_RegionRole role = kRegions[i].role;
    defs.push_back([=] {
      OTF2_GlobalDefWriter_WriteRegion(w, static_cast<OTF2_RegionRef>(i), name, name, empty, role, OTF2_PARADIGM_MPI,
                                       OTF2_REGION_FLAG_NONE, empty, 0, 0);
    });
  }
  // Groups: 0 the locations of the ranks (rank order), 1 the world, 2 self,
  // then one per created communicator; members of the communicator groups
  // are positions in group 0, i.e. world ranks.
  auto everyone = std::make_shared<std::vector<std::uint64_t>>(static_cast<std::size_t>(g->size));
  for (int r = 0; r < g->size; ++r) (*everyone)[static_cast<std::size_t>(r)] = static_cast<std::uint64_t>(r);
  const OTF2_StringRef world_name = str("MPI_COMM_WORLD"), self_name = str("MPI_COMM_SELF");
  defs.push_back([=] {
    const auto n = static_cast<std::uint32_t>(everyone->size());
    OTF2_GlobalDefWriter_WriteGroup(w, 0, empty, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, n, everyone->data());
    OTF2_GlobalDefWriter_WriteGroup(w, 1, empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n,
                                    everyone->data());
    OTF2_GlobalDefWriter_WriteGroup(w, 2, empty, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0,
                                    nullptr);
    OTF2_GlobalDefWriter_WriteComm(w, kWorldId, world_name, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    OTF2_GlobalDefWriter_WriteComm(w, kSelfId, self_name, 2, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  });
  auto keys = std::make_shared<std::vector<std::uint64_t>>();
  for (const CommunicatorDef& d : comms) keys->push_back(d.key);
  for (std::size_t i = 0; i < comms.size(); ++i) {
    auto members = std::make_shared<std::vector<std::uint64_t>>(comms[i].members.begin(), comms[i].members.end());
    const OTF2_StringRef name = str("Comm " + std::to_string(2 + i));
    const std::uint64_t key = comms[i].key, parent = comms[i].parent_key;
    defs.push_back([=] {
      const auto group = static_cast<OTF2_GroupRef>(3 + i);
      OTF2_GlobalDefWriter_WriteGroup(w, group, empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                      OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(members->size()),
                                      members->data());
      // A communicator's parent is defined before it only if its key is
      // smaller; otherwise the parent link is left out.
      const OTF2_CommRef parent_ref = global_comm(*keys, parent);
      const OTF2_CommRef self_ref = global_comm(*keys, key);
      OTF2_GlobalDefWriter_WriteComm(w, self_ref, name, group, parent_ref < self_ref ? parent_ref : OTF2_UNDEFINED_COMM,
                                     OTF2_COMM_FLAG_NONE);
    });
  }
  str.write(w);
  for (const auto& d : defs) d();
  OTF2_Archive_CloseGlobalDefWriter(g->archive, w);
}

}  // namespace

Ticks now() { return raw_clock() + static_cast<Ticks>(g ? g->offset : 0); }

bool recording() {
  if (!g || !g->on) return false;
  if (g->all_threads || pthread_equal(pthread_self(), g->thread)) return true;
  g->other_threads.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void start(Region init_region, Ticks entered, int thread_level) {
  const char* dir = std::getenv("POEMS_TRACE_DIR");
  if (!dir || !*dir || g) return;
  g = new State;
  const char* cpu = std::getenv("POEMS_TRACE_CPU_TIME");
  g->cpu_time = cpu && *cpu && std::string(cpu) != "0";
  g->thread = pthread_self();
  g->all_threads = thread_level != MPI_THREAD_MULTIPLE;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g->size);
  synchronize_clocks();
  g->comms[MPI_COMM_WORLD] = {kWorldId, false};
  g->comms[MPI_COMM_SELF] = {kSelfId, false};
  g->comm_defs.resize(2);
  g->comm_defs[0].key = kWorldKey;
  g->comm_defs[1].key = kSelfKey;
  open_archive(dir);
  if (!g->writer) return;
  g->on = true;
  g->first = g->last = entered + static_cast<Ticks>(g->offset);
  OTF2_EvtWriter_Enter(g->writer, nullptr, g->first, static_cast<OTF2_RegionRef>(init_region));
  leave_region(init_region, stamp());
}

void finish() {
  if (!g || !g->on) return;
  enter_region(Region::MPI_Finalize, stamp());
  OTF2_EvtWriter_Leave(g->writer, nullptr, stamp(), static_cast<OTF2_RegionRef>(Region::MPI_Finalize));
  g->on = false;
  if (g->skipped_inter + g->skipped_unknown > 0) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "%llu operations on intercommunicators and %llu on communicators made by functions it does not "
                  "wrap were not recorded",
                  static_cast<unsigned long long>(g->skipped_inter),
                  static_cast<unsigned long long>(g->skipped_unknown));
    warn(line);
  }
  if (g->other_threads.load() > 0)
    warn("MPI calls from threads other than the one that called MPI_Init were not recorded");
  std::uint64_t my_events = 0;
  OTF2_EvtWriter_GetNumberOfEvents(g->writer, &my_events);
  OTF2_Archive_CloseEvtWriter(g->archive, g->writer);
  OTF2_Archive_CloseEvtFiles(g->archive);

  // Unify the communicators: rank 0 learns every key, every rank the sorted list.
  std::vector<CommunicatorDef> comms = gather_communicators();
  std::uint64_t n = comms.size();
  PMPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < comms.size(); ++i) keys[i] = comms[i].key;
  PMPI_Bcast(keys.data(), static_cast<int>(n), MPI_UINT64_T, 0, MPI_COMM_WORLD);

  OTF2_Archive_OpenDefFiles(g->archive);
  OTF2_DefWriter* defs = OTF2_Archive_GetDefWriter(g->archive, static_cast<OTF2_LocationRef>(g->rank));
  if (defs) {
    OTF2_IdMap* map = OTF2_IdMap_Create(OTF2_ID_MAP_DENSE, g->comm_defs.size());
    for (std::size_t i = 0; i < g->comm_defs.size(); ++i)
      OTF2_IdMap_AddIdPair(map, i, global_comm(keys, g->comm_defs[i].key));
    OTF2_DefWriter_WriteMappingTable(defs, OTF2_MAPPING_COMM, map);
    OTF2_IdMap_Free(map);
    OTF2_Archive_CloseDefWriter(g->archive, defs);
  }
  OTF2_Archive_CloseDefFiles(g->archive);

  Ticks first = 0, last = 0;
  PMPI_Reduce(&g->first, &first, 1, MPI_UINT64_T, MPI_MIN, 0, MPI_COMM_WORLD);
  PMPI_Reduce(&g->last, &last, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
  std::vector<std::uint64_t> events(static_cast<std::size_t>(g->size));
  PMPI_Gather(&my_events, 1, MPI_UINT64_T, events.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  constexpr std::size_t kHostLen = 64;
  std::string host = host_name();
  host.resize(kHostLen - 1);
  std::vector<char> mine(kHostLen, '\0'), hosts(kHostLen * static_cast<std::size_t>(g->size));
  std::memcpy(mine.data(), host.c_str(), std::strlen(host.c_str()));
  PMPI_Gather(mine.data(), static_cast<int>(kHostLen), MPI_CHAR, hosts.data(), static_cast<int>(kHostLen), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  if (g->rank == 0) write_global_definitions(comms, first, last, events, hosts, kHostLen);
  OTF2_Archive_Close(g->archive);
  delete g;  // nothing is recorded after MPI_Finalize
  g = nullptr;
}

Call::Call(Region region) : region_(region), on_(recording()) {
  if (on_) enter_region(region_, stamp());
}

Call::~Call() {
  if (on_ && g->writer && g->on) leave_region(region_, stamp());
}

void send(int dest, MPI_Comm comm, int tag, std::uint64_t bytes) {
  std::uint32_t id = 0;
  if (dest == MPI_PROC_NULL || !local_comm(comm, id)) return;
  OTF2_EvtWriter_MpiSend(g->writer, nullptr, stamp(), static_cast<std::uint32_t>(dest), id,
                         static_cast<std::uint32_t>(tag), bytes);
}

void isend(int dest, MPI_Comm comm, int tag, std::uint64_t bytes, MPI_Request request) {
  std::uint32_t id = 0;
  if (dest == MPI_PROC_NULL || request == MPI_REQUEST_NULL || !local_comm(comm, id)) return;
  Request& r = g->requests[request];
  r = Request{g->next_request++, true, false, true, false, id, dest, tag, bytes};
  OTF2_EvtWriter_MpiIsend(g->writer, nullptr, stamp(), static_cast<std::uint32_t>(dest), id,
                          static_cast<std::uint32_t>(tag), bytes, r.id);
}

void irecv(MPI_Comm comm, MPI_Request request) {
  std::uint32_t id = 0;
  if (request == MPI_REQUEST_NULL || !local_comm(comm, id)) return;
  Request& r = g->requests[request];
  r = Request{g->next_request++, false, false, true, false, id, 0, 0, 0};
  OTF2_EvtWriter_MpiIrecvRequest(g->writer, nullptr, stamp(), r.id);
}

void recv(const MPI_Status& status, MPI_Comm comm) {
  std::uint32_t id = 0;
  if (status.MPI_SOURCE == MPI_PROC_NULL || status.MPI_SOURCE < 0 || !local_comm(comm, id)) return;
  OTF2_EvtWriter_MpiRecv(g->writer, nullptr, stamp(), static_cast<std::uint32_t>(status.MPI_SOURCE), id,
                         static_cast<std::uint32_t>(status.MPI_TAG), received_bytes(status));
}

void persistent_send(MPI_Request request, int dest, MPI_Comm comm, int tag, std::uint64_t bytes) {
  std::uint32_t id = 0;
  if (dest == MPI_PROC_NULL || request == MPI_REQUEST_NULL || !local_comm(comm, id)) return;
  g->requests[request] = Request{0, true, true, false, false, id, dest, tag, bytes};
}

void persistent_recv(MPI_Request request, MPI_Comm comm) {
  std::uint32_t id = 0;
  if (request == MPI_REQUEST_NULL || !local_comm(comm, id)) return;
  g->requests[request] = Request{0, false, true, false, false, id, 0, 0, 0};
}

void started(MPI_Request request) {
  auto it = g->requests.find(request);
  if (it == g->requests.end() || !it->second.persistent) return;
  Request& r = it->second;
  r.id = g->next_request++;
  r.active = true;
  r.cancelled = false;
  if (r.is_send)
    OTF2_EvtWriter_MpiIsend(g->writer, nullptr, stamp(), static_cast<std::uint32_t>(r.peer), r.comm,
                            static_cast<std::uint32_t>(r.tag), r.bytes, r.id);
  else
    OTF2_EvtWriter_MpiIrecvRequest(g->writer, nullptr, stamp(), r.id);
}

void completed(MPI_Request request, const MPI_Status& status) {
  if (request == MPI_REQUEST_NULL) return;
  auto it = g->requests.find(request);
  if (it == g->requests.end()) return;
  Request& r = it->second;
  if (r.active) {
    int cancelled = 0;
    if (r.cancelled) PMPI_Test_cancelled(&status, &cancelled);
    if (cancelled)
      OTF2_EvtWriter_MpiRequestCancelled(g->writer, nullptr, stamp(), r.id);
    else if (r.is_send)
      OTF2_EvtWriter_MpiIsendComplete(g->writer, nullptr, stamp(), r.id);
    else if (status.MPI_SOURCE >= 0 && status.MPI_SOURCE != MPI_PROC_NULL)
      OTF2_EvtWriter_MpiIrecv(g->writer, nullptr, stamp(), static_cast<std::uint32_t>(status.MPI_SOURCE), r.comm,
                              static_cast<std::uint32_t>(status.MPI_TAG), received_bytes(status), r.id);
    else
      OTF2_EvtWriter_MpiRequestCancelled(g->writer, nullptr, stamp(), r.id);  // a receive from MPI_PROC_NULL
    r.active = false;
  }
  if (!r.persistent) g->requests.erase(it);
}

void freed(MPI_Request request) {
  auto it = g->requests.find(request);
  if (it == g->requests.end()) return;
  // OTF2: a send released before it completed is recorded as completed at
  // the release; a receive's source is then unknown and it is dropped.
  if (it->second.active) {
    if (it->second.is_send)
      OTF2_EvtWriter_MpiIsendComplete(g->writer, nullptr, stamp(), it->second.id);
    else
      OTF2_EvtWriter_MpiRequestCancelled(g->writer, nullptr, stamp(), it->second.id);
  }
  g->requests.erase(it);
}

void cancel_requested(MPI_Request request) {
  auto it = g->requests.find(request);
  if (it != g->requests.end()) it->second.cancelled = true;
}

void collective_begin() { OTF2_EvtWriter_MpiCollectiveBegin(g->writer, nullptr, stamp()); }

void collective_end(std::uint32_t otf2_op, MPI_Comm comm, int root, std::uint64_t sent, std::uint64_t received) {
  std::uint32_t id = 0;
  if (!local_comm(comm, id)) {
    // The Begin is written: close it on the world so the record pairs stay whole.
    id = kWorldId;
    otf2_op = OTF2_COLLECTIVE_OP_DESTROY_HANDLE;
    root = -1;
    sent = received = 0;
  }
  OTF2_EvtWriter_MpiCollectiveEnd(g->writer, nullptr, stamp(), static_cast<OTF2_CollectiveOp>(otf2_op), id,
                                  root < 0 ? OTF2_COLLECTIVE_ROOT_NONE : static_cast<std::uint32_t>(root), sent,
                                  received);
}

void communicator_created(MPI_Comm parent, MPI_Comm created) {
  if (created == MPI_COMM_NULL) return;
  int inter = 0;
  PMPI_Comm_test_inter(created, &inter);
  if (inter) {
    g->comms[created] = {0, true};
    return;
  }
  // Rank 0 of the new communicator names it (its world rank, its count of
  // such creations) and tells the others.
  int me = 0;
  PMPI_Comm_rank(created, &me);
  std::uint64_t key = 0;
  if (me == 0) key = (static_cast<std::uint64_t>(g->rank) + 1) << 32 | g->created++;
  PMPI_Bcast(&key, 1, MPI_UINT64_T, 0, created);
  CommunicatorDef def;
  def.key = key;
  auto p = g->comms.find(parent);
  def.parent_key = p != g->comms.end() && !p->second.inter ? g->comm_defs[p->second.local_id].key : kWorldKey;
  def.members = world_ranks_of(created);
  g->comms[created] = {static_cast<std::uint32_t>(g->comm_defs.size()), false};
  g->comm_defs.push_back(std::move(def));
}

void communicator_freed(MPI_Comm comm) {
  if (comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF) g->comms.erase(comm);
}

std::uint64_t type_bytes(MPI_Datatype type, std::int64_t count) {
  if (type == MPI_DATATYPE_NULL || count <= 0) return 0;
  int size = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0) return 0;
  return static_cast<std::uint64_t>(size) * static_cast<std::uint64_t>(count);
}

}  // namespace poems::trace::interpose
