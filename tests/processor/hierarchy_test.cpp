// processor[hierarchy]: Wg read off a working-set curve (synthetic curves
// with known answers), its attributes' errors, and the round trip through
// the attributes poems calibrate writes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "poems/processor/hierarchy.h"
#include "poems/processor/processor_model.h"
#include "processor_error.h"

using namespace poems;
using processor::ProcessorSpec;
using processor::TaskRequest;
using processor::testing::error_of;

namespace {

// L1 32 KiB, L2 1 MiB, DRAM 64 MiB: 4, 6 and 10 ns alone; 4, 7 and 16 ns with 4 cores busy.
ProcessorSpec three_levels() {
  return {"Host_hierarchy",
          "processor[hierarchy]",
          {{"ws_1", 32768},
           {"Wg_1", 4},
           {"Wg_busy_1", 4},
           {"ws_2", 1048576},
           {"Wg_2", 6},
           {"Wg_busy_2", 7},
           {"ws_3", 67108864},
           {"Wg_3", 10},
           {"Wg_busy_3", 16},
           {"cores", 4}},
          {}};
}

TaskRequest task(double work, double working_set, double procs = 1) {
  return {"KBlock", "execute_code_block", {{"work", work}, {"working_set", working_set}, {"procs", procs}}};
}

}  // namespace

TEST(ProcessorHierarchy, AtThePointsWgIsThePoint) {
  auto model = processor::make_processor_model(three_levels());
  EXPECT_EQ(model->evaluator(), "processor[hierarchy]");
  EXPECT_EQ(model->task_time_ns(task(1000, 32768)), 4000.0);
  EXPECT_EQ(model->task_time_ns(task(1000, 1048576)), 6000.0);
  EXPECT_EQ(model->task_time_ns(task(1000, 67108864)), 10000.0);
}

TEST(ProcessorHierarchy, BetweenPointsLinearInLog2OfTheWorkingSet) {
  const processor::WorkingSetCurve c = processor::working_set_curve(three_levels());
  // 2^15 .. 2^20 bytes: 2^17 is 2/5 of the way, Wg 4 + 0.4 * 2 = 4.8.
  EXPECT_DOUBLE_EQ(c.wg_at(131072, 1), 4.8);
  // 2^20 .. 2^26: 2^23 is half way, 8.
  EXPECT_DOUBLE_EQ(c.wg_at(8388608, 1), 8.0);
  // Outside the points the nearest point holds (no extrapolation).
  EXPECT_EQ(c.wg_at(100, 1), 4.0);
  EXPECT_EQ(c.wg_at(1e12, 1), 10.0);
  // Monotone curve, monotone answers.
  double last = 0;
  for (double ws = 1024; ws < 1e9; ws *= 1.7) {
    EXPECT_GE(c.wg_at(ws, 1), last);
    last = c.wg_at(ws, 1);
  }
}

TEST(ProcessorHierarchy, ProcessesComputingAtOnceMoveTowardsTheBusyCurve) {
  auto model = processor::make_processor_model(three_levels());
  // DRAM: alone 10, 4 busy 16; 2 busy is 1/3 of the way (12), 3 busy 2/3 (14), more than the cores 16.
  EXPECT_DOUBLE_EQ(model->task_time_ns(task(1, 67108864, 2)), 12.0);
  EXPECT_DOUBLE_EQ(model->task_time_ns(task(1, 67108864, 3)), 14.0);
  EXPECT_DOUBLE_EQ(model->task_time_ns(task(1, 67108864, 4)), 16.0);
  EXPECT_DOUBLE_EQ(model->task_time_ns(task(1, 67108864, 4096)), 16.0);
  // L1 is private: the same with every core busy.
  EXPECT_DOUBLE_EQ(model->task_time_ns(task(1, 32768, 4)), 4.0);
  // No procs: alone.
  EXPECT_DOUBLE_EQ(model->task_time_ns({"K", "t", {{"work", 1}, {"working_set", 67108864}}}), 10.0);
}

TEST(ProcessorHierarchy, OnePointIsProcessorWg) {
  auto model = processor::make_processor_model({"Flat", "processor[hierarchy]", {{"ws_1", 1e6}, {"Wg_1", 60}}, {}});
  for (double ws : {1.0, 1e6, 1e12}) EXPECT_EQ(model->task_time_ns(task(37500 * 3, ws, 16)), 37500 * 3 * 60.0);
}

TEST(ProcessorHierarchy, TheCalibratedAttributesRoundTrip) {
  const processor::WorkingSetCurve c = processor::working_set_curve(three_levels());
  ProcessorSpec again{"Again", "processor[hierarchy]", {}, {}};
  for (const auto& [name, value] : processor::curve_attributes(c)) again.numbers[name] = value;
  EXPECT_EQ(again.numbers, three_levels().numbers);
  const processor::WorkingSetCurve d = processor::working_set_curve(again);
  EXPECT_EQ(d.bytes, c.bytes);
  EXPECT_EQ(d.wg_ns, c.wg_ns);
  EXPECT_EQ(d.busy_wg_ns, c.busy_wg_ns);
  EXPECT_EQ(d.cores, 4);
}

TEST(ProcessorHierarchy, BadCurvesNameTheAttributeAndTheRange) {
  auto bad = [](std::map<std::string, double> numbers) {
    return error_of([&] { processor::make_processor_model({"Cpu", "processor[hierarchy]", numbers, {}}); });
  };
  EXPECT_NE(bad({}).find("missing attribute 'ws_1'"), std::string::npos) << bad({});
  std::string m = bad({{"ws_1", 1024}});
  EXPECT_NE(m.find("missing attribute 'Wg_1'"), std::string::npos) << m;
  m = bad({{"ws_1", 1024}, {"Wg_1", 5}, {"ws_2", 512}, {"Wg_2", 6}});
  EXPECT_NE(m.find("'ws_2' (512 B) must be larger than 'ws_1' (1024 B)"), std::string::npos) << m;
  m = bad({{"ws_1", 1024}, {"Wg_1", 5}, {"ws_3", 4096}, {"Wg_3", 6}});
  EXPECT_NE(m.find("_3' follows no point 2 ('ws_2' is missing)"), std::string::npos) << m;
  m = bad({{"ws_1", -3}, {"Wg_1", 5}});
  EXPECT_NE(m.find("'ws_1' is -3 B; a working set must be > 0 B"), std::string::npos) << m;
  m = bad({{"ws_1", 1024}, {"Wg_1", -1}});
  EXPECT_NE(m.find("'Wg_1' is -1 ns; a time per unit of work must be >= 0"), std::string::npos) << m;
  m = bad({{"ws_1", 1024}, {"Wg_1", 5}, {"Wg_busy_1", 6}});
  EXPECT_NE(m.find("needs attribute 'cores'"), std::string::npos) << m;
  m = bad({{"ws_1", 1024}, {"Wg_1", 5}, {"Wg_busy_1", 6}, {"ws_2", 2048}, {"Wg_2", 5}, {"cores", 2}});
  EXPECT_NE(m.find("'Wg_busy_2' is missing but 'Wg_busy_1' is"), std::string::npos) << m;
  m = bad({{"ws_1", 1024}, {"Wg_1", 5}, {"cores", 2.5}});
  EXPECT_NE(m.find("'cores' is 2.5; it must be a whole number from 1"), std::string::npos) << m;
  m = bad({{"ws_1", 1024}, {"Wg_1", 5}, {"Wg_2", 5}});
  EXPECT_NE(m.find("'Wg_2' follows no point 2"), std::string::npos) << m;
  m = bad({{"ws_1", 1024}, {"Wg_1", 5}, {"Wg_busy_17", 5}});
  EXPECT_NE(m.find("'Wg_busy_17' follows no point 2"), std::string::npos) << m;
  m = bad({{"ws_0", 512}, {"Wg_0", 5}, {"ws_1", 1024}, {"Wg_1", 5}});
  EXPECT_NE(m.find("_0': the points are numbered from 1"), std::string::npos) << m;
  m = bad({{"ws_1", 1024}, {"Wg_1", 5}, {"ws_01", 2048}, {"Wg_01", 6}});
  EXPECT_NE(m.find("_01': number the points 1, 2, 3, ... without leading zeros"), std::string::npos) << m;
  m = bad({{"Wg_1", 5}});
  EXPECT_NE(m.find("'Wg_1' follows no point 1 ('ws_1' is missing)"), std::string::npos) << m;
  EXPECT_NE(m.find("'Cpu' (processor[hierarchy])"), std::string::npos) << m;
}

TEST(ProcessorHierarchy, ATaskWithoutAWorkingSetIsTold) {
  auto model = processor::make_processor_model(three_levels());
  std::string m = error_of([&] { model->task_time_ns({"KBlock", "execute_code_block", {{"work", 10}}}); });
  EXPECT_NE(m.find("KBlock.execute_code_block has no parameter 'working_set'"), std::string::npos) << m;
  m = error_of([&] { model->task_time_ns(task(10, 0)); });
  EXPECT_NE(m.find("working_set = 0 B; it must be a finite number of bytes > 0"), std::string::npos) << m;
  m = error_of([&] { model->task_time_ns(task(10, 1024, 0)); });
  EXPECT_NE(m.find("procs = 0"), std::string::npos) << m;
  m = error_of([&] { model->task_time_ns({"K", "t", {{"working_set", 1024}}}); });
  EXPECT_NE(m.find("has no parameter 'work'"), std::string::npos) << m;
}
