// What the Sweep3D program prints (see report.h).
#include "poems/sweep3d/app/report.h"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace poems::sweep3d::app {

namespace {

std::string format(const char* spec, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, v);
  return buffer;
}

std::string g17(double v) { return std::isfinite(v) ? format("%.17g", v) : "null"; }

const char* boundary(int bc) { return bc == 1 ? "reflective" : "vacuum"; }

}  // namespace

double grind_ns(const Deck& deck, const RunResult& r) {
  const double it = std::ceil(static_cast<double>(deck.it_g) / deck.npe_i);
  const double jt = std::ceil(static_cast<double>(deck.jt_g) / deck.npe_j);
  const double cell_angles = it * jt * deck.kt * 8.0 * deck.mm * std::max(r.iterations, 1);
  return r.time * 1e9 / cell_angles;
}

double sweep_balance(const LocalTallies& t) {
  const double in = t.source + t.inflow;
  return in != 0 ? (in - t.collisions - t.outflow) / in : 0;
}

double physical_balance(const LocalTallies& t) {
  return t.external != 0 ? (t.external - t.absorption - (t.outflow - t.inflow)) / t.external : 0;
}

void print_header(std::ostream& out, const Deck& d, int ranks, const ComputationInfo& how) {
  const int it = static_cast<int>(std::ceil(static_cast<double>(d.it_g) / d.npe_i));
  const int jt = static_cast<int>(std::ceil(static_cast<double>(d.jt_g) / d.npe_j));
  out << "Sweep3D (POEMS examples/sweep3d/app) on " << ranks << " MPI process" << (ranks == 1 ? "" : "es")
      << ", processor grid " << d.npe_i << " x " << d.npe_j << "\n"
      << "  grid " << d.it_g << " x " << d.jt_g << " x " << d.kt << " cells of " << format("%g", d.dx) << " x "
      << format("%g", d.dy) << " x " << format("%g", d.dz) << ", " << d.mm << " angles per octant (isct = " << d.isct
      << ")\n"
      << "  blocks: mk = " << d.mk << " (" << d.k_blocks() << " k-blocks), mmi = " << d.mmi << " (" << d.angle_blocks()
      << " angle blocks); largest local block " << it << " x " << jt << " x " << d.kt << "\n"
      << "  boundaries: i = 0 " << boundary(d.ibc) << ", j = 0 " << boundary(d.jbc) << ", k = 0 " << boundary(d.kbc)
      << ", far faces vacuum; fixups " << (d.ifixups ? "on" : "off") << "; "
      << (d.epsi < 0 ? std::to_string(d.fixed_iterations()) + " iterations (epsi < 0)"
                     : "iterate to a flux change below " + format("%g", d.epsi))
      << "\n"
      << "  computation: "
      << (how.modeled ? "modeled, " + format("%g", how.modeled_ns_per_cell_angle) + " ns per cell-angle (spin)"
                      : std::string("diamond-difference k-block kernel"))
      << "\n\n"
      << " iteration   max relative flux change\n";
}

void print_monitor_line(std::ostream& out, int iteration, double change) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, " %9d   %.6e\n", iteration, change);
  out << buffer << std::flush;
}

void print_summary(std::ostream& out, const Deck& d, const RunResult& r, const ComputationInfo& how) {
  out << "\n";
  if (d.epsi > 0)
    out << (r.converged ? "converged" : "NOT converged") << " after " << r.iterations << " iterations (change "
        << format("%.3e", r.change) << ", epsi " << format("%g", d.epsi) << ")\n";
  if (!how.modeled) {
    const LocalTallies& t = r.totals;
    out << "particle balance (all processes):\n"
        << "  fixed source          q V            " << format("%22.12e", t.external) << "\n"
        << "  absorption            (st - ss) phi V " << format("%21.12e", t.absorption) << "\n"
        << "  net leakage           out - in       " << format("%22.12e", t.outflow - t.inflow) << "\n"
        << "  source - absorption - leakage, relative " << format("%16.3e", physical_balance(t))
        << "  (-> 0 as the iteration converges)\n"
        << "  last sweep: (s V + inflow - st phi V - outflow) / (s V + inflow) " << format("%.3e", sweep_balance(t))
        << "  (diamond difference conserves particles)\n"
        << "  scalar flux sum       phi V          " << format("%22.15e", t.flux_sum) << "\n"
        << "  flux fixups           " << format("%.0f", t.fixups) << " cell-angles\n";
  }
  const std::uint64_t per_iteration = r.iterations ? r.messages / static_cast<std::uint64_t>(r.iterations) : 0;
  out << "messages: " << r.messages << " sent (" << per_iteration << " per iteration), " << r.bytes << " bytes\n"
      << "wall time  " << format("%.6f", r.time) << " s (iteration loop, slowest process)\n"
      << "cpu time   " << format("%.6f", r.cpu_max) << " s (slowest process)\n"
      << "grind time " << format("%.3f", grind_ns(d, r))
      << " ns (wall time per cell-angle per iteration of the largest block)\n"
      << "per process (mean): compute " << format("%.6f", r.compute_mean) << " s, receive "
      << format("%.6f", r.recv_mean) << " s, send " << format("%.6f", r.send_mean) << " s, allreduce "
      << format("%.6f", r.allreduce_mean) << " s\n";
  if (!r.per_rank.empty()) {
    out << "\n rank      loop_s   compute_s      recv_s      send_s allreduce_s   messages\n";
    for (std::size_t q = 0; q < r.per_rank.size(); ++q) {
      const RankTimes& t = r.per_rank[q];
      char buffer[160];
      std::snprintf(buffer, sizeof buffer, " %4zu %11.6f %11.6f %11.6f %11.6f %11.6f %10llu\n", q, t.loop, t.compute,
                    t.recv, t.send, t.allreduce, static_cast<unsigned long long>(t.messages));
      out << buffer;
    }
  }
  if (!r.flux_line.empty()) {
    out << "\nscalar flux along i at j = " << d.jt_g / 2 << ", k = " << d.kt / 2 << ":\n";
    for (std::size_t i = 0; i < r.flux_line.size(); ++i)
      out << format("%13.6e", r.flux_line[i]) << ((i + 1) % 6 == 0 || i + 1 == r.flux_line.size() ? "\n" : " ");
  }
  out << kResultPrefix << result_json(d, r, how) << std::endl;
}

std::string result_json(const Deck& d, const RunResult& r, const ComputationInfo& how) {
  const std::uint64_t per_iteration = r.iterations ? r.messages / static_cast<std::uint64_t>(r.iterations) : 0;
  std::string s = "{";
  auto add = [&](const char* key, const std::string& value) {
    s += (s.size() > 1 ? ", \"" : "\"") + std::string(key) + "\": " + value;
  };
  auto whole = [](std::uint64_t v) { return std::to_string(v); };
  add("ranks", std::to_string(r.ranks));
  add("npe_i", std::to_string(d.npe_i));
  add("npe_j", std::to_string(d.npe_j));
  add("it_g", std::to_string(d.it_g));
  add("jt_g", std::to_string(d.jt_g));
  add("kt", std::to_string(d.kt));
  add("mk", std::to_string(d.mk));
  add("mmi", std::to_string(d.mmi));
  add("mm", std::to_string(d.mm));
  add("computation", how.modeled ? "\"modeled\"" : "\"kernel\"");
  add("iterations", std::to_string(r.iterations));
  add("converged", r.converged ? "true" : "false");
  add("change", g17(r.change));
  add("time_ns", g17(r.time * 1e9));
  add("cpu_ns", g17(r.cpu_max * 1e9));
  add("compute_ns_mean", g17(r.compute_mean * 1e9));
  add("compute_ns_max", g17(r.compute_max * 1e9));
  add("recv_ns_mean", g17(r.recv_mean * 1e9));
  add("send_ns_mean", g17(r.send_mean * 1e9));
  add("allreduce_ns_mean", g17(r.allreduce_mean * 1e9));
  add("grind_ns", g17(grind_ns(d, r)));
  add("messages", whole(r.messages));
  add("messages_per_iteration", whole(per_iteration));
  add("bytes", whole(r.bytes));
  if (!how.modeled) {
    add("flux_sum", g17(r.totals.flux_sum));
    add("balance_sweep", g17(sweep_balance(r.totals)));
    add("balance_physical", g17(physical_balance(r.totals)));
    add("fixups", g17(r.totals.fixups));
  }
  return s + "}";
}

}  // namespace poems::sweep3d::app
