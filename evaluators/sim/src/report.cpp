#include "poems/sim/report.h"

#include <cstdio>
#include <ostream>
#include <vector>

namespace poems::sim {

namespace {

// Ranks to list: the first `cap`, plus the slowest if it is not among them.
std::vector<std::uint32_t> listed_ranks(const SimulationResult& r, std::size_t cap) {
  std::vector<std::uint32_t> out;
  if (r.per_rank.empty()) return out;
  for (std::uint32_t i = 0; i < r.per_rank.size() && out.size() < cap; ++i) out.push_back(i);
  if (out.size() < r.per_rank.size() && (out.empty() || out.back() < r.max_finish_rank))
    out.push_back(r.max_finish_rank);
  return out;
}

// How the ranks' operations were read (SimulationResult::read_lazily).
const char* reading(const SimulationResult& r) {
  if (r.lazy_attempt_abandoned) return "in full after a lazy attempt";
  return r.read_lazily ? "lazily" : "in full";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

void write_table(std::ostream& out, const SimulationResult& r, std::size_t max_ranks_listed) {
  char line[256];
  out << "processes " << r.ranks << ", operations " << r.operations << ", messages " << r.messages << "\n";
  std::vector<std::uint32_t> ranks = listed_ranks(r, max_ranks_listed);
  if (!ranks.empty()) {
    std::snprintf(line, sizeof line, "%10s %16s %16s %16s %16s\n", "rank", "finish_ns", "compute_ns", "overhead_ns",
                  "wait_ns");
    out << line;
    for (std::uint32_t i : ranks) {
      const RankResult& rr = r.per_rank[i];
      std::snprintf(line, sizeof line, "%10u %16s %16s %16s %16s\n", i, ps_to_ns_text(rr.finish).c_str(),
                    ps_to_ns_text(rr.compute).c_str(), ps_to_ns_text(rr.overhead).c_str(),
                    ps_to_ns_text(rr.wait).c_str());
      out << line;
    }
    if (ranks.size() < r.per_rank.size()) out << "(" << r.per_rank.size() - ranks.size() << " more ranks not listed)\n";
  }
  out << "finish " << ps_to_ns_text(r.max_finish) << " ns (rank " << r.max_finish_rank << ")\n";
  out << "totals: compute " << ps_to_ns_text(r.total_compute) << " ns, overhead " << ps_to_ns_text(r.total_overhead)
      << " ns, wait " << ps_to_ns_text(r.total_wait) << " ns\n";
  std::snprintf(line, sizeof line, "events %llu in %.3f s (%.3g events/s), ranks read %s\n",
                static_cast<unsigned long long>(r.events), r.wall_seconds, r.events_per_second(), reading(r));
  out << line;
  if (r.network) {
    const NetworkTraffic& t = *r.network;
    out << "network: " << t.intra_node_messages << " messages (" << t.intra_node_bytes << " B) within nodes, "
        << t.inter_node_messages << " (" << t.inter_node_bytes << " B) between nodes over " << t.hops << " hops";
    for (std::size_t k = 0; k < t.bytes_by_link_class.size(); ++k)
      out << (k ? ", " : "; bytes x links: ") << t.bytes_by_link_class[k].first << " "
          << t.bytes_by_link_class[k].second;
    if (t.contention)
      out << "; max-min contention: " << t.flows << " flows, at most " << t.peak_flows << " at once, " << t.flows_rated
          << " flow rates computed";
    out << "\n";
  }
}

void write_json(std::ostream& out, const SimulationResult& r, std::size_t max_ranks_listed) {
  char num[64];
  std::snprintf(num, sizeof num, "%.6f", r.wall_seconds);
  out << "{\"finish_ns\": " << ps_to_ns_text(r.max_finish) << ", \"finish_rank\": " << r.max_finish_rank
      << ", \"processes\": " << r.ranks << ", \"events\": " << r.events << ", \"operations\": " << r.operations
      << ", \"messages\": " << r.messages << ", \"wall_seconds\": " << num;
  std::snprintf(num, sizeof num, "%.0f", r.events_per_second());
  out << ", \"events_per_second\": " << num;
  std::snprintf(num, sizeof num, "%.6f", r.cpu_seconds);
  out << ", \"cpu_seconds\": " << num << ", \"requeued\": " << r.requeued
      << ", \"compute_ns\": " << ps_to_ns_text(r.total_compute)
      << ", \"overhead_ns\": " << ps_to_ns_text(r.total_overhead) << ", \"wait_ns\": " << ps_to_ns_text(r.total_wait)
      << ", \"completed\": " << (r.completed ? "true" : "false") << ", \"reading\": \"" << reading(r)
      << "\",\n \"ranks\": [";
  std::vector<std::uint32_t> ranks = listed_ranks(r, max_ranks_listed);
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const RankResult& rr = r.per_rank[ranks[k]];
    out << (k ? ",\n  " : "\n  ") << "{\"rank\": " << ranks[k] << ", \"finish_ns\": " << ps_to_ns_text(rr.finish)
        << ", \"compute_ns\": " << ps_to_ns_text(rr.compute) << ", \"overhead_ns\": " << ps_to_ns_text(rr.overhead)
        << ", \"wait_ns\": " << ps_to_ns_text(rr.wait) << "}";
  }
  out << "],\n \"ranks_listed\": " << ranks.size() << ", \"stuck_ranks\": " << r.stuck_total << ", \"stuck\": [";
  for (std::size_t k = 0; k < r.stuck.size(); ++k) {
    out << (k ? ", " : "") << "{\"rank\": " << r.stuck[k].rank << ", \"waits\": [";
    for (std::size_t w = 0; w < r.stuck[k].waits.size(); ++w)
      out << (w ? ", " : "") << json_string(r.stuck[k].waits[w]);
    out << "]}";
  }
  out << "]";
  if (r.network) {
    const NetworkTraffic& t = *r.network;
    out << ",\n \"network\": {\"intra_node_messages\": " << t.intra_node_messages
        << ", \"intra_node_bytes\": " << t.intra_node_bytes << ", \"inter_node_messages\": " << t.inter_node_messages
        << ", \"inter_node_bytes\": " << t.inter_node_bytes << ", \"hops\": " << t.hops
        << ", \"bytes_by_link_class\": {";
    for (std::size_t k = 0; k < t.bytes_by_link_class.size(); ++k)
      out << (k ? ", " : "") << json_string(t.bytes_by_link_class[k].first) << ": " << t.bytes_by_link_class[k].second;
    out << "}";
    if (t.contention)
      out << ", \"contention\": \"max-min\", \"flows\": " << t.flows << ", \"peak_flows\": " << t.peak_flows
          << ", \"flows_rated\": " << t.flows_rated;
    out << "}";
  }
  out << "}\n";
}

void write_stuck_report(std::ostream& out, const SimulationResult& r) {
  if (r.completed) return;
  out << "simulation did not finish: " << r.stuck_total << " rank(s) deadlocked or left messages unmatched\n";
  for (const StuckRank& s : r.stuck)
    for (const std::string& w : s.waits) out << "  rank " << s.rank << ": " << w << "\n";
  if (r.stuck_total > r.stuck.size()) out << "  (" << r.stuck_total - r.stuck.size() << " more ranks not listed)\n";
}

}  // namespace poems::sim
