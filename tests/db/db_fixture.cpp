// poems_db_fixture: builds knowledge bases for the CLI tests and the docs, and
// times bulk stores.
//
//   poems_db_fixture sample PATH          a small deterministic knowledge base
//   poems_db_fixture future PATH          a file claiming a newer schema (99)
//   poems_db_fixture store PATH N [--batch]   store N runs, print the time taken
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "poems/db/knowledge_base.h"

namespace db = poems::db;

namespace {

db::RunKey sweep3d_key(int mk, int mmi, const std::string& evaluator) {
  return {"Sweep3D",
          evaluator,
          "3f1c0de5",
          "0.1.0",
          {{"it_g", 150}, {"jt_g", 150}, {"kt", 150}, {"npe_i", 2}, {"npe_j", 3}, {"mk", mk}, {"mmi", mmi}}};
}

int sample(const std::string& path) {
  db::KnowledgeBase kb(path);
  kb.put_machine({"Odin",
                  {{"L", 5300}, {"o", 2300}, {"g", 2000}, {"G", 2.5}, {"O", 1}, {"S", 32768}},
                  db::Provenance::kPublished,
                  "LogGOPSim paper (seed 002), section 4.1",
                  ""});
  kb.add_calibration({0, "Odin", "Wg", "measured", 11.5, "2024-05-01T10:00:00.000Z"});
  kb.put_component("KBlock", "component KBlock in application[Sweep3D] { }");
  kb.put_task_graph("Sweep3D", "3f1c0de5", {{"static_nodes", 5}, {"processes", 6}});
  db::RowId study = kb.put_study("blocking", "3f1c0de5");
  const double times[] = {1.2345678e9, 1.1e9, 0.1 + 0.2};
  int n = 0;
  for (int mk : {10, 20, 30}) {
    db::RunStart start = kb.begin_run(sweep3d_key(mk, 3, "analytic[LogGP]"));
    db::Result r;
    r.time_ns = times[n++];
    r.compute_ns = r.time_ns * 0.75;
    r.comm_ns = r.time_ns * 0.25;
    r.sync_ns = 0;
    r.extra = {{"note", "fixture, \"quoted\", with commas"}};
    kb.store_teds(start.handle.id, {{"kblock", "processor[wg]", {{"Wg", 11.5}}}, {"send", "analytic[LogGP]", {}}});
    kb.complete_run(start.handle, r);
    kb.add_run_to_study(study, start.handle.id);
  }
  db::RunStart failed = kb.begin_run(sweep3d_key(10, 3, "simulation[MPI-Sim]"));
  kb.fail_run(failed.handle, "deadlock: rank 0 waits on a receive from rank 1");
  kb.find_or_create_run(sweep3d_key(20, 3, "simulation[MPI-Sim]"));
  kb.add_rule({0, "Sweep3D", "it*jt <= 64 => mk >= 10", 12, 0.9, {{"feature", "it*jt"}}});
  return 0;
}

int future(const std::string& path) {
  { db::KnowledgeBase kb(path); }
  sqlite3* raw = nullptr;
  if (sqlite3_open(path.c_str(), &raw) != SQLITE_OK) return 1;
  int rc = sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  return rc == SQLITE_OK ? 0 : 1;
}

int store(const std::string& path, int count, bool batch) {
  db::KnowledgeBase kb(path);
  auto start = std::chrono::steady_clock::now();
  auto body = [&] {
    for (int i = 0; i < count; ++i) {
      db::RunKey key = sweep3d_key(1 + i % 150, 1 + i / 150, "analytic[LogGP]");
      db::RunStart s = kb.begin_run(key);
      db::Result r;
      r.time_ns = 1e9 + i;
      kb.complete_run(s.handle, r);
    }
  };
  if (batch)
    kb.transaction(body);
  else
    body();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d runs, %s: %.3f s (%.1f us per run)\n", count, batch ? "one transaction" : "two transactions per run",
              seconds, 1e6 * seconds / count);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string command = argc > 2 ? argv[1] : "";
    if (command == "sample") return sample(argv[2]);
    if (command == "future") return future(argv[2]);
    if (command == "store" && argc > 3)
      return store(argv[2], std::stoi(argv[3]), argc > 4 && !std::strcmp(argv[4], "--batch"));
  } catch (const std::exception& e) {
    std::cerr << "poems_db_fixture: " << e.what() << '\n';
    return 1;
  }
  std::cerr << "usage: poems_db_fixture sample|future PATH | store PATH N [--batch]\n";
  return 2;
}
