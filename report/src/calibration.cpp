#include "poems/report/calibration.h"

#include <cstdio>
#include <filesystem>
#include <ostream>

#include <nlohmann/json.hpp>

namespace poems::report {

namespace {

std::string fmt(const char* spec, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, v);
  return buffer;
}

std::string percent(double model, double measured) {
  return measured > 0 ? fmt("%+.1f", 100 * (model - measured) / measured) : "-";
}

// poems_loggops_bench's echo against the machine, the exchange and the trains.
void write_loggops_network(const core::Calibration& cal, std::ostream& out) {
  out << "   bytes   echo_ns  model_ns  model_%  exchange_ns  overhead_ns    gap_ns\n";
  const auto overhead = cal.samples.overhead_ns(), gap = cal.samples.gap_ns();
  char line[160];
  for (std::size_t k = 0; k < cal.samples.sizes.size(); ++k) {
    const double m = measure::model_echo_ns(cal.loggops, cal.samples.sizes[k]);
    std::snprintf(line, sizeof line, "%8.0f %9.1f %9.1f %+8.1f %12.1f %12.1f %9.1f\n", cal.samples.sizes[k],
                  cal.samples.echo_ns[k], m, 100 * (m - cal.samples.echo_ns[k]) / cal.samples.echo_ns[k],
                  cal.samples.exchange_ns[k], overhead[k], gap[k]);
    out << line;
  }
}

// --network comet: CoMet's echo and pairwise against the machine, each
// range's fit, and the message trains o and g come from.
void write_comet_network(const core::Calibration& cal, std::ostream& out) {
  const measure::CometNetworkFit& f = cal.comet;
  out << "CoMet echo and pairwise (" << cal.comet_command << "; then --kernels pairwise), median ns:\n";
  char line[200];
  std::snprintf(line, sizeof line, "%8s %-10s %10s %10s %8s %11s %10s %8s\n", "bytes", "regime", "echo_ns", "model_ns",
                "model_%", "pairwise_ns", "model_ns", "model_%");
  out << line;
  for (const measure::CometFitPoint& p : f.points) {
    std::snprintf(line, sizeof line, "%8.0f %-10s %10.1f %10.1f %8s %11.1f %10.1f %8s\n", p.bytes, p.regime.c_str(),
                  p.echo_ns, p.model_echo_ns, percent(p.model_echo_ns, p.echo_ns).c_str(), p.pairwise_ns,
                  p.model_pairwise_ns, percent(p.model_pairwise_ns, p.pairwise_ns).c_str());
    out << line;
  }
  out << "\nfits per range (largest |residual|: the echo's line, the pairwise model):\n";
  std::snprintf(line, sizeof line, "%-11s %17s %9s %8s %9s %10s %10s %8s %9s\n", "range", "bytes", "L_ns", "o_ns",
                "g_ns", "G_ns/B", "O_ns/B", "echo_%", "pairw_%");
  out << line;
  const std::pair<const measure::RangeFit*, double> ranges[] = {{&f.loggops.eager, f.eager_pairwise_residual},
                                                                {&f.loggops.rendezvous, f.rendezvous_pairwise_residual},
                                                                {&f.loggops.messages, f.messages_pairwise_residual}};
  for (const auto& [r, pairwise] : ranges) {
    if (!r->sizes) continue;
    const std::string bytes = fmt("%.0f", r->min_bytes) + "-" + fmt("%.0f", r->max_bytes);
    std::snprintf(line, sizeof line, "%-11s %17s %9.4g %8.4g %9.4g %10.4g %10.4g %8.1f %9.1f\n", r->name.c_str(),
                  bytes.c_str(), r->L, r->o, r->g, r->G, r->O, 100 * r->echo.max_relative_residual, 100 * pairwise);
    out << line;
  }
  out << "\nmessage trains (poems_loggops_bench): o from the overhead (eager range), g per range from the gap\n";
  out << "   bytes  overhead_ns    gap_ns\n";
  const auto overhead = cal.samples.overhead_ns(), gap = cal.samples.gap_ns();
  for (std::size_t k = 0; k < cal.samples.sizes.size(); ++k) {
    std::snprintf(line, sizeof line, "%8.0f %12.1f %9.1f\n", cal.samples.sizes[k], overhead[k], gap[k]);
    out << line;
  }
}

}  // namespace

void write_calibration(const core::Calibration& cal, const std::string& psl, std::ostream& out) {
  const measure::LoggopsCalibration& c = cal.loggops;
  out << "machine " << cal.name << " (" << c.machine_range << " range): L = " << fmt("%.4g", c.L)
      << " ns, o = " << fmt("%.4g", c.o) << " ns, g = " << fmt("%.4g", c.g) << " ns, G = " << fmt("%.4g", c.G)
      << " ns/B, O = " << fmt("%.4g", c.O) << " ns/B, S = " << fmt("%.0f", c.S) << " B, Wg = " << fmt("%.4g", cal.wg_ns)
      << " ns, copy_G = " << fmt("%.4g", cal.copy_ns_per_byte) << " ns/B\n\n";
  if (cal.network == "comet")
    write_comet_network(cal, out);
  else
    write_loggops_network(cal, out);
  char line[160];
  std::snprintf(line, sizeof line, "\n%-22s %12s %12s %16s\n", "task", "block_us", "Wg_ns", "Wg_ns_at_once");
  out << line;
  for (const core::TaskWg& w : cal.tasks) {
    std::snprintf(line, sizeof line, "%-22s %12.2f %12.3f %12.3f (%d)\n", w.text.c_str(), w.block_ns / 1e3, w.wg_ns,
                  w.busy_wg_ns, w.concurrent);
    out << line;
  }
  const processor::WorkingSetCurve& h = cal.hierarchy;
  if (!h.bytes.empty()) {
    out << "\nprocessor[hierarchy]: " << cal.caches << "\n";
    std::snprintf(line, sizeof line, "%-8s %-22s %14s %12s %16s\n", "level", "task", "working_set_B", "Wg_ns",
                  "Wg_ns_at_once");
    out << line;
    for (std::size_t i = 0; i < h.bytes.size(); ++i) {
      std::snprintf(line, sizeof line, "%-8s %-22s %14.0f %12.3f %12.3f (%d)\n", cal.hierarchy_levels[i].c_str(),
                    cal.hierarchy_tasks[i].c_str(), h.bytes[i], h.wg_ns[i],
                    i < h.busy_wg_ns.size() ? h.busy_wg_ns[i] : h.wg_ns[i], h.busy_wg_ns.empty() ? 1 : h.cores);
      out << line;
    }
  }
  if (!cal.hierarchy_note.empty()) out << "note: " << cal.hierarchy_note << '\n';
  for (const std::string& n : c.notes) out << "note: " << n << '\n';
  out << "\nwrote " << psl << " (components " << cal.name << ", " << cal.name << "_cpu"
      << (h.bytes.empty() ? "" : ", " + cal.name + "_hierarchy") << ")\n";
}

void write_cachesim_calibration(const core::CachesimCalibration& cal, const std::string& psl, const std::string& format,
                                std::ostream& out) {
  if (format == "json") {
    nlohmann::json j = {{"component", cal.component},
                        {"kernel", cal.kernel},
                        {"psl", std::filesystem::absolute(psl).string()},
                        {"ns_per_instruction", cal.rates.ns_per_instruction},
                        {"ns_per_L1_miss", cal.rates.ns_per_L1_miss},
                        {"ns_per_LL_miss", cal.rates.ns_per_LL_miss},
                        {"ns_per_LL_miss_shared", cal.rates.ns_per_LL_miss_shared},
                        {"tasks", nlohmann::json::array()}};
    for (const core::CachesimPoint& p : cal.points)
      j["tasks"].push_back({{"task", p.task},
                            {"measured_ns", p.measured_ns},
                            {"predicted_ns", p.predicted_ns},
                            {"left_out_predicted_ns", p.left_out_ns},
                            {"Ir", p.per_call.Ir},
                            {"L1_misses", p.per_call.l1_misses()},
                            {"LL_misses", p.per_call.ll_misses()},
                            {"LL", p.ll.text()},
                            {"simulation_seconds", p.simulation_seconds},
                            {"cached", p.cached}});
    out << j.dump(2) << '\n';
    return;
  }
  out << "processor[cachesim] " << cal.component
      << ": ns_per_instruction = " << fmt("%.4g", cal.rates.ns_per_instruction)
      << " ns, ns_per_L1_miss = " << fmt("%.4g", cal.rates.ns_per_L1_miss)
      << " ns, ns_per_LL_miss = " << fmt("%.4g", cal.rates.ns_per_LL_miss)
      << " ns, ns_per_LL_miss_shared = " << fmt("%.4g", cal.rates.ns_per_LL_miss_shared) << " ns\ncaches: I1 "
      << cal.caches.I1.text() << ", D1 " << cal.caches.D1.text() << ", LL " << cal.caches.LL.text() << " (shared by "
      << cal.ll_shared_by << ")\n\n";
  char line[200];
  std::snprintf(line, sizeof line, "%-44s %12s %12s %7s %7s %12s %10s %10s %8s\n", "task", "measured_us", "cachesim_us",
                "diff_%", "loo_%", "Ir", "L1_miss", "LL_miss", "sim_s");
  out << line;
  for (const core::CachesimPoint& p : cal.points) {
    std::string text;
    for (const char* k : {"it", "jt", "mk", "angles", "kt", "procs"})
      if (auto it = p.task.find(k); it != p.task.end())
        text += (text.empty() ? "" : " ") + std::string(k) + "=" + fmt("%.0f", it->second);
    std::snprintf(line, sizeof line, "%-44s %12.2f %12.2f %+7.1f %+7.1f %12.0f %10.0f %10.0f %8s\n", text.c_str(),
                  p.measured_ns / 1e3, p.predicted_ns / 1e3, 100 * (p.predicted_ns - p.measured_ns) / p.measured_ns,
                  100 * (p.left_out_ns - p.measured_ns) / p.measured_ns, p.per_call.Ir, p.per_call.l1_misses(),
                  p.per_call.ll_misses(), p.cached ? "stored" : fmt("%.1f", p.simulation_seconds).c_str());
    out << line;
  }
  out << "\nwrote " << psl << " (component " << cal.component << ")\n";
}

}  // namespace poems::report
