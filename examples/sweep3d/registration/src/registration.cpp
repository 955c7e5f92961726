#include "poems/sweep3d/registration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>

#include "poems/core/calibration.h"
#include "poems/core/error.h"
#include "poems/core/programs.h"
#include "poems/recommender/problem_class.h"
#include "poems/sweep3d/app/deck.h"
#include "poems/sweep3d/app/report.h"
#include "poems/sweep3d/kblock.h"
#include "poems/sweep3d/sweep3d_model.h"

namespace poems::sweep3d {

namespace {

components::Sweep3DConfig config_of(const core::Evaluation& e) {
  try {
    return components::sweep3d_config(e.graph->params, e.values);
  } catch (const components::ParameterError& x) {
    throw core::InputError(x.what());
  }
}

// The deck of a binding: vacuum boundaries, no fixups, unit cells, exactly
// `iterations` source iterations (epsi < 0).
app::Deck deck_of(const components::Sweep3DConfig& c) {
  app::Deck d;
  d.npe_i = static_cast<int>(c.npe_i);
  d.npe_j = static_cast<int>(c.npe_j);
  d.mk = static_cast<int>(c.mk);
  d.mmi = static_cast<int>(c.mmi);
  d.it_g = static_cast<int>(c.it_g);
  d.jt_g = static_cast<int>(c.jt_g);
  d.kt = static_cast<int>(c.kt);
  d.mm = static_cast<int>(c.mm);
  d.epsi = -static_cast<double>(c.iterations);
  return d;
}

std::string refuses(const core::Evaluation& e) {
  components::Sweep3DConfig c;
  try {
    c = components::sweep3d_config(e.graph->params, e.values);
  } catch (const std::exception& x) {
    return x.what();
  }
  if (c.iterations < 1) return "iterations = " + std::to_string(c.iterations) + " (at least 1)";
  const auto parsed = app::parse_deck(app::deck_text(deck_of(c)), "deck");
  if (!parsed.ok()) return "the Sweep3D program refuses the deck: " + parsed.errors.front();
  return "";
}

core::ProgramInput input(const core::Evaluation& e, const std::filesystem::path& dir) {
  const components::Sweep3DConfig c = config_of(e);
  const std::string text = app::deck_text(deck_of(c));
  const std::filesystem::path deck = dir / "input";
  std::ofstream(deck) << text;
  core::ProgramInput in;
  in.args = {deck.string()};
  in.ranks = static_cast<std::uint32_t>(c.npe_i * c.npe_j);
  in.record = {{"deck", text}};
  return in;
}

// The result line: the iteration loop's time of the slowest process, the
// mean time in the kernel and inside MPI calls (waiting included).
core::ProgramResult read(const nlohmann::json& r) {
  core::ProgramResult out;
  out.time_ns = r.at("time_ns").get<double>();
  out.compute_ns = r.value("compute_ns_mean", 0.0);
  out.comm_ns = r.value("recv_ns_mean", 0.0) + r.value("send_ns_mean", 0.0) + r.value("allreduce_ns_mean", 0.0);
  out.messages = r.value("messages", std::uint64_t{0});
  if (r.contains("flux_sum")) out.extra["flux_sum"] = r["flux_sum"];
  return out;
}

// ----------------------------------------------------------- recommender
using recommender::Binding;
using recommender::Dimension;
using recommender::Problem;
using recommender::QueryError;

constexpr std::int64_t kMaxInt = std::int64_t{1} << 31;

std::int64_t integer(const Binding& b, const char* name) {
  const double v = b(name);
  if (!std::isfinite(v) || v != std::trunc(v) || std::fabs(v) > 9e15)
    throw QueryError(std::string(name) + " = " + std::to_string(v) + " is not an integer");
  return static_cast<std::int64_t>(v);
}

void check(bool ok, const std::string& name, std::int64_t value, const std::string& range) {
  if (!ok) throw QueryError(name + " = " + std::to_string(value) + " is out of range; expected " + range);
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

void validate(const Problem& p) {
  const Binding b = p.binding();
  const std::string positive = "an integer in 1.." + std::to_string(kMaxInt);
  const std::int64_t it_g = integer(b, "it_g"), jt_g = integer(b, "jt_g"), kt = integer(b, "kt"), mm = integer(b, "mm"),
                     iterations = integer(b, "iterations");
  check(it_g >= 1 && it_g <= kMaxInt, "it_g", it_g, positive);
  check(jt_g >= 1 && jt_g <= kMaxInt, "jt_g", jt_g, positive);
  check(kt >= 1 && kt <= kMaxInt, "kt", kt, positive);
  check(mm >= 1 && mm <= 4096, "mm", mm, "an integer in 1..4096");
  check(iterations >= 0 && iterations <= kMaxInt, "iterations", iterations,
        "an integer in 0.." + std::to_string(kMaxInt));
  const double wg = p.machine.ns_per_work;
  if (!(wg >= 0) || !std::isfinite(wg) || wg > 1e9)
    throw QueryError("Wg = " + std::to_string(wg) + " ns is out of range; expected a time in 0..1e9 ns");
}

std::vector<Dimension> dimensions(const Problem& p, const std::set<std::string>& fixed) {
  const Binding b = p.binding();
  const std::int64_t kt = integer(b, "kt"), mm = integer(b, "mm");
  std::vector<Dimension> out;
  if (fixed.count("mk")) {
    const std::int64_t mk = integer(b, "mk");
    check(mk >= 1 && mk <= kt, "mk", mk, "an integer in 1..kt = " + std::to_string(kt));
  } else {
    if (kt > static_cast<std::int64_t>(recommender::kMaxCandidates))
      throw QueryError("kt = " + std::to_string(kt) + " gives " + std::to_string(kt) +
                       " mk candidates; expected at most " + std::to_string(recommender::kMaxCandidates) +
                       " (fix mk with --set mk=N)");
    Dimension d{{"mk"}, {}};
    for (std::int64_t mk = 1; mk <= kt; ++mk) d.values.push_back({static_cast<double>(mk)});
    out.push_back(std::move(d));
  }
  const std::vector<std::int64_t> allowed = divisors(mm);
  if (fixed.count("mmi")) {
    const std::int64_t mmi = integer(b, "mmi");
    std::string list;
    for (std::int64_t v : allowed) list += (list.empty() ? "" : ", ") + std::to_string(v);
    check(mmi >= 1 && mmi <= mm && mm % mmi == 0, "mmi", mmi, "a divisor of mm = " + std::to_string(mm) + ": " + list);
  } else {
    Dimension d{{"mmi"}, {}};
    for (std::int64_t v : allowed) d.values.push_back({static_cast<double>(v)});
    out.push_back(std::move(d));
  }
  return out;
}

// Processor grids npe_i x npe_j that leave every process at least one cell column.
std::vector<std::vector<double>> layouts(const Problem& p, std::int64_t procs, bool all) {
  const Binding b = p.binding();
  const std::int64_t it_g = integer(b, "it_g"), jt_g = integer(b, "jt_g");
  std::vector<std::vector<double>> out;
  if (all) {
    for (const auto& [i, j] : recommender::factorizations(procs, it_g, jt_g))
      out.push_back({static_cast<double>(i), static_cast<double>(j)});
    if (!out.empty()) return out;
  }
  const auto [i, j] = recommender::square_grid(procs, it_g, jt_g);  // throws, naming the limits
  return {{static_cast<double>(i), static_cast<double>(j)}};
}

// it, jt (per process), kt, mk, mmi, mm, npe_i, npe_j; L, o, g (ns), G, O
// (ns/B), S (bytes), Wg (ns); the rendezvous handshake.
std::vector<double> features(const Binding& b, const components::ClosedFormMachine& m) {
  auto phi = [](double x) { return std::log2(1.0 + std::max(0.0, x)); };
  const std::int64_t npe_i = std::max<std::int64_t>(1, integer(b, "npe_i")),
                     npe_j = std::max<std::int64_t>(1, integer(b, "npe_j"));
  const components::LogGOPS& p = m.params;
  const double raw[] = {static_cast<double>(ceil_div(integer(b, "it_g"), npe_i)),
                        static_cast<double>(ceil_div(integer(b, "jt_g"), npe_j)),
                        b("kt"),
                        b("mk"),
                        b("mmi"),
                        b("mm"),
                        static_cast<double>(npe_i),
                        static_cast<double>(npe_j),
                        static_cast<double>(p.L) / 1e3,
                        static_cast<double>(p.o) / 1e3,
                        static_cast<double>(p.g) / 1e3,
                        static_cast<double>(p.G) / 1e6,
                        static_cast<double>(p.O) / 1e6,
                        static_cast<double>(p.S),
                        m.ns_per_work,
                        m.rendezvous_handshake ? 1.0 : 0.0};
  std::vector<double> f;
  for (double x : raw) f.push_back(phi(x));
  return f;
}

// Local cells per k-plane it*jt, processors, kt, and the latency in units of work L/Wg.
std::vector<double> rule_features(const Binding& b, const components::ClosedFormMachine& m) {
  const std::int64_t npe_i = integer(b, "npe_i"), npe_j = integer(b, "npe_j");
  if (npe_i < 1 || npe_j < 1) throw QueryError("no processor grid");
  const double latency_ns = static_cast<double>(m.params.L) / 1000.0;
  return {static_cast<double>(ceil_div(integer(b, "it_g"), npe_i) * ceil_div(integer(b, "jt_g"), npe_j)),
          static_cast<double>(npe_i * npe_j), b("kt"),
          m.ns_per_work > 0 ? latency_ns / m.ns_per_work : std::numeric_limits<double>::infinity()};
}

std::string summary(const Problem& p) {
  const Binding b = p.binding();
  return std::to_string(integer(b, "it_g")) + "x" + std::to_string(integer(b, "jt_g")) + "x" +
         std::to_string(integer(b, "kt"));
}

void register_problem_class() {
  recommender::ProblemClass c;
  c.model = "Sweep3D";
  c.dimensions = dimensions;
  c.layout = {"npe_i", "npe_j"};
  c.layouts = layouts;
  c.validate = validate;
  c.features = features;
  c.rule_targets = {"mk", "mmi"};
  c.rule_feature_names = {"it*jt", "procs", "kt", "L/Wg"};
  c.rule_features = rule_features;
  c.tie_order = {"mk", "mmi", "npe_i"};
  c.summary = summary;
  recommender::register_problem_class(std::move(c));
}

// ----------------------------------------------------------- calibration
// A k-block it x jt x mk with `angles` angles, in a column of kt planes (no
// kt: alone), as processor[measured] times it (kblock.h, shape_for).
core::TaskParameters block(double it, double jt, double mk, double angles, double kt) {
  core::TaskParameters t = {{"it", it}, {"jt", jt}, {"mk", mk}, {"angles", angles}, {"work", it * jt * mk * angles}};
  if (kt > 0) t["kt"] = kt;
  return t;
}

// The bytes a process's sweep touches (KColumn): source, σt and flux of its
// it × jt × kt cells, and the three inflow faces of a block; the same
// expression as the `working_set` argument of the Sweep3D model's KBlock.
double column_bytes(double it, double jt, double mk, double angles, double kt) {
  return 8 * (3 * it * jt * kt + angles * (jt * mk + it * mk + it * jt));
}

// A column of about `bytes` for the processor[hierarchy] curve, in the
// validation decks' blocks: 50 × 50 cells (the kernel's default task), k-blocks
// of 10 planes, 3 angles, as many planes as the bytes take. A column smaller
// than one such block narrows the block instead (10 planes of it × it cells).
// One cross-section along the curve keeps the block's shape, which moves the
// kernel's rate too, out of the curve: it follows the working set.
core::TaskParameters block_for_working_set(double bytes) {
  const double mk = 10, angles = 3, plane = 50;
  double side = plane, kt = std::round(bytes / (24 * plane * plane));
  if (kt < mk) side = std::max(4.0, std::round(std::sqrt(bytes / (24 * mk)))), kt = mk;
  core::TaskParameters t = block(side, side, mk, angles, kt);
  t["working_set"] = column_bytes(side, side, mk, angles, kt);
  return t;
}

core::TaskParameters parse_shape(const std::string& text) {
  int it = 0, jt = 0, mk = 0, mmi = 0, kt = 0;
  char extra = 0;
  const int n = std::sscanf(text.c_str(), "%d,%d,%d,%d,%d%c", &it, &jt, &mk, &mmi, &kt, &extra);
  if ((n != 4 && n != 5) || it < 1 || jt < 1 || mk < 1 || mmi < 1 || kt < 0 || (n == 5 && kt < 1) ||
      static_cast<double>(it) * jt * std::max(mk, kt) > 1e8)
    throw std::invalid_argument("'" + text +
                                "' is not IT,JT,MK,MMI[,KT] (whole numbers >= 1, it*jt*max(mk,kt) <= 1e8)");
  return block(it, jt, mk, mmi, kt);
}

std::string shape_text(const core::TaskParameters& t) {
  auto get = [&](const char* name) {
    auto it = t.find(name);
    return it == t.end() ? 0 : static_cast<long long>(it->second);
  };
  std::string s = std::to_string(get("it")) + "x" + std::to_string(get("jt")) + "x" + std::to_string(get("mk")) + "x" +
                  std::to_string(get("angles"));
  return get("kt") ? s + ",kt=" + std::to_string(get("kt")) : s;
}

// A block's messages: 8 * jt * mk * mmi bytes along i, 8 * it * mk * mmi along j.
std::vector<double> shape_messages(const core::TaskParameters& t) {
  const double unit = 8 * t.at("mk") * t.at("angles");
  return {unit * t.at("jt"), unit * t.at("it")};
}

void register_calibration_kernel() {
  core::CalibrationKernel k;
  k.kernel = "sweep3d.kblock";
  k.description = "the Sweep3D k-block kernel";
  k.component = "KBlock";
  k.transaction = "execute_code_block";
  k.default_tasks = {block(50, 50, 10, 3, 50), block(25, 50, 10, 3, 50), block(20, 20, 10, 3, 20)};
  k.parse_task = parse_shape;
  k.task_syntax = "IT,JT,MK,MMI[,KT]";
  k.task_text = shape_text;
  k.message_sizes = shape_messages;
  k.task_for_working_set = block_for_working_set;
  core::register_calibration_kernel(std::move(k));
}

}  // namespace

void register_sweep3d() {
  static std::once_flag once;
  std::call_once(once, [] {
    components::register_sweep3d_closed_form();
    register_sweep3d_kernels();
    // The project's own Sweep3D keeps no per-rank state in globals: its ranks may be threads.
    core::ModelProgram program;
    program.model = "Sweep3D";
    program.measured = "sweep3d_mpi";
    program.direct = "sweep3d_direct";
    program.result_prefix = app::kResultPrefix;
    program.input = input;
    program.refuses = refuses;
    program.read = read;
    program.ranks_as_threads = true;
    core::register_program(std::move(program));
    register_problem_class();
    register_calibration_kernel();
  });
}

}  // namespace poems::sweep3d
