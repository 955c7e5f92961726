// A deliberately simple, slow second implementation of the `loggopsim`
// semantics (docs/simulator.md, "LogGOPSim semantics"), written straight from
// the rule table as a test oracle: a std::priority_queue ordered by (time,
// stamp), std::list matching queues, per-rank vectors of operations in file
// order and dependency statements in statement order, times in integer ns in
// unsigned 64-bit arithmetic. It shares no code with the engine. Also here:
// a generator of random schedules that are valid GOAL for LogGOPSim's txt2bin,
// and their GOAL text.
#pragma once

#include <algorithm>
#include <cstdint>
#include <list>
#include <queue>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace poems::sim::testing::oracle {

inline constexpr std::uint32_t kAny = ~std::uint32_t{0};  // source or tag wildcard, GOAL's -1

enum Kind : int { kSend = 1, kRecv = 2, kCalc = 3 };  // the order in which ops freed together are queued

struct Op {
  Kind kind = kCalc;
  std::uint32_t peer = 0;  // send: destination; recv: source or kAny
  std::uint32_t tag = 0;   // or kAny
  std::uint64_t size = 0;  // bytes, or calc ns
  std::uint32_t cpu = 0, nic = 0;
};

struct Dep {
  std::uint32_t from = 0, to = 0;  // `from requires to`: indices in file order
  bool irequires = false;
};

struct Rank {
  std::vector<Op> ops;    // file order
  std::vector<Dep> deps;  // statement order
};

struct Schedule {
  std::vector<Rank> ranks;
  std::uint32_t cpus() const {
    std::uint32_t c = 1;
    for (const Rank& r : ranks)
      for (const Op& o : r.ops) c = std::max(c, o.cpu + 1);
    return c;
  }
  std::uint32_t nics() const {
    std::uint32_t c = 1;
    for (const Rank& r : ranks)
      for (const Op& o : r.ops) c = std::max(c, o.nic + 1);
    return c;
  }
};

struct Params {  // ns, ns/B, bytes: LogGOPSim's integer parameters
  std::uint64_t L = 2500, o = 1500, g = 1000, G = 6, O = 0, S = 65535;
};

struct Result {
  std::vector<std::uint64_t> finish;  // ns
  bool completed = true;
  std::string error;  // a case the rules refuse (a protocol that differs across S)
};

// The rules, one event at a time.
inline Result simulate(const Schedule& s, const Params& p) {
  const std::size_t P = s.ranks.size();
  const std::uint32_t cpus = s.cpus(), nics = s.nics();
  struct Item {
    std::uint64_t time, stamp;
    bool message;
    std::uint32_t host;  // where it happens (a message: the destination)
    std::uint32_t op;    // the operation (a message: the send, at `from`)
    std::uint32_t from;  // a message's sender
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return a.time != b.time ? a.time > b.time : a.stamp > b.stamp;
    }
  };
  struct Entry {  // a posted receive or an unexpected message
    std::uint32_t src, tag, op;
    std::uint64_t size;
  };
  std::priority_queue<Item, std::vector<Item>, Later> queue;
  std::uint64_t stamp = 0;
  std::vector<std::vector<std::uint64_t>> cpu(P, std::vector<std::uint64_t>(cpus, 0));
  std::vector<std::vector<std::uint64_t>> nic_out(P, std::vector<std::uint64_t>(nics, 0));
  std::vector<std::vector<std::uint64_t>> nic_in(P, std::vector<std::uint64_t>(nics, 0));
  std::vector<std::list<Entry>> posted(P), unexpected(P);
  // Per operation: unsatisfied dependencies, and the successors to tell on
  // start and on completion, in statement order.
  std::vector<std::vector<std::uint32_t>> missing(P);
  std::vector<std::vector<std::vector<std::uint32_t>>> on_start(P), on_done(P);
  std::vector<std::vector<bool>> done(P);
  std::vector<std::vector<std::uint32_t>> freed(P);  // operations freed during the current event
  for (std::size_t r = 0; r < P; ++r) {
    const Rank& rk = s.ranks[r];
    missing[r].assign(rk.ops.size(), 0);
    on_start[r].resize(rk.ops.size());
    on_done[r].resize(rk.ops.size());
    done[r].assign(rk.ops.size(), false);
    for (const Dep& d : rk.deps) {
      ++missing[r][d.from];
      (d.irequires ? on_start : on_done)[r][d.to].push_back(d.from);
    }
  }
  auto per_byte = [](std::uint64_t size, std::uint64_t x) { return (size - 1) * x; };  // wraps at size 0, as LogGOPSim
  auto tell = [&](std::uint32_t r, const std::vector<std::uint32_t>& succ) {
    for (std::uint32_t x : succ)
      if (--missing[r][x] == 0) freed[r].push_back(x);
  };
  auto started = [&](std::uint32_t r, std::uint32_t op) { tell(r, on_start[r][op]); };
  auto completed = [&](std::uint32_t r, std::uint32_t op) {
    done[r][op] = true;
    tell(r, on_done[r][op]);
  };
  auto queue_freed = [&](std::uint32_t r, bool at_zero) {
    std::vector<std::uint32_t> ops = freed[r];
    freed[r].clear();
    std::vector<std::pair<int, std::uint32_t>> byk;
    for (std::uint32_t x : ops) byk.push_back({s.ranks[r].ops[x].kind, x});
    // The same call on the same sequence of kinds as LogGOPSim's: the order
    // among equal kinds is that of libstdc++'s std::sort.
    std::sort(byk.begin(), byk.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [k, x] : byk) {
      const Op& o = s.ranks[r].ops[x];
      std::uint64_t t = 0;
      if (!at_zero) t = k == kSend ? std::max(cpu[r][o.cpu], nic_out[r][o.nic]) : cpu[r][o.cpu];
      queue.push(Item{t, stamp++, false, r, x, 0});
    }
  };
  for (std::uint32_t r = 0; r < P; ++r) {
    for (std::uint32_t x = 0; x < s.ranks[r].ops.size(); ++x)
      if (missing[r][x] == 0) freed[r].push_back(x);
    queue_freed(r, true);
  }
  auto matches = [](std::uint32_t want_src, std::uint32_t want_tag, std::uint32_t src, std::uint32_t tag) {
    return (want_src == kAny || src == kAny || src == want_src) && (want_tag == kAny || tag == kAny || tag == want_tag);
  };
  Result out;
  while (!queue.empty()) {
    Item e = queue.top();
    queue.pop();
    std::vector<std::uint32_t> hosts;
    const std::uint64_t t = e.time;
    if (!e.message) {
      const std::uint32_t h = e.host;
      const Op& o = s.ranks[h].ops[e.op];
      if (o.kind == kCalc) {
        if (cpu[h][o.cpu] > t) {
          e.time = cpu[h][o.cpu];
          queue.push(e);
          continue;
        }
        cpu[h][o.cpu] = t + o.size;
        started(h, e.op);
        completed(h, e.op);
        hosts.push_back(h);
      } else if (o.kind == kSend) {
        const std::uint64_t free = std::max(cpu[h][o.cpu], nic_out[h][o.nic]);
        if (free > t) {
          e.time = free;
          queue.push(e);
          continue;
        }
        started(h, e.op);
        hosts.push_back(h);
        cpu[h][o.cpu] = t + p.o + per_byte(o.size, p.O);
        nic_out[h][o.nic] = t + p.g + per_byte(o.size, p.G);
        queue.push(Item{t + p.o + p.L, stamp++, true, o.peer, e.op, h});
        if (o.size <= p.S) completed(h, e.op);
      } else {  // a receive is posted
        started(h, e.op);
        hosts.push_back(h);
        auto it = std::find_if(unexpected[h].begin(), unexpected[h].end(),
                               [&](const Entry& m) { return matches(o.peer, o.tag, m.src, m.tag); });
        if (it != unexpected[h].end()) {
          const Entry m = *it;
          unexpected[h].erase(it);
          if ((o.size > p.S) != (m.size > p.S)) {
            out.error = "protocol differs across S";
            out.completed = false;
            return out;
          }
          if (o.size > p.S) {  // the rendezvous sender completes now; its clocks move up to now
            completed(m.src, m.op);
            hosts.push_back(m.src);
            cpu[m.src][o.cpu] = std::max(cpu[m.src][o.cpu], t);
            nic_out[m.src][o.nic] = std::max(nic_out[m.src][o.nic], t);
          }
          completed(h, e.op);
        } else {
          posted[h].push_back(Entry{o.peer, o.tag, e.op, o.size});
        }
      }
    } else {  // a message at its destination
      const std::uint32_t h = e.host, from = e.from;
      const Op& o = s.ranks[from].ops[e.op];  // the send
      const std::uint64_t free = std::max(cpu[h][o.cpu], nic_in[h][o.nic]);
      if (free > t) {
        e.time = free;
        queue.push(e);
        continue;
      }
      cpu[h][o.cpu] = t + p.o + std::max(per_byte(o.size, p.O), per_byte(o.size, p.G));
      nic_in[h][o.nic] = t + p.g + per_byte(o.size, p.G);
      auto it = std::find_if(posted[h].begin(), posted[h].end(),
                             [&](const Entry& rq) { return matches(from, o.tag, rq.src, rq.tag); });
      if (it != posted[h].end()) {
        const Entry rq = *it;
        posted[h].erase(it);
        if (o.size > p.S) {
          completed(from, e.op);
          hosts.push_back(from);
          cpu[from][o.cpu] = std::max(cpu[from][o.cpu], t);
          nic_out[from][o.nic] = std::max(nic_out[from][o.nic], t);
        }
        completed(h, rq.op);
        hosts.push_back(h);
      } else {
        unexpected[h].push_back(Entry{from, o.tag, e.op, o.size});
      }
    }
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    for (std::uint32_t h : hosts) queue_freed(h, false);
  }
  out.finish.resize(P);
  for (std::size_t r = 0; r < P; ++r) {
    out.finish[r] = *std::max_element(cpu[r].begin(), cpu[r].end());
    out.completed = out.completed && posted[r].empty() && unexpected[r].empty() &&
                    std::all_of(done[r].begin(), done[r].end(), [](bool b) { return b; });
  }
  return out;
}

// GOAL text as LogGOPSim's txt2bin reads it: no indentation, every label
// defined before a dependency names it, fields in txt2bin's order.
inline std::string goal_text(const Schedule& s) {
  std::ostringstream out;
  out << "num_ranks " << s.ranks.size() << "\n";
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    out << "rank " << r << " {\n";
    const Rank& rk = s.ranks[r];
    for (std::size_t i = 0; i < rk.ops.size(); ++i) {
      const Op& o = rk.ops[i];
      out << "x" << i << ": ";
      if (o.kind == kCalc) {
        out << "calc " << o.size;
        if (o.cpu) out << " cpu " << o.cpu;
      } else {
        out << (o.kind == kSend ? "send " : "recv ") << o.size << "b " << (o.kind == kSend ? "to " : "from ");
        if (o.peer == kAny)
          out << "-1";
        else
          out << o.peer;
        if (o.tag == kAny)
          out << " tag -1";
        else
          out << " tag " << o.tag;
        out << " cpu " << o.cpu << " nic " << o.nic;
      }
      out << "\n";
    }
    for (const Dep& d : rk.deps) out << "x" << d.from << (d.irequires ? " irequires x" : " requires x") << d.to << "\n";
    out << "}\n";
  }
  return out.str();
}

struct GeneratorOptions {
  std::uint32_t min_ranks = 2, max_ranks = 64;
  std::uint32_t steps_per_rank = 12;  // about this many operations per rank
  std::uint64_t S = 256;              // eager limit the sizes are drawn around
  bool multi_resource = true;         // cpu/nic fields other than 0
  bool shuffle_file_order = true;     // operations defined out of dependency order, statements shuffled
  // How often an operation depends on the rank's previous one. Low values
  // leave many operations of a rank ready at once, waiting for its CPU.
  double program_order = 0.75;
  std::uint64_t max_extra_deps = 2;  // random earlier operations depended on, 0 .. this
  double zero_calcs = 0;             // the share of calcs that take no time
};

// A random schedule: a global sequence of steps (a calc on one rank, or a
// message from one rank to another), each rank's operations depending on
// random earlier ones of its own (requires or irequires), so a run with the
// intended matching cannot deadlock. Some destinations take part of their
// messages through wildcard receives (any source, a pool tag or any tag);
// messages between a pair are all eager or all rendezvous, so no receive
// decides a protocol other than its message's. Wildcards can still pair
// messages with receives other than the intended ones and deadlock a
// rendezvous chain: callers drop schedules that do not complete.
inline Schedule random_schedule(std::mt19937_64& rng, const GeneratorOptions& g) {
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  Schedule s;
  const auto P = static_cast<std::uint32_t>(pick(g.min_ranks, g.max_ranks));
  s.ranks.resize(P);
  const std::uint32_t cpus = g.multi_resource && chance(0.3) ? static_cast<std::uint32_t>(pick(2, 3)) : 1;
  const std::uint32_t nics = g.multi_resource && chance(0.3) ? static_cast<std::uint32_t>(pick(2, 3)) : 1;
  // Per destination: which senders go through the wildcard pool, and whether
  // the pool's receives may use any tag (only if every sender is pooled).
  std::vector<std::vector<bool>> pooled(P, std::vector<bool>(P, false));
  std::vector<bool> pool_any_tag(P, false);
  std::vector<bool> pool_rendezvous(P, false);
  for (std::uint32_t d = 0; d < P; ++d) {
    if (!chance(0.4)) continue;
    bool all = chance(0.3);
    for (std::uint32_t src = 0; src < P; ++src) pooled[d][src] = src != d && (all || chance(0.5));
    pool_any_tag[d] = all;
    pool_rendezvous[d] = chance(0.3);
  }
  std::vector<std::vector<bool>> pair_rendezvous(P, std::vector<bool>(P, false));
  for (auto& row : pair_rendezvous)
    for (std::size_t k = 0; k < row.size(); ++k) row[k] = chance(0.3);
  constexpr std::uint32_t kPoolTag = 4242;
  auto size_for = [&](bool rendezvous) -> std::uint64_t {
    if (rendezvous) return pick(g.S + 1, 4 * g.S);
    return chance(0.1) ? pick(0, 1) : pick(2, g.S);
  };
  auto add = [&](std::uint32_t r, Op o) {
    Rank& rk = s.ranks[r];
    const auto me = static_cast<std::uint32_t>(rk.ops.size());
    o.cpu = static_cast<std::uint32_t>(pick(0, cpus - 1));
    if (o.kind != kCalc) o.nic = static_cast<std::uint32_t>(pick(0, nics - 1));
    rk.ops.push_back(o);
    if (me == 0) return;
    // Usually the previous operation (a program), plus a few random earlier ones.
    std::vector<std::uint32_t> on;
    if (chance(g.program_order)) on.push_back(me - 1);
    const std::uint64_t extra = pick(0, g.max_extra_deps);
    for (std::uint64_t k = 0; k < extra; ++k) on.push_back(static_cast<std::uint32_t>(pick(0, me - 1)));
    std::sort(on.begin(), on.end());
    on.erase(std::unique(on.begin(), on.end()), on.end());
    for (std::uint32_t x : on) rk.deps.push_back(Dep{me, x, chance(0.3)});
  };
  const std::uint64_t steps = std::uint64_t{P} * g.steps_per_rank / 2 + 1;
  for (std::uint64_t k = 0; k < steps; ++k) {
    if (chance(0.3)) {
      add(static_cast<std::uint32_t>(pick(0, P - 1)),
          Op{kCalc, 0, 0, g.zero_calcs > 0 && chance(g.zero_calcs) ? 0 : pick(0, 3000), 0, 0});
      continue;
    }
    const auto src = static_cast<std::uint32_t>(pick(0, P - 1));
    auto dst = static_cast<std::uint32_t>(pick(0, P - 2));
    if (dst >= src) ++dst;
    Op send{kSend, dst, 0, 0, 0, 0}, recv{kRecv, src, 0, 0, 0, 0};
    if (pooled[dst][src]) {
      send.tag = kPoolTag;
      send.size = size_for(pool_rendezvous[dst]);
      recv.peer = kAny;
      recv.tag = pool_any_tag[dst] && chance(0.5) ? kAny : kPoolTag;
      recv.size = size_for(pool_rendezvous[dst]);
    } else {
      send.tag = recv.tag = static_cast<std::uint32_t>(pick(0, 3));
      send.size = size_for(pair_rendezvous[src][dst]);
      recv.size = size_for(pair_rendezvous[src][dst]);
      if (chance(0.1)) recv.size = send.size;
    }
    // Either side first in the global order (both are at the same step).
    if (chance(0.5)) {
      add(src, send);
      add(dst, recv);
    } else {
      add(dst, recv);
      add(src, send);
    }
  }
  if (!g.shuffle_file_order) return s;
  // Define the operations in a random order and list the dependency
  // statements in a random order (LogGOPSim's txt2bin only needs every label
  // defined before a statement names it).
  for (Rank& rk : s.ranks) {
    if (chance(0.5)) std::shuffle(rk.deps.begin(), rk.deps.end(), rng);
    if (!chance(0.5)) continue;
    std::vector<std::uint32_t> perm(rk.ops.size()), where(rk.ops.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::uint32_t>(i);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<Op> ops(rk.ops.size());
    for (std::size_t i = 0; i < perm.size(); ++i) {
      ops[i] = rk.ops[perm[i]];
      where[perm[i]] = static_cast<std::uint32_t>(i);
    }
    rk.ops = ops;
    for (Dep& d : rk.deps) {
      d.from = where[d.from];
      d.to = where[d.to];
    }
  }
  return s;
}

}  // namespace poems::sim::testing::oracle
