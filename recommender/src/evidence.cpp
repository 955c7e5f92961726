#include "evidence.h"

#include <chrono>
#include <unordered_map>

#include "poems/loggp/critical_path.h"
#include "poems/recommender/stored_results.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/dtg.h"

namespace poems::recommender::detail {

namespace {

using Clock = std::chrono::steady_clock;

double ns(taskgraph::Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

double number(const db::Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  return std::numeric_limits<double>::quiet_NaN();
}

std::int64_t id(const db::Cell& cell) { return std::get<std::int64_t>(cell); }

// Where candidate (grid g, mk, mmi) sits in CandidateSet order; npos if not a candidate.
struct Slots {
  const CandidateSet& set;
  std::size_t index(std::size_t grid, double mk, double mmi) const {
    const double first = static_cast<double>(set.mk.front());
    const double k = mk - first;
    if (!(k >= 0) || k >= static_cast<double>(set.mk.size()) || set.mk[static_cast<std::size_t>(k)] != mk) return npos;
    for (std::size_t m = 0; m < set.mmi.size(); ++m)
      if (static_cast<double>(set.mmi[m]) == mmi)
        return (grid * set.mk.size() + static_cast<std::size_t>(k)) * set.mmi.size() + m;
    return npos;
  }
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

// The binding's parts that every candidate of the problem shares.
std::string shared_parameters(const Problem& problem) {
  nlohmann::json rest = problem.parameters;
  for (const char* name : {"mk", "mmi", "npe_i", "npe_j"}) rest.erase(name);
  return db::canonical_json(rest);
}

}  // namespace

db::Result closed_form_result(const Problem& problem, const Candidate& c) {
  const components::Sweep3DPrediction s = components::predict_sweep3d(problem.config(c), problem.machine);
  const loggp::AnalyticResult r = loggp::breakdown(s.time, s.compute, s.comm);
  db::Result out;
  out.time_ns = ns(r.time);
  out.compute_ns = ns(r.compute);
  out.comm_ns = ns(r.comm);
  out.sync_ns = ns(r.sync);
  out.extra = {{"evaluator", "analytic[LogGP]"},
               {"method", "closed-form"},
               {"model", problem.model},
               {"iteration_ns", ns(s.iteration)},
               {"allreduce_ns", ns(s.allreduce)},
               {"messages", s.messages},
               {"message_i_bytes", s.message_i_bytes},
               {"message_j_bytes", s.message_j_bytes},
               {"source", "recommend"}};
  return out;
}

// A warm question: every candidate is linked to its grid's study.
void EvidenceStore::read_studies(const CandidateSet& set, std::vector<AnalyticValue>& out) {
  std::unordered_map<std::string, std::size_t> grid_of;
  std::vector<std::string> names;
  for (std::size_t g = 0; g < set.grids.size(); ++g) {
    names.push_back(grid_study_name(problem_, set.grids[g].first, set.grids[g].second));
    grid_of.emplace(names.back(), g);
  }
  const Slots slots{set};
  // The studies by name (their UNIQUE index), a bounded number per statement.
  constexpr std::size_t kChunk = 256;
  for (std::size_t first = 0; first < names.size(); first += kChunk) {
    const std::size_t n = std::min(kChunk, names.size() - first);
    std::string placeholders;
    std::vector<db::Cell> params{problem_.spec_hash};
    for (std::size_t k = 0; k < n; ++k) {
      placeholders += (k ? ", ?" : "?") + std::to_string(k + 2);
      params.emplace_back(names[first + k]);
    }
    const db::QueryResult rows = kb_->query_readonly(
        "SELECT s.name, r.id, res.time_ns, json_extract(r.binding, '$.parameters.mk'), "
        "json_extract(r.binding, '$.parameters.mmi') "
        // CROSS JOIN fixes the order: from the few studies to their runs. Given
        // many names, SQLite would otherwise scan every done run.
        "FROM studies s CROSS JOIN study_runs sr CROSS JOIN runs r CROSS JOIN results res "
        "WHERE sr.study_id = s.id AND r.id = sr.run_id AND res.run_id = r.id AND s.spec_hash = ?1 AND s.name IN (" +
            placeholders + ") AND r.status = 'done' AND r.evaluator = 'analytic[LogGP]'",
        params);
    for (const auto& row : rows.rows) {
      auto g = grid_of.find(std::get<std::string>(row[0]));
      if (g == grid_of.end()) continue;
      const std::size_t i = slots.index(g->second, number(row[3]), number(row[4]));
      if (i == Slots::npos || out[i].known()) continue;
      out[i] = {number(row[2]), id(row[1]), false};
    }
  }
}

// The rest of the knowledge base: runs of the same evaluation stored by
// `poems analyze`, `poems run` or an interrupted question.
void EvidenceStore::scan_runs(const CandidateSet& set, const std::vector<bool>& incomplete,
                              std::vector<AnalyticValue>& out, std::vector<std::vector<db::RowId>>& to_link) {
  std::map<std::pair<double, double>, std::size_t> grid_of;
  for (std::size_t g = 0; g < set.grids.size(); ++g)
    if (incomplete[g]) grid_of[{static_cast<double>(set.grids[g].first), static_cast<double>(set.grids[g].second)}] = g;
  // `poems analyze` keys the rate as wg_ns, `poems run` as its first compute
  // node's ns_per_work; the method is "closed-form", or "default" in a study
  // (the closed form, for Sweep3D).
  const db::QueryResult rows = kb_->query_readonly(
      "SELECT r.id, res.time_ns, json_extract(r.binding, '$.parameters.npe_i'), "
      "json_extract(r.binding, '$.parameters.npe_j'), json_extract(r.binding, '$.parameters.mk'), "
      "json_extract(r.binding, '$.parameters.mmi') FROM runs r JOIN results res ON res.run_id = r.id "
      "WHERE r.model = ?1 AND r.evaluator = 'analytic[LogGP]' AND r.spec_hash = ?2 AND r.tool_version = ?3 "
      "AND r.status = 'done' "
      "AND json_remove(json_extract(r.binding, '$.parameters'), '$.mk', '$.mmi', '$.npe_i', '$.npe_j') = ?4 "
      "AND json_extract(r.binding, '$.machine') = ?5 "
      "AND coalesce(json_extract(r.binding, '$.wg_ns'), json_extract(r.binding, '$.compute[0].ns_per_work')) = ?6 "
      "AND coalesce(json_extract(r.binding, '$.method'), 'default') IN ('closed-form', 'default') ORDER BY r.id",
      {problem_.model, problem_.spec_hash, problem_.tool_version, shared_parameters(problem_),
       db::canonical_json(machine_json(problem_.machine)), problem_.machine.wg_ns});
  const Slots slots{set};
  for (const auto& row : rows.rows) {
    auto g = grid_of.find({number(row[2]), number(row[3])});
    if (g == grid_of.end()) continue;
    const std::size_t i = slots.index(g->second, number(row[4]), number(row[5]));
    if (i == Slots::npos || out[i].known()) continue;
    out[i] = {number(row[1]), id(row[0]), false};
    to_link[g->second].push_back(id(row[0]));
  }
}

std::vector<AnalyticValue> EvidenceStore::analytic(const CandidateSet& set, QueryStats& stats) {
  const std::size_t n = set.size(), per_grid = set.mk.size() * set.mmi.size();
  std::vector<AnalyticValue> out(n);
  std::vector<std::vector<db::RowId>> to_link(set.grids.size());
  if (kb_) {
    read_studies(set, out);
    std::vector<bool> incomplete(set.grids.size(), false);
    bool any = false;
    for (std::size_t i = 0; i < n; ++i)
      if (!out[i].known()) any = incomplete[i / per_grid] = true;
    if (any) scan_runs(set, incomplete, out, to_link);
  }
  for (const AnalyticValue& v : out) stats.reused += v.known() ? 1 : 0;

  for (std::size_t g = 0; g < set.grids.size(); ++g) {
    std::vector<db::CompletedRun> batch;
    std::vector<std::size_t> batch_slots;
    for (std::size_t i = g * per_grid; i < (g + 1) * per_grid; ++i) {
      if (out[i].known()) continue;
      const Candidate c = set.at(i);
      const auto start = Clock::now();
      db::Result r = closed_form_result(problem_, c);
      const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
      ++stats.evaluated;
      out[i] = {r.time_ns, 0, true};
      if (kb_) {
        batch.push_back({analytic_key_of(c), std::move(r), wall});
        batch_slots.push_back(i);
      }
    }
    if (!kb_ || (batch.empty() && to_link[g].empty())) continue;
    // One transaction per grid: a killed question loses at most one grid's
    // batch, which the next one recomputes; nothing is ever duplicated.
    std::size_t stored = 0;
    kb_->transaction([&] {
      stored = 0;
      const std::vector<db::RecordedRun> recorded = kb_->record_runs(batch);
      const db::RowId study =
          kb_->put_study(grid_study_name(problem_, set.grids[g].first, set.grids[g].second), problem_.spec_hash);
      for (db::RowId run : to_link[g]) kb_->add_run_to_study(study, run);
      for (std::size_t k = 0; k < recorded.size(); ++k) {
        out[batch_slots[k]].run_id = recorded[k].id;
        kb_->add_run_to_study(study, recorded[k].id);
        // Another process may have stored the same run meanwhile: it keeps its result.
        if (recorded[k].state == db::RecordedRun::State::kStored) ++stored;
      }
    });
    // Counted after the commit: a rolled-back batch stored nothing.
    stats.stored += stored;
  }
  return out;
}

db::RunKey EvidenceStore::analytic_key_of(const Candidate& c) {
  if (!analytic_template_) analytic_template_ = analytic_key(problem_, problem_.defaults());
  db::RunKey key = *analytic_template_;
  nlohmann::json& params = key.binding["parameters"];
  params["mk"] = c.mk;
  params["mmi"] = c.mmi;
  params["npe_i"] = c.npe_i;
  params["npe_j"] = c.npe_j;
  return key;
}

std::optional<CrossCheck> EvidenceStore::cross_check(db::RowId run, const std::string& evaluator, double time_ns,
                                                     const nlohmann::json& binding, QueryStats& stats) {
  // The case as the other paradigm saw it: same parameters, machine and rate.
  if (!binding.contains("parameters") || !binding.contains("machine")) return std::nullopt;
  const nlohmann::json& m = binding["machine"];
  if (m.value("cpus", 1) != 1 || m.value("nics", 1) != 1) return std::nullopt;
  Problem p = problem_;
  p.parameters = binding["parameters"];
  for (const auto& [name, _] : problem_.parameters.items())
    if (!p.parameters.contains(name)) return std::nullopt;
  if (binding.contains("wg_ns"))
    p.machine.wg_ns = binding["wg_ns"].get<double>();
  else if (binding.contains("compute") && !binding["compute"].empty() && binding["compute"][0].contains("ns_per_work"))
    p.machine.wg_ns = binding["compute"][0]["ns_per_work"].get<double>();
  else
    return std::nullopt;
  try {
    p.machine.params.L = m.at("L_ps").get<std::uint64_t>();
    p.machine.params.o = m.at("o_ps").get<std::uint64_t>();
    p.machine.params.g = m.at("g_ps").get<std::uint64_t>();
    p.machine.params.G = m.at("G_fs_per_byte").get<std::uint64_t>();
    p.machine.params.O = m.at("O_fs_per_byte").get<std::uint64_t>();
    p.machine.params.S = m.at("S_bytes").get<std::uint64_t>();
    p.machine.rendezvous_handshake = m.value("rendezvous_handshake", false);
    const Candidate c = p.defaults();
    CrossCheck check;
    check.run_id = run;
    check.paradigm = evaluator;
    check.other_ns = time_ns;
    check.features = features(p.config(c), p.machine);
    const db::RunKey key = analytic_key(p, c);
    check.case_key = key.canonical_text();
    if (std::optional<db::Run> stored = kb_->find_done_run(key); stored && stored->result) {
      check.analytic_ns = stored->result->time_ns;
      check.analytic_run_id = stored->id;
    } else {
      db::Result r = closed_form_result(p, c);
      ++stats.evaluated;
      check.analytic_ns = r.time_ns;
      const std::vector<db::RecordedRun> recorded = kb_->record_runs({{key, std::move(r)}});
      check.analytic_run_id = recorded.front().id;
      if (recorded.front().state == db::RecordedRun::State::kStored) ++stats.stored;
    }
    return check;
  } catch (const std::exception&) {
    return std::nullopt;  // not a case the closed form can take (or a binding of another shape)
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

Evidence EvidenceStore::simulation(const Candidate& c, QueryStats& stats) {
  if (!problem_.graph) throw QueryError("confirming needs the model's task graph (a PSL specification)");
  const db::RunKey key = simulation_key(problem_, c);
  std::optional<db::RunStart> start;
  if (kb_) {
    start = kb_->begin_run(key);
    if (start->state == db::RunStart::State::kAlreadyDone && start->run.result)
      return {start->run.id, kSimulation, start->run.result->time_ns, false};
  }
  taskgraph::ParameterBinding binding;
  for (const auto& [name, value] : key.binding["parameters"].items()) binding[name] = value.get<double>();
  taskgraph::InstantiateOptions instantiate;
  instantiate.ns_per_work = problem_.machine.wg_ns;
  sim::SimulationOptions options;
  options.params = problem_.machine.params;
  options.rendezvous_handshake = problem_.machine.rendezvous_handshake;
  options.per_rank_results = false;
  const bool claimed = start && start->state == db::RunStart::State::kClaimed;
  sim::SimulationResult r;
  try {
    taskgraph::ModelSchedule schedule(problem_.graph, binding, instantiate);
    r = sim::simulate(schedule, options);
    if (!r.completed) throw sim::SimulationError("the simulation did not complete (deadlock or unmatched messages)");
  } catch (const std::exception& e) {
    if (claimed) kb_->fail_run(start->handle, e.what());
    throw;
  }
  ++stats.simulated;
  // Stored as `poems simulate` stores it.
  const db::Result out = simulation_record(r);
  Evidence e{0, kSimulation, out.time_ns, true};
  if (claimed) {
    kb_->complete_run(start->handle, out);
    e.run_id = start->handle.id;
    ++stats.stored;
  }
  return e;
}

}  // namespace poems::recommender::detail
