// What a knowledge base holds of a study run, without what differs between
// two identical runs (wall times, dates, process ids, attempts): each run's
// key, status, error and result in id order (the simulator's events per
// second, a rate of the host, aside), and the runs of each study.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "poems/db/knowledge_base.h"

inline nlohmann::json stored_rows(const std::string& path) {
  poems::db::KnowledgeBase kb(path);
  nlohmann::json runs = nlohmann::json::array();
  for (const poems::db::Run& run : kb.runs()) {
    nlohmann::json result = run.result ? poems::db::to_json(*run.result) : nlohmann::json();
    if (result.is_object() && result.contains("extra")) result["extra"].erase("events_per_second");
    nlohmann::json r = {{"id", run.id},
                        {"run_key", run.run_key},
                        {"evaluator", run.evaluator},
                        {"status", poems::db::to_json(run)["status"]},
                        {"error", run.error ? nlohmann::json(*run.error) : nlohmann::json()},
                        {"result", result},
                        {"teds", kb.teds(run.id).size()}};
    runs.push_back(r);
  }
  nlohmann::json studies = nlohmann::json::array();
  const poems::db::QueryResult links = kb.query_readonly(
      "SELECT s.name, r.run_id FROM study_runs r JOIN studies s ON s.id = r.study_id ORDER BY s.name, r.run_id");
  for (const auto& row : links.rows) {
    nlohmann::json line = nlohmann::json::array();
    for (const auto& cell : row)
      std::visit(
          [&](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
              line.push_back(nullptr);
            else
              line.push_back(v);
          },
          cell);
    studies.push_back(line);
  }
  return {{"runs", runs}, {"studies", studies}};
}

inline std::size_t done_runs(const std::string& path) {
  try {
    poems::db::Options options;
    options.create_if_missing = false;
    options.read_only = true;
    poems::db::KnowledgeBase kb(path, options);
    std::size_t n = 0;
    for (const poems::db::Run& run : kb.runs()) n += run.status == poems::db::RunStatus::kDone;
    return n;
  } catch (const std::exception&) {
    return 0;  // not created yet
  }
}

// The process id of a running run's claimant (0 when none runs).
inline std::int64_t running_pid(const std::string& path) {
  try {
    poems::db::Options options;
    options.create_if_missing = false;
    options.read_only = true;
    poems::db::KnowledgeBase kb(path, options);
    for (const poems::db::Run& run : kb.runs())
      if (run.status == poems::db::RunStatus::kRunning && run.pid) return *run.pid;
  } catch (const std::exception&) {
  }
  return 0;
}
