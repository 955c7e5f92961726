// processor[hierarchy]: time = work × Wg(working set, processes computing at once).
#include "poems/processor/hierarchy.h"

#include <algorithm>

#include "common.h"

namespace poems::processor {

namespace {

// Linear in log2(bytes) between the two points around `ws`, flat outside.
double along(const std::vector<double>& bytes, const std::vector<double>& wg, double ws) {
  if (ws <= bytes.front()) return wg.front();
  if (ws >= bytes.back()) return wg.back();
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(bytes.begin(), bytes.end(), ws) - bytes.begin());
  const std::size_t lo = hi - 1;
  const double f = (std::log2(ws) - std::log2(bytes[lo])) / (std::log2(bytes[hi]) - std::log2(bytes[lo]));
  return wg[lo] + f * (wg[hi] - wg[lo]);
}

}  // namespace

double WorkingSetCurve::wg_at(double working_set, double procs) const {
  const double alone = along(bytes, wg_ns, working_set);
  if (busy_wg_ns.empty() || cores <= 1 || !(procs > 1)) return alone;
  const double busy = along(bytes, busy_wg_ns, working_set);
  const double at_once = std::min(procs, static_cast<double>(cores));
  return alone + (busy - alone) * (at_once - 1) / (cores - 1);
}

WorkingSetCurve working_set_curve(const ProcessorSpec& spec) {
  using detail::format_number;
  using detail::who;
  WorkingSetCurve curve;
  auto number = [&](const std::string& name) -> const double* {
    auto it = spec.numbers.find(name);
    return it == spec.numbers.end() ? nullptr : &it->second;
  };
  const std::string example = "e.g. `ws_1 = 24KiB; Wg_1 = 5.2ns;` in the profile";
  for (int k = 1;; ++k) {
    const std::string n = std::to_string(k);
    const double* ws = number("ws_" + n);
    const double* wg = number("Wg_" + n);
    const double* busy = number("Wg_busy_" + n);
    if (!ws) {
      if (k == 1 && !wg && !busy)
        throw ProcessorError(who(spec) + ": missing attribute 'ws_1': the curve needs at least one point, " + example);
      // Anything numbered beyond the last point is a gap or a typo, not ignored.
      for (const auto& [name, value] : spec.numbers) {
        const std::size_t cut = name.rfind('_');
        const std::string head = cut == std::string::npos ? "" : name.substr(0, cut);
        const std::string index = cut == std::string::npos ? "" : name.substr(cut + 1);
        if ((head != "ws" && head != "Wg" && head != "Wg_busy") || index.empty() ||
            index.find_first_not_of("0123456789") != std::string::npos)
          continue;
        const long point = std::stol(index.substr(0, 9));
        if (index != std::to_string(point))  // ws_01 would shadow nothing and be ignored
          throw ProcessorError(who(spec) + ": attribute '" + name +
                               "': number the points 1, 2, 3, ... without leading zeros");
        if (point >= 1 && point < k) continue;
        if (point == 0) throw ProcessorError(who(spec) + ": attribute '" + name + "': the points are numbered from 1");
        throw ProcessorError(who(spec) + ": attribute '" + name + "' follows no point " + n + " ('ws_" + n +
                             "' is missing); number the points 1, 2, 3, ... and give each a ws and a Wg");
      }
      break;
    }
    if (!std::isfinite(*ws) || *ws <= 0 || *ws > 1e18)
      throw ProcessorError(who(spec) + ": attribute 'ws_" + n + "' is " + format_number(*ws) +
                           " B; a working set must be > 0 B and <= 1e18 B");
    if (!curve.bytes.empty() && *ws <= curve.bytes.back())
      throw ProcessorError(who(spec) + ": attribute 'ws_" + n + "' (" + format_number(*ws) +
                           " B) must be larger than 'ws_" + std::to_string(k - 1) + "' (" +
                           format_number(curve.bytes.back()) + " B): points in increasing working set");
    if (!wg) throw ProcessorError(who(spec) + ": missing attribute 'Wg_" + n + "' (Wg at ws_" + n + "), " + example);
    for (const auto& [name, v] : {std::pair{"Wg_" + n, wg}, std::pair{"Wg_busy_" + n, busy}})
      if (v && (!std::isfinite(*v) || *v < 0 || *v > 1e12))
        throw ProcessorError(who(spec) + ": attribute '" + name + "' is " + format_number(*v) +
                             " ns; a time per unit of work must be >= 0 and <= 1e12 ns");
    if (k > 1 && (busy != nullptr) != !curve.busy_wg_ns.empty())
      throw ProcessorError(who(spec) + ": 'Wg_busy_" + n + "' " + (busy ? "is given" : "is missing") +
                           " but 'Wg_busy_1' " + (busy ? "is not" : "is") +
                           ": give the busy curve at every point or none");
    curve.bytes.push_back(*ws);
    curve.wg_ns.push_back(*wg);
    if (busy) curve.busy_wg_ns.push_back(*busy);
  }
  if (const double* cores = number("cores")) {
    if (!(*cores >= 1 && *cores <= 1e6) || *cores != std::floor(*cores))
      throw ProcessorError(who(spec) + ": attribute 'cores' is " + format_number(*cores) +
                           "; it must be a whole number from 1 to 1000000 (the cores of a node)");
    curve.cores = static_cast<int>(*cores);
  } else if (!curve.busy_wg_ns.empty()) {
    throw ProcessorError(who(spec) + ": the busy curve (Wg_busy_1, ...) needs attribute 'cores', the cores " +
                         "that ran at once when it was measured, e.g. `cores = 2;`");
  }
  return curve;
}

std::vector<std::pair<std::string, double>> curve_attributes(const WorkingSetCurve& curve) {
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t i = 0; i < curve.bytes.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    out.emplace_back("ws_" + n, curve.bytes[i]);
    out.emplace_back("Wg_" + n, curve.wg_ns[i]);
    if (i < curve.busy_wg_ns.size()) out.emplace_back("Wg_busy_" + n, curve.busy_wg_ns[i]);
  }
  out.emplace_back("cores", curve.cores);
  return out;
}

namespace detail {
namespace {

class HierarchyProcessor : public ProcessorModel {
 public:
  explicit HierarchyProcessor(const ProcessorSpec& spec) : spec_(spec), curve_(working_set_curve(spec)) {}
  std::string evaluator() const override { return "processor[hierarchy]"; }
  double task_time_ns(const TaskRequest& task) override {
    const double work = work_of(spec_, task);
    auto ws = task.params.find("working_set");
    if (ws == task.params.end())
      throw ProcessorError(who(spec_) + ": " + task_name(task) + " has no parameter 'working_set' (the bytes " +
                           "one task touches), e.g. `working_set = 24 * it * jt * kt` among the task's arguments");
    if (!std::isfinite(ws->second) || ws->second <= 0)
      throw ProcessorError(who(spec_) + ": " + task_name(task) + " has working_set = " + format_number(ws->second) +
                           " B; it must be a finite number of bytes > 0");
    auto procs = task.params.find("procs");
    const double at_once = procs == task.params.end() ? 1 : procs->second;
    if (!std::isfinite(at_once) || at_once < 1)
      throw ProcessorError(who(spec_) + ": " + task_name(task) + " has procs = " + format_number(at_once) +
                           "; the processes computing at once must be >= 1");
    return checked_time(spec_, task, work * curve_.wg_at(ws->second, at_once));
  }

 private:
  ProcessorSpec spec_;
  WorkingSetCurve curve_;
};

}  // namespace

std::unique_ptr<ProcessorModel> make_hierarchy(const ProcessorSpec& spec) {
  return std::make_unique<HierarchyProcessor>(spec);
}

}  // namespace detail
}  // namespace poems::processor
