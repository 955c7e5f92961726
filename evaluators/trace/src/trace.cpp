#include "poems/trace/trace.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace poems::trace {

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::Barrier: return "barrier";
    case Collective::Bcast: return "bcast";
    case Collective::Gather: return "gather";
    case Collective::Gatherv: return "gatherv";
    case Collective::Scatter: return "scatter";
    case Collective::Scatterv: return "scatterv";
    case Collective::Allgather: return "allgather";
    case Collective::Allgatherv: return "allgatherv";
    case Collective::Alltoall: return "alltoall";
    case Collective::Alltoallv: return "alltoallv";
    case Collective::Alltoallw: return "alltoallw";
    case Collective::Allreduce: return "allreduce";
    case Collective::Reduce: return "reduce";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::Scan: return "scan";
    case Collective::Exscan: return "exscan";
    case Collective::ReduceScatterBlock: return "reduce_scatter_block";
    case Collective::CreateHandle: return "communicator creation";
    case Collective::DestroyHandle: return "communicator release";
    case Collective::Other: return "other";
  }
  return "?";
}

std::uint64_t Trace::calls() const {
  std::uint64_t n = 0;
  for (const Rank& r : ranks) n += r.calls.size();
  return n;
}

Picoseconds Trace::compute() const {
  Picoseconds total = 0;
  for (const Rank& r : ranks)
    for (const Step& s : r.steps)
      if (s.kind == StepKind::Compute) total += s.value;
  return total;
}

Picoseconds Trace::measured() const {
  if (ranks.empty()) return 0;
  Picoseconds lo = ranks.front().begin, hi = ranks.front().end;
  for (const Rank& r : ranks) {
    lo = std::min(lo, r.begin);
    hi = std::max(hi, r.end);
  }
  return hi - lo;
}

namespace {

struct Channel {
  std::uint32_t sender, receiver, comm;
  std::int32_t tag;
  bool operator==(const Channel&) const = default;
};

struct ChannelHash {
  std::size_t operator()(const Channel& c) const {
    std::uint64_t h = c.sender;
    h = h * 0x9E3779B97F4A7C15ull ^ c.receiver;
    h = h * 0x9E3779B97F4A7C15ull ^ c.comm;
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(c.tag);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

struct StepRef {
  std::uint32_t rank, step;
};

void match_messages(Trace& t) {
  std::unordered_map<Channel, std::pair<std::vector<StepRef>, std::vector<StepRef>>, ChannelHash> channels;
  for (std::uint32_t r = 0; r < t.ranks.size(); ++r) {
    const std::vector<Step>& steps = t.ranks[r].steps;
    for (std::uint32_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      if (s.dropped) continue;
      if (s.kind == StepKind::Send)
        channels[{r, static_cast<std::uint32_t>(s.peer), s.comm, s.tag}].first.push_back({r, i});
      else if (s.kind == StepKind::Recv)
        channels[{static_cast<std::uint32_t>(s.peer), r, s.comm, s.tag}].second.push_back({r, i});
    }
  }
  // Deterministic order of the message list: by sender, then receiver.
  std::vector<std::pair<Channel, std::pair<std::vector<StepRef>, std::vector<StepRef>>*>> ordered;
  for (auto& [key, ends] : channels) ordered.push_back({key, &ends});
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.sender, a.first.receiver, a.first.comm, a.first.tag) <
           std::tie(b.first.sender, b.first.receiver, b.first.comm, b.first.tag);
  });
  std::uint64_t unmatched_sends = 0, unmatched_recvs = 0;
  t.messages.clear();
  for (auto& [key, ends] : ordered) {
    const auto& [sends, recvs] = *ends;
    const std::size_t n = std::min(sends.size(), recvs.size());
    for (std::size_t k = 0; k < n; ++k) {
      const auto id = static_cast<std::uint32_t>(t.messages.size());
      t.messages.push_back({sends[k].rank, sends[k].step, recvs[k].rank, recvs[k].step});
      t.ranks[sends[k].rank].steps[sends[k].step].message = id;
      t.ranks[recvs[k].rank].steps[recvs[k].step].message = id;
    }
    for (std::size_t k = n; k < sends.size(); ++k) {
      t.ranks[sends[k].rank].steps[sends[k].step].dropped = true;
      ++unmatched_sends;
    }
    for (std::size_t k = n; k < recvs.size(); ++k) {
      t.ranks[recvs[k].rank].steps[recvs[k].step].dropped = true;
      ++unmatched_recvs;
    }
  }
  if (unmatched_sends > 0)
    t.warnings.push_back(std::to_string(unmatched_sends) + " sends have no matching receive in the trace; left out");
  if (unmatched_recvs > 0)
    t.warnings.push_back(std::to_string(unmatched_recvs) + " receives have no matching send in the trace; left out");
}

// The block size of one instance from its members' estimates: the root's
// mean block for the v-variants that have a root, the mean over the members
// for the irregular all-to-all ones, else the largest.
std::uint64_t unified_block(Collective op, const std::vector<StepRef>& members, const Trace& t, const Communicator& c) {
  std::uint64_t largest = 0, sum = 0, root_value = 0;
  bool have_root = false;
  for (const StepRef& m : members) {
    const Step& s = t.ranks[m.rank].steps[m.step];
    largest = std::max(largest, s.value);
    sum += s.value;
    const std::uint32_t root_world = s.peer >= 0 && static_cast<std::size_t>(s.peer) < c.members.size()
                                         ? c.members[static_cast<std::size_t>(s.peer)]
                                         : kNone;
    if (root_world == m.rank) {
      have_root = true;
      root_value = s.value;
    }
  }
  switch (op) {
    case Collective::Gatherv:
    case Collective::Scatterv: return have_root ? root_value : largest;
    case Collective::Allgatherv:
    case Collective::Alltoallv:
    case Collective::Alltoallw: return members.empty() ? 0 : sum / members.size();
    default: return largest;
  }
}

void match_collectives(Trace& t) {
  // (comm, owner, sequence); the owner tells apart the ranks' own MPI_COMM_SELF.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<StepRef>> instances;
  std::vector<std::vector<std::uint32_t>> sequence(t.ranks.size(), std::vector<std::uint32_t>(t.comms.size(), 0));
  for (std::uint32_t r = 0; r < t.ranks.size(); ++r) {
    std::vector<Step>& steps = t.ranks[r].steps;
    for (std::uint32_t i = 0; i < steps.size(); ++i) {
      Step& s = steps[i];
      if (s.kind != StepKind::Collective || s.dropped) continue;
      s.request = sequence[r][s.comm]++;
      instances[{s.comm, t.comms[s.comm].self ? r : kNone, s.request}].push_back({r, i});
    }
  }
  std::uint64_t incomplete = 0, mismatched = 0;
  for (auto& [key, members] : instances) {
    const Communicator& c = t.comms[std::get<0>(key)];
    const std::size_t expected = c.self ? 1 : c.members.size();
    const Collective op = t.ranks[members.front().rank].steps[members.front().step].collective;
    bool same = true;
    for (const StepRef& m : members) same = same && t.ranks[m.rank].steps[m.step].collective == op;
    const bool whole = c.self ? true : members.size() == expected;
    if (!same || !whole) {
      (same ? incomplete : mismatched) += 1;
      for (const StepRef& m : members) t.ranks[m.rank].steps[m.step].dropped = true;
      continue;
    }
    const std::uint64_t block = unified_block(op, members, t, c);
    for (const StepRef& m : members) t.ranks[m.rank].steps[m.step].value = block;
  }
  if (incomplete > 0)
    t.warnings.push_back(std::to_string(incomplete) +
                         " collective instances were not recorded on every member of their communicator; left out");
  if (mismatched > 0)
    t.warnings.push_back(std::to_string(mismatched) +
                         " collective instances name different operations on different members; left out");
}

}  // namespace

void link(Trace& trace) {
  match_messages(trace);
  match_collectives(trace);
}

}  // namespace poems::trace
