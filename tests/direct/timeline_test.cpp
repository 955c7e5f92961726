// `poems direct --timeline`: the simulated run of a directly executed
// program written as OTF2 (by the program's process, docs/trace.md section 7)
// and as a Chrome trace, read back and checked against the run's own
// results, and against the simulation of the same communication as a GOAL file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <otf2/otf2.h>

#include "poems/base/temporary_directory.h"
#include "run_command.h"

namespace fs = std::filesystem;

namespace {

const std::string kPoems = POEMS_BINARY;
std::string program(const std::string& name) { return std::string(POEMS_BIN_DIR) + "/" + name; }
std::string source(const std::string& path) { return std::string(POEMS_SOURCE_DIR) + "/" + path; }

// The test process's scratch directory, removed when it exits.
fs::path work_dir() {
  static const poems::base::TemporaryDirectory dir("poems_direct_timeline_");
  return dir.path();
}

// A message record: kind, time (ps), peer, tag, bytes (request ids differ between sources).
using Message = std::tuple<std::string, std::uint64_t, std::uint32_t, std::uint32_t, std::uint64_t>;

struct Archive {
  std::map<OTF2_LocationRef, std::uint32_t> rank_of;  // location -> its rank (location group)
  std::map<std::uint32_t, std::vector<Message>> messages;
  std::map<std::uint32_t, std::uint64_t> last;                 // per rank: the last event's time
  std::map<std::uint32_t, std::map<std::string, int>> enters;  // per rank: region name -> enters
  std::map<std::uint32_t, std::string> strings, regions;
  std::string creator;
};

Archive& of(void* d) { return *static_cast<Archive*>(d); }
void note(void* d, OTF2_LocationRef l, OTF2_TimeStamp t) {
  std::uint64_t& last = of(d).last[of(d).rank_of[l]];
  last = std::max(last, t);
}
void message(void* d, OTF2_LocationRef l, OTF2_TimeStamp t, const char* kind, std::uint32_t peer, std::uint32_t tag,
             std::uint64_t bytes) {
  note(d, l, t);
  of(d).messages[of(d).rank_of[l]].emplace_back(kind, t, peer, tag, bytes);
}

OTF2_CallbackCode on_string(void* d, OTF2_StringRef id, const char* text) {
  of(d).strings[id] = text;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_region(void* d, OTF2_RegionRef id, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
                            OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag, OTF2_StringRef, std::uint32_t,
                            std::uint32_t) {
  of(d).regions[id] = of(d).strings[name];
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location(void* d, OTF2_LocationRef id, OTF2_StringRef, OTF2_LocationType, std::uint64_t,
                              OTF2_LocationGroupRef group) {
  of(d).rank_of[id] = group;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_enter(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, OTF2_RegionRef region) {
  note(d, l, t);
  ++of(d).enters[of(d).rank_of[l]][of(d).regions[region]];
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, OTF2_RegionRef) {
  note(d, l, t);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, std::uint32_t receiver,
                           OTF2_CommRef, std::uint32_t tag, std::uint64_t bytes, std::uint64_t) {
  message(d, l, t, "isend", receiver, tag, bytes);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, std::uint32_t sender,
                           OTF2_CommRef, std::uint32_t tag, std::uint64_t bytes, std::uint64_t) {
  message(d, l, t, "irecv", sender, tag, bytes);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend_complete(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, std::uint64_t) {
  message(d, l, t, "isend complete", 0, 0, 0);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv_request(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, std::uint64_t) {
  message(d, l, t, "irecv request", 0, 0, 0);
  return OTF2_CALLBACK_SUCCESS;
}

Archive read_archive(const fs::path& anchor) {
  Archive a;
  OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
  EXPECT_NE(r, nullptr) << anchor;
  if (!r) return a;
  OTF2_Reader_SetSerialCollectiveCallbacks(r);
  char* creator = nullptr;
  if (OTF2_Reader_GetCreator(r, &creator) == OTF2_SUCCESS && creator) {
    a.creator = creator;
    free(creator);
  }
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(r);
  OTF2_GlobalDefReaderCallbacks* gcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(gcb, on_string);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(gcb, on_region);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, on_location);
  OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, gcb, &a);
  OTF2_GlobalDefReaderCallbacks_Delete(gcb);
  std::uint64_t n = 0;
  EXPECT_EQ(OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &n), OTF2_SUCCESS);
  OTF2_Reader_CloseGlobalDefReader(r, gdr);
  for (const auto& [location, rank] : a.rank_of) OTF2_Reader_SelectLocation(r, location);
  OTF2_Reader_OpenEvtFiles(r);
  OTF2_Reader_OpenDefFiles(r);
  for (const auto& [location, rank] : a.rank_of) {
    if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, location)) {
      std::uint64_t defs = 0;
      OTF2_Reader_ReadAllLocalDefinitions(r, dr, &defs);
      OTF2_Reader_CloseDefReader(r, dr);
    }
    OTF2_Reader_GetEvtReader(r, location);
  }
  OTF2_Reader_CloseDefFiles(r);
  OTF2_GlobalEvtReader* ger = OTF2_Reader_GetGlobalEvtReader(r);
  OTF2_GlobalEvtReaderCallbacks* cb = OTF2_GlobalEvtReaderCallbacks_New();
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, on_enter);
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(cb, on_isend);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(cb, on_irecv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, on_isend_complete);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, on_irecv_request);
  OTF2_Reader_RegisterGlobalEvtCallbacks(r, ger, cb, &a);
  OTF2_GlobalEvtReaderCallbacks_Delete(cb);
  EXPECT_EQ(OTF2_Reader_ReadAllGlobalEvents(r, ger, &n), OTF2_SUCCESS);
  OTF2_Reader_CloseGlobalEvtReader(r, ger);
  OTF2_Reader_CloseEvtFiles(r);
  OTF2_Reader_Close(r);
  return a;
}

std::size_t count(const std::vector<Message>& list, const std::string& kind) {
  std::size_t n = 0;
  for (const Message& m : list) n += std::get<0>(m) == kind;
  return n;
}

// Runs `poems direct` with --timeline and checks what every archive must
// satisfy: otf2-print reads it without a warning, its messages are the run's
// (every send received, as many as the run reports), each rank's last event
// is the rank's simulated finish. Returns the archive and the JSON result.
std::pair<Archive, nlohmann::json> direct_otf2(const std::string& name, const std::string& command) {
  const fs::path anchor = work_dir() / name / "run.otf2";
  const CommandResult r =
      run_command(kPoems + " direct --no-store --format json --timeline " + anchor.string() + " " + command);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote " + anchor.string() + " (OTF2, "), std::string::npos) << r.err;
  if (r.exit_code != 0) return {};
  const nlohmann::json j = nlohmann::json::parse(r.out);
  if (!std::string(POEMS_OTF2_PRINT).empty()) {
    const CommandResult print = run_command(std::string(POEMS_OTF2_PRINT) + " " + anchor.string());
    EXPECT_EQ(print.exit_code, 0) << print.err;
    EXPECT_EQ(print.err.find("warning"), std::string::npos) << print.err;
  }
  Archive a = read_archive(anchor);
  EXPECT_EQ(a.creator, "poems direct");
  std::size_t sends = 0, receives = 0;
  for (const auto& [rank, list] : a.messages) {
    sends += count(list, "isend");
    receives += count(list, "irecv");
  }
  EXPECT_EQ(sends, j["messages"].get<std::size_t>()) << name;
  EXPECT_EQ(receives, sends) << name;
  EXPECT_EQ(a.last.size(), j["ranks"].size()) << name;
  for (const nlohmann::json& rank : j["ranks"]) {
    const auto r_id = rank["rank"].get<std::uint32_t>();
    // finish_ns has picosecond digits (JSON number): compare in picoseconds.
    EXPECT_EQ(a.last[r_id], static_cast<std::uint64_t>(std::llround(rank["finish_ns"].get<double>() * 1000)))
        << name << " rank " << r_id;
  }
  return {a, j};
}

}  // namespace

TEST(DirectTimeline, RingAsOtf2IsTheRunAndTheGoalFilesSimulation) {
  auto [a, j] = direct_otf2("ring", program("direct_ring") + " -np 5 --compute model -- 2");
  ASSERT_EQ(j["finish_ns"], 55420);
  for (std::uint32_t r = 0; r < 5; ++r) {  // two laps: each rank sends twice and receives twice
    EXPECT_EQ(count(a.messages[r], "isend"), 2u) << r;
    EXPECT_EQ(count(a.messages[r], "irecv"), 2u) << r;
    EXPECT_EQ(a.enters[r]["MPI_Send"], 2) << r;
    EXPECT_EQ(a.enters[r]["MPI_Recv"], 2) << r;
  }
  // The same communication as a GOAL file, simulated: the same messages at
  // the same times, record by record.
  const fs::path goal = work_dir() / "ring" / "goal.otf2";
  const CommandResult s = run_command(kPoems + " simulate --no-store --goal " + source("tests/direct/ring5.goal") +
                                      " --timeline " + goal.string());
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const Archive g = read_archive(goal);
  ASSERT_EQ(g.messages.size(), 5u);
  for (std::uint32_t r = 0; r < 5; ++r) EXPECT_EQ(a.messages[r], g.messages.at(r)) << "rank " << r;
  EXPECT_EQ(a.last, g.last);
}

TEST(DirectTimeline, ThreadsWriteTheSameArchiveAsProcesses) {
  const auto [processes, pj] = direct_otf2("processes", program("direct_ring") + " -np 4 --compute model -- 3");
  const auto [threads, tj] =
      direct_otf2("threads", program("direct_ring") + " -np 4 --compute model --isolation threads -- 3");
  EXPECT_EQ(processes.messages, threads.messages);
  EXPECT_EQ(processes.enters, threads.enters);
}

TEST(DirectTimeline, CollectivesCppFortranAndNonblockingCollectives) {
  // Measured computation: the times differ between runs, so each archive is
  // checked against its own run (direct_otf2) and for what the programs call.
  {
    const auto [a, j] = direct_otf2("collectives", program("direct_feature_collectives") + " -np 3");
    for (std::uint32_t r = 0; r < 3; ++r)
      for (const char* call : {"MPI_Allreduce", "MPI_Bcast", "MPI_Alltoallv", "MPI_Barrier", "computation"})
        EXPECT_GT(a.enters.at(r).count(call), 0u) << "rank " << r << " " << call;
  }
  {
    const auto [a, j] = direct_otf2("fortran90", program("direct_feature_fortran90") + " -np 3");
    for (std::uint32_t r = 0; r < 3; ++r) EXPECT_GT(a.enters.at(r).count("MPI_Sendrecv"), 0u) << r;
  }
  {
    // Nonblocking collectives run on each rank's companion: more locations
    // of the same rank, whose messages name ranks, not companions.
    const auto [a, j] = direct_otf2("nonblocking", program("direct_feature_nonblocking_collectives") + " -np 3");
    std::set<std::uint32_t> ranks;
    for (const auto& [location, rank] : a.rank_of) ranks.insert(rank);
    EXPECT_EQ(ranks, (std::set<std::uint32_t>{0, 1, 2}));
    EXPECT_GT(a.rank_of.size(), 3u);
    for (const auto& [rank, list] : a.messages)
      for (const Message& m : list) EXPECT_LT(std::get<2>(m), 3u);
  }
}

TEST(DirectTimeline, ChromeTraceAndErrors) {
  const fs::path json = work_dir() / "ring.json";
  CommandResult r = run_command(kPoems + " direct " + program("direct_ring") +
                                " -np 5 --compute model --no-store --timeline " + json.string() + " -- 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(json);
  const nlohmann::json t = nlohmann::json::parse(in);
  std::map<int, int> sends;
  std::map<int, double> end_us;
  for (const nlohmann::json& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const int tid = e["tid"].get<int>();
    sends[tid] += e["name"] == "send";
    end_us[tid] = std::max(end_us[tid], e["ts"].get<double>() + e["dur"].get<double>());
  }
  EXPECT_EQ(sends, (std::map<int, int>{{0, 2}, {1, 2}, {2, 2}, {3, 2}, {4, 2}}));
  EXPECT_NEAR(end_us[0], 55.420, 1e-9);
  EXPECT_NEAR(end_us[1], 34.752, 1e-9);
  // A name the writer refuses: the run is reported, then the error (exit 1).
  r = run_command(kPoems + " direct " + program("direct_ring") + " -np 2 --compute model --no-store --timeline " +
                  (work_dir() / "ring.json" / "x.otf2").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("poems: error: --timeline: "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("finish"), std::string::npos) << r.out;
}
