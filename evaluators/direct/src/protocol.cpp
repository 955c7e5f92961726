#include "poems/direct/protocol.h"
#include "poems/components/network.h"
#include "poems/components/noise.h"

#include <stdexcept>
#include <string>

namespace poems::direct {

namespace {

using nlohmann::json;
using taskgraph::Picoseconds;

template <typename T>
T field(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) throw std::invalid_argument(std::string("direct-execution JSON: missing field '") + name + "'");
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(std::string("direct-execution JSON: field '") + name + "' has the wrong type");
  }
}

template <typename T>
T field_or(const json& j, const char* name, T fallback) {
  return j.contains(name) ? field<T>(j, name) : fallback;
}

}  // namespace

const char* handover_name(Handover handover) {
  switch (handover) {
    case Handover::OneCpu: return "one-cpu";
    case Handover::Spin: return "spin";
    case Handover::Sleep: return "sleep";
  }
  return "one-cpu";
}

std::optional<Handover> parse_handover(const std::string& name) {
  for (Handover h : {Handover::OneCpu, Handover::Spin, Handover::Sleep})
    if (name == handover_name(h)) return h;
  return std::nullopt;
}

json options_to_json(const DirectOptions& o) {
  const sim::LogGOPS& p = o.sim.params;
  json j = {{"ranks", o.ranks},
            {"isolation", o.isolation == Isolation::Threads ? "threads" : "processes"},
            {"ranks_per_node", o.ranks_per_node},
            {"shared_bytes", o.shared_bytes},
            {"epoch_s", o.epoch_seconds},
            {"L_ps", p.L},
            {"o_ps", p.o},
            {"g_ps", p.g},
            {"G_fs_per_byte", p.G},
            {"O_fs_per_byte", p.O},
            {"S_bytes", p.S},
            {"rendezvous_handshake", o.sim.rendezvous_handshake},
            {"semantics", sim::semantics_name(o.sim.semantics)},
            {"cpus", o.sim.cpus},
            {"nics", o.sim.nics},
            {"compute", o.compute == ComputeMode::Model ? "model" : "measured"},
            {"compute_scale", o.compute_scale},
            {"poll_cost_ps", o.poll_cost},
            {"stack_bytes", o.stack_bytes},
            {"max_stuck_listed", o.max_stuck_listed}};
  json algorithms = json::object();
  for (const auto& [op, a] : o.algorithms)
    algorithms[taskgraph::collective_op_name(op)] = taskgraph::collective_algorithm_name(a);
  j["algorithms"] = algorithms;
  if (o.progress) j["progress"] = true;  // only when asked: stored keys stay as they were
  if (o.handover != Handover::OneCpu) j["handover"] = handover_name(o.handover);
  if (o.receive_overhead_at_wait) j["receive_overhead"] = "wait";  // only when set: stored keys stay as they were
  if (!o.early_receive) j["early_receive"] = false;                // the same
  if (o.host_cores != 1) j["host_cores"] = o.host_cores;           // the same
  if (o.sim.network && !o.sim.network->flat()) j["network"] = components::network_key_json(o.sim.network->spec());
  if (o.sim.noise && o.sim.noise->active()) j["noise"] = components::noise_spec_json(o.sim.noise->spec());
  if (!o.timeline.empty()) j["timeline"] = o.timeline;
  if (o.processor) {
    j["processor"] = {{"component", o.processor->component},
                      {"evaluator", o.processor->evaluator},
                      {"numbers", o.processor->numbers},
                      {"strings", o.processor->strings}};
  }
  return j;
}

DirectOptions options_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("direct-execution options: not a JSON object");
  DirectOptions o;
  o.ranks = field<std::uint32_t>(j, "ranks");
  const std::string isolation = field_or<std::string>(j, "isolation", "processes");
  if (isolation != "processes" && isolation != "threads")
    throw std::invalid_argument("direct-execution options: isolation must be 'processes' or 'threads', not '" +
                                isolation + "'");
  o.isolation = isolation == "threads" ? Isolation::Threads : Isolation::Processes;
  const std::string handover = field_or<std::string>(j, "handover", "one-cpu");
  const auto parsed_handover = parse_handover(handover);
  if (!parsed_handover)
    throw std::invalid_argument("direct-execution options: handover must be 'one-cpu', 'spin' or 'sleep', not '" +
                                handover + "'");
  o.handover = *parsed_handover;
  o.ranks_per_node = field_or<std::uint32_t>(j, "ranks_per_node", 1);
  if (o.ranks_per_node == 0) throw std::invalid_argument("direct-execution options: ranks_per_node must be >= 1");
  o.shared_bytes = field_or<std::size_t>(j, "shared_bytes", 0);
  o.epoch_seconds = field_or<std::int64_t>(j, "epoch_s", -1);
  sim::LogGOPS& p = o.sim.params;
  p.L = field_or<Picoseconds>(j, "L_ps", p.L);
  p.o = field_or<Picoseconds>(j, "o_ps", p.o);
  p.g = field_or<Picoseconds>(j, "g_ps", p.g);
  p.G = field_or<std::uint64_t>(j, "G_fs_per_byte", p.G);
  p.O = field_or<std::uint64_t>(j, "O_fs_per_byte", p.O);
  p.S = field_or<std::uint64_t>(j, "S_bytes", p.S);
  o.sim.rendezvous_handshake = field_or<bool>(j, "rendezvous_handshake", false);
  const std::string semantics = field_or<std::string>(j, "semantics", "matched");
  const auto parsed = sim::parse_semantics(semantics);
  if (!parsed)
    throw std::invalid_argument("direct-execution options: semantics must be 'matched' or 'loggopsim', not '" +
                                semantics + "'");
  o.sim.semantics = *parsed;
  o.sim.cpus = field_or<std::uint32_t>(j, "cpus", 1);
  o.sim.nics = field_or<std::uint32_t>(j, "nics", 1);
  if (j.contains("network") && !j.at("network").is_null())
    o.sim.network = std::make_shared<const components::Network>(components::network_spec_from_json(j.at("network")));
  if (j.contains("noise") && !j.at("noise").is_null())
    o.sim.noise = std::make_shared<const components::Noise>(components::noise_spec_from_json(j.at("noise")));
  const std::string compute = field_or<std::string>(j, "compute", "measured");
  if (compute != "measured" && compute != "model")
    throw std::invalid_argument("direct-execution options: compute must be 'measured' or 'model', not '" + compute +
                                "'");
  o.compute = compute == "model" ? ComputeMode::Model : ComputeMode::Measured;
  o.compute_scale = field_or<double>(j, "compute_scale", 1.0);
  o.poll_cost = field_or<Picoseconds>(j, "poll_cost_ps", o.poll_cost);
  const std::string receive_overhead = field_or<std::string>(j, "receive_overhead", "match");
  if (receive_overhead != "match" && receive_overhead != "wait")
    throw std::invalid_argument("direct-execution options: receive_overhead must be 'match' or 'wait', not '" +
                                receive_overhead + "'");
  o.receive_overhead_at_wait = receive_overhead == "wait";
  o.early_receive = field_or<bool>(j, "early_receive", true);
  o.host_cores = field_or<std::uint32_t>(j, "host_cores", 1);
  if (o.host_cores < 1 || o.host_cores > kMaxHostCores)
    throw std::invalid_argument("direct-execution options: host_cores must be in 1.." + std::to_string(kMaxHostCores));
  o.stack_bytes = field_or<std::size_t>(j, "stack_bytes", o.stack_bytes);
  o.max_stuck_listed = field_or<std::size_t>(j, "max_stuck_listed", o.max_stuck_listed);
  o.progress = field_or<bool>(j, "progress", false);
  o.timeline = field_or<std::string>(j, "timeline", "");
  if (j.contains("algorithms")) {
    for (const auto& [name, value] : j.at("algorithms").items()) {
      auto op = taskgraph::parse_collective_op(name);
      auto a = value.is_string() ? taskgraph::parse_collective_algorithm(value.get<std::string>()) : std::nullopt;
      if (!op || !a)
        throw std::invalid_argument("direct-execution options: bad collective algorithm for '" + name + "'");
      o.algorithms[*op] = *a;
    }
  }
  if (j.contains("processor")) {
    const json& pj = j.at("processor");
    processor::ProcessorSpec spec;
    spec.component = field<std::string>(pj, "component");
    spec.evaluator = field<std::string>(pj, "evaluator");
    spec.numbers = field_or<std::map<std::string, double>>(pj, "numbers", {});
    spec.strings = field_or<std::map<std::string, std::string>>(pj, "strings", {});
    o.processor = spec;
  }
  return o;
}

json result_to_json(const DirectResult& r) {
  const sim::SimulationResult& s = r.sim;
  json ranks = json::array();
  for (const sim::RankResult& rr : s.per_rank) ranks.push_back({rr.finish, rr.compute, rr.overhead, rr.wait});
  json stuck = json::array();
  for (const sim::StuckRank& st : s.stuck) stuck.push_back({{"rank", st.rank}, {"waits", st.waits}});
  return {{"ranks", s.ranks},
          {"per_rank", ranks},  // [finish, compute, overhead, wait] in ps
          {"max_finish_ps", s.max_finish},
          {"max_finish_rank", s.max_finish_rank},
          {"total_compute_ps", s.total_compute},
          {"total_overhead_ps", s.total_overhead},
          {"total_wait_ps", s.total_wait},
          {"events", s.events},
          {"operations", s.operations},
          {"messages", s.messages},
          {"peak_queue", s.peak_queue},
          {"peak_window_ops", s.peak_window_ops},
          {"simulation_wall_seconds", s.wall_seconds},
          {"completed", s.completed},
          {"read_lazily", s.read_lazily},
          {"stuck", stuck},
          {"stuck_total", s.stuck_total},
          {"exit_codes", r.exit_codes},
          {"error", r.error},
          {"abort_code", r.abort_code},
          {"host_seconds", r.host_seconds},
          {"measured_cpu_seconds", r.measured_cpu_seconds},
          {"switches", r.switches},
          {"early_completions", r.early_completions},
          {"mpi_calls", r.mpi_calls},
          {"peak_rss_bytes", r.peak_rss_bytes},
          {"peak_rss_all_bytes", r.peak_rss_all_bytes},
          {"timeline_error", r.timeline_error},
          {"left_behind", r.left_behind},
          {"left_behind_names", r.left_behind_names}};
}

DirectResult result_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("direct-execution result: not a JSON object");
  DirectResult r;
  sim::SimulationResult& s = r.sim;
  s.ranks = field<std::uint32_t>(j, "ranks");
  for (const json& rr : field<json>(j, "per_rank")) {
    if (!rr.is_array() || rr.size() != 4) throw std::invalid_argument("direct-execution result: bad per_rank entry");
    s.per_rank.push_back(
        {rr[0].get<Picoseconds>(), rr[1].get<Picoseconds>(), rr[2].get<Picoseconds>(), rr[3].get<Picoseconds>()});
  }
  s.max_finish = field<Picoseconds>(j, "max_finish_ps");
  s.max_finish_rank = field<std::uint32_t>(j, "max_finish_rank");
  s.total_compute = field<Picoseconds>(j, "total_compute_ps");
  s.total_overhead = field<Picoseconds>(j, "total_overhead_ps");
  s.total_wait = field<Picoseconds>(j, "total_wait_ps");
  s.events = field<std::uint64_t>(j, "events");
  s.operations = field<std::uint64_t>(j, "operations");
  s.messages = field<std::uint64_t>(j, "messages");
  s.peak_queue = field<std::uint64_t>(j, "peak_queue");
  s.peak_window_ops = field<std::uint64_t>(j, "peak_window_ops");
  s.wall_seconds = field<double>(j, "simulation_wall_seconds");
  s.completed = field<bool>(j, "completed");
  s.read_lazily = field_or<bool>(j, "read_lazily", false);
  for (const json& st : field<json>(j, "stuck"))
    s.stuck.push_back({field<std::uint32_t>(st, "rank"), field<std::vector<std::string>>(st, "waits")});
  s.stuck_total = field<std::uint64_t>(j, "stuck_total");
  r.exit_codes = field<std::vector<int>>(j, "exit_codes");
  r.error = field<std::string>(j, "error");
  r.abort_code = field<int>(j, "abort_code");
  r.host_seconds = field<double>(j, "host_seconds");
  r.measured_cpu_seconds = field<double>(j, "measured_cpu_seconds");
  r.switches = field<std::uint64_t>(j, "switches");
  r.early_completions = field_or<std::uint64_t>(j, "early_completions", 0);
  r.mpi_calls = field<std::uint64_t>(j, "mpi_calls");
  r.peak_rss_bytes = field<std::size_t>(j, "peak_rss_bytes");
  r.peak_rss_all_bytes = field_or<std::size_t>(j, "peak_rss_all_bytes", r.peak_rss_bytes);
  r.timeline_error = field_or<std::string>(j, "timeline_error", "");
  r.left_behind = field_or<std::uint32_t>(j, "left_behind", 0);
  r.left_behind_names = field_or<std::vector<std::string>>(j, "left_behind_names", {});
  return r;
}

}  // namespace poems::direct
