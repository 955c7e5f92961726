#include "evidence.h"

#include <chrono>
#include <functional>
#include <map>

#include "poems/core/parallel_study.h"
#include "poems/core/progress.h"

#include "poems/core/error.h"
#include "poems/core/store.h"
#include "poems/recommender/problem_class.h"
#include "poems/taskgraph/dtg.h"

namespace poems::recommender::detail {

namespace {

using Clock = std::chrono::steady_clock;

double number(const db::Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  return std::numeric_limits<double>::quiet_NaN();
}

std::int64_t id(const db::Cell& cell) { return std::get<std::int64_t>(cell); }

// The binding every candidate of a set shares: the problem's analytic key's
// binding without the chosen parameters.
nlohmann::json shared_binding(const Problem& problem, const std::vector<std::string>& names) {
  nlohmann::json b = problem.analytic_key.binding;
  for (const std::string& n : names) b["parameters"].erase(n);
  return b;
}

std::string json_paths(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += ", json_extract(r.binding, '$.parameters." + n + "')";
  return out;
}

// The values of `names` from columns [first, first + names.size()) of a row.
std::vector<double> row_values(const std::vector<db::Cell>& row, std::size_t first, std::size_t count) {
  std::vector<double> v;
  for (std::size_t k = 0; k < count; ++k) v.push_back(number(row[first + k]));
  return v;
}

}  // namespace

// --------------------------------------------------------------- evaluator
AnalyticEvaluator::AnalyticEvaluator(const Problem& problem) : problem_(problem) {
  if (problem.method != "closed-form") return;
  const components::ClosedForm* form = components::find_closed_form(problem.model);
  if (!form) throw QueryError("model " + problem.model + " has no closed form");
  try {
    form_ = form->bind(problem.parameters);
  } catch (const components::ParameterError& e) {
    throw QueryError(e.what());
  }
}

AnalyticEvaluator::~AnalyticEvaluator() = default;

core::Outcome AnalyticEvaluator::evaluate(const std::vector<double>& values, const components::ClosedFormMachine& m,
                                          bool details) const {
  if (form_) {
    try {
      return core::closed_form_outcome(form_->evaluate(values, m, details));
    } catch (const components::ParameterError& e) {
      throw QueryError(e.what());
    }
  }
  core::Evaluation e = problem_.analytic;
  for (std::size_t i = 0; i < problem_.parameters.size(); ++i) e.binding[problem_.parameters[i]] = values[i];
  e.machine.params = m.params;
  e.machine.rendezvous_handshake = m.rendezvous_handshake;
  try {
    e.values = taskgraph::evaluate_model_values(*problem_.graph, e.binding);
    return core::find_evaluator(kAnalytic)->evaluate(e);
  } catch (const taskgraph::InstantiationError& x) {
    throw QueryError(x.what());
  } catch (const core::InputError& x) {
    throw QueryError(x.what());
  }
}

// ------------------------------------------------------------------ groups
// A study per process layout (the layout dimension is the set's first), or
// one for the whole set: a repeated question finds its runs by study name.
struct EvidenceStore::Groups {
  std::size_t count = 1, per_group = 0;
  std::vector<std::string> names;  // study names
  std::map<std::string, std::size_t> by_name;
  // The candidates of one group: the set without its layout dimension when
  // grouped by layout (a study's runs are read without their layout values).
  CandidateSet within;
};

namespace {

bool is_layout(const Problem& problem, const Dimension& d) {
  const ProblemClass* pc = find_problem_class(problem.model);
  if (pc && !pc->layout.empty()) return d.names == pc->layout;
  return d.names == problem.graph->process_set_params;
}

std::string summary_of(const Problem& problem) {
  const ProblemClass* pc = find_problem_class(problem.model);
  return pc && pc->summary ? " " + pc->summary(problem) : "";
}

std::string value_text(double v) {
  return v == std::trunc(v) && std::fabs(v) < 9e15 ? std::to_string(static_cast<std::int64_t>(v))
                                                   : nlohmann::json(v).dump();
}

}  // namespace

// ---------------------------------------------------------------- analytic
void EvidenceStore::read_studies(const Groups& groups, std::vector<AnalyticValue>& out) {
  constexpr std::size_t kChunk = 256;
  const std::size_t n_names = groups.within.names().size();
  for (std::size_t first = 0; first < groups.names.size(); first += kChunk) {
    const std::size_t n = std::min(kChunk, groups.names.size() - first);
    std::string placeholders;
    std::vector<db::Cell> params{problem_.spec_hash};
    for (std::size_t k = 0; k < n; ++k) {
      placeholders += (k ? ", ?" : "?") + std::to_string(k + 2);
      params.emplace_back(groups.names[first + k]);
    }
    const db::QueryResult rows = kb_->query_readonly(
        "SELECT s.name, r.id, res.time_ns" + json_paths(groups.within.names()) +
            // CROSS JOIN fixes the order: from the few studies to their runs.
            " FROM studies s CROSS JOIN study_runs sr CROSS JOIN runs r CROSS JOIN results res "
            "WHERE sr.study_id = s.id AND r.id = sr.run_id AND res.run_id = r.id AND s.spec_hash = ?1 AND s.name IN (" +
            placeholders + ") AND r.status = 'done' AND r.evaluator = 'analytic[LogGP]'",
        params);
    for (const auto& row : rows.rows) {
      auto g = groups.by_name.find(std::get<std::string>(row[0]));
      if (g == groups.by_name.end()) continue;
      const std::size_t k = groups.within.index_of(row_values(row, 3, n_names));
      if (k == CandidateSet::npos) continue;
      const std::size_t i = g->second * groups.per_group + k;
      if (out[i].known()) continue;
      out[i] = {number(row[2]), id(row[1]), false};
    }
  }
}

// The rest of the knowledge base: runs of the same evaluation stored by
// `poems analyze`, `poems run` or an interrupted question.
void EvidenceStore::scan_runs(const CandidateSet& set, const Groups& groups, const std::vector<bool>& incomplete,
                              std::vector<AnalyticValue>& out, std::vector<std::vector<db::RowId>>& to_link) {
  std::string removed;
  for (const std::string& n : set.names()) removed += ", '$.parameters." + n + "'";
  const db::QueryResult rows = kb_->query_readonly(
      "SELECT r.id, res.time_ns" + json_paths(set.names()) +
          " FROM runs r JOIN results res ON res.run_id = r.id "
          "WHERE r.model = ?1 AND r.evaluator = 'analytic[LogGP]' AND r.spec_hash = ?2 AND r.tool_version = ?3 "
          "AND r.status = 'done' AND json_remove(r.binding" +
          removed + ") = ?4 ORDER BY r.id",
      {problem_.model, problem_.spec_hash, problem_.tool_version,
       db::canonical_json(shared_binding(problem_, set.names()))});
  for (const auto& row : rows.rows) {
    const std::size_t i = set.index_of(row_values(row, 2, set.names().size()));
    if (i == CandidateSet::npos || out[i].known()) continue;
    const std::size_t g = i / groups.per_group;
    if (!incomplete[g]) continue;
    out[i] = {number(row[1]), id(row[0]), false};
    to_link[g].push_back(id(row[0]));
  }
}

std::vector<AnalyticValue> EvidenceStore::analytic(const CandidateSet& set, QueryStats& stats) {
  const std::size_t n = set.size();
  Groups groups;
  const bool by_layout = !set.dimensions().empty() && is_layout(problem_, set.dimensions().front());
  groups.count = by_layout ? set.dimensions().front().values.size() : 1;
  groups.per_group = n / groups.count;
  groups.within =
      by_layout ? CandidateSet(std::vector<Dimension>(set.dimensions().begin() + 1, set.dimensions().end())) : set;
  const nlohmann::json shared = shared_binding(problem_, set.names());
  for (std::size_t g = 0; g < groups.count; ++g) {
    std::string on;
    nlohmann::json tuple = nlohmann::json::array();
    if (by_layout) {
      const Dimension& d = set.dimensions().front();
      for (std::size_t k = 0; k < d.names.size(); ++k) {
        on += " " + d.names[k] + "=" + value_text(d.values[g][k]);
        tuple.push_back(d.values[g][k]);
      }
    }
    const nlohmann::json identity = {
        {"model", problem_.model}, {"binding", shared}, {"group", tuple}, {"tool_version", problem_.tool_version}};
    groups.names.push_back("recommend " + problem_.model + summary_of(problem_) + (on.empty() ? "" : " on" + on) + " " +
                           db::sha256_hex(db::canonical_json(identity)).substr(0, 16));
    groups.by_name.emplace(groups.names.back(), g);
  }
  std::vector<AnalyticValue> out(n);
  std::vector<std::vector<db::RowId>> to_link(groups.count);
  if (kb_) {
    read_studies(groups, out);
    std::vector<bool> incomplete(groups.count, false);
    bool any = false;
    for (std::size_t i = 0; i < n; ++i)
      if (!out[i].known()) any = incomplete[i / groups.per_group] = true;
    if (any) scan_runs(set, groups, incomplete, out, to_link);
  }
  for (const AnalyticValue& v : out) stats.reused += v.known() ? 1 : 0;

  // The gaps, group by group in candidate order: evaluated here one after
  // another, or on forked workers (--jobs) when each costs more than handing
  // it over; either way each group is stored in candidate order, so the rows
  // and their ids are the serial run's.
  std::vector<std::vector<std::size_t>> gaps(groups.count);
  for (std::size_t i = 0; i < n; ++i)
    if (!out[i].known()) gaps[i / groups.per_group].push_back(i);
  std::size_t total_gaps = 0;
  for (const auto& g : gaps) total_gaps += g.size();
  std::vector<double> candidate, values;  // reused: a closed form costs less than allocating them
  if (jobs_ > 1 && problem_.method != "closed-form" && total_gaps > 1)
    fill_in_parallel(set, groups, gaps, to_link, out, stats);
  else
    for (std::size_t g = 0; g < groups.count; ++g) {
      std::vector<Evaluated> evaluated;
      evaluated.reserve(gaps[g].size());
      for (std::size_t i : gaps[g]) evaluated.push_back(evaluate_candidate(set, i, candidate, values));
      store_group(set, groups, g, gaps[g], evaluated, to_link[g], out, stats);
    }
  return out;
}

std::string EvidenceStore::candidate_text(const CandidateSet& set, std::size_t i) const {
  const std::vector<double> candidate = set.at(i);
  std::string which;
  for (std::size_t k = 0; k < set.names().size(); ++k)
    which += (k ? ", " : "") + set.names()[k] + "=" + value_text(candidate[k]);
  return which;
}

EvidenceStore::Evaluated EvidenceStore::evaluate_candidate(const CandidateSet& set, std::size_t i,
                                                           std::vector<double>& candidate,
                                                           std::vector<double>& values) const {
  set.at(i, candidate);
  apply(problem_, set.names(), candidate, values);
  const auto start = Clock::now();
  Evaluated e;
  try {
    e.outcome = evaluator_.evaluate(values, problem_.machine, kb_ != nullptr);
  } catch (const QueryError& x) {
    throw QueryError("the candidate " + candidate_text(set, i) + " cannot be evaluated: " + x.what());
  }
  e.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  return e;
}

void EvidenceStore::store_group(const CandidateSet& set, const Groups& groups, std::size_t g,
                                const std::vector<std::size_t>& gaps, const std::vector<Evaluated>& evaluated,
                                const std::vector<db::RowId>& to_link, std::vector<AnalyticValue>& out,
                                QueryStats& stats) {
  std::vector<db::CompletedRun> batch;
  db::RunKey key = problem_.analytic_key;  // patched per candidate: building a key costs microseconds
  std::vector<double> candidate;
  for (std::size_t k = 0; k < gaps.size(); ++k) {
    const core::Outcome& o = evaluated[k].outcome;
    ++stats.evaluated;
    out[gaps[k]] = {o.breakdown.time_ns, 0, true};
    if (!kb_) continue;
    set.at(gaps[k], candidate);
    nlohmann::json& parameters = key.binding["parameters"];
    for (std::size_t d = 0; d < set.names().size(); ++d) parameters[set.names()[d]] = candidate[d];
    batch.push_back({key, core::record_of(o, false), evaluated[k].wall_ns});
  }
  if (!kb_ || (batch.empty() && to_link.empty())) return;
  // One transaction per group: a killed question loses at most the groups
  // under way, which the next one recomputes; nothing is ever duplicated.
  std::size_t stored = 0;
  kb_->transaction([&] {
    stored = 0;
    const std::vector<db::RecordedRun> recorded = kb_->record_runs(batch);
    const db::RowId study = kb_->put_study(groups.names[g], problem_.spec_hash);
    for (db::RowId run : to_link) kb_->add_run_to_study(study, run);
    for (std::size_t k = 0; k < recorded.size(); ++k) {
      out[gaps[k]].run_id = recorded[k].id;
      kb_->add_run_to_study(study, recorded[k].id);
      // Another process may have stored the same run meanwhile: it keeps its result.
      if (recorded[k].state == db::RecordedRun::State::kStored) ++stored;
    }
  });
  stats.stored += stored;  // counted after the commit: a rolled-back batch stored nothing
}

namespace {

// One candidate's evaluation as a forked worker sends it back: the outcome,
// or the error the serial evaluation would have thrown.
nlohmann::json evaluated_json(const std::function<core::Outcome(std::int64_t&)>& evaluate) {
  try {
    core::Session::Computed c;
    std::int64_t wall_ns = 0;
    c.outcome = evaluate(wall_ns);
    return {{"outcome", nlohmann::json::binary(core::computed_bytes(c))}, {"wall_ns", wall_ns}};
  } catch (const QueryError& x) {
    return {{"query_error", x.what()}};
  } catch (const core::Error& x) {
    return {{"error", x.what()}, {"kind", static_cast<int>(x.kind())}};
  } catch (const std::exception& x) {
    return {{"error", x.what()}, {"kind", static_cast<int>(core::ErrorKind::Evaluation)}};
  }
}

// The progress line of work on forked workers, drawn by this process (the
// workers draw none) through the command's hook: the share of tasks back,
// with an ETA (the display shows it after 2 s, on a terminal only).
class BatchProgress {
 public:
  explicit BatchProgress(std::size_t total) : hook_(core::current_progress()), total_(total) {}
  ~BatchProgress() { report(true); }
  BatchProgress(const BatchProgress&) = delete;
  BatchProgress& operator=(const BatchProgress&) = delete;
  void report(bool finished = false) const {
    if (!hook_) return;
    sim::SimulationProgress p;
    p.done = done;
    p.total = total_;
    p.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    p.finished = finished;
    p.unit = "evaluations";
    hook_.report(hook_.context, p);
  }
  // The next task back from `workers`, redrawing meanwhile.
  std::pair<std::size_t, core::Session::Computed> next(core::CellWorkers& workers) {
    for (;;) {
      auto back = workers.next_within(hook_ ? 250 : -1);
      if (back) {
        ++done;
        report();
        return std::move(*back);
      }
      report();
    }
  }
  std::size_t done = 0;

 private:
  sim::ProgressHook hook_;
  std::size_t total_;
  Clock::time_point start_ = Clock::now();
};

[[noreturn]] void rethrow(const nlohmann::json& j) {
  if (j.contains("query_error")) throw QueryError(j.at("query_error").get<std::string>());
  const std::string message = j.at("error").get<std::string>();
  throw core::Error(static_cast<core::ErrorKind>(j.at("kind").get<int>()), message);
}

}  // namespace

void EvidenceStore::fill_in_parallel(const CandidateSet& set, const Groups& groups,
                                     const std::vector<std::vector<std::size_t>>& gaps,
                                     const std::vector<std::vector<db::RowId>>& to_link,
                                     std::vector<AnalyticValue>& out, QueryStats& stats) {
  // Tasks: runs of consecutive gaps of one group, about four per worker and
  // group (fewer, larger tasks cost less to hand over; enough of them keep
  // every worker busy until the group's end).
  struct Task {
    std::size_t group, first, last;  // gaps[group][first, last)
  };
  std::vector<Task> tasks;
  std::vector<std::size_t> tasks_of_group(groups.count, 0);
  for (std::size_t g = 0; g < groups.count; ++g) {
    const std::size_t size = std::max<std::size_t>(1, (gaps[g].size() + 4 * jobs_ - 1) / (4 * jobs_));
    for (std::size_t first = 0; first < gaps[g].size(); first += size) {
      tasks.push_back({g, first, std::min(first + size, gaps[g].size())});
      ++tasks_of_group[g];
    }
  }
  // Runs in the worker: the candidates of one task.
  auto compute = [&](std::size_t t, const std::string&) {
    core::Session::Computed chunk;
    nlohmann::json results = nlohmann::json::array();
    std::vector<double> candidate, values;
    for (std::size_t k = tasks.at(t).first; k < tasks[t].last; ++k)
      results.push_back(evaluated_json([&](std::int64_t& wall_ns) {
        Evaluated e = evaluate_candidate(set, gaps[tasks[t].group][k], candidate, values);
        wall_ns = e.wall_ns;
        return std::move(e.outcome);
      }));
    chunk.outcome.extra = {{"candidates", std::move(results)}};
    return chunk;
  };
  const std::unique_ptr<core::CellWorkers> workers = core::fork_workers(compute, jobs_);
  BatchProgress progress(tasks.size());

  // Each group's evaluations; a group is stored once it and every group
  // before it are complete, in group order.
  std::vector<std::vector<std::optional<Evaluated>>> evaluated(groups.count);
  std::vector<nlohmann::json> failures(groups.count);  // the group's failures by position, "" none
  for (std::size_t g = 0; g < groups.count; ++g) evaluated[g].resize(gaps[g].size());
  std::vector<std::size_t> returned(groups.count, 0);
  std::size_t next_task = 0, next_group = 0;
  auto collect = [&] {
    auto [t, computed] = progress.next(*workers);
    const Task& task = tasks[t];
    ++returned[task.group];
    const nlohmann::json* results = nullptr;
    if (computed.error.empty()) results = &computed.outcome.extra.at("candidates");
    for (std::size_t k = task.first; k < task.last; ++k) {
      nlohmann::json r =
          results ? results->at(k - task.first)
                  : nlohmann::json{{"error", computed.error}, {"kind", static_cast<int>(computed.error_kind)}};
      if (r.contains("outcome")) {
        Evaluated e;
        e.outcome = core::computed_of_bytes(r.at("outcome").get_binary()).outcome;
        e.wall_ns = r.at("wall_ns").get<std::int64_t>();
        evaluated[task.group][k] = std::move(e);
      } else {
        if (!results)
          r["error"] = "the candidate " + candidate_text(set, gaps[task.group][k]) +
                       " cannot be evaluated: " + r["error"].get<std::string>();
        if (!failures[task.group].is_object() || failures[task.group].at("at").get<std::size_t>() > k)
          failures[task.group] = {{"at", k}, {"result", std::move(r)}};
      }
    }
  };
  while (next_group < groups.count) {
    while (next_task < tasks.size() && workers->busy() < workers->slots()) {
      workers->start(next_task, "");
      ++next_task;
    }
    const std::size_t g = next_group;
    if (returned[g] < tasks_of_group[g]) {
      collect();
      continue;
    }
    // The serial run fails at the group's first failing candidate, having
    // stored the groups before it and nothing of this one.
    if (failures[g].is_object()) rethrow(failures[g].at("result"));
    std::vector<Evaluated> done;
    for (std::optional<Evaluated>& e : evaluated[g]) done.push_back(std::move(*e));
    store_group(set, groups, g, gaps[g], done, to_link[g], out, stats);
    evaluated[g].clear();
    ++next_group;
  }
}

// ------------------------------------------------------------ cross-checks
EvidenceStore::EvidenceStore(db::KnowledgeBase* kb, const Problem& problem)
    : kb_(kb), problem_(problem), evaluator_(problem) {}

Features EvidenceStore::features(const std::vector<std::string>& names, std::span<const double> c) const {
  std::vector<double> values;
  apply(problem_, names, c, values);
  const Binding b{&problem_.parameters, values};
  const ProblemClass* pc = find_problem_class(problem_.model);
  return pc && pc->features ? pc->features(b, problem_.machine) : default_features(b, problem_.machine);
}

std::optional<CrossCheck> EvidenceStore::cross_check(db::RowId run, const std::string& evaluator, double time_ns,
                                                     const nlohmann::json& binding, QueryStats& stats) {
  // The case as the other paradigm saw it: its parameters, machine and rates.
  if (!binding.is_object() || !binding.contains("parameters") || !binding.contains("machine") ||
      !binding.contains("compute"))
    return std::nullopt;
  try {
    const nlohmann::json& m = binding["machine"];
    if (m.value("cpus", 1) != 1 || m.value("nics", 1) != 1) return std::nullopt;
    std::vector<double> values;
    for (const std::string& p : problem_.parameters) values.push_back(binding["parameters"].at(p).get<double>());
    components::ClosedFormMachine machine = problem_.machine;
    machine.params.L = m.at("L_ps").get<std::uint64_t>();
    machine.params.o = m.at("o_ps").get<std::uint64_t>();
    machine.params.g = m.at("g_ps").get<std::uint64_t>();
    machine.params.G = m.at("G_fs_per_byte").get<std::uint64_t>();
    machine.params.O = m.at("O_fs_per_byte").get<std::uint64_t>();
    machine.params.S = m.at("S_bytes").get<std::uint64_t>();
    machine.rendezvous_handshake = m.value("rendezvous_handshake", false);
    const nlohmann::json& compute = binding["compute"];
    if (!compute.empty()) machine.ns_per_work = compute.at(0).at("ns_per_work").get<double>();
    // The analytic run of the same case: the same binding, the analytic method.
    db::RunKey key = problem_.analytic_key;
    key.binding = binding;
    key.binding["method"] = problem_.method;
    CrossCheck check;
    check.run_id = run;
    check.paradigm = evaluator;
    check.other_ns = time_ns;
    const Binding b{&problem_.parameters, values};
    const ProblemClass* pc = find_problem_class(problem_.model);
    check.features = pc && pc->features ? pc->features(b, machine) : default_features(b, machine);
    check.case_key = key.canonical_text();
    if (std::optional<db::Run> stored = kb_->find_done_run(key); stored && stored->result) {
      check.analytic_ns = stored->result->time_ns;
      check.analytic_run_id = stored->id;
    } else {
      const core::Outcome o = evaluator_.evaluate(values, machine, true);
      ++stats.evaluated;
      check.analytic_ns = o.breakdown.time_ns;
      const std::vector<db::RecordedRun> recorded = kb_->record_runs({{key, core::record_of(o, false)}});
      check.analytic_run_id = recorded.front().id;
      if (recorded.front().state == db::RecordedRun::State::kStored) ++stats.stored;
    }
    return check;
  } catch (const std::exception&) {
    return std::nullopt;  // not a case the analytic evaluator can take (or a binding of another shape)
  }
}

const std::vector<CrossCheck>& EvidenceStore::cross_checks(QueryStats& stats) {
  if (checks_) return *checks_;
  checks_.emplace();
  if (!kb_) return *checks_;
  // Two ranges of the (model, evaluator) index around the analytic runs,
  // which may be many: the other paradigms' runs are few.
  const std::string other =
      "SELECT r.id, r.evaluator, res.time_ns, r.binding FROM runs r INDEXED BY runs_by_model "
      "JOIN results res ON res.run_id = r.id WHERE r.model = ?1 AND r.spec_hash = ?2 AND r.tool_version = ?3 "
      "AND r.status = 'done' AND r.evaluator ";
  const db::QueryResult rows =
      kb_->query_readonly(other + "< 'analytic[LogGP]' UNION ALL " + other + "> 'analytic[LogGP]' ORDER BY 1",
                          {problem_.model, problem_.spec_hash, problem_.tool_version});
  for (const auto& row : rows.rows) {
    nlohmann::json binding = nlohmann::json::parse(std::get<std::string>(row[3]), nullptr, false);
    if (binding.is_discarded()) continue;
    if (auto c = cross_check(id(row[0]), std::get<std::string>(row[1]), number(row[2]), binding, stats))
      checks_->push_back(std::move(*c));
  }
  return *checks_;
}

// -------------------------------------------------------------- simulation
core::Outcome EvidenceStore::simulate(const std::vector<std::string>& names, std::span<const double> c) const {
  core::Evaluation e = problem_.simulation;
  for (std::size_t k = 0; k < names.size(); ++k) e.binding[names[k]] = c[k];
  e.values = taskgraph::evaluate_model_values(*problem_.graph, e.binding);
  return core::find_evaluator(kSimulation)->evaluate(e);
}

Evidence EvidenceStore::simulation(const std::vector<std::string>& names, std::span<const double> c,
                                   QueryStats& stats) {
  if (!problem_.simulation_error.empty())
    throw QueryError("confirming needs the simulator: " + problem_.simulation_error);
  const db::RunKey key = simulation_key(problem_, names, c);
  std::optional<db::RunStart> start;
  if (kb_) {
    start = kb_->begin_run(key);
    if (start->state == db::RunStart::State::kAlreadyDone && start->run.result)
      return {start->run.id, kSimulation, start->run.result->time_ns, false};
  }
  const bool claimed = start && start->state == db::RunStart::State::kClaimed;
  core::Outcome out;
  try {
    out = simulate(names, c);
  } catch (const std::exception& x) {
    if (claimed) kb_->fail_run(start->handle, x.what());
    throw;
  }
  ++stats.simulated;
  // Stored as `poems simulate` stores it.
  Evidence ev{0, kSimulation, out.breakdown.time_ns, true};
  if (claimed) {
    kb_->complete_run(start->handle, core::record_of(out, false));
    ev.run_id = start->handle.id;
    ++stats.stored;
  }
  return ev;
}

std::vector<Evidence> EvidenceStore::simulations(const std::vector<std::string>& names,
                                                 const std::vector<std::vector<double>>& cases, QueryStats& stats) {
  std::vector<Evidence> out;
  if (jobs_ <= 1 || cases.size() < 2) {
    for (const std::vector<double>& c : cases) out.push_back(simulation(names, c, stats));
    return out;
  }
  if (!problem_.simulation_error.empty())
    throw QueryError("confirming needs the simulator: " + problem_.simulation_error);
  // This process claims each case when a worker is free for it and stores
  // each result as it arrives; the workers only simulate. So does run_study
  // (core/src/parallel_study.cpp), but its loop is not this one: it may hand
  // a costly later cell out early (HandOutOrder), so it claims ahead in plan
  // order, gives back claims it never started and still starts cells before
  // a failure; it runs measurements here alone and reports in plan order;
  // and a failed cell is a row of its table, only an exception ends it.
  // Here cases go out in order and are claimed as they start, so every case
  // before a failing one has started and stopping all starts is the serial
  // rule; any failed simulation ends the question, with the worker's error
  // text and kind.
  auto compute = [&](std::size_t i, const std::string&) {
    core::Session::Computed c;
    try {
      c.outcome = simulate(names, cases.at(i));
      c.outcome.simulation.reset();  // not sent: the parent stores the figures
    } catch (const core::Error& x) {
      c.error = *x.what() ? x.what() : "the simulation failed";
      c.error_kind = x.kind();
    } catch (const std::exception& x) {
      c.error = *x.what() ? x.what() : "the simulation failed";
    }
    return c;
  };
  const std::unique_ptr<core::CellWorkers> workers = core::fork_workers(compute, jobs_);
  BatchProgress progress(cases.size());
  std::vector<std::optional<Evidence>> found(cases.size());
  std::map<std::size_t, std::optional<db::RunStart>> under_way;
  std::size_t next = 0, first_failure = cases.size();
  std::string failure;
  core::ErrorKind failure_kind = core::ErrorKind::Evaluation;
  for (;;) {
    // After a failure nothing new starts (a serial run stops there); what is under way is still stored.
    while (first_failure == cases.size() && next < cases.size() && workers->busy() < workers->slots()) {
      const std::size_t i = next++;
      std::optional<db::RunStart> start;
      if (kb_) {
        start = kb_->begin_run(simulation_key(problem_, names, cases[i]));
        if (start->state == db::RunStart::State::kAlreadyDone && start->run.result) {
          found[i] = Evidence{start->run.id, kSimulation, start->run.result->time_ns, false};
          ++progress.done;
          continue;
        }
      }
      under_way.emplace(i, std::move(start));
      workers->start(i, "");
    }
    if (workers->busy() == 0) break;
    auto [i, computed] = progress.next(*workers);
    const auto it = under_way.find(i);
    const std::optional<db::RunStart> start = std::move(it->second);
    under_way.erase(it);
    const bool claimed = start && start->state == db::RunStart::State::kClaimed;
    if (!computed.error.empty()) {
      if (claimed) kb_->fail_run(start->handle, computed.error);
      if (i < first_failure) {
        first_failure = i;
        failure = computed.error;
        failure_kind = computed.error_kind;
      }
      continue;
    }
    ++stats.simulated;
    Evidence ev{0, kSimulation, computed.outcome.breakdown.time_ns, true};
    if (claimed) {
      kb_->complete_run(start->handle, core::record_of(computed.outcome, false));
      ev.run_id = start->handle.id;
      ++stats.stored;
    }
    found[i] = ev;
  }
  if (first_failure < cases.size()) throw core::Error(failure_kind, failure);
  for (std::optional<Evidence>& e : found) out.push_back(std::move(*e));
  return out;
}

}  // namespace poems::recommender::detail
