// Helpers for the knowledge-base tests: scratch files and child processes.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "poems/db/knowledge_base.h"

namespace poems::db::testing {

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() / ("poems_db_" + std::string(info ? info->name() : "x") + "_" +
                                                     std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir_); }
  std::filesystem::path file(const std::string& name = "poems.db") const { return dir_ / name; }
  const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// Runs `body` in a forked child; the child exits 0 unless `body` throws or
// fails. Never fork with an open KnowledgeBase: SQLite connections must not
// cross fork().
inline pid_t fork_child(const std::function<void()>& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int code = 0;
    try {
      body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: %s\n", ::getpid(), e.what());
      code = 1;
    } catch (...) {
      code = 1;
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  return pid;
}

// Exit status of a child, or 128 + signal.
inline int wait_child(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A raw SQLite handle for checks the API does not offer (or must not).
class RawDb {
 public:
  explicit RawDb(const std::filesystem::path& path) { sqlite3_open(path.c_str(), &db_); }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;
  // First column of the first row, as an integer.
  std::int64_t scalar(const std::string& sql) const {
    sqlite3_stmt* stmt = nullptr;
    std::int64_t value = -1;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
      value = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return value;
  }
  std::string text(const std::string& sql) const {
    sqlite3_stmt* stmt = nullptr;
    std::string value;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW &&
        sqlite3_column_text(stmt, 0))
      value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    return value;
  }
  // Every column of the first row, each as its type and text ("null" for NULL).
  std::vector<std::string> row(const std::string& sql) const {
    sqlite3_stmt* stmt = nullptr;
    std::vector<std::string> values;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const int type = sqlite3_column_type(stmt, i);
        const unsigned char* text = sqlite3_column_text(stmt, i);
        values.push_back(std::string(sqlite3_column_name(stmt, i)) + "=" +
                         (type == SQLITE_NULL ? std::string("null")
                                              : std::to_string(type) + ":" + reinterpret_cast<const char*>(text)));
      }
    sqlite3_finalize(stmt);
    return values;
  }
  bool exec(const std::string& sql) { return sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK; }

 private:
  sqlite3* db_ = nullptr;
};

inline RunKey test_key(int i, const std::string& evaluator = "analytic[LogGP]") {
  return {"Sweep3D", evaluator, "spec-hash", "0.1.0", {{"i", i}, {"mk", 10}, {"x", i * 0.25}}};
}

// The result an evaluator "computes" for test_key(i): a pure function of i.
inline Result test_result(int i) {
  Result r;
  r.time_ns = 1e6 + i * 0.1;
  r.compute_ns = 7e5 + i;
  r.comm_ns = 3e5 + i * 0.1;
  r.sync_ns = 0;
  r.events = 100 + i;
  r.extra = {{"i", i}};
  return r;
}

}  // namespace poems::db::testing
