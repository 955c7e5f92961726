// Processor sharing on shared cores (docs/network.md, "Time sharing"):
// PUPPET's multitasking rule, the ranks that work on a core at once each
// advance at 1/r of it. A computation, a send's o + (s-1)O and a receive's
// processing are jobs of their core's ProcessorSharing; a job's end is an
// event of its own (core_event), since a later job on the core moves it. A
// rank's CPU does one job at a time; what asks for it meanwhile waits in
// its queue, in order. Out of line: only machines with time_sharing =
// "processor-sharing" and shared cores come here.
#include <algorithm>
#include <unordered_map>

#include "engine_hot.h"

namespace poems::sim::detail {

template <bool L>
void Engine<L>::setup_processor_sharing(const std::vector<std::size_t>& core_words) {
  const std::size_t n = core_words.size();
  std::unordered_map<std::size_t, std::uint32_t> users, index;
  for (std::size_t w : core_words) ++users[w];
  core_of_.assign(n, kNone);
  std::vector<std::uint32_t> jobs_on;
  for (std::size_t rc = 0; rc < n; ++rc) {
    const std::size_t w = core_words[rc];
    if (users[w] < 2) continue;  // a core of its own: nothing to share
    auto [it, added] = index.try_emplace(w, static_cast<std::uint32_t>(cores_.size()));
    if (added) {
      if (cores_.size() >= kBeginBit)
        throw SimulationLimitError("too many shared cores for processor sharing (at most 2^28)", 0,
                                   "too many shared cores");
      cores_.emplace_back();
      jobs_on.push_back(0);
    }
    core_of_[rc] = it->second;
    ++jobs_on[it->second];
  }
  for (std::size_t c = 0; c < cores_.size(); ++c) cores_[c].reserve(jobs_on[c]);
  core_armed_.assign(cores_.size(), components::ProcessorSharing::kNever);
  cpu_busy_.assign(n, kNone);
  cpu_head_.assign(n, kNone);
  cpu_tail_.assign(n, kNone);
  cpu_jobs_.reserve(n);
}

template <bool L>
std::uint32_t Engine<L>::new_cpu_job() {
  if (free_cpu_jobs_ != kNone) {
    const std::uint32_t job = free_cpu_jobs_;
    free_cpu_jobs_ = cpu_jobs_[job].next;
    cpu_jobs_[job] = CpuJob{};
    return job;
  }
  if (cpu_jobs_.size() >= kBeginBit)
    throw SimulationLimitError("too many operations wait for shared cores (at most 2^28)", 0,
                               "too many operations wait for shared cores");
  cpu_jobs_.emplace_back();
  return static_cast<std::uint32_t>(cpu_jobs_.size() - 1);
}

template <bool L>
void Engine<L>::enqueue_cpu(std::size_t rc, std::uint32_t job) {
  cpu_jobs_[job].next = kNone;
  if (cpu_tail_[rc] == kNone)
    cpu_head_[rc] = job;
  else
    cpu_jobs_[cpu_tail_[rc]].next = job;
  cpu_tail_[rc] = job;
}

template <bool L>
void Engine<L>::shared_start(std::uint32_t r, std::uint32_t pos) {
  const Slot& s = ranks_[r].slots[pos];
  const std::size_t rc = std::size_t{r} * options_.cpus + s.cpu;
  if (cpu_busy_[rc] == kNone && cpu_head_[rc] == kNone) return begin_op(r, pos);
  const std::uint32_t job = new_cpu_job();
  CpuJob& j = cpu_jobs_[job];
  j.task = CpuTask::kStartOp;
  j.rank = r;
  j.cpu = s.cpu;
  j.op = ranks_[r].base + pos;
  enqueue_cpu(rc, job);
}

// A Calc, or a Send's CPU part: as start() and net_send() price them, with
// the CPU's share of the core in place of the core's clock.
template <bool L>
void Engine<L>::begin_op(std::uint32_t r, std::uint32_t pos) {
  RankState& rs = ranks_[r];
  Slot& s = rs.slots[pos];
  Picoseconds t0 = now_, begin = now_, work = 0;
  CpuTask task = CpuTask::kCalc;
  if (s.kind == OpKind::Calc) {
    work = s.amount;
    word(r, (s.flags & kOverheadDeferred) ? kOverhead : kCompute) += s.amount;
  } else {
    const auto dst = static_cast<std::uint32_t>(s.peer);
    const bool local = same_node(r, dst);
    const LogGOPS& p = route_params(r, dst, s.amount);
    Picoseconds& nic = local ? nic_send_free(r, s.nic) : node_nic_send_free(r, s.nic);
    t0 = std::max(now_, nic);
    const Picoseconds sync = p.rendezvous(s.amount) ? pair_sync(r, dst, s.amount) : 0;
    work = p.send_cpu(s.amount);
    nic = t0 + sync + (flows_ && !local ? p.g : p.send_nic(s.amount));
    word(r, kOverhead) += work;
    ++messages_;
    count_traffic(r, dst, s.amount, local);
    if (sync && options_.record_timeline)
      timeline_.push_back(Span{r, s.cpu, Span::Sync, s.peer, t0, t0 + sync, s.amount, s.node});
    begin = t0 + sync;
    task = CpuTask::kSendCpu;
    s.flags |= kCpuInProgress;
  }
  s.start = t0;
  s.flags |= kStarted;
  const std::uint32_t list = s.start_succ;
  s.start_succ = kNone;
  const std::uint32_t job = new_cpu_job();
  CpuJob& j = cpu_jobs_[job];
  j.task = task;
  j.rank = r;
  j.cpu = s.cpu;
  j.op = rs.base + pos;
  j.work = work;
  j.begin = begin;
  cpu_busy_[std::size_t{r} * options_.cpus + s.cpu] = job;
  notify(rs, r, list, t0);
  run_job(job, begin);
}

// A matched message, its rank's CPU free: processed as net_receive() prices it.
template <bool L>
void Engine<L>::begin_receive(std::uint32_t job) {
  CpuJob& j = cpu_jobs_[job];
  const std::uint32_t r = j.rank;
  const auto src = static_cast<std::uint32_t>(j.src);
  const std::uint64_t recv_op = j.op, send_op = j.send_op, bytes = j.bytes;
  const Slot& s = ranks_[r].slots[static_cast<std::uint32_t>(recv_op - ranks_[r].base)];
  const bool local = same_node(r, src);
  const LogGOPS& p = route_params(src, r, bytes);
  Picoseconds& nic = local ? nic_recv_free(r, s.nic) : node_nic_recv_free(r, s.nic);
  const Picoseconds t0 = std::max({now_, j.begin, nic});
  const bool streamed = flows_ && !local;
  const Picoseconds busy = streamed ? p.o + LogGOPS::per_byte(bytes, p.O) : p.recv_cpu(bytes);
  nic = t0 + (streamed ? p.g : p.recv_nic(bytes));
  word(r, kOverhead) += busy;
  j.task = CpuTask::kReceiveCpu;
  j.work = busy;
  j.begin = t0;
  cpu_busy_[std::size_t{r} * options_.cpus + j.cpu] = job;
  run_job(job, t0);  // invalidates j
  // The sender's rendezvous completes at the match (now or later, never
  // before now); the observer hears of the match once the receive completed
  // (end_job), in that order, as receive() tells it.
  if (rendezvous(src, r, bytes)) finish_rendezvous(src, send_op, t0);
}

template <bool L>
void Engine<L>::run_job(std::uint32_t job, Picoseconds at) {
  if (at > now_) {
    queue_.push(Event{at, kNetKey | kCoreBit | kBeginBit | job});
    return;
  }
  const CpuJob& j = cpu_jobs_[job];
  if (j.work == 0) return end_job(job);
  const std::uint32_t core = shared_core(j.rank, j.cpu);
  cores_[core].add(now_, job, j.work);
  arm_core(core);
}

template <bool L>
void Engine<L>::arm_core(std::uint32_t core) {
  const Picoseconds t = cores_[core].next_end();
  if (t == core_armed_[core]) return;  // the wakeup queued for it stands
  core_armed_[core] = t;               // earlier wakeups are stale
  if (t != components::ProcessorSharing::kNever) queue_.push(Event{t, kNetKey | kCoreBit | core});
}

template <bool L>
void Engine<L>::core_event(std::uint32_t low) {
  touched_count_ = 0;
  if (low & kBeginBit) {
    run_job(low & kCoreMask, now_);
  } else {
    const std::uint32_t core = low & kCoreMask;
    if (core_armed_[core] != now_) return;  // stale: the core's jobs changed since
    core_armed_[core] = components::ProcessorSharing::kNever;
    while (cores_[core].next_end() <= now_) end_job(cores_[core].remove_next(now_));
    arm_core(core);
  }
  settle_touched();
}

template <bool L>
void Engine<L>::end_job(std::uint32_t job) {
  const CpuJob j = cpu_jobs_[job];
  cpu_jobs_[job].next = free_cpu_jobs_;
  free_cpu_jobs_ = job;
  const std::uint32_t r = j.rank;
  RankState& rs = ranks_[r];
  const auto pos = static_cast<std::uint32_t>(j.op - rs.base);
  Slot& s = rs.slots[pos];
  touch(r);
  switch (j.task) {
    case CpuTask::kCalc:
      if (options_.record_timeline) timeline_.push_back(Span{r, s.cpu, Span::Calc, -1, j.begin, now_, 0, s.node});
      complete(r, pos, now_);
      break;
    case CpuTask::kSendCpu: {
      const auto dst = static_cast<std::uint32_t>(s.peer);
      const bool local = same_node(r, dst);
      const LogGOPS& p = route_params(r, dst, s.amount);
      // The message leaves once o is done (the (s-1)O after it does not hold
      // it), as in start(): at begin + o when the core was not shared.
      const Picoseconds tail = LogGOPS::per_byte(s.amount, p.O);
      const Picoseconds leaves = std::max(j.begin + p.o, now_ > tail ? now_ - tail : 0);
      if (flows_ && !local) {
        start_flow(r, pos, dst, leaves, p.L);
      } else {
        const Picoseconds path =
            local ? 0 : net_->path_delay(placement_.node_of[r], placement_.node_of[dst], s.amount, p.G);
        queue_.push(Event{leaves + p.L + path, std::uint64_t{r} << 32 | static_cast<std::uint32_t>(j.op)});
      }
      if (options_.record_timeline)
        timeline_.push_back(Span{r, s.cpu, Span::Send, s.peer, j.begin, now_, s.amount, s.node});
      s.flags &= static_cast<std::uint8_t>(~kCpuInProgress);
      if (!rendezvous(r, dst, s.amount))
        complete(r, pos, now_);
      else if (s.flags & kMatchedEarly)
        complete(r, pos, std::max(now_, s.done));
      else
        s.done = now_;  // local part; completes when matched (finish_rendezvous)
      break;
    }
    case CpuTask::kReceiveCpu:
      if (options_.record_timeline)
        timeline_.push_back(Span{r, s.cpu, Span::Recv, j.src, j.begin, now_, j.bytes, s.node});
      complete(r, pos, now_);
      if (observer_) [[unlikely]]
        observe_match(r, j.op, static_cast<std::uint32_t>(j.src), j.send_op, j.begin);
      break;
    case CpuTask::kStartOp:
    case CpuTask::kReceive: break;  // waiting jobs never run
  }
  // The CPU is free: what waited for it goes on, in order, until one takes it.
  const std::size_t rc = std::size_t{r} * options_.cpus + j.cpu;
  cpu_busy_[rc] = kNone;
  while (cpu_busy_[rc] == kNone && cpu_head_[rc] != kNone) {
    const std::uint32_t next = cpu_head_[rc];
    cpu_head_[rc] = cpu_jobs_[next].next;
    if (cpu_head_[rc] == kNone) cpu_tail_[rc] = kNone;
    if (cpu_jobs_[next].task == CpuTask::kReceive) {
      begin_receive(next);
    } else {
      const auto at = static_cast<std::uint32_t>(cpu_jobs_[next].op - ranks_[r].base);
      cpu_jobs_[next].next = free_cpu_jobs_;
      free_cpu_jobs_ = next;
      begin_op(r, at);
    }
  }
}

template void Engine<false>::setup_processor_sharing(const std::vector<std::size_t>&);
template void Engine<false>::shared_start(std::uint32_t, std::uint32_t);
template void Engine<false>::begin_receive(std::uint32_t);
template std::uint32_t Engine<false>::new_cpu_job();
template void Engine<false>::enqueue_cpu(std::size_t, std::uint32_t);
template void Engine<false>::core_event(std::uint32_t);

}  // namespace poems::sim::detail
