// What a model's owner tells the recommender about its design space,
// registered by code (an example registers its model's: the parameters worth
// tuning, its layouts such as processor grids, the features of its cases). A
// model without a problem class is still answered: the question then names
// the parameters to choose (--vary, or a study's vary space), and generic
// features serve.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "poems/recommender/problem.h"

namespace poems::recommender {

struct ProblemClass {
  std::string model;
  // The parameters a question chooses when it names none, with their
  // candidates for `problem`; names in `fixed` are set by the question.
  std::function<std::vector<Dimension>(const Problem& problem, const std::set<std::string>& fixed)> dimensions;
  // The process layouts of `procs` processes: values of `layout` (the
  // process-set parameters), every usable one or only the preferred one.
  std::vector<std::string> layout;
  std::function<std::vector<std::vector<double>>(const Problem& problem, std::int64_t procs, bool all)> layouts;
  // Range checks of the question's binding; throws QueryError naming a parameter.
  std::function<void(const Problem& problem)> validate;
  // Features of a case for the confidence's distance (default_features otherwise).
  std::function<std::vector<double>(const Binding& binding, const components::ClosedFormMachine& machine)> features;
  // Rules (--explain): the parameters rules are about, and the features they split on.
  std::vector<std::string> rule_targets;
  std::vector<std::string> rule_feature_names;
  std::function<std::vector<double>(const Binding& binding, const components::ClosedFormMachine& machine)>
      rule_features;
  // Equal times are ordered by these names' values (ascending), then by the candidate order.
  std::vector<std::string> tie_order;
  // A short name of the problem for reports and study names, e.g. "255x255x255".
  std::function<std::string(const Problem& problem)> summary;
};

void register_problem_class(ProblemClass problem_class);
const ProblemClass* find_problem_class(const std::string& model);

// log2(1 + x) of every parameter and of the machine (L, o, g, G, O, S,
// compute rate, handshake): the features of a model with no problem class.
std::vector<double> default_features(const Binding& binding, const components::ClosedFormMachine& machine);

}  // namespace poems::recommender
