// processor[cachesim]'s counts in the knowledge base (core/src/cachesim_store.cpp):
// a simulation is stored once, as a run of evaluator processor[cachesim],
// and read back by the next one; a Store installs and removes the cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "poems/core/cachesim_calibration.h"
#include "poems/core/store.h"
#include "poems/db/knowledge_base.h"
#include "poems/examples/examples.h"

namespace fs = std::filesystem;
using namespace poems;

namespace {

[[maybe_unused]] processor::CacheConfig small_caches() {
  processor::CacheConfig c;
  c.I1 = {32768, 8, 64};
  c.D1 = {8192, 2, 64};
  c.LL = {262144, 8, 64};
  return c;
}

[[maybe_unused]] const std::map<std::string, double> kColumn = {
    {"it", 8}, {"jt", 8}, {"mk", 4}, {"angles", 2}, {"kt", 8}};

}  // namespace

TEST(CachesimStore, SimulatedOnceThenReadFromTheKnowledgeBase) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer build: an ASan-instrumented poems-kernel does not start under valgrind";
#else
  if (processor::default_kernel_runner().empty() || std::system("valgrind --version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs valgrind and poems-kernel beside core_tests";
  examples::register_examples();
  const fs::path dir = fs::temp_directory_path() / ("poems_cachesim_store_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "kb.db").string();
  processor::Simulation first, second;
  {
    core::Store store({false, db});  // installs the knowledge base as the counts' cache
    first = processor::simulate_kernel("sweep3d.kblock", kColumn, small_caches());
    second = processor::simulate_kernel("sweep3d.kblock", kColumn, small_caches());
  }
  const processor::Simulation after = processor::simulate_kernel("sweep3d.kblock", kColumn, small_caches());
  EXPECT_FALSE(first.cached);
  EXPECT_GT(first.seconds, 0);
  EXPECT_TRUE(second.cached);
  EXPECT_FALSE(after.cached);  // the Store is gone, and its cache with it
  EXPECT_EQ(second.per_call.Ir, first.per_call.Ir);
  EXPECT_EQ(second.per_call.D1mr, first.per_call.D1mr);
  EXPECT_EQ(second.per_call.DLmw, first.per_call.DLmw);
  EXPECT_EQ(after.per_call.D1mr, first.per_call.D1mr);
  db::KnowledgeBase kb(db);
  db::RunFilter filter;
  filter.evaluator = "processor[cachesim]";
  const std::vector<db::Run> runs = kb.runs(filter);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].model, "sweep3d.kblock");
  EXPECT_EQ(runs[0].binding["D1"], "8192,2,64");
  EXPECT_EQ(runs[0].binding["params"]["kt"], 8);
  EXPECT_EQ(runs[0].binding["warmup_calls"], 16);  // a whole cycle: 8 octants of 2 k-blocks
  EXPECT_EQ(runs[0].binding["counted_calls"], 16);
  ASSERT_TRUE(runs[0].result.has_value());
  EXPECT_EQ(runs[0].result->extra["per_call"]["Ir"].get<double>(), first.per_call.Ir);
  fs::remove_all(dir);
#endif
}
