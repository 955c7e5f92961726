// The simulated run as OTF2. The wrapper source records every operation the
// simulator reads and renumbers its node (the static node stays reachable
// for reports), so each CPU interval of the simulator's timeline names its
// operation; the observer gives completions and the exact send each receive
// matched. A receive starts (is posted) when its dependencies are met.
#include "poems/trace/timeline.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <unordered_map>

#include <otf2/otf2.h>

#include "poems/trace/trace.h"

namespace poems::trace {

bool is_otf2_name(const std::string& path) { return path.size() > 5 && path.compare(path.size() - 5, 5, ".otf2") == 0; }

namespace fs = std::filesystem;
using taskgraph::Dependency;
using taskgraph::OpBuffer;
using taskgraph::Operation;
using taskgraph::OpKind;

namespace {

constexpr Picoseconds kUnset = ~Picoseconds{0};

struct OpRecord {
  OpKind kind = OpKind::Calc;
  std::uint8_t cpu = 0;
  std::int32_t peer = 0, tag = 0;
  std::uint32_t comm = 0;
  std::uint32_t node = 0;  // the source's own node
  std::uint64_t amount = 0;
  std::uint64_t first_dep = 0;
  std::uint32_t dep_count = 0;
  Picoseconds start = kUnset, done = kUnset;
  std::uint32_t match_rank = kNone;  // Recv: the sender; its operation below
  std::uint64_t match_op = 0;
};

struct RankLog {
  std::vector<OpRecord> ops;
  std::vector<Dependency> deps;
};

}  // namespace

struct Otf2Timeline::State : taskgraph::ScheduleSource, sim::ExecutionObserver {
  taskgraph::ScheduleSource& inner;
  Labels labels;
  sim::ExecutionObserver* forward;
  std::uint32_t program_ranks;  // ranks from here on are companions (direct execution)
  std::string creator = "poems simulate";
  bool checked = false;
  std::vector<RankLog> logs;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> ids{{0, 0}};  // node id -> (rank, operation)

  State(taskgraph::ScheduleSource& s, Labels l, sim::ExecutionObserver* f)
      : inner(s), labels(l), forward(f), program_ranks(s.ranks()), logs(s.ranks()) {}

  // ---- the source
  std::uint32_t ranks() const override { return inner.ranks(); }
  std::size_t pull(std::uint32_t rank, std::size_t max_ops, OpBuffer& out) override {
    const std::size_t before = out.ops.size();
    const std::size_t n = inner.pull(rank, max_ops, out);
    if (n == kBlocked || n == 0) return n;
    RankLog& log = logs[rank];
    for (std::size_t i = before; i < out.ops.size(); ++i) {
      Operation& op = out.ops[i];
      OpRecord rec;
      rec.kind = op.kind;
      rec.cpu = op.cpu;
      rec.peer = op.peer;
      rec.tag = op.tag;
      rec.comm = op.comm;
      rec.node = op.node;
      rec.amount = op.kind == OpKind::Calc ? op.duration : op.bytes;
      rec.first_dep = log.deps.size();
      rec.dep_count = op.dep_count;
      log.deps.insert(log.deps.end(), out.deps.begin() + op.first_dep, out.deps.begin() + op.first_dep + op.dep_count);
      if (ids.size() >= kNone) throw TraceError("too many operations for an OTF2 timeline (at most 2^32 - 2)");
      op.node = static_cast<std::uint32_t>(ids.size());
      ids.push_back({rank, log.ops.size()});
      log.ops.push_back(rec);
    }
    return n;
  }
  std::uint32_t node_count() const override { return static_cast<std::uint32_t>(ids.size()); }
  taskgraph::NodeInfo node_info(std::uint32_t node) const override {
    if (node == 0 || node >= ids.size()) return {};
    return inner.node_info(logs[ids[node].first].ops[ids[node].second].node);
  }
  bool issues_in_order() const override { return checked || inner.issues_in_order(); }
  bool restart() override {
    if (!inner.restart()) return false;
    for (RankLog& l : logs) l = RankLog{};
    ids.assign(1, {0, 0});
    return true;
  }

  // ---- the observer
  bool completed(std::uint32_t rank, std::uint64_t op, Picoseconds time) override {
    if (op < logs[rank].ops.size()) logs[rank].ops[op].done = time;
    return forward && forward->completed(rank, op, time);
  }
  void matched(std::uint32_t rank, std::uint64_t recv_op, std::uint32_t sender, std::uint64_t send_op,
               Picoseconds time) override {
    if (recv_op < logs[rank].ops.size()) {
      logs[rank].ops[recv_op].match_rank = sender;
      logs[rank].ops[recv_op].match_op = send_op;
    }
    if (forward) forward->matched(rank, recv_op, sender, send_op, time);
  }
  bool arrived_unexpected(std::uint32_t rank, std::uint32_t sender, std::uint64_t send_op, Picoseconds time) override {
    return forward && forward->arrived_unexpected(rank, sender, send_op, time);
  }
  std::span<const std::uint32_t> take_woken() override {
    return forward ? forward->take_woken() : std::span<const std::uint32_t>{};
  }
  std::span<const std::uint32_t> drained(Picoseconds now) override {
    return forward ? forward->drained(now) : std::span<const std::uint32_t>{};
  }
};

Otf2Timeline::Otf2Timeline(taskgraph::ScheduleSource& source, Labels labels, sim::ExecutionObserver* forward)
    : state_(std::make_unique<State>(source, labels, forward)) {}
Otf2Timeline::~Otf2Timeline() = default;
void Otf2Timeline::set_companions(std::uint32_t program_ranks) {
  state_->program_ranks = std::min(program_ranks, state_->inner.ranks());
}
void Otf2Timeline::set_creator(std::string creator) { state_->creator = std::move(creator); }
taskgraph::ScheduleSource& Otf2Timeline::source() { return *state_; }
sim::ExecutionObserver& Otf2Timeline::observer() { return *state_; }

std::string Otf2Timeline::check_order() {
  State& s = *state_;
  if (s.inner.issues_in_order()) return "";
  if (!s.inner.restart()) return "the schedule cannot be read twice";
  OpBuffer buffer;
  std::string problem;
  for (std::uint32_t r = 0; r < s.inner.ranks() && problem.empty(); ++r) {
    std::vector<Dependency> previous;
    std::uint64_t index = 0;
    for (;;) {
      buffer.clear();
      const std::size_t n = s.inner.pull(r, 4096, buffer);
      if (n == 0 || n == taskgraph::ScheduleSource::kBlocked) break;
      for (const Operation& op : buffer.ops) {
        const Dependency* d = buffer.deps.data() + op.first_dep;
        std::vector<Dependency> deps(d, d + op.dep_count);
        bool on_previous = index == 0;
        for (const Dependency& x : deps) on_previous = on_previous || x.op + 1 == index;
        // Everything the previous operation waits for, this one waits for too
        // (a completion covers a start of the same operation).
        bool covers = true;
        for (const Dependency& p : previous)
          covers = covers && std::any_of(deps.begin(), deps.end(), [&](const Dependency& x) {
                     return x.op == p.op && (!x.on_start || p.on_start);
                   });
        if (!on_previous && !covers) {
          problem = "rank " + std::to_string(r) + " operation " + std::to_string(index) +
                    " can become ready before the operation before it (node '" + s.inner.node_info(op.node).label +
                    "'), so the simulator cannot report this schedule's events in order; use a Chrome timeline "
                    "(--timeline FILE.json) for it";
          break;
        }
        previous = std::move(deps);
        ++index;
      }
      if (!problem.empty()) break;
    }
  }
  s.inner.restart();
  s.checked = problem.empty();
  return problem;
}

namespace {

struct Event {
  Picoseconds time;
  int priority;  // at equal times: completions, leaves, enters, starts
  std::uint64_t order;
  enum Kind { Enter, Leave, Isend, IsendComplete, IrecvRequest, Irecv } kind;
  std::uint32_t region = 0;
  std::uint32_t peer = 0, comm = 0, tag = 0;
  std::uint64_t bytes = 0, request = 0;
};

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }

void check(OTF2_ErrorCode code, const char* what, const std::string& path) {
  if (code != OTF2_SUCCESS)
    throw TraceError("cannot write '" + path + "': " + what + ": " + OTF2_Error_GetDescription(code));
}

}  // namespace

void Otf2Timeline::write(const std::string& path, const sim::SimulationResult& result, std::uint32_t cpus) const {
  const State& s = *state_;
  if (cpus == 0) cpus = 1;
  const std::uint32_t nranks = s.inner.ranks();    // engine ranks (with companions)
  const std::uint32_t programs = s.program_ranks;  // the ranks the archive shows
  auto rank_of = [&](std::uint32_t r) { return r >= programs && programs > 0 ? (r - programs) % programs : r; };
  std::vector<RankLog> logs = s.logs;  // start times are filled in below

  // Starts: calc, send and rendezvous intervals name their operation.
  for (const sim::Span& span : result.timeline) {
    if (span.node == 0 || span.node >= s.ids.size()) continue;
    const auto [r, op] = s.ids[span.node];
    OpRecord& rec = logs[r].ops[op];
    if (span.kind != sim::Span::Recv) rec.start = std::min(rec.start, span.start);
  }
  // A receive is posted when what it depends on is done.
  for (RankLog& log : logs)
    for (OpRecord& rec : log.ops) {
      if (rec.kind != OpKind::Recv || rec.start != kUnset) continue;
      Picoseconds ready = 0;
      for (std::uint32_t i = 0; i < rec.dep_count; ++i) {
        const Dependency& d = log.deps[rec.first_dep + i];
        if (d.op >= log.ops.size()) continue;
        const OpRecord& before = log.ops[d.op];
        const Picoseconds t = d.on_start ? before.start : before.done;
        if (t != kUnset) ready = std::max(ready, t);
      }
      rec.start = ready;
    }

  // Regions (computation is user code, the rest MPI) and communicators.
  std::map<std::pair<std::string, bool>, std::uint32_t> regions;
  auto region = [&](const std::string& name, bool computation) {
    auto it = regions.find({name, computation});
    if (it != regions.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(regions.size());
    regions.emplace(std::pair{name, computation}, id);
    return id;
  };
  std::map<std::uint32_t, std::uint32_t> comms;  // schedule comm -> OTF2 comm
  auto comm = [&](std::uint32_t c) {
    auto it = comms.find(c);
    if (it != comms.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(comms.size());
    comms.emplace(c, id);
    return id;
  };
  auto label = [&](const OpRecord& rec, sim::Span::Kind kind) {
    static const char* const kinds[] = {"calc", "send", "recv", "rendezvous"};
    std::string name;
    if (s.labels == Labels::FromSource) name = s.inner.node_info(rec.node).label;
    if (name.empty()) name = kinds[kind];
    if (kind == sim::Span::Sync && s.labels == Labels::FromSource) name += " (rendezvous)";
    return name;
  };

  std::vector<std::vector<Event>> events(static_cast<std::size_t>(nranks) * cpus);
  std::uint64_t order = 0;
  auto at = [&](std::uint32_t rank, std::uint32_t cpu) -> std::vector<Event>& {
    return events[static_cast<std::size_t>(rank) * cpus + std::min(cpu, cpus - 1)];
  };
  for (const sim::Span& span : result.timeline) {
    if (span.end <= span.start || span.node == 0 || span.node >= s.ids.size()) continue;
    const auto [r, op] = s.ids[span.node];
    const std::uint32_t id = region(label(logs[r].ops[op], span.kind), span.kind == sim::Span::Calc);
    at(span.rank, span.cpu).push_back({span.start, 2, order++, Event::Enter, id});
    at(span.rank, span.cpu).push_back({span.end, 1, order++, Event::Leave, id});
  }
  for (std::uint32_t r = 0; r < nranks; ++r)
    for (std::uint64_t i = 0; i < logs[r].ops.size(); ++i) {
      const OpRecord& recv = logs[r].ops[i];
      if (recv.kind != OpKind::Recv || recv.match_rank == kNone) continue;
      const OpRecord& send = logs[recv.match_rank].ops[recv.match_op];
      const std::uint32_t c = comm(send.comm);
      const auto tag = static_cast<std::uint32_t>(send.tag);
      std::vector<Event>& from = at(recv.match_rank, send.cpu);
      from.push_back({send.start == kUnset ? 0 : send.start, 3, order++, Event::Isend, 0, rank_of(r), c, tag,
                      send.amount, recv.match_op + 1});
      if (send.done != kUnset)
        from.push_back({send.done, 0, order++, Event::IsendComplete, 0, 0, 0, 0, 0, recv.match_op + 1});
      std::vector<Event>& to = at(r, recv.cpu);
      to.push_back({recv.start, 3, order++, Event::IrecvRequest, 0, 0, 0, 0, 0, i + 1});
      if (recv.done != kUnset)
        to.push_back({recv.done, 0, order++, Event::Irecv, 0, rank_of(recv.match_rank), c, tag, send.amount, i + 1});
    }
  Picoseconds end = result.max_finish;
  for (auto& list : events) {
    std::sort(list.begin(), list.end(), [](const Event& a, const Event& b) {
      return std::tie(a.time, a.priority, a.order) < std::tie(b.time, b.priority, b.order);
    });
    if (!list.empty()) end = std::max(end, list.back().time);
  }

  // The archive.
  const fs::path anchor(path);
  const fs::path dir = anchor.parent_path().empty() ? fs::path(".") : anchor.parent_path();
  const std::string name = anchor.stem().string();
  if (anchor.extension() != ".otf2" || name.empty()) throw TraceError("'" + path + "' must name a NAME.otf2 file");
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const fs::path& old : {anchor, dir / (name + ".def"), dir / name}) fs::remove_all(old, ec);
  OTF2_Archive* archive = OTF2_Archive_Open(dir.string().c_str(), name.c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024,
                                            4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) throw TraceError("cannot create the OTF2 archive '" + path + "'");
  struct Closer {
    OTF2_Archive* a;
    ~Closer() { OTF2_Archive_Close(a); }
  } closer{archive};
  OTF2_FlushCallbacks flush{pre_flush, post_flush};
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush, nullptr), "flush callbacks", path);
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks", path);
  check(OTF2_Archive_SetCreator(archive, s.creator.c_str()), "creator", path);
  check(OTF2_Archive_OpenEvtFiles(archive), "event files", path);
  // A companion that did nothing is left out.
  auto shown = [&](std::size_t loc) { return loc / cpus < programs || !events[loc].empty(); };
  std::vector<std::uint64_t> counts(events.size(), 0);
  for (std::size_t loc = 0; loc < events.size(); ++loc) {
    if (!shown(loc)) continue;
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, loc);
    if (!w) throw TraceError("cannot write the events of '" + path + "'");
    for (const Event& e : events[loc]) {
      switch (e.kind) {
        case Event::Enter: OTF2_EvtWriter_Enter(w, nullptr, e.time, e.region); break;
        case Event::Leave: OTF2_EvtWriter_Leave(w, nullptr, e.time, e.region); break;
        case Event::Isend:
          OTF2_EvtWriter_MpiIsend(w, nullptr, e.time, e.peer, e.comm, e.tag, e.bytes, e.request);
          break;
        case Event::IsendComplete: OTF2_EvtWriter_MpiIsendComplete(w, nullptr, e.time, e.request); break;
        case Event::IrecvRequest: OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, e.time, e.request); break;
        case Event::Irecv:
          OTF2_EvtWriter_MpiIrecv(w, nullptr, e.time, e.peer, e.comm, e.tag, e.bytes, e.request);
          break;
      }
    }
    OTF2_EvtWriter_GetNumberOfEvents(w, &counts[loc]);
    OTF2_Archive_CloseEvtWriter(archive, w);
  }
  check(OTF2_Archive_CloseEvtFiles(archive), "event files", path);
  check(OTF2_Archive_OpenDefFiles(archive), "definition files", path);
  for (std::size_t loc = 0; loc < events.size(); ++loc)
    if (!shown(loc))
      continue;
    else if (OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive, loc))
      OTF2_Archive_CloseDefWriter(archive, d);
  check(OTF2_Archive_CloseDefFiles(archive), "definition files", path);

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) throw TraceError("cannot write the definitions of '" + path + "'");
  // Strings first: a definition may only name strings defined before it.
  std::vector<std::string> strings{"", "simulated machine", "machine", "MPI"};
  auto string_id = [&](const std::string& text) {
    strings.push_back(text);
    return static_cast<OTF2_StringRef>(strings.size() - 1);
  };
  std::vector<OTF2_StringRef> rank_names, location_names, companion_names, region_names(regions.size()),
      comm_names(comms.size());
  for (std::uint32_t r = 0; r < programs; ++r) rank_names.push_back(string_id("rank " + std::to_string(r)));
  for (std::uint32_t c = 0; c < cpus; ++c) location_names.push_back(string_id("CPU " + std::to_string(c)));
  if (nranks > programs)
    for (std::uint32_t c = 0; c < cpus; ++c)
      companion_names.push_back(string_id("companion (nonblocking collectives, one-sided), CPU " + std::to_string(c)));
  std::vector<std::string> region_text(regions.size());
  std::vector<bool> region_computes(regions.size());
  for (const auto& [key, id] : regions) {
    region_text[id] = key.first;
    region_computes[id] = key.second;
  }
  for (std::uint32_t id = 0; id < region_text.size(); ++id) region_names[id] = string_id(region_text[id]);
  std::vector<std::uint32_t> comm_of_id(comms.size());
  for (const auto& [c, id] : comms) comm_of_id[id] = c;
  for (std::uint32_t id = 0; id < comm_of_id.size(); ++id) {
    const std::uint32_t c = comm_of_id[id];
    comm_names[id] = string_id(c & 0x80000000u ? "collectives of comm " + std::to_string(c & 0x7FFFFFFFu)
                                               : (c == 0 ? std::string("world") : "comm " + std::to_string(c)));
  }
  for (std::size_t i = 0; i < strings.size(); ++i)
    OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), strings[i].c_str());
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000000ull, 0, end, OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, 3, OTF2_PARADIGM_CLASS_PROCESS);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 2, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (std::uint32_t r = 0; r < programs; ++r)
    OTF2_GlobalDefWriter_WriteLocationGroup(g, r, rank_names[r], OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
  for (std::uint32_t r = 0; r < nranks; ++r)
    for (std::uint32_t c = 0; c < cpus; ++c) {
      const std::uint64_t loc = static_cast<std::uint64_t>(r) * cpus + c;
      if (!shown(loc)) continue;
      OTF2_GlobalDefWriter_WriteLocation(g, loc, r < programs ? location_names[c] : companion_names[c],
                                         OTF2_LOCATION_TYPE_CPU_THREAD, counts[loc], rank_of(r));
    }
  for (std::uint32_t id = 0; id < region_names.size(); ++id)
    OTF2_GlobalDefWriter_WriteRegion(g, id, region_names[id], region_names[id], 0,
                                     region_computes[id] ? OTF2_REGION_ROLE_FUNCTION : OTF2_REGION_ROLE_POINT2POINT,
                                     region_computes[id] ? OTF2_PARADIGM_USER : OTF2_PARADIGM_MPI,
                                     OTF2_REGION_FLAG_NONE, 0, 0, 0);
  // Every rank's first CPU in rank order; communicators over all ranks, so a
  // rank in one is its world rank.
  std::vector<std::uint64_t> members;
  for (std::uint32_t r = 0; r < programs; ++r) members.push_back(static_cast<std::uint64_t>(r) * cpus);
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  programs, members.data());
  for (std::uint32_t r = 0; r < programs; ++r) members[r] = r;
  OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  programs, members.data());
  for (std::uint32_t id = 0; id < comm_names.size(); ++id)
    OTF2_GlobalDefWriter_WriteComm(g, id, comm_names[id], 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_Archive_CloseGlobalDefWriter(archive, g);
}

}  // namespace poems::trace
