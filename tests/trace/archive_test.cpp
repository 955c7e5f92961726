// Reading OTF2 archives: one written here with OTF2's own writer in the
// layout Score-P uses (MPI ranks as the COMM_LOCATIONS group, a thread that
// is no rank, a user region around the MPI calls, a clock in CPU ticks,
// local communicator ids with a mapping table, Score-P's byte counts for
// collectives), and archives that cannot be read.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <otf2/otf2.h>

#include "poems/trace/archive.h"
#include "poems/trace/otf2_read.h"
#include "poems/trace/replay.h"
#include "trace_test_util.h"

namespace poems::trace {
namespace {

namespace fs = std::filesystem;
using testing::finish_times;
using testing::goal;
using testing::machine;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("poems_trace_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }

enum Region : OTF2_RegionRef { kMain, kInit, kSend, kRecv, kBcast, kFinalize, kWtime, kIrecv, kWait, kRegions };
const char* const kRegionNames[] = {"main",         "MPI_Init",  "MPI_Send",  "MPI_Recv", "MPI_Bcast",
                                    "MPI_Finalize", "MPI_Wtime", "MPI_Irecv", "MPI_Wait"};

// 2.5 GHz ticks from a global offset of 1000 ticks: 2500 ticks are 1 us.
constexpr std::uint64_t kOffset = 1000, kTicksPerUs = 2500;
OTF2_TimeStamp us(double t) { return kOffset + static_cast<OTF2_TimeStamp>(t * kTicksPerUs); }

// Locations 10 and 11 are ranks 0 and 1, 12 a second thread of rank 0.
// Communicators: 0 the world, 1 self, 5 the world in reverse order. Rank 0
// writes local ids 100 (world) and 101 (reversed) and a mapping table.
fs::path write_scorep_like_archive() {
  const fs::path dir = temp_dir("scorep");
  OTF2_Archive* a = OTF2_Archive_Open(dir.string().c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  OTF2_FlushCallbacks flush{pre_flush, post_flush};
  OTF2_Archive_SetFlushCallbacks(a, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(a);
  OTF2_Archive_SetCreator(a, "Score-P 8.4 (a test's imitation)");
  OTF2_Archive_OpenEvtFiles(a);
  auto enter = [](OTF2_EvtWriter* w, double t, Region r) { OTF2_EvtWriter_Enter(w, nullptr, us(t), r); };
  auto leave = [](OTF2_EvtWriter* w, double t, Region r) { OTF2_EvtWriter_Leave(w, nullptr, us(t), r); };
  std::uint64_t events[3] = {};

  OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, 10);  // rank 0
  enter(w, 0, kMain);
  enter(w, 1, kInit);
  leave(w, 5, kInit);
  enter(w, 25, kSend);  // 20 us of computation
  OTF2_EvtWriter_MpiSend(w, nullptr, us(25.5), 1, 100, 5, 4096);
  leave(w, 27, kSend);
  enter(w, 30, kWtime);  // an MPI call without communication
  leave(w, 30.1, kWtime);
  enter(w, 40, kBcast);
  OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, us(40));
  OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, us(45), OTF2_COLLECTIVE_OP_BCAST, 101, 0, 0, 800);  // not the root
  leave(w, 45, kBcast);
  enter(w, 46, kIrecv);
  OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, us(46.5), 7);
  leave(w, 47, kIrecv);
  enter(w, 60, kWait);
  OTF2_EvtWriter_MpiIrecv(w, nullptr, us(61), 0, 101, 6, 16, 7);  // from rank 0 of the reversed world: rank 1
  leave(w, 61, kWait);
  enter(w, 70, kFinalize);
  leave(w, 71, kFinalize);
  leave(w, 72, kMain);
  OTF2_EvtWriter_GetNumberOfEvents(w, &events[0]);
  OTF2_Archive_CloseEvtWriter(a, w);

  w = OTF2_Archive_GetEvtWriter(a, 11);  // rank 1
  enter(w, 0, kMain);
  enter(w, 2, kInit);
  leave(w, 6, kInit);
  enter(w, 7, kRecv);
  OTF2_EvtWriter_MpiRecv(w, nullptr, us(28), 0, 0, 5, 4096);
  leave(w, 28, kRecv);
  enter(w, 40, kBcast);
  OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, us(40));
  OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, us(44), OTF2_COLLECTIVE_OP_BCAST, 5, 0, 2 * 800, 800);  // the root
  leave(w, 44, kBcast);
  enter(w, 50, kSend);
  OTF2_EvtWriter_MpiSend(w, nullptr, us(50), 1, 5, 6, 16);  // to rank 1 of the reversed world: rank 0
  leave(w, 51, kSend);
  enter(w, 70, kFinalize);
  leave(w, 72, kFinalize);
  leave(w, 73, kMain);
  OTF2_EvtWriter_GetNumberOfEvents(w, &events[1]);
  OTF2_Archive_CloseEvtWriter(a, w);

  w = OTF2_Archive_GetEvtWriter(a, 12);  // a thread of rank 0: not an MPI rank, not replayed
  enter(w, 10, kMain);
  leave(w, 20, kMain);
  OTF2_EvtWriter_GetNumberOfEvents(w, &events[2]);
  OTF2_Archive_CloseEvtWriter(a, w);
  OTF2_Archive_CloseEvtFiles(a);

  OTF2_Archive_OpenDefFiles(a);
  for (OTF2_LocationRef loc : {10, 11, 12}) {
    OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(a, loc);
    if (loc == 10) {
      OTF2_IdMap* map = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, 2);
      OTF2_IdMap_AddIdPair(map, 100, 0);
      OTF2_IdMap_AddIdPair(map, 101, 5);
      OTF2_DefWriter_WriteMappingTable(d, OTF2_MAPPING_COMM, map);
      OTF2_IdMap_Free(map);
    }
    OTF2_Archive_CloseDefWriter(a, d);
  }
  OTF2_Archive_CloseDefFiles(a);

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  const char* const strings[] = {
      "",       "machine",        "node",          "MPI Rank 0", "MPI Rank 1", "Master thread",
      "thread", "MPI_COMM_WORLD", "MPI_COMM_SELF", "reversed"};
  OTF2_StringRef s = 0;
  for (const char* text : strings) OTF2_GlobalDefWriter_WriteString(g, s++, text);
  for (OTF2_RegionRef r = 0; r < kRegions; ++r) OTF2_GlobalDefWriter_WriteString(g, s++, kRegionNames[r]);
  OTF2_GlobalDefWriter_WriteClockProperties(g, 2500000000ull, kOffset, 80 * kTicksPerUs, OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 2, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 3, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  OTF2_GlobalDefWriter_WriteLocationGroup(g, 1, 4, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  OTF2_GlobalDefWriter_WriteLocation(g, 10, 5, OTF2_LOCATION_TYPE_CPU_THREAD, events[0], 0);
  OTF2_GlobalDefWriter_WriteLocation(g, 11, 5, OTF2_LOCATION_TYPE_CPU_THREAD, events[1], 1);
  OTF2_GlobalDefWriter_WriteLocation(g, 12, 6, OTF2_LOCATION_TYPE_CPU_THREAD, events[2], 0);
  for (OTF2_RegionRef r = 0; r < kRegions; ++r)
    OTF2_GlobalDefWriter_WriteRegion(g, r, 10 + r, 10 + r, 0, OTF2_REGION_ROLE_FUNCTION,
                                     r == kMain ? OTF2_PARADIGM_USER : OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, 0, 0,
                                     0);
  const std::uint64_t locations[] = {10, 11}, world[] = {0, 1}, reversed[] = {1, 0};
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2,
                                  locations);
  OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2,
                                  world);
  OTF2_GlobalDefWriter_WriteGroup(g, 2, 0, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0,
                                  nullptr);
  OTF2_GlobalDefWriter_WriteGroup(g, 3, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 2,
                                  reversed);
  OTF2_GlobalDefWriter_WriteComm(g, 0, 7, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_GlobalDefWriter_WriteComm(g, 1, 8, 2, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  OTF2_GlobalDefWriter_WriteComm(g, 5, 9, 3, 0, OTF2_COMM_FLAG_NONE);
  OTF2_Archive_CloseGlobalDefWriter(a, g);
  OTF2_Archive_Close(a);
  return dir;
}

TEST(Archive, ReadsTheStandardLayoutScorePWrites) {
  const fs::path dir = write_scorep_like_archive();
  const Trace t = read_trace(dir.string());  // the directory: its one anchor file
  EXPECT_EQ(t.path, (dir / "traces.otf2").string());
  EXPECT_EQ(t.creator, "Score-P 8.4 (a test's imitation)");
  ASSERT_EQ(t.ranks.size(), 2u);
  EXPECT_TRUE(t.warnings.empty()) << t.warnings.front();
  // The run: from MPI_Init's end (5 and 6 us) to MPI_Finalize's start (70 us).
  EXPECT_EQ(t.ranks[0].begin, testing::ns(5000));
  EXPECT_EQ(t.ranks[1].end, testing::ns(70000));
  EXPECT_EQ(t.measured(), testing::ns(65000));
  // Rank 0: 1 us before MPI_Init (outside the run), 20 us of computation
  // (inside the user region "main"), the send, 3 and 9.9 us on either side
  // of MPI_Wtime (an MPI call: its 0.1 us is MPI time, not computation), the
  // bcast on the reversed communicator, the receive posted by MPI_Irecv and
  // completed in MPI_Wait.
  const std::vector<Step>& s = t.ranks[0].steps;
  ASSERT_EQ(s.size(), 11u);
  EXPECT_EQ(s[0].value, testing::ns(1000));
  EXPECT_EQ(s[1].kind, StepKind::Compute);
  EXPECT_EQ(s[1].value, testing::ns(20000));
  EXPECT_EQ(s[2].kind, StepKind::Send);
  EXPECT_EQ(s[2].peer, 1);
  EXPECT_EQ(s[2].value, 4096u);
  EXPECT_EQ(s[3].value, testing::ns(3000));
  EXPECT_EQ(s[4].value, testing::ns(9900));
  EXPECT_EQ(s[5].kind, StepKind::Collective);
  EXPECT_EQ(s[5].collective, Collective::Bcast);
  EXPECT_EQ(s[5].value, 800u);
  EXPECT_EQ(t.comms[s[5].comm].members, (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(s[7].kind, StepKind::Recv);
  EXPECT_TRUE(s[7].nonblocking);
  EXPECT_EQ(s[7].peer, 1);  // rank 0 of the reversed communicator, through the mapping table
  EXPECT_EQ(s[7].tag, 6);
  EXPECT_EQ(s[9].kind, StepKind::Complete);
  EXPECT_EQ(t.messages.size(), 2u);
  EXPECT_EQ(t.calls(), 7u + 5u);  // the thread's events are not a rank's
  // Rank 1 is the bcast's root: its Score-P sizes (sent 2 x 800) give the same block.
  EXPECT_EQ(t.ranks[1].steps[4].value, 800u);

  // The replay, against the same communication in GOAL.
  auto expected = goal(R"(num_ranks 2
    rank 0 { c1: calc 20000; s: send 4096b to 1 tag 5; c2: calc 3000; c2b: calc 9900; b: recv 800b from 1 comm 9;
             c3: calc 1000; r: recv 16b from 1 tag 6 comm 10; c4: calc 13000; c5: calc 9000;
             s requires c1; c2 requires s; c2b requires c2; b requires c2b; c3 requires b; r requires c3;
             c4 irequires r; c5 requires c4; c5 requires r }
    rank 1 { c0: calc 1000; r: recv 4096b from 0 tag 5; c1: calc 12000; b: send 800b to 0 comm 9; c2: calc 6000;
             s: send 16b to 0 tag 6 comm 10; c3: calc 19000;
             r requires c0; c1 requires r; b requires c1; c2 requires b; s requires c2; c3 requires s })");
  ASSERT_TRUE(expected);
  TraceSchedule replay(t, {});
  const sim::SimulationOptions odin = machine(5300, 2300, 2000, 2500000, 32768);
  EXPECT_EQ(finish_times(replay, odin), finish_times(*expected, odin));
  fs::remove_all(dir);
}

TEST(Archive, FilesSizeAndContentHash) {
  const fs::path dir = write_scorep_like_archive();
  const std::string anchor = (dir / "traces.otf2").string();
  const auto files = archive_files(anchor);
  ASSERT_EQ(files.size(), 2u + 6u);  // anchor, global definitions, 3 x (events, definitions)
  EXPECT_EQ(files.front(), "traces.def");
  EXPECT_GT(archive_bytes(anchor), 500u);
  const std::string hash = archive_hash(anchor);
  EXPECT_EQ(hash.size(), 64u);
  // A copy elsewhere has the same hash; a changed file changes it.
  const fs::path copy = temp_dir("copy");
  fs::copy(dir, copy, fs::copy_options::recursive);
  EXPECT_EQ(archive_hash((copy / "traces.otf2").string()), hash);
  std::ofstream(copy / "traces" / "12.evt", std::ios::app) << 'x';
  EXPECT_NE(archive_hash((copy / "traces.otf2").string()), hash);
  fs::remove_all(dir);
  fs::remove_all(copy);
}

void expect_error(const std::string& path, const std::string& text) {
  try {
    read_trace(path);
    ADD_FAILURE() << path << " was read";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(Archive, WhatCannotBeReadIsAnErrorThatSaysWhy) {
  const fs::path dir = temp_dir("errors");
  expect_error((dir / "missing").string(), "is neither an OTF2 anchor file nor a directory");
  expect_error(dir.string(), "holds no OTF2 anchor file");
  std::ofstream(dir / "a.otf2") << "not an archive\n";
  expect_error((dir / "a.otf2").string(), "a.otf2");
  std::ofstream(dir / "b.otf2") << "neither\n";
  expect_error(dir.string(), "holds 2 OTF2 anchor files");
  fs::remove_all(dir);
}

TEST(Archive, AnArchiveWithoutMpiRanksIsRefused) {
  const fs::path dir = temp_dir("nompi");
  OTF2_Archive* a = OTF2_Archive_Open(dir.string().c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  OTF2_FlushCallbacks flush{pre_flush, post_flush};
  OTF2_Archive_SetFlushCallbacks(a, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(a);
  OTF2_Archive_OpenEvtFiles(a);
  OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, 0);
  OTF2_EvtWriter_Enter(w, nullptr, 1, 0);
  OTF2_EvtWriter_Leave(w, nullptr, 2, 0);
  OTF2_Archive_CloseEvtWriter(a, w);
  OTF2_Archive_CloseEvtFiles(a);
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  OTF2_GlobalDefWriter_WriteString(g, 0, "main");
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 10, OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 0, 0, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
  OTF2_GlobalDefWriter_WriteLocation(g, 0, 0, OTF2_LOCATION_TYPE_CPU_THREAD, 2, 0);
  OTF2_GlobalDefWriter_WriteRegion(g, 0, 0, 0, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                   0, 0, 0);
  OTF2_Archive_CloseGlobalDefWriter(a, g);
  OTF2_Archive_Close(a);
  expect_error(dir.string(), "has no MPI ranks");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace poems::trace
