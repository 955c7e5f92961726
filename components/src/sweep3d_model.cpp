// The Sweep3D wavefront as a longest path over (process, block) under the
// simulator's cost rules; docs/models/sweep3d.md has the derivation. Costs
// depend on a process's position only through its class along each axis
// (upstream boundary, interior, downstream boundary), so the path is found on
// a compressed grid of at most 4 x 4 representative processes: the interior
// processes between two representatives all cost the same, and the longest
// path through them is a hop count times a hop cost.
#include "poems/components/sweep3d_model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <vector>

#include "poems/components/collective_models.h"

namespace poems::components {

namespace {

// The costs of one message direction (i or j) under DESIGN 5.1.
struct MessageCosts {
  Picoseconds recv = 0;      // receiving CPU: o + max((s-1)O, (s-1)G)
  Picoseconds recv_nic = 0;  // receiving NIC: g + (s-1)G
  Picoseconds arrive = 0;    // send start to arrival: sync + o + L
  Picoseconds complete = 0;  // send start to completion when the receive is posted
  Picoseconds nic_busy = 0;  // send start to the sending NIC being free
  bool rendezvous = false;
};

MessageCosts message_costs(const LogGOPS& p, std::uint64_t bytes, Picoseconds sync) {
  MessageCosts c;
  c.rendezvous = p.rendezvous(bytes);
  const Picoseconds y = c.rendezvous ? sync : 0;
  c.recv = p.recv_cpu(bytes);
  c.recv_nic = p.recv_nic(bytes);
  c.arrive = y + p.o + p.L;
  // A rendezvous send completes when the receiver starts taking the message,
  // no earlier than its arrival.
  c.complete = c.rendezvous ? y + std::max(p.send_cpu(bytes), p.o + p.L) : p.send_cpu(bytes);
  c.nic_busy = y + p.send_nic(bytes);
  return c;
}

void check(bool ok, const char* name, std::int64_t value, const char* range) {
  if (!ok)
    throw Sweep3DParameterError(std::string(name) + " = " + std::to_string(value) + " is out of range; expected " +
                                range);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Representative coordinates of an axis of n processes: both boundaries and
// their interior neighbours.
struct Axis {
  std::array<std::int64_t, 4> at{};
  int size = 0;
  explicit Axis(std::int64_t n) {
    for (std::int64_t v : {std::int64_t{0}, std::int64_t{1}, n - 2, n - 1})
      if (v >= 0 && v < n && (size == 0 || at[size - 1] < v)) at[size++] = v;
  }
  int index(std::int64_t v) const {
    for (int i = 0; i < size; ++i)
      if (at[i] == v) return i;
    return -1;
  }
};

using Grid = std::array<std::array<Picoseconds, 4>, 4>;

}  // namespace

Sweep3DPrediction predict_sweep3d(const Sweep3DConfig& c, const Sweep3DMachine& m) {
  const char* positive = "an integer in 1..2^31";
  check(c.npe_i >= 1 && c.npe_i <= (1ll << 31), "npe_i", c.npe_i, positive);
  check(c.npe_j >= 1 && c.npe_j <= (1ll << 31), "npe_j", c.npe_j, positive);
  check(c.npe_i * c.npe_j <= (1ll << 31), "npe_i * npe_j", c.npe_i * c.npe_j, "at most 2^31 processes");
  check(c.it_g >= c.npe_i && c.it_g <= (1ll << 31), "it_g", c.it_g, "an integer in npe_i..2^31");
  check(c.jt_g >= c.npe_j && c.jt_g <= (1ll << 31), "jt_g", c.jt_g, "an integer in npe_j..2^31");
  check(c.kt >= 1 && c.kt <= (1ll << 31), "kt", c.kt, positive);
  check(c.mk >= 1 && c.mk <= c.kt, "mk", c.mk, "an integer in 1..kt");
  check(c.mm >= 1 && c.mm <= 4096, "mm", c.mm, "an integer in 1..4096");
  check(c.mmi >= 1 && c.mmi <= c.mm && c.mm % c.mmi == 0, "mmi", c.mmi, "a divisor of mm");
  check(c.iterations >= 0 && c.iterations <= (1ll << 31), "iterations", c.iterations, "an integer in 0..2^31");
  if (!(m.wg_ns >= 0) || !std::isfinite(m.wg_ns) || m.wg_ns > 1e9)
    throw Sweep3DParameterError("Wg = " + std::to_string(m.wg_ns) + " ns is out of range; expected 0..1e9 ns");

  const LogGOPS& p = m.params;
  const Picoseconds sync = m.rendezvous_handshake ? 2 * (p.L + p.o) : p.L;
  Sweep3DPrediction out;
  const std::int64_t n = c.npe_i, mj = c.npe_j;
  out.it = ceil_div(c.it_g, n);
  out.jt = ceil_div(c.jt_g, mj);
  out.kb = ceil_div(c.kt, c.mk);
  out.mmo = c.mm / c.mmi;
  const double work = static_cast<double>(out.it * out.jt * c.mk * c.mmi);
  const double w_ps = work * m.wg_ns * 1000.0;
  if (w_ps > 1e18) throw Sweep3DParameterError("the k-block time Wg * it * jt * mk * mmi exceeds 1e6 s");
  const Picoseconds W = static_cast<Picoseconds>(w_ps + 0.5);  // rounded as the task graph rounds it
  out.block_work_ps = W;
  out.message_i_bytes = static_cast<std::uint64_t>(8 * out.jt * c.mk * c.mmi);
  out.message_j_bytes = static_cast<std::uint64_t>(8 * out.it * c.mk * c.mmi);
  const MessageCosts ci = message_costs(p, out.message_i_bytes, sync);
  const MessageCosts cj = message_costs(p, out.message_j_bytes, sync);
  const auto B = static_cast<Picoseconds>(2 * out.mmo * out.kb);  // blocks per octant pair

  const Axis ax(n), ay(mj);
  // What a process does per block depends only on its class on each axis in
  // the pair's local frame, and every pair's frame has the same classes at
  // the same representative indices: one table serves all four pairs.
  struct Shape {
    bool has_ri, has_si, has_rj, has_sj;
    Picoseconds recvs, sends;  // one block's receives and sends
    Picoseconds period;        // one block on this process
    Picoseconds hop_x, hop_y;  // compute start upstream to compute start here
  };
  // Receives: i first; the j receive starts when the CPU and the NIC are both free.
  const Picoseconds ri_then = std::max(ci.recv, ci.recv_nic);
  // Sends: i first; the j send starts when the i send completed and the NIC is free.
  const Picoseconds gap_i = std::max(ci.complete, ci.nic_busy);
  auto shape = [&](std::int64_t x, std::int64_t y) {
    Shape h{x > 0, x<n - 1, y> 0, y < mj - 1, 0, 0, 0, 0, 0};
    h.recvs = (h.has_ri ? (h.has_rj ? ri_then : ci.recv) : 0) + (h.has_rj ? cj.recv : 0);
    h.sends = h.has_si ? (h.has_sj ? gap_i + cj.complete : ci.complete) : (h.has_sj ? cj.complete : 0);
    // The CPU chain, or a busier NIC.
    h.period = W + h.recvs + h.sends;
    if (h.has_si && h.has_sj) h.period = std::max(h.period, gap_i + cj.nic_busy);
    if (h.has_si != h.has_sj) h.period = std::max(h.period, h.has_si ? ci.nic_busy : cj.nic_busy);
    h.period = std::max(h.period, (h.has_ri ? ci.recv_nic : 0) + (h.has_rj ? cj.recv_nic : 0));
    // Above S in both directions the unit square below-left of this process
    // forms a cycle per block (docs/models/sweep3d.md, "rendezvous ring"); it
    // binds where no interior process has a longer period.
    if (ci.rendezvous && cj.rendezvous && h.has_ri && h.has_rj)
      h.period = std::max(h.period, W + ci.arrive + ci.recv + cj.arrive + cj.recv);
    h.hop_x = W + ci.arrive + (h.has_rj ? ri_then + cj.recv : ci.recv);
    h.hop_y = W + (h.has_si ? gap_i : 0) + cj.arrive + cj.recv;
    return h;
  };
  std::array<std::array<Shape, 4>, 4> shapes{};
  for (int i = 0; i < ax.size; ++i)
    for (int j = 0; j < ay.size; ++j) shapes[i][j] = shape(ax.at[i], ay.at[j]);

  Grid entry{}, finish{};  // per representative process (global coordinates)
  // Octant pairs in Sweep3D order; +1 means data flows towards higher pi (pj).
  const int dirs[4][2] = {{-1, -1}, {-1, +1}, {+1, -1}, {+1, +1}};
  for (const auto& d : dirs) {
    // The representative set is symmetric, so flipping an axis reverses its indices.
    auto gi = [&](int i) { return d[0] > 0 ? i : ax.size - 1 - i; };
    auto gj = [&](int j) { return d[1] > 0 ? j : ay.size - 1 - j; };
    // A value of the process at local (x, y), anywhere on the grid, from a
    // grid of representatives: between them, interpolated (exact where the
    // value is affine in the coordinate, as hop counts are).
    auto value_at = [&](const Grid& g, std::int64_t x, std::int64_t y, bool global) -> Picoseconds {
      auto lerp = [](const Axis& a, std::int64_t v, auto f) -> Picoseconds {
        for (int k = 0; k + 1 < a.size; ++k)
          if (a.at[k] < v && v < a.at[k + 1]) {
            const double lo = static_cast<double>(f(a.at[k])), hi = static_cast<double>(f(a.at[k + 1]));
            const double t = static_cast<double>(v - a.at[k]) / static_cast<double>(a.at[k + 1] - a.at[k]);
            return static_cast<Picoseconds>(lo + (hi - lo) * t + 0.5);
          }
        return f(v);
      };
      return lerp(ax, x, [&](std::int64_t xx) {
        return lerp(ay, y, [&](std::int64_t yy) {
          const int i = ax.index(xx), j = ay.index(yy);
          return global ? g[gi(i)][gj(j)] : g[i][j];
        });
      });
    };
    // A: the first block's compute start; Z, Z2: the last and next-to-last
    // block's compute start; first_posted: above S, when the receivers of the
    // first block's sends have posted (local representative indices).
    Grid A{}, Z{}, Z2{}, first_posted{};
    for (int i = 0; i < ax.size; ++i) {
      const std::int64_t x = ax.at[i];
      for (int j = 0; j < ay.size; ++j) {
        const std::int64_t y = ay.at[j];
        const Shape& h = shapes[i][j];
        const auto dx = static_cast<Picoseconds>(i > 0 ? x - ax.at[i - 1] : 0);
        const auto dy = static_cast<Picoseconds>(j > 0 ? y - ay.at[j - 1] : 0);
        auto hops = [&](const Grid& g, Picoseconds v) {
          if (i > 0) v = std::max(v, g[i - 1][j] + dx * h.hop_x);
          if (j > 0) v = std::max(v, g[i][j - 1] + dy * h.hop_y);
          return v;
        };
        const Picoseconds a = hops(A, entry[gi(i)][gj(j)] + h.recvs);
        A[i][j] = a;
        // Above S the first block's sends complete only once the receivers
        // have posted, which they do when they finish the previous octant pair.
        Picoseconds posted = 0;
        if (h.has_si && ci.rendezvous) posted = value_at(entry, x + 1, y, true) + (h.has_sj ? cj.complete : 0);
        if (h.has_sj && cj.rendezvous)
          posted = std::max(posted, value_at(entry, x, y + 1, true) + (h.has_ri ? ci.recv : 0));
        first_posted[i][j] = posted;
        const Picoseconds first_done = std::max(a + W + h.sends, posted);
        auto stacked = [&](Picoseconds blocks_after_first) {
          if (blocks_after_first == 0) return a;
          return std::max(a + blocks_after_first * h.period,
                          first_done + h.recvs + (blocks_after_first - 1) * h.period);
        };
        Z[i][j] = hops(Z, stacked(B - 1));
        Z2[i][j] = B >= 2 ? hops(Z2, stacked(B - 2)) : 0;
      }
    }
    // Finish of each process: its last block's sends complete; above S no
    // earlier than the receivers post that block's receive, so a process
    // runs at the pace of a slower downstream neighbour.
    for (int i = 0; i < ax.size; ++i) {
      const std::int64_t x = ax.at[i];
      for (int j = 0; j < ay.size; ++j) {
        const std::int64_t y = ay.at[j];
        const Shape& h = shapes[i][j];
        Picoseconds f = Z[i][j] + W + h.sends;
        if (B < 2) {  // the last block is the first
          f = std::max(f, first_posted[i][j]);
        } else {
          if (h.has_si && ci.rendezvous)  // (x+1, y) posts block B-1 when it completes block B-2
            f = std::max(f, value_at(Z2, x + 1, y, false) + W + shape(x + 1, y).sends + (h.has_sj ? cj.complete : 0));
          if (h.has_sj && cj.rendezvous) {  // (x, y+1) posts the j receive after its i receive
            Picoseconds posted = value_at(Z2, x, y + 1, false) + W + shape(x, y + 1).sends;
            if (h.has_ri) posted = std::max(posted, value_at(Z, x - 1, y + 1, false) + W + ci.arrive) + ci.recv;
            f = std::max(f, posted);
          }
        }
        finish[gi(i)][gj(j)] = f;
      }
    }
    entry = finish;
  }
  Picoseconds sweep = 0;
  for (int i = 0; i < ax.size; ++i)
    for (int j = 0; j < ay.size; ++j) sweep = std::max(sweep, finish[i][j]);

  // The last process to finish (the far corner of the last pair, rank P-1)
  // joins the recursive-doubling allreduce last; it is never a folded rank,
  // so its value reaches everyone in log2(p2) rounds, plus one round back to
  // the folded ranks when P is not a power of two.
  const auto procs = static_cast<std::uint64_t>(n * mj);
  out.allreduce = recursive_doubling_allreduce_after_last(p, procs, c.allreduce_bytes, sync);
  out.iteration = sweep + out.allreduce;
  const auto iters = static_cast<Picoseconds>(c.iterations);
  out.time = out.iteration * iters;

  // Breakdown: per-process means, as the simulator computes them.
  const auto blocks = static_cast<Picoseconds>(8 * out.mmo * out.kb);
  out.compute = blocks * W * iters;
  const std::uint64_t msgs_i = static_cast<std::uint64_t>(blocks) * static_cast<std::uint64_t>((n - 1) * mj);
  const std::uint64_t msgs_j = static_cast<std::uint64_t>(blocks) * static_cast<std::uint64_t>(n * (mj - 1));
  out.messages = (msgs_i + msgs_j) * static_cast<std::uint64_t>(c.iterations);
  double overhead = static_cast<double>(msgs_i) * static_cast<double>(p.send_cpu(out.message_i_bytes) + ci.recv) +
                    static_cast<double>(msgs_j) * static_cast<double>(p.send_cpu(out.message_j_bytes) + cj.recv);
  if (procs > 1) {
    const std::uint64_t p2 = std::bit_floor(procs);
    const double ar_msgs =
        static_cast<double>(p2) * static_cast<double>(std::bit_width(p2) - 1) + 2.0 * static_cast<double>(procs - p2);
    overhead += ar_msgs * static_cast<double>(p.send_cpu(c.allreduce_bytes) + p.recv_cpu(c.allreduce_bytes));
  }
  out.comm = static_cast<Picoseconds>(overhead * static_cast<double>(iters) / static_cast<double>(procs) + 0.5);
  out.sync = out.time > out.compute + out.comm ? out.time - out.compute - out.comm : 0;
  return out;
}

}  // namespace poems::components
