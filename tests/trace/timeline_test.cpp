// A simulated run written as OTF2 and read back with OTF2's reader: the
// 8-rank tree of docs/references.md, whose finish times are known.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <otf2/otf2.h>

#include "poems/trace/timeline.h"
#include "poems/trace/trace.h"
#include "trace_test_util.h"

namespace poems::trace {
namespace {

namespace fs = std::filesystem;
using testing::goal;
using testing::machine;

struct Seen {
  std::map<OTF2_LocationRef, std::vector<std::pair<std::string, OTF2_TimeStamp>>> events;
  OTF2_TimeStamp last = 0;
  std::uint64_t resolution = 0;
};

void note(void* data, OTF2_LocationRef loc, OTF2_TimeStamp t, const char* what) {
  auto& s = *static_cast<Seen*>(data);
  s.events[loc].push_back({what, t});
  s.last = std::max(s.last, t);
}

OTF2_CallbackCode on_enter(OTF2_LocationRef l, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                           OTF2_RegionRef) {
  note(d, l, t, "enter");
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef l, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                           OTF2_RegionRef) {
  note(d, l, t, "leave");
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend(OTF2_LocationRef l, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                           std::uint32_t, OTF2_CommRef, std::uint32_t, std::uint64_t, std::uint64_t) {
  note(d, l, t, "isend");
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv(OTF2_LocationRef l, OTF2_TimeStamp t, std::uint64_t, void* d, OTF2_AttributeList*,
                           std::uint32_t sender, OTF2_CommRef, std::uint32_t, std::uint64_t bytes, std::uint64_t) {
  note(d, l, t, ("irecv from " + std::to_string(sender) + " " + std::to_string(bytes) + "b").c_str());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_clock(void* d, std::uint64_t resolution, std::uint64_t, std::uint64_t, std::uint64_t) {
  static_cast<Seen*>(d)->resolution = resolution;
  return OTF2_CALLBACK_SUCCESS;
}

Seen read_back(const std::string& anchor) {
  Seen seen;
  OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
  EXPECT_NE(r, nullptr);
  if (!r) return seen;
  OTF2_Reader_SetSerialCollectiveCallbacks(r);
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(r);
  OTF2_GlobalDefReaderCallbacks* gcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(gcb, on_clock);
  OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, gcb, &seen);
  OTF2_GlobalDefReaderCallbacks_Delete(gcb);
  std::uint64_t n = 0;
  EXPECT_EQ(OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &n), OTF2_SUCCESS);
  OTF2_Reader_CloseGlobalDefReader(r, gdr);
  std::uint64_t locations = 0;
  OTF2_Reader_GetNumberOfLocations(r, &locations);
  for (OTF2_LocationRef l = 0; l < locations; ++l) OTF2_Reader_SelectLocation(r, l);
  OTF2_Reader_OpenEvtFiles(r);
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb, on_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, on_isend);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, on_irecv);
  for (OTF2_LocationRef l = 0; l < locations; ++l) {
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, l);
    OTF2_Reader_RegisterEvtCallbacks(r, er, cb, &seen);
    EXPECT_EQ(OTF2_Reader_ReadAllLocalEvents(r, er, &n), OTF2_SUCCESS);
    OTF2_Reader_CloseEvtReader(r, er);
  }
  OTF2_EvtReaderCallbacks_Delete(cb);
  OTF2_Reader_CloseEvtFiles(r);
  OTF2_Reader_Close(r);
  return seen;
}

std::string tree8() {
  std::ifstream in(std::string(POEMS_SOURCE_DIR) + "/examples/goal/tree8.goal");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Timeline, TheTreeKnownAnswerAsOtf2) {
  auto schedule = goal(tree8());
  ASSERT_TRUE(schedule);
  Otf2Timeline timeline(*schedule, Otf2Timeline::Labels::ByKind);
  EXPECT_EQ(timeline.check_order(), "");
  sim::SimulationOptions o = machine(2500, 1500, 1000, 6000000, 65535);
  o.observer = &timeline.observer();
  o.record_timeline = true;
  const sim::SimulationResult r = sim::simulate(timeline.source(), o);
  ASSERT_TRUE(r.completed);
  EXPECT_EQ(r.max_finish, testing::ns(34914));  // the source's wrapper changes nothing
  const fs::path dir = fs::temp_directory_path() / ("poems_timeline_" + std::to_string(::getpid()));
  const std::string anchor = (dir / "tree.otf2").string();
  timeline.write(anchor, r, 1);
  const Seen seen = read_back(anchor);
  EXPECT_EQ(seen.resolution, 1000000000000ull);  // picoseconds
  EXPECT_EQ(seen.last, testing::ns(34914));
  // Rank 0 receives from 1, 2 and 4 (1024 B each); its last receive ends at its finish time.
  std::vector<std::string> receives;
  OTF2_TimeStamp last_receive = 0;
  for (const auto& [what, t] : seen.events.at(0))
    if (what.rfind("irecv", 0) == 0) {
      receives.push_back(what);
      last_receive = std::max(last_receive, t);
    }
  EXPECT_EQ(receives.size(), 3u);
  EXPECT_EQ(last_receive, testing::ns(34914));
  std::size_t sends = 0, regions = 0;
  for (const auto& [loc, list] : seen.events)
    for (const auto& [what, t] : list) {
      sends += what == "isend";
      regions += what == "enter";
    }
  EXPECT_EQ(sends, 7u);
  EXPECT_EQ(regions, 7u + 7u);  // a send and a receive overhead per message
  fs::remove_all(dir);
}

TEST(Timeline, ASourceThatIsNotReadInOrderIsRefusedWithTheReason) {
  // Rank 0's send needs only the first calc but comes after a calc that
  // waits for a receive: the simulator could not report its events in order.
  std::string text = "num_ranks 2\nrank 0 {\n c: calc 100\n r: recv 8b from 1\n r requires c\n";
  text += " d: calc 10\n d requires r\n s: send 8b to 1\n s requires c\n}\n";
  text += "rank 1 {\n s: send 8b to 0\n r: recv 8b from 0\n}\n";
  auto schedule = goal(text);
  ASSERT_TRUE(schedule);
  Otf2Timeline timeline(*schedule, Otf2Timeline::Labels::ByKind);
  const std::string problem = timeline.check_order();
  EXPECT_NE(problem.find("rank 0 operation 3 can become ready before the operation before it"), std::string::npos)
      << problem;
}

}  // namespace
}  // namespace poems::trace
