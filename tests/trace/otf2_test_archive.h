// OTF2 archives for the hostile-input tests: a small MPI run described
// record by record (ArchiveSpec), written with OTF2's own writer, read back
// with OTF2's reader independently of poems' reader, and checked against the
// rules a replayable archive keeps (first_violation): every record names a
// region, communicator and rank the archive defines, tags and byte counts in
// their documented ranges, time never going backwards.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <otf2/otf2.h>

namespace poems::trace::testing {

struct ArchiveRecord {
  enum Kind { Enter, Leave, Send, Isend, IsendComplete, IrecvRequest, Recv, Irecv, CollectiveBegin, CollectiveEnd };
  Kind kind = Enter;
  std::uint64_t time = 0;  // ns
  std::uint32_t region = 0;
  std::uint32_t peer = 0, comm = 0, tag = 0;
  std::uint64_t bytes = 0, request = 0;
  std::uint32_t op = 0, root = OTF2_COLLECTIVE_ROOT_NONE;
  std::uint64_t sent = 0, received = 0;
};

struct ArchiveComm {
  std::uint32_t ref = 0, group = 0;
  bool self = false;
  std::vector<std::uint64_t> members;  // positions in the locations group
  std::string name;
  bool define_group = true;  // false: the group is not written, the reference dangles
};

// Regions of the base archive; kMainRegion is user code.
enum ArchiveRegion : std::uint32_t {
  kInitRegion,
  kSendRegion,
  kRecvRegion,
  kIsendRegion,
  kIrecvRegion,
  kWaitRegion,
  kBcastRegion,
  kAllreduceRegion,
  kFinalizeRegion,
  kMainRegion,
  kArchiveRegions
};
inline const char* const kArchiveRegionNames[] = {"MPI_Init", "MPI_Send",  "MPI_Recv",      "MPI_Isend",    "MPI_Irecv",
                                                  "MPI_Wait", "MPI_Bcast", "MPI_Allreduce", "MPI_Finalize", "main"};

struct ArchiveSpec {
  std::vector<std::uint64_t> locations;  // the MPI ranks' locations group, in rank order
  std::vector<ArchiveComm> comms;
  std::vector<std::vector<ArchiveRecord>> ranks;  // events of locations[r]; ranks.size() == distinct locations
  std::uint32_t regions = kArchiveRegions;
};

// Two ranks: a blocking message, a nonblocking pair on a communicator in
// reverse order, a bcast and an allreduce, between MPI_Init and MPI_Finalize.
// Communicators: 0 the world, 1 self, 2 the world reversed.
inline ArchiveSpec base_archive() {
  ArchiveSpec a;
  a.locations = {0, 1};
  a.comms = {
      {0, 1, false, {0, 1}, "MPI_COMM_WORLD"}, {1, 2, true, {}, "MPI_COMM_SELF"}, {2, 3, false, {1, 0}, "reversed"}};
  using R = ArchiveRecord;
  auto enter = [](std::uint64_t t, std::uint32_t region) { return R{R::Enter, t, region}; };
  auto leave = [](std::uint64_t t, std::uint32_t region) { return R{R::Leave, t, region}; };
  auto p2p = [](R::Kind k, std::uint64_t t, std::uint32_t peer, std::uint32_t comm, std::uint32_t tag,
                std::uint64_t bytes, std::uint64_t request) {
    R r{k, t};
    r.peer = peer, r.comm = comm, r.tag = tag, r.bytes = bytes, r.request = request;
    return r;
  };
  auto request = [](R::Kind k, std::uint64_t t, std::uint64_t id) {
    R r{k, t};
    r.request = id;
    return r;
  };
  auto coll = [](std::uint64_t t, std::uint32_t op, std::uint32_t root, std::uint64_t sent, std::uint64_t received) {
    R r{R::CollectiveEnd, t};
    r.op = op, r.comm = 0, r.root = root, r.sent = sent, r.received = received;
    return r;
  };
  a.ranks = {{enter(1, kMainRegion),
              enter(1, kInitRegion),
              leave(2, kInitRegion),
              enter(10, kSendRegion),
              p2p(R::Send, 11, 1, 0, 5, 4096, 0),
              leave(12, kSendRegion),
              enter(20, kIrecvRegion),
              request(R::IrecvRequest, 21, 1),
              leave(22, kIrecvRegion),
              enter(23, kIsendRegion),
              p2p(R::Isend, 24, 0, 2, 6, 64, 2),
              leave(25, kIsendRegion),
              enter(30, kWaitRegion),
              p2p(R::Irecv, 31, 1, 0, 7, 16, 1),
              request(R::IsendComplete, 32, 2),
              leave(33, kWaitRegion),
              enter(40, kBcastRegion),
              R{R::CollectiveBegin, 40},
              coll(45, OTF2_COLLECTIVE_OP_BCAST, 0, 200, 100),
              leave(45, kBcastRegion),
              enter(50, kAllreduceRegion),
              R{R::CollectiveBegin, 50},
              coll(55, OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_COLLECTIVE_ROOT_NONE, 32, 32),
              leave(55, kAllreduceRegion),
              enter(60, kFinalizeRegion),
              leave(61, kFinalizeRegion),
              leave(62, kMainRegion)},
             {enter(1, kInitRegion),
              leave(3, kInitRegion),
              enter(5, kRecvRegion),
              p2p(R::Recv, 13, 0, 0, 5, 4096, 0),
              leave(14, kRecvRegion),
              enter(15, kSendRegion),
              p2p(R::Send, 16, 0, 0, 7, 16, 0),
              leave(17, kSendRegion),
              enter(18, kRecvRegion),
              p2p(R::Recv, 26, 1, 2, 6, 64, 0),
              leave(27, kRecvRegion),
              enter(40, kBcastRegion),
              R{R::CollectiveBegin, 40},
              coll(44, OTF2_COLLECTIVE_OP_BCAST, 0, 0, 100),
              leave(44, kBcastRegion),
              enter(50, kAllreduceRegion),
              R{R::CollectiveBegin, 50},
              coll(56, OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_COLLECTIVE_ROOT_NONE, 32, 32),
              leave(56, kAllreduceRegion),
              enter(60, kFinalizeRegion),
              leave(62, kFinalizeRegion)}};
  return a;
}

namespace detail {
inline OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
inline OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
}  // namespace detail

// Writes `spec` as DIR/traces.otf2 (DIR is emptied first). OTF2's writer
// refuses time going backwards, so such a record is written at a unique
// placeholder time, which is then patched in the event file's bytes.
inline void write_archive(const std::filesystem::path& dir, const ArchiveSpec& spec) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  fs::create_directories(dir);
  OTF2_Archive* a = OTF2_Archive_Open(dir.string().c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  OTF2_FlushCallbacks flush{detail::pre_flush, detail::post_flush};
  OTF2_Archive_SetFlushCallbacks(a, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(a);
  OTF2_Archive_SetCreator(a, "poems hostile-archive test");
  OTF2_Archive_OpenEvtFiles(a);
  std::vector<std::uint64_t> counts(spec.ranks.size(), 0);
  std::vector<std::map<std::uint64_t, std::uint64_t>> patches(spec.ranks.size());
  std::uint64_t placeholder = 0x00DEAD0000000000ull;
  for (std::size_t r = 0; r < spec.ranks.size(); ++r) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, spec.locations[r]);
    std::uint64_t last = 0;
    for (const ArchiveRecord& e : spec.ranks[r]) {
      std::uint64_t t = e.time;
      if (t < last) {
        t = ++placeholder;
        patches[r][t] = e.time;
      }
      last = t;
      switch (e.kind) {
        case ArchiveRecord::Enter: OTF2_EvtWriter_Enter(w, nullptr, t, e.region); break;
        case ArchiveRecord::Leave: OTF2_EvtWriter_Leave(w, nullptr, t, e.region); break;
        case ArchiveRecord::Send: OTF2_EvtWriter_MpiSend(w, nullptr, t, e.peer, e.comm, e.tag, e.bytes); break;
        case ArchiveRecord::Isend:
          OTF2_EvtWriter_MpiIsend(w, nullptr, t, e.peer, e.comm, e.tag, e.bytes, e.request);
          break;
        case ArchiveRecord::IsendComplete: OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, e.request); break;
        case ArchiveRecord::IrecvRequest: OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, e.request); break;
        case ArchiveRecord::Recv: OTF2_EvtWriter_MpiRecv(w, nullptr, t, e.peer, e.comm, e.tag, e.bytes); break;
        case ArchiveRecord::Irecv:
          OTF2_EvtWriter_MpiIrecv(w, nullptr, t, e.peer, e.comm, e.tag, e.bytes, e.request);
          break;
        case ArchiveRecord::CollectiveBegin: OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t); break;
        case ArchiveRecord::CollectiveEnd:
          OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, static_cast<OTF2_CollectiveOp>(e.op), e.comm, e.root, e.sent,
                                          e.received);
          break;
      }
    }
    OTF2_EvtWriter_GetNumberOfEvents(w, &counts[r]);
    OTF2_Archive_CloseEvtWriter(a, w);
  }
  OTF2_Archive_CloseEvtFiles(a);
  OTF2_Archive_OpenDefFiles(a);
  for (std::size_t r = 0; r < spec.ranks.size(); ++r)
    OTF2_Archive_CloseDefWriter(a, OTF2_Archive_GetDefWriter(a, spec.locations[r]));
  OTF2_Archive_CloseDefFiles(a);

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  OTF2_StringRef s = 0;
  OTF2_GlobalDefWriter_WriteString(g, s++, "");
  OTF2_GlobalDefWriter_WriteString(g, s++, "machine");
  OTF2_GlobalDefWriter_WriteString(g, s++, "Master thread");
  const OTF2_StringRef region_names = s;
  for (std::uint32_t r = 0; r < kArchiveRegions; ++r) OTF2_GlobalDefWriter_WriteString(g, s++, kArchiveRegionNames[r]);
  const OTF2_StringRef comm_names = s;
  for (const ArchiveComm& c : spec.comms) OTF2_GlobalDefWriter_WriteString(g, s++, c.name.c_str());
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 100, OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (std::size_t r = 0; r < spec.ranks.size(); ++r) {
    OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r), 2,
                                            OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(g, spec.locations[r], 2, OTF2_LOCATION_TYPE_CPU_THREAD, counts[r],
                                       static_cast<OTF2_LocationGroupRef>(r));
  }
  for (std::uint32_t r = 0; r < spec.regions && r < kArchiveRegions; ++r)
    OTF2_GlobalDefWriter_WriteRegion(g, r, region_names + r, region_names + r, 0, OTF2_REGION_ROLE_FUNCTION,
                                     r == kMainRegion ? OTF2_PARADIGM_USER : OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE,
                                     0, 0, 0);
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  static_cast<std::uint32_t>(spec.locations.size()), spec.locations.data());
  std::set<std::uint32_t> groups;
  for (const ArchiveComm& c : spec.comms)
    if (c.define_group && groups.insert(c.group).second)
      OTF2_GlobalDefWriter_WriteGroup(g, c.group, 0, c.self ? OTF2_GROUP_TYPE_COMM_SELF : OTF2_GROUP_TYPE_COMM_GROUP,
                                      OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                      static_cast<std::uint32_t>(c.members.size()), c.members.data());
  for (std::size_t i = 0; i < spec.comms.size(); ++i)
    OTF2_GlobalDefWriter_WriteComm(g, spec.comms[i].ref, comm_names + static_cast<OTF2_StringRef>(i),
                                   spec.comms[i].group, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_Archive_CloseGlobalDefWriter(a, g);
  OTF2_Archive_Close(a);

  for (std::size_t r = 0; r < spec.ranks.size(); ++r) {
    if (patches[r].empty()) continue;
    const fs::path evt = dir / "traces" / (std::to_string(spec.locations[r]) + ".evt");
    std::string bytes;
    {
      std::ifstream in(evt, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    for (const auto& [from, to] : patches[r]) {
      std::string pattern(8, '\0'), value(8, '\0');
      for (int b = 0; b < 8; ++b) {
        pattern[static_cast<std::size_t>(b)] = static_cast<char>((from >> (8 * b)) & 0xFF);
        value[static_cast<std::size_t>(b)] = static_cast<char>((to >> (8 * b)) & 0xFF);
      }
      for (std::size_t at = bytes.find(pattern); at != std::string::npos; at = bytes.find(pattern, at + 8))
        bytes.replace(at, 8, value);
    }
    std::ofstream(evt, std::ios::binary | std::ios::trunc) << bytes;
  }
}

// ---- the archive as OTF2 reads it, and the rules it must keep ---------------

struct DecodedArchive {
  bool readable = false;
  std::set<std::uint32_t> regions;
  std::map<std::uint32_t, std::pair<bool, std::uint64_t>> comms;  // ref -> (defined group, its size)
  std::string definition_problem;
  std::vector<std::vector<ArchiveRecord>> ranks;
};

namespace detail {
struct DecodeState {
  std::map<std::uint32_t, std::pair<int, std::vector<std::uint64_t>>> groups;  // ref -> (type, members)
  std::map<std::uint32_t, std::uint32_t> comm_groups;
  std::set<std::uint32_t> regions;
  std::vector<ArchiveRecord>* out = nullptr;
};
#define POEMS_TEST_STATE(d) (*static_cast<DecodeState*>(d))
inline OTF2_CallbackCode dec_region(void* d, OTF2_RegionRef self, OTF2_StringRef, OTF2_StringRef, OTF2_StringRef,
                                    OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag, OTF2_StringRef, std::uint32_t,
                                    std::uint32_t) {
  POEMS_TEST_STATE(d).regions.insert(self);
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_group(void* d, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm,
                                   OTF2_GroupFlag, std::uint32_t n, const std::uint64_t* members) {
  POEMS_TEST_STATE(d).groups[self] = {type, std::vector<std::uint64_t>(members, members + n)};
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_comm(void* d, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group, OTF2_CommRef,
                                  OTF2_CommFlag) {
  POEMS_TEST_STATE(d).comm_groups[self] = group;
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_inter(void*, OTF2_CommRef, OTF2_StringRef, OTF2_GroupRef, OTF2_GroupRef, OTF2_CommRef,
                                   OTF2_CommFlag) {
  return OTF2_CALLBACK_SUCCESS;  // the base archive has none; a mutation making one is left to the reader
}
inline void push(void* d, ArchiveRecord r) { POEMS_TEST_STATE(d).out->push_back(r); }
inline OTF2_CallbackCode dec_enter(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                                   OTF2_RegionRef region) {
  push(d, {ArchiveRecord::Enter, t, region});
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_leave(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                                   OTF2_RegionRef region) {
  push(d, {ArchiveRecord::Leave, t, region});
  return OTF2_CALLBACK_SUCCESS;
}
inline ArchiveRecord p2p_record(ArchiveRecord::Kind k, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
                                std::uint32_t tag, std::uint64_t bytes) {
  ArchiveRecord r{k, t};
  r.peer = peer, r.comm = comm, r.tag = tag, r.bytes = bytes;
  return r;
}
inline OTF2_CallbackCode dec_send(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                                  std::uint32_t peer, OTF2_CommRef comm, std::uint32_t tag, std::uint64_t bytes) {
  push(d, p2p_record(ArchiveRecord::Send, t, peer, comm, tag, bytes));
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_isend(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                                   std::uint32_t peer, OTF2_CommRef comm, std::uint32_t tag, std::uint64_t bytes,
                                   std::uint64_t) {
  push(d, p2p_record(ArchiveRecord::Isend, t, peer, comm, tag, bytes));
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_recv(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                                  std::uint32_t peer, OTF2_CommRef comm, std::uint32_t tag, std::uint64_t bytes) {
  push(d, p2p_record(ArchiveRecord::Recv, t, peer, comm, tag, bytes));
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_irecv(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                                   std::uint32_t peer, OTF2_CommRef comm, std::uint32_t tag, std::uint64_t bytes,
                                   std::uint64_t) {
  push(d, p2p_record(ArchiveRecord::Irecv, t, peer, comm, tag, bytes));
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_request(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                                     std::uint64_t) {
  push(d, {ArchiveRecord::IrecvRequest, t});
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_coll(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                                  OTF2_CollectiveOp op, OTF2_CommRef comm, std::uint32_t root, std::uint64_t sent,
                                  std::uint64_t received) {
  ArchiveRecord r{ArchiveRecord::CollectiveEnd, t};
  r.op = op, r.comm = comm, r.root = root, r.sent = sent, r.received = received;
  push(d, r);
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_any(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*) {
  push(d, {ArchiveRecord::CollectiveBegin, t});  // a record whose time counts
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode dec_cancel(OTF2_LocationRef, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                                    std::uint64_t) {
  push(d, {ArchiveRecord::IsendComplete, t});
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_ErrorCode quiet(void*, const char*, std::uint64_t, const char*, OTF2_ErrorCode code, const char*, va_list) {
  return code;
}
#undef POEMS_TEST_STATE
}  // namespace detail

// Reads the archive with OTF2's reader alone (the records the replay reads).
inline DecodedArchive decode_archive(const std::string& anchor) {
  DecodedArchive out;
  OTF2_Error_RegisterCallback(detail::quiet, nullptr);
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (!reader) return out;
  OTF2_Reader_SetSerialCollectiveCallbacks(reader);
  detail::DecodeState st;
  bool ok = true;
  if (OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader)) {
    OTF2_GlobalDefReaderCallbacks* cb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, detail::dec_region);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, detail::dec_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, detail::dec_comm);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cb, detail::dec_inter);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, cb, &st);
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    std::uint64_t n = 0;
    ok = OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &n) == OTF2_SUCCESS;
    OTF2_Reader_CloseGlobalDefReader(reader, gdr);
  } else {
    ok = false;
  }
  std::vector<std::uint64_t> locations;
  for (const auto& [ref, g] : st.groups)
    if (g.first == OTF2_GROUP_TYPE_COMM_LOCATIONS) locations = g.second;
  out.regions = st.regions;
  if (std::set<std::uint64_t>(locations.begin(), locations.end()).size() != locations.size())
    out.definition_problem = "the locations group lists a location twice";
  for (const auto& [ref, group] : st.comm_groups) {
    auto g = st.groups.find(group);
    if (g == st.groups.end()) {
      out.definition_problem = "communicator " + std::to_string(ref) + " names an undefined group";
      continue;
    }
    const bool self = g->second.first == OTF2_GROUP_TYPE_COMM_SELF;
    const auto& members = g->second.second;
    for (std::uint64_t m : members)
      if (m >= locations.size())
        out.definition_problem = "communicator " + std::to_string(ref) + " names rank " + std::to_string(m);
    if (!self && std::set<std::uint64_t>(members.begin(), members.end()).size() != members.size())
      out.definition_problem = "communicator " + std::to_string(ref) + " lists a rank twice";
    out.comms[ref] = {g->second.first == OTF2_GROUP_TYPE_COMM_GROUP || self, self ? 1 : members.size()};
  }
  if (ok && !locations.empty()) {
    for (std::uint64_t loc : locations) ok = ok && OTF2_Reader_SelectLocation(reader, loc) == OTF2_SUCCESS;
    ok = ok && OTF2_Reader_OpenEvtFiles(reader) == OTF2_SUCCESS;
    OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, detail::dec_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, detail::dec_leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, detail::dec_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, detail::dec_isend);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, detail::dec_recv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, detail::dec_irecv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, detail::dec_request);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, detail::dec_request);
    OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, detail::dec_cancel);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, detail::dec_coll);
    OTF2_EvtReaderCallbacks_SetUnknownCallback(cb, detail::dec_any);
    out.ranks.resize(locations.size());
    for (std::size_t r = 0; ok && r < locations.size(); ++r) {
      OTF2_EvtReader* evt = OTF2_Reader_GetEvtReader(reader, locations[r]);
      if (!evt) {
        ok = false;
        break;
      }
      st.out = &out.ranks[r];
      OTF2_Reader_RegisterEvtCallbacks(reader, evt, cb, &st);
      std::uint64_t n = 0;
      ok = OTF2_Reader_ReadAllLocalEvents(reader, evt, &n) == OTF2_SUCCESS;
      OTF2_Reader_CloseEvtReader(reader, evt);
    }
    OTF2_EvtReaderCallbacks_Delete(cb);
    OTF2_Reader_CloseEvtFiles(reader);
  }
  OTF2_Reader_Close(reader);
  out.readable = ok && !locations.empty();
  return out;
}

// The first thing in the archive a replay must refuse, or "".
inline std::string first_violation(const DecodedArchive& a) {
  if (!a.definition_problem.empty()) return a.definition_problem;
  constexpr std::uint64_t kMaxBytes = (std::uint64_t{1} << 53) - 1;
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    std::uint64_t last = 0;
    for (std::size_t i = 0; i < a.ranks[r].size(); ++i) {
      const ArchiveRecord& e = a.ranks[r][i];
      const std::string where = "rank " + std::to_string(r) + " record " + std::to_string(i) + ": ";
      if (e.time < last) return where + "time goes backwards";
      last = e.time;
      switch (e.kind) {
        case ArchiveRecord::Enter:
        case ArchiveRecord::Leave:
          if (!a.regions.count(e.region)) return where + "undefined region " + std::to_string(e.region);
          break;
        case ArchiveRecord::Send:
        case ArchiveRecord::Isend:
        case ArchiveRecord::Recv:
        case ArchiveRecord::Irecv: {
          auto c = a.comms.find(e.comm);
          if (c == a.comms.end()) return where + "undefined communicator " + std::to_string(e.comm);
          if (c->second.first && e.peer >= c->second.second) return where + "peer " + std::to_string(e.peer);
          if (e.tag > 0x7FFFFFFFu) return where + "tag " + std::to_string(e.tag);
          if (e.bytes > kMaxBytes) return where + "bytes " + std::to_string(e.bytes);
          break;
        }
        case ArchiveRecord::CollectiveEnd: {
          if (e.op > OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE) return where + "op " + std::to_string(e.op);
          auto c = a.comms.find(e.comm);
          if (c == a.comms.end()) return where + "undefined communicator " + std::to_string(e.comm);
          if (!c->second.first) break;
          const bool rooted = e.op == OTF2_COLLECTIVE_OP_BCAST || e.op == OTF2_COLLECTIVE_OP_REDUCE ||
                              e.op == OTF2_COLLECTIVE_OP_GATHER || e.op == OTF2_COLLECTIVE_OP_GATHERV ||
                              e.op == OTF2_COLLECTIVE_OP_SCATTER || e.op == OTF2_COLLECTIVE_OP_SCATTERV;
          if (e.root < OTF2_COLLECTIVE_ROOT_THIS_GROUP ? e.root >= c->second.second : rooted)
            return where + "root " + std::to_string(e.root);
          if (e.sent > kMaxBytes || e.received > kMaxBytes) return where + "collective bytes";
          break;
        }
        default: break;
      }
    }
  }
  return "";
}

}  // namespace poems::trace::testing
