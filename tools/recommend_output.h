// What `poems recommend` prints: a table or JSON (docs/recommender.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/recommender/question.h"

namespace poems::cli {

struct RecommendReport {
  recommender::Answer answer;
  std::string spec, db_path;  // db_path "" = not stored
  double wall_seconds = 0;
};

std::string report_text(const RecommendReport& report);

}  // namespace poems::cli
