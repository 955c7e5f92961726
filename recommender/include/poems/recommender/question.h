// A whole `poems recommend` question, answered: the problem of a session's
// system, its candidates (the model's registered question, a study's vary
// space, or named parameters), the ranking, and the follow-ups (--confirm,
// --explain, --procs-range). The CLI parses and prints; this does the rest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "poems/core/session.h"
#include "poems/recommender/recommender.h"
#include "poems/recommender/rules.h"

namespace poems::recommender {

struct Question {
  std::vector<std::string> vary;  // NAME=1,2,4 or NAME=1..30 (empty: the study's, or the model's question)
  std::int64_t procs = 0;         // processors (0: the binding's own layout unless all_layouts)
  bool all_layouts = false;       // every process layout of procs, not only the preferred one
  std::optional<std::pair<std::int64_t, std::int64_t>> procs_range;  // the operating point over A..B
  double knee_fraction = 0.10;
  std::size_t top = 5;
  bool confirm = false, explain = false;
  // --by: analytic[LogGP] (default), simulation[MPI-Sim] or both (recommender.h, Ranking).
  std::string by = kAnalytic;
  // Evaluations at once (forked workers) filling the gaps and confirming; 1: one after another.
  std::size_t jobs = 1;
};

struct Answer {
  Problem problem;
  std::int64_t procs = 0;
  bool all_layouts = false;
  std::vector<std::string> chosen;  // the parameters the candidates choose
  QueryStats stats;
  std::vector<Recommendation> recommendations;
  std::optional<ConfirmReport> confirm;
  SimulatedRanking ranking;  // by: Analytic unless --by asked for the simulator
  std::optional<OperatingPoint> operating_point;
  bool explained = false;  // --explain
  RuleSpace rule_space;
  MinedRules rules;
  std::vector<bool> rule_applies;  // to the best recommendation
};

// The question's own values, checked before anything is loaded:
// UsageError naming the option for --top outside 1..100000, a
// --knee-fraction outside (0, 1), --explain without a knowledge base
// (`with_store` false) or a --by that names no ranking.
void check_question(const Question& q, bool with_store);

// A parameter and its candidates from NAME=V1,V2,... or NAME=A..B; throws
// core::UsageError naming --vary.
Dimension vary_dimension(const std::string& text);
// The dimensions of a study's vary clauses; throws core::UsageError for a
// varied machine parameter.
std::vector<Dimension> study_dimensions(const psl::StudyDecl& study);

// The answer as JSON: the problem, the recommendations with their evidence
// and confidence, the follow-ups.
nlohmann::json to_json(const Answer& answer, const std::string& spec, const std::string& db_path, double wall_seconds);

// Answers `q` for the session's system (its study's vary space when it has
// one), storing and reusing runs in the session's knowledge base. Throws
// QueryError for a bad question, core::Error as the core does.
Answer answer(core::Session& session, const Question& q);

}  // namespace poems::recommender
