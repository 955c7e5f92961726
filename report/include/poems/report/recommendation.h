// What `poems recommend` prints: its answer as a table (docs/recommender.md);
// the JSON is the recommender's own (recommender::to_json).
#pragma once

#include <string>

#include "poems/recommender/question.h"

namespace poems::report {

struct RecommendReport {
  recommender::Answer answer;
  std::string spec, db_path;  // db_path "" = not stored
  double wall_seconds = 0;
};

// The answer's header (model, machine, evidence), its ranked table (or the
// operating point), confidence, the simulator's confirmation and the mined
// rules, as text.
std::string recommendation_text(const RecommendReport& report);

}  // namespace poems::report
