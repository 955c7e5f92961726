#include "poems/report/direct_run.h"

#include <cstdio>
#include <filesystem>
#include <ostream>

#include "poems/base/units.h"
#include "poems/sim/report.h"
#include "poems/trace/timeline.h"

namespace poems::report {

void write_direct_run(const std::string& program, const direct::DirectOptions& options,
                      const core::DirectMachine& machine, const direct::DirectResult& r, const std::string& format,
                      std::size_t max_ranks_listed, std::ostream& out) {
  if (format == "json") {
    sim::write_json(out, r.sim, max_ranks_listed);
    return;
  }
  out << "program " << std::filesystem::path(program).filename().string() << " (" << options.ranks << " ranks) on "
      << machine.description << ", compute "
      << (options.compute == direct::ComputeMode::Model
              ? std::string("from the processor model")
              : "measured x" + base::format_quantity({options.compute_scale, base::kDimensionless}))
      << '\n';
  out << "LogGOPS " << core::loggops_text(options.sim.params)
      << (options.receive_overhead_at_wait
              ? ", a receive's o paid in the call that completes it (--receive-overhead wait)"
              : "")
      << '\n';
  if (options.sim.network && !options.sim.network->flat())
    out << "machine: " << options.sim.network->describe() << '\n';
  sim::write_table(out, r.sim, max_ranks_listed);
  char line[320];
  std::snprintf(line, sizeof line,
                "direct execution: %.3f s on the host, %llu MPI calls, %llu thread switches, %llu completions early, "
                "measured CPU %.3f s, peak RSS %.1f MiB, all processes %.1f MiB\n",
                r.host_seconds, static_cast<unsigned long long>(r.mpi_calls),
                static_cast<unsigned long long>(r.switches), static_cast<unsigned long long>(r.early_completions),
                r.measured_cpu_seconds, static_cast<double>(r.peak_rss_bytes) / 1048576.0,
                static_cast<double>(r.peak_rss_all_bytes) / 1048576.0);
  out << line;
}

std::string timeline_written(const std::string& path, std::uint32_t ranks) {
  return "wrote " + path + (trace::is_otf2_name(path) ? " (OTF2, " : " (Chrome trace, ") + std::to_string(ranks) +
         " ranks)\n";
}

std::string left_behind(const direct::DirectResult& r) {
  if (r.left_behind == 0) return "";
  std::string names;
  for (const std::string& n : r.left_behind_names) names += (names.empty() ? "" : ", ") + n;
  return "the ranks left " + std::to_string(r.left_behind) + " process" + (r.left_behind == 1 ? "" : "es") +
         " running (" + names + (r.left_behind > r.left_behind_names.size() ? ", ..." : "") +
         "); killed when the run ended";
}

}  // namespace poems::report
