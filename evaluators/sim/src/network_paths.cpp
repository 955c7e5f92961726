// The simulator on a machine that is not flat (docs/network.md): ranks on
// nodes, a node's cores and NICs shared by its ranks, shared-memory
// parameters between ranks of one node, and the path a message takes between
// nodes. Out of line: a flat machine never calls these (Engine::net_).
#include <algorithm>

#include "engine.h"

namespace poems::sim::detail {

template <bool L>
std::size_t Engine<L>::setup_network(std::size_t first) {
  const std::uint32_t programs =
      options_.companions_from != 0 && options_.companions_from < nranks_ ? options_.companions_from : nranks_;
  try {
    placement_ = net_->place(programs);
  } catch (const components::NetworkError& e) {
    throw SimulationLimitError(e.what(), 0, e.what());  // the machine cannot hold the run: an input error
  }
  // Companions: on their rank's node, counted for no node's ranks.
  placement_.node_of.resize(nranks_);
  placement_.local.resize(nranks_);
  for (std::uint32_t r = programs; r < nranks_; ++r) {
    placement_.node_of[r] = placement_.node_of[(r - programs) % programs];
    placement_.local[r] = 0;
  }
  intra_ = net_->spec().intra.value_or(p_);
  self_copy_ = net_->spec().copy_per_byte != 0;
  self_ = LogGOPS{0, 0, 0, 0, net_->spec().copy_per_byte / 2, intra_.S};
  flows_ = net_->spec().contention == components::Contention::MaxMin;
  intra_sync_ = components::rendezvous_sync(intra_, options_.rendezvous_handshake);
  net_regimes_ = net_->spec().regimes;
  intra_regimes_ = net_->spec().intra_regimes;
  // Shared memory without parameters of its own is the network, regimes included.
  if (!net_->spec().intra && intra_regimes_.empty()) intra_regimes_ = net_regimes_;
  // The protocol's limit stays the machine's (intra_ is the network's without shared-memory parameters).
  for (components::SizeRegime& r : net_regimes_) r.params.S = p_.S;
  for (components::SizeRegime& r : intra_regimes_) r.params.S = intra_.S;
  regimes_ = !net_regimes_.empty() || !intra_regimes_.empty();
  const std::uint32_t cpus = options_.cpus, nics = options_.nics;
  std::vector<std::size_t> node_first(placement_.nodes), node_cores(placement_.nodes);
  std::size_t w = first;
  for (std::uint32_t n = 0; n < placement_.nodes; ++n) {
    if (placement_.ranks_on[n] == 0) continue;  // a node no rank runs on has no clocks (a large torus, few ranks)
    const std::uint32_t cores = net_->cores(placement_.ranks_on[n], cpus);
    if (std::uint64_t{cores} < std::uint64_t{placement_.ranks_on[n]} * cpus) shared_cores_ = true;
    node_first[n] = w;
    node_cores[n] = cores;
    w += (std::size_t{cores} + 2 * std::size_t{nics} + 7) / 8 * 8;  // a node's clocks on their own lines
  }
  nic_word_.resize(nranks_);
  for (std::uint32_t r = 0; r < nranks_; ++r) {
    const std::uint32_t n = placement_.node_of[r];
    nic_word_[r] = node_first[n] + node_cores[n];
  }
  if (shared_cores_) {
    // A rank's CPUs run on its node's cores in turn (PUPPET's wrap of
    // processes onto processors): the k-th CPU of the node's ranks on core k mod cores.
    core_word_.resize(std::size_t{nranks_} * cpus);
    for (std::uint32_t r = 0; r < nranks_; ++r) {
      const std::uint32_t n = placement_.node_of[r];
      for (std::uint32_t c = 0; c < cpus; ++c)
        core_word_[std::size_t{r} * cpus + c] =
            r >= programs ? std::size_t{r} * clock_stride_ + kTotalsWords + c  // a companion's own core
                          : node_first[n] + (std::size_t{placement_.local[r]} * cpus + c) % node_cores[n];
    }
    // Processor sharing needs resource queuing; the critical path keeps the clocks.
    if constexpr (!L)
      if (net_->spec().time_sharing == components::TimeSharing::ProcessorSharing && queuing_) {
        processor_sharing_ = true;
        setup_processor_sharing(core_word_);
      }
  }
  return w - first;
}

template <bool L>
Picoseconds Engine<L>::pair_sync(std::uint32_t a, std::uint32_t b, std::uint64_t bytes) const {
  if (self_message(a, b)) return 0;  // the copy waits for nothing but the match
  if (same_node(a, b))
    return regimes_ ? components::rendezvous_sync(msg_params(true, bytes), options_.rendezvous_handshake) : intra_sync_;
  // The request (or the request and its acknowledgement) crosses the path.
  const LogGOPS& p = msg_params(false, bytes);
  const Picoseconds path = net_->path_delay(placement_.node_of[a], placement_.node_of[b], 0, p_.G);
  return options_.rendezvous_handshake ? 2 * (p.L + path + p.o) : p.L + path;
}

template <bool L>
Picoseconds Engine<L>::net_send(std::uint32_t r, std::uint32_t pos, Picoseconds& done) {
  RankState& rs = ranks_[r];
  Slot& s = rs.slots[pos];
  const auto dst = static_cast<std::uint32_t>(s.peer);
  const bool local = same_node(r, dst);
  const LogGOPS& p = route_params(r, dst, s.amount);
  Picoseconds& nic = local ? nic_send_free(r, s.nic) : node_nic_send_free(r, s.nic);
  Picoseconds t0 = now_;
  if (queuing_) {
    t0 = std::max({now_, cpu_free(r, s.cpu), nic});
  } else if (s.done > rs.base) {
    // Critical path: the previous send this one follows holds the same NIC
    // (or the same shared-memory channel) for its sync + g + (s-1)G.
    const Slot& before = rs.slots[s.done - 1 - rs.base];
    const auto before_dst = static_cast<std::uint32_t>(before.peer);
    if (before.nic == s.nic && same_node(r, before_dst) == local) {
      const LogGOPS& bp = pair_params(r, before_dst, before.amount);
      const Picoseconds before_nic = flows_ && !local ? bp.g : bp.send_nic(before.amount);  // bytes in its flow
      t0 = std::max(now_, before.start + (bp.rendezvous(before.amount) ? pair_sync(r, before_dst, before.amount) : 0) +
                              before_nic);
    }
  }
  const Picoseconds sync = p.rendezvous(s.amount) ? pair_sync(r, dst, s.amount) : 0;
  const Picoseconds cpu_busy = p.send_cpu(s.amount);
  done = t0 + sync + cpu_busy;
  cpu_free(r, s.cpu) = done;
  word(r, kOverhead) += cpu_busy;
  ++messages_;
  count_traffic(r, dst, s.amount, local);
  if (flows_ && !local) {
    // The NIC keeps its per-message gap; the bytes share the route as a flow
    // once the latency is paid.
    nic = t0 + sync + p.g;
    start_flow(r, pos, dst, t0 + sync + p.o, p.L);
  } else {
    nic = t0 + sync + p.send_nic(s.amount);
    const Picoseconds path =
        local ? 0 : net_->path_delay(placement_.node_of[r], placement_.node_of[dst], s.amount, p.G);
    queue_.push(
        Event{t0 + sync + p.o + p.L + path, std::uint64_t{r} << 32 | static_cast<std::uint32_t>(rs.base + pos)});
  }
  if (options_.record_timeline) {
    if (sync) timeline_.push_back(Span{r, s.cpu, Span::Sync, s.peer, t0, t0 + sync, s.amount, s.node});
    timeline_.push_back(Span{r, s.cpu, Span::Send, s.peer, t0 + sync, done, s.amount, s.node});
  }
  return t0;
}

template <bool L>
Picoseconds Engine<L>::net_receive(std::uint32_t r, std::uint32_t recv_pos, std::uint64_t bytes, std::int32_t src,
                                   std::uint64_t send_op, Picoseconds at) {
  RankState& rs = ranks_[r];
  const Slot& s = rs.slots[recv_pos];
  const bool deferred = s.flags & kOverheadDeferred;  // the CPU pays o in the wait (a Calc)
  if (processor_sharing_ && !deferred && shared_core(r, s.cpu) != kNone) {
    // Processed when the rank's CPU is free, as a job of its shared core.
    const std::uint32_t job = new_cpu_job();
    CpuJob& j = cpu_jobs_[job];
    j.task = CpuTask::kReceive;
    j.rank = r;
    j.cpu = s.cpu;
    j.op = rs.base + recv_pos;
    j.send_op = send_op;
    j.bytes = bytes;
    j.src = src;
    j.begin = at;
    const std::size_t rc = std::size_t{r} * options_.cpus + s.cpu;
    if (cpu_busy_[rc] != kNone || cpu_head_[rc] != kNone)
      enqueue_cpu(rc, job);
    else
      begin_receive(job);
    return kDeferred;
  }
  const bool local = same_node(r, static_cast<std::uint32_t>(src));
  const LogGOPS& p = route_params(static_cast<std::uint32_t>(src), r, bytes);
  Picoseconds& cpu = cpu_free(r, s.cpu);
  Picoseconds& nic = local ? nic_recv_free(r, s.nic) : node_nic_recv_free(r, s.nic);
  const Picoseconds t0 = queuing_ ? std::max({at, deferred ? at : cpu, nic}) : at;
  // A flow's bytes are in when it ends: the receive pays o + (s-1)O and the NIC its gap.
  const bool streamed = flows_ && !local;
  // Deferred: in once its bytes are (a flow's already are); the CPU pays o + (s-1)O in the wait.
  const Picoseconds busy = deferred   ? (streamed ? 0 : LogGOPS::per_byte(bytes, p.G))
                           : streamed ? p.o + LogGOPS::per_byte(bytes, p.O)
                                      : p.recv_cpu(bytes);
  if (!deferred) cpu = t0 + busy;
  nic = t0 + (streamed ? p.g : p.recv_nic(bytes));
  if (!deferred) word(r, kOverhead) += busy;
  if (options_.record_timeline && !deferred)
    timeline_.push_back(Span{r, s.cpu, Span::Recv, src, t0, t0 + busy, bytes, s.node});
  complete(r, recv_pos, t0 + busy);
  return t0;
}

template <bool L>
void Engine<L>::count_traffic(std::uint32_t a, std::uint32_t b, std::uint64_t bytes, bool local) {
  if (local) {
    ++traffic_.intra_node_messages;
    traffic_.intra_node_bytes += bytes;
    return;
  }
  ++traffic_.inter_node_messages;
  traffic_.inter_node_bytes += bytes;
  auto add = [&](std::string_view link_class, std::uint64_t n) {
    for (auto& [name, total] : class_bytes_)
      if (name == link_class) {
        total += n;
        return;
      }
    class_bytes_.emplace_back(link_class, n);
  };
  if (net_->complete()) {  // one direct link
    ++traffic_.hops;
    add("direct", bytes);
    return;
  }
  const components::Topology& topology = net_->topology();
  topology.route(placement_.node_of[a], placement_.node_of[b], route_);
  traffic_.hops += route_.size();
  for (std::uint32_t link : route_) add(topology.link_class(link), bytes);
}

template <bool L>
std::uint32_t Engine<L>::flow_resource(std::uint64_t key, FemtosecondsPerByte per_byte) {
  auto [it, added] = resource_of_.try_emplace(key, 0);
  if (added) it->second = sharing_.add_resource(1000.0 / static_cast<double>(per_byte));  // bytes per ps
  return it->second;
}

template <bool L>
void Engine<L>::start_flow(std::uint32_t r, std::uint32_t pos, std::uint32_t dst, Picoseconds leaves,
                           Picoseconds latency) {
  const Slot& s = ranks_[r].slots[pos];
  const std::uint32_t a = placement_.node_of[r], b = placement_.node_of[dst];
  Picoseconds at = leaves + latency + net_->flow_latency(a, b, s.amount);
  const std::uint64_t nic = s.nic;
  std::uint32_t m;
  if (!free_flow_messages_.empty()) {
    m = free_flow_messages_.back();
    free_flow_messages_.pop_back();
  } else {
    m = static_cast<std::uint32_t>(flow_messages_.size());
    flow_messages_.emplace_back();
  }
  FlowMessage& f = flow_messages_[m];
  f.sender = r;
  f.op = ranks_[r].base + pos;
  f.bytes = s.amount > 1 ? static_cast<double>(s.amount - 1) : 0.0;  // LogGOPS's (s-1)G, shared
  f.route.clear();
  // Resource keys: bits 62-63 the kind (0 NIC, 1 link direction, 2 backbone).
  const std::uint64_t nics = options_.nics;
  const FemtosecondsPerByte nic_g = net_->spec().nic_per_byte.value_or(p_.G);
  FemtosecondsPerByte slowest = nic_g;  // the rate of the flow alone
  if (nic_g) f.route.push_back(flow_resource((std::uint64_t{a} * nics + nic) << 1, nic_g));
  if (!net_->complete()) {
    const components::Topology& topology = net_->topology();
    topology.route_directed(a, b, route_);
    for (std::uint32_t link : route_)
      if (const FemtosecondsPerByte g = topology.link_per_byte(link / 2)) {
        f.route.push_back(flow_resource(std::uint64_t{1} << 62 | link, g));
        slowest = std::max(slowest, g);
      }
  }
  if (const FemtosecondsPerByte g = net_->spec().backbone_per_byte) {
    f.route.push_back(flow_resource(std::uint64_t{2} << 62, g));
    slowest = std::max(slowest, g);
  }
  // Bytes on the wire beyond the message's share the links, and come out of
  // its latency, so that alone it arrives when it did (SMPI's 16 bytes).
  if (const std::uint64_t extra = net_->spec().wire_overhead_bytes; extra && f.bytes > 0 && !f.route.empty()) {
    f.bytes += static_cast<double>(extra);
    at -= std::min(at - leaves, LogGOPS::times_bytes(extra, slowest));
  }
  // SimGrid's sharing (rtt_bytes): a flow's share falls with its route's
  // latency plus rtt_bytes at its links' per-byte times, as TCP's with its
  // round trip; 1 for every flow when not given (plain max-min).
  f.penalty = 1;
  if (const auto rtt = net_->spec().rtt_bytes; rtt && !net_->complete()) {
    const components::PathCost cost = net_->topology().path(a, b);
    f.penalty = std::max(1.0, static_cast<double>(cost.latency_sum) +
                                  static_cast<double>(*rtt) * static_cast<double>(cost.per_byte_sum) / 1000.0);
  }
  if (nic_g) f.route.push_back(flow_resource((std::uint64_t{b} * nics + nic) << 1 | 1, nic_g));
  if (f.bytes == 0 || f.route.empty()) {  // nothing to share: it arrives once the latency is paid
    free_flow_messages_.push_back(m);
    queue_.push(Event{at, std::uint64_t{r} << 32 | static_cast<std::uint32_t>(f.op)});
    return;
  }
  queue_.push(Event{at, kNetKey | kFlowStartBit | m});
}

template <bool L>
void Engine<L>::arm_wakeup() {
  const Picoseconds t = sharing_.next_end();
  if (t == armed_) return;  // the wakeup queued for it stands
  armed_ = t;
  ++wakeup_serial_;  // earlier wakeups are stale
  if (t != components::MaxMinSharing::kNever) queue_.push(Event{t, kNetKey | (wakeup_serial_ & kSerialMask)});
}

template <bool L>
std::uint64_t Engine<L>::net_event(std::uint64_t key) {
  const auto low = static_cast<std::uint32_t>(key);
  if (low & kCoreBit) {  // processor sharing: a job begins, or a core's next job ends
    core_event(low);
    return kNetKey;
  }
  auto rerate_later = [&] {
    if (rerate_queued_) return;
    rerate_queued_ = true;
    queue_.push(Event{now_, kNetKey | kRerateBit});
  };
  if (low & kFlowStartBit) {
    const std::uint32_t m = low & ~kFlowStartBit;
    sharing_.add(now_, flow_messages_[m].route, flow_messages_[m].bytes, m, flow_messages_[m].penalty);
    ++traffic_.flows;
    traffic_.peak_flows = std::max<std::uint64_t>(traffic_.peak_flows, sharing_.active_flows());
    rerate_later();
    return kNetKey;
  }
  if (low & kRerateBit) {
    rerate_queued_ = false;
    sharing_.update(now_);
    arm_wakeup();
    return kNetKey;
  }
  if (low != (wakeup_serial_ & kSerialMask) || armed_ != now_) return kNetKey;  // stale
  // The flow ends now whatever started or ended at this instant before it:
  // rates change from now on.
  armed_ = components::MaxMinSharing::kNever;
  const auto m = static_cast<std::uint32_t>(sharing_.remove_next(now_));
  rerate_later();
  const FlowMessage& f = flow_messages_[m];
  free_flow_messages_.push_back(m);
  return std::uint64_t{f.sender} << 32 | static_cast<std::uint32_t>(f.op);
}

template <bool L>
void Engine<L>::finish_traffic(SimulationResult& out) const {
  if (!net_) return;
  NetworkTraffic t = traffic_;
  t.contention = flows_;
  t.flows_rated = sharing_.flows_rated();
  for (const auto& [name, total] : class_bytes_) t.bytes_by_link_class.emplace_back(std::string(name), total);
  out.network = std::move(t);
}

template void Engine<false>::finish_traffic(SimulationResult&) const;
template std::uint64_t Engine<false>::net_event(std::uint64_t);
template void Engine<true>::finish_traffic(SimulationResult&) const;
template std::size_t Engine<false>::setup_network(std::size_t);
template std::size_t Engine<true>::setup_network(std::size_t);
template Picoseconds Engine<false>::net_send(std::uint32_t, std::uint32_t, Picoseconds&);
template Picoseconds Engine<false>::net_receive(std::uint32_t, std::uint32_t, std::uint64_t, std::int32_t,
                                                std::uint64_t, Picoseconds);
template Picoseconds Engine<false>::pair_sync(std::uint32_t, std::uint32_t, std::uint64_t) const;
template void Engine<false>::count_traffic(std::uint32_t, std::uint32_t, std::uint64_t, bool);
template void Engine<false>::start_flow(std::uint32_t, std::uint32_t, std::uint32_t, Picoseconds, Picoseconds);

}  // namespace poems::sim::detail
