// What `poems recommend` prints: a table or JSON (docs/recommender.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/recommender/recommender.h"
#include "poems/recommender/rules.h"

namespace poems::cli {

struct RecommendReport {
  const recommender::Problem* problem = nullptr;
  std::string spec, db_path;  // db_path "" = not stored
  std::int64_t procs = 0;
  bool all_layouts = false;
  std::vector<std::string> chosen;  // the parameters the candidates choose
  recommender::QueryStats stats;
  double wall_seconds = 0;
  std::vector<recommender::Recommendation> recommendations;
  std::optional<recommender::ConfirmReport> confirm;
  std::optional<recommender::OperatingPoint> operating_point;
  // --explain
  bool explained = false;
  recommender::RuleSpace rule_space;
  recommender::MinedRules rules;
  std::vector<bool> rule_applies;  // to the best recommendation
};

nlohmann::json report_json(const RecommendReport& report);
std::string report_text(const RecommendReport& report);

}  // namespace poems::cli
