#include "poems/report/trace_archive.h"

#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

#include "poems/report/text_table.h"

namespace poems::report {

namespace {

std::string seconds(taskgraph::Picoseconds ps) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6f s", static_cast<double>(ps) / 1e12);
  return buffer;
}

}  // namespace

void write_trace_summary(const trace::Trace& t, const core::TraceSummary& summary, const std::string& format,
                         std::ostream& out) {
  const auto& per_region = summary.calls_by_function;
  const std::uint64_t bytes = summary.message_bytes, collectives = summary.collective_calls;
  const std::uint64_t size = summary.archive_bytes, calls = summary.calls;
  if (format == "json") {
    nlohmann::json j = {{"archive", t.path},
                        {"creator", t.creator},
                        {"ranks", t.ranks.size()},
                        {"events", t.events},
                        {"calls", calls},
                        {"calls_by_function", per_region},
                        {"messages", t.messages.size()},
                        {"message_bytes", bytes},
                        {"collective_calls", collectives},
                        {"communicators", t.comms.size()},
                        {"compute_ns", static_cast<double>(t.compute()) / 1000.0},
                        {"measured_ns", static_cast<double>(t.measured()) / 1000.0},
                        {"archive_bytes", size},
                        {"bytes_per_call", calls ? static_cast<double>(size) / static_cast<double>(calls) : 0.0},
                        {"warnings", t.warnings}};
    out << j.dump(2) << '\n';
    return;
  }
  TextTable table{{"archive", t.path},
                  {"recorded by", t.creator.empty() ? "(unknown)" : t.creator},
                  {"ranks", std::to_string(t.ranks.size())},
                  {"events", with_commas(t.events)},
                  {"MPI calls", with_commas(calls)},
                  {"messages", with_commas(t.messages.size()) + " (" + with_commas(bytes) + " bytes)"},
                  {"collective calls", with_commas(collectives)},
                  {"communicators", std::to_string(t.comms.size())},
                  {"computation", seconds(t.compute()) + " (all ranks)"},
                  {"run", seconds(t.measured()) + " (first to last event)"},
                  {"archive size", with_commas(size) + " bytes" +
                                       (calls ? " (" + std::to_string(size / calls) + " per MPI call)" : "")}};
  print_table(table, out);
  out << "calls by function:\n";
  TextTable by;
  for (const auto& [name, n] : per_region) by.push_back({"  " + name, with_commas(n)});
  print_table(by, out);
}

std::string recorded_trace_line(const core::RecordedTrace& rec) {
  const trace::Trace& t = rec.trace;
  const std::uint64_t size = rec.archive_bytes, calls = rec.calls;
  char line[400];
  std::snprintf(line, sizeof line,
                "poems trace: %zu processes recorded in %s: %s MPI calls, %s messages, %s bytes (%.1f bytes per "
                "call); run %.3f s\n",
                t.ranks.size(), rec.anchor.c_str(), with_commas(calls).c_str(), with_commas(t.messages.size()).c_str(),
                with_commas(size).c_str(), calls ? static_cast<double>(size) / static_cast<double>(calls) : 0.0,
                static_cast<double>(t.measured()) / 1e12);
  return line;
}

}  // namespace poems::report
