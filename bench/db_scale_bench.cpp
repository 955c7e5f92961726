// The knowledge base at scale (issue 24): size per stored run and the time of
// the queries `poems db` and studies make, at 10^4, 10^5 and 10^6 runs, with
// and without the indexes (docs/PERFORMANCE.md, "Knowledge base").
//
//   db_scale_bench [--dir DIR] [--runs N ...] [--keep]
//
// Each knowledge base is built with realistic rows: a study binding (model
// parameters, the machine in ps and fs, the compute rates), a result with a
// breakdown, 1,000 runs per study, one run in a thousand failed.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "poems/db/knowledge_base.h"

namespace db = poems::db;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kStudySize = 1000;

db::RunKey key(int i) {
  const char* evaluators[] = {"analytic[LogGP]", "simulation[MPI-Sim]"};
  nlohmann::json binding = {
      {"parameters",
       {{"it_g", 150 + i % 97},
        {"jt_g", 150},
        {"kt", 150},
        {"mk", 1 + i % 30},
        {"mmi", 1 + i % 6},
        {"mm", 6},
        {"iterations", 12},
        {"npe_i", 1 + i % 64},
        {"npe_j", 1 + (i / 64) % 64}}},
      {"machine",
       {{"L_ps", 5300000},
        {"o_ps", 2300000},
        {"g_ps", 2000000},
        {"G_fs_per_byte", 2500000},
        {"O_fs_per_byte", 1000000},
        {"S_bytes", 32768},
        {"rendezvous_handshake", false}}},
      {"compute", nlohmann::json::array({{{"evaluator", "processor[wg]"}, {"node", 3}, {"ns_per_work", 60}}})},
      {"method", "default"},
      {"sample", i}};  // unique per run
  return {"Sweep3D", evaluators[i % 2], "3f1c0de5a1b2", "0.1.0", binding};
}

db::Result result(int i) {
  db::Result r;
  r.time_ns = 1e9 + i * 37.5;
  r.compute_ns = 7e8 + i;
  r.comm_ns = 2e8 + i;
  r.sync_ns = 1e8;
  r.events = 100000 + i;
  r.extra = {{"ranks", 64}, {"max_finish_rank", i % 64}, {"messages", 840 + i % 7}};
  return r;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Median wall time of `f` over `reps` calls, in milliseconds.
double median_ms(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    f();
    t.push_back(seconds_since(start) * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Built {
  double store_s = 0;
  std::uintmax_t bytes = 0;
  std::string tail_since;  // created_at of the last 1% of the runs
};

Built build(const fs::path& path, int n) {
  fs::remove(path);
  fs::remove(path.string() + "-wal");
  fs::remove(path.string() + "-shm");
  Built b;
  const auto start = Clock::now();
  {
    db::KnowledgeBase kb(path);
    // Batches of about a thousandth of the runs: record_runs stamps a batch
    // with one creation time, so `--since` sees a thousand distinct times.
    const int kBatch = std::max(100, n / 1000);
    for (int first = 0; first < n; first += kBatch) {
      const int last = std::min(n, first + kBatch);
      kb.transaction([&] {
        std::vector<db::CompletedRun> runs;
        for (int i = first; i < last; ++i) runs.push_back({key(i), result(i), 1000 + i});
        const std::vector<db::RecordedRun> stored = kb.record_runs(runs);
        db::RowId study = 0;
        for (int i = first; i < last; ++i) {
          if (study == 0 || i % kStudySize == 0)
            study = kb.put_study("sweep-" + std::to_string(i / kStudySize), "3f1c0de5a1b2");
          kb.add_run_to_study(study, stored[static_cast<std::size_t>(i - first)].id);
        }
      });
    }
    // One run in a thousand failed (a selective status).
    for (int i = n; i < n + n / 1000; ++i) {
      db::RunStart s = kb.begin_run(key(i));
      kb.fail_run(s.handle, "deadlock: rank 3 waits on a receive from rank 2");
    }
    db::QueryResult tail = kb.query_readonly("SELECT created_at FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1",
                                             {std::int64_t{std::max(1, n / 100)}});
    b.tail_since = std::get<std::string>(tail.rows.at(0).at(0));
  }
  b.store_s = seconds_since(start);
  sqlite3* raw = nullptr;  // fold the WAL in: the size is the file's
  sqlite3_open(path.c_str(), &raw);
  sqlite3_exec(raw, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  b.bytes = fs::file_size(path);
  return b;
}

void drop_indexes(const fs::path& path) {
  sqlite3* raw = nullptr;
  sqlite3_open(path.c_str(), &raw);
  sqlite3_exec(raw,
               "DROP INDEX runs_by_status; DROP INDEX runs_by_model; DROP INDEX runs_by_created; "
               "PRAGMA wal_checkpoint(TRUNCATE)",
               nullptr, nullptr, nullptr);
  sqlite3_close(raw);
}

void queries(const fs::path& path, int n, const Built& b, const char* label) {
  db::Options options;
  options.read_only = true;
  options.query_time_limit_ms = 600000;
  db::KnowledgeBase kb(path, options);
  std::mt19937 random(7);
  std::uniform_int_distribution<int> any(0, n - 1);
  const int reps = 5;
  struct Row {
    const char* what;
    double ms;
    std::size_t rows;
  };
  std::vector<Row> rows;
  auto time = [&](const char* what, const std::function<std::size_t()>& f) {
    std::size_t count = 0;
    const double ms = median_ms(reps, [&] { count = f(); });
    rows.push_back({what, ms, count});
  };
  time("db runs (latest 50)", [&] { return kb.runs({.limit = 50, .newest_first = true}).size(); });
  time("count of all runs", [&] { return static_cast<std::size_t>(kb.count_runs({})); });
  time("--model --evaluator (latest 50)", [&] {
    return kb.runs({.model = "Sweep3D", .evaluator = "simulation[MPI-Sim]", .limit = 50, .newest_first = true}).size();
  });
  time("--status failed (all)", [&] { return kb.runs({.status = db::RunStatus::kFailed}).size(); });
  time("--study (1,000 runs)",
       [&] { return kb.runs({.study_name = "sweep-" + std::to_string(any(random) / kStudySize)}).size(); });
  time("--since (last 1%, latest 50)",
       [&] { return kb.runs({.since = b.tail_since, .limit = 50, .newest_first = true}).size(); });
  time("count --since (last 1%)", [&] { return static_cast<std::size_t>(kb.count_runs({.since = b.tail_since})); });
  time("db show ID", [&] { return kb.run(1 + any(random)) ? 1 : 0; });
  time("find_done_run (resume lookup)", [&] { return kb.find_done_run(key(any(random))) ? 1 : 0; });
  time("json_extract scan (mk = 10, evidence)", [&] {
    return kb.query_readonly("SELECT count(*) FROM runs WHERE json_extract(binding, '$.parameters.mk') = 10")
        .rows.size();
  });
  std::printf("\n%s, %d runs:\n", label, n);
  std::printf("  %-40s %10s %8s\n", "query", "median ms", "rows");
  for (const Row& r : rows) std::printf("  %-40s %10.3f %8zu\n", r.what, r.ms, r.rows);
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir = fs::temp_directory_path() / "poems_db_scale";
  std::vector<int> sizes;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--dir") && i + 1 < argc)
      dir = argv[++i];
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      sizes.push_back(std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--keep"))
      keep = true;
    else {
      std::fprintf(stderr, "usage: db_scale_bench [--dir DIR] [--runs N ...] [--keep]\n");
      return 2;
    }
  }
  if (sizes.empty()) sizes = {10000, 100000, 1000000};
  fs::create_directories(dir);
  std::printf("%-10s %12s %14s %14s %12s\n", "runs", "store s", "store us/run", "file MiB", "bytes/run");
  std::vector<std::pair<int, Built>> built;
  for (int n : sizes) {
    const fs::path path = dir / ("kb_" + std::to_string(n) + ".db");
    Built b = build(path, n);
    std::printf("%-10d %12.1f %14.1f %14.1f %12.0f\n", n, b.store_s, b.store_s * 1e6 / n, b.bytes / 1048576.0,
                static_cast<double>(b.bytes) / n);
    std::fflush(stdout);
    built.push_back({n, b});
  }
  for (const auto& [n, b] : built) {
    const fs::path path = dir / ("kb_" + std::to_string(n) + ".db");
    queries(path, n, b, "with the indexes (schema v3)");
    const fs::path bare = dir / ("kb_" + std::to_string(n) + "_noindex.db");
    fs::copy_file(path, bare, fs::copy_options::overwrite_existing);
    drop_indexes(bare);
    queries(bare, n, b, "without runs' secondary indexes");
    if (!keep) {
      fs::remove(path);
      fs::remove(bare);
    }
  }
  return 0;
}
