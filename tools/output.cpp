#include "output.h"

#include <ostream>

#include "poems/base/units.h"

namespace poems::cli {

std::string describe(const core::Cell& cell, const std::string& model) {
  const core::Evaluation& e = cell.evaluation;
  std::string text = "model " + model + " (" + std::to_string(cell.outcome.processes) + " processes) on " +
                     (e.machine.network.empty() ? std::string("command-line parameters") : e.machine.network);
  if (!cell.compute.empty())
    text += ", Wg=" + base::format_quantity({e.ns_per_work, base::kTime}) +
            (cell.processors.empty() ? std::string() : " from " + cell.processors.front());
  return text;
}

std::string describe_machine(const core::Machine& m) {
  return "LogGOPS " + core::loggops_text(m.params) + ", " + std::to_string(m.cpus) + " CPU(s) and " +
         std::to_string(m.nics) + " NIC(s) per " + (m.flat() ? "process" : "node") + ", " +
         sim::semantics_name(m.semantics) + " semantics" + (m.flat() ? "" : "; " + m.network_model->describe()) +
         (m.noisy() ? "; " + m.noise->describe() : "");
}

int report_record(const core::Cell& cell, const Context& ctx, bool quiet) {
  if (!cell.store_error.empty()) {
    ctx.err << "poems: error: " << cell.store_error << '\n';
    return kExitEvaluation;
  }
  if (quiet) return kExitOk;
  switch (cell.record) {
    case core::RunRecord::State::Stored:
      ctx.err << "stored as run " << cell.run_id << " in " << cell.store_path << '\n';
      break;
    case core::RunRecord::State::AlreadyStored:
      ctx.err << "the same run is already stored as run " << cell.run_id << " in " << cell.store_path << '\n';
      break;
    case core::RunRecord::State::Busy:
      ctx.err << "another process is evaluating the same run (" << cell.run_id << "); not stored twice\n";
      break;
    case core::RunRecord::State::NotStored: break;
  }
  return kExitOk;
}

void report_store_warnings(core::Store& store, const Context& ctx) {
  for (const std::string& w : store.take_warnings()) ctx.warn(w);
}

}  // namespace poems::cli
