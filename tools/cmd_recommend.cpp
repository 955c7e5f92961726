// `poems recommend`: the performance recommender (recommender/question.h,
// docs/recommender.md). Which values of a model's parameters minimise its
// time: the model's registered question by default (its problem class's
// parameters and, with --grid, its layouts), a study's vary
// space (--study) or any parameters (--vary).
#include <chrono>
#include <ostream>
#include <regex>

#include "options.h"
#include "poems/examples/examples.h"
#include "poems/recommender/question.h"
#include "poems/report/recommendation.h"

namespace poems::cli {

namespace {

struct RecommendOptions {
  SystemOptions system;
  ChoiceOptions choices;
  MachineOptions machine;
  core::StoreOptions store;
  recommender::Question question;
  std::string spec_alias, wg, procs, procs_range, format;
  std::size_t jobs = 0;  // 0 = the cores
};

std::int64_t procs_option(const std::string& text) {
  static const std::regex digits("[0-9]{1,12}");
  const char* range = "an integer in 1..2147483648";
  if (!std::regex_match(text, digits))
    throw core::UsageError("--procs", "'" + text + "' is not a processor count; expected " + range);
  const std::int64_t v = std::stoll(text);
  if (v < 1 || v > (std::int64_t{1} << 31))
    throw core::UsageError("--procs", "'" + text + "' is out of range; expected " + range);
  return v;
}

std::pair<std::int64_t, std::int64_t> range_option(const std::string& text) {
  static const std::regex form("([0-9]{1,12})\\.\\.([0-9]{1,12})");
  std::smatch m;
  const char* expected = "A..B with 1 <= A < B <= 2147483648, e.g. 100..20000";
  if (!std::regex_match(text, m, form))
    throw core::UsageError("--procs-range", "'" + text + "' is not a range; expected " + expected);
  const std::int64_t a = std::stoll(m[1]), b = std::stoll(m[2]);
  if (a < 1 || b <= a || b > (std::int64_t{1} << 31))
    throw core::UsageError("--procs-range", "'" + text + "' is out of range; expected " + expected);
  return {a, b};
}

void run_recommend(RecommendOptions& o, Context& ctx) {
  const auto started = std::chrono::steady_clock::now();
  recommender::Question& q = o.question;
  recommender::check_question(q, !o.store.disabled);
  if (!o.procs_range.empty()) q.procs_range = range_option(o.procs_range);
  if (!o.procs.empty()) q.procs = procs_option(o.procs);
  q.jobs = jobs_or_cores(o.jobs);
  SystemOptions system_options = o.system;
  if (system_options.spec.empty()) system_options.spec = o.spec_alias;
  if (system_options.spec.empty()) system_options.spec = examples::default_specification();
  if (system_options.spec.empty())
    throw core::UsageError("SPEC", "no specification given, and no example one to fall back on");
  const auto system = core::load_system(system_options.request(true));
  ctx.err << system->warnings();
  core::Store store(o.store);
  core::Session session(*system, session_options(*system, o.choices, o.machine, o.wg, ""), store);
  try {
    report::RecommendReport report{recommender::answer(session, q), system_options.spec, store.path(), 0};
    report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ctx.out << (o.format == "json"
                    ? recommender::to_json(report.answer, report.spec, report.db_path, report.wall_seconds).dump(2) +
                          "\n"
                    : report::recommendation_text(report));
  } catch (const recommender::QueryError& e) {
    throw core::InputError(e.what());
  } catch (const db::Error& e) {
    throw core::StoreError(e.what());
  }
}

}  // namespace

void register_recommend(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RecommendOptions>();
  CLI::App* cmd =
      app.add_subcommand("recommend", "Recommend the values of a model's parameters that minimise its time");
  add_system_options(cmd, o->system, false);
  cmd->add_option("--spec", o->spec_alias, "The specification (deprecated spelling of SPEC)");
  cmd->add_option("--vary", o->question.vary,
                  "A parameter to choose and its candidates: NAME=1,2,4 or NAME=1..30 (repeatable; default: the "
                  "model's registered question, or the --study's vary space)");
  cmd->add_option("--where", o->system.where,
                  "A constraint on the --vary candidates, checked as a study's `where`: e.g. \"px * py == 16\" "
                  "(repeatable: all must hold)");
  add_procs_option(cmd, o->procs, "Processors: the candidates run on process layouts of this many");
  cmd->add_flag("--grid", o->question.all_layouts,
                "Rank every process layout (processor grid) of --procs, not only the most square");
  cmd->add_option("--procs-range", o->procs_range,
                  "A..B: the best time per processor count and the optimal operating point");
  cmd->add_option("--knee-fraction", o->question.knee_fraction,
                  "The operating point is where the time improves by less than this fraction")
      ->capture_default_str();
  add_choice_options(cmd, o->choices);
  add_machine_options(cmd, o->machine);
  add_wg_option(cmd, o->wg);
  cmd->add_option("--top", o->question.top, "Recommendations to show")->capture_default_str();
  add_format_option(cmd, o->format, {"table", "json"});
  cmd->add_flag("--confirm", o->question.confirm,
                "Simulate the recommendations (simulation[MPI-Sim]) and report the agreement");
  cmd->add_option("--by", o->question.by,
                  "Rank by analytic[LogGP], by simulation[MPI-Sim] (the analytic best simulated, "
                  "docs/recommender.md) or by both (the larger of the two times)")
      ->capture_default_str();
  cmd->add_flag("--explain", o->question.explain, "Mine rules from the knowledge base and show which apply");
  add_jobs_option(cmd, o->jobs);
  add_store_options(cmd, o->store);
  cmd->callback([o, cmd, &ctx] {
    finish_machine_options(cmd, o->machine);
    run_recommend(*o, ctx);
  });
}

}  // namespace poems::cli
