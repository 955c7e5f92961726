// The Sweep3D wavefront as a longest path over (process, block) under the
// simulator's cost rules; docs/models/sweep3d.md has the derivation. Costs
// depend on a process's position only through its class along each axis
// (upstream boundary, interior, downstream boundary), so the path is found on
// a compressed grid of at most 4 x 4 representative processes: the interior
// processes between two representatives all cost the same, and the longest
// path through them is a hop count times a hop cost.
#include "poems/sweep3d/sweep3d_model.h"

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
};

using Grid = std::array<std::array<Picoseconds, 4>, 4>;

// Processes x blocks per octant pair up to which the rendezvous regime walks
// every block (about 14 ns per process and block and pair, so at most about
// 15 us per evaluation; the 255^3 blocking space of loggp_bench stays near
// 0.6 us per evaluation on average, docs/models/sweep3d.md).
constexpr double kEveryBlockLimit = 256;

// Above S a sender's blocks are paced by its receivers' postings, and a j
// send waits for the i send before it to be matched, so the wavefront is no
// longer a function of the representatives alone (docs/models/sweep3d.md,
// "Above S"). Where the grid is small enough this walks every process and
// every block of the four octant pairs instead: one max-plus step per
// operation, the simulator's matched rules for a blocking program (each
// operation starts when the one before completed; a message is processed
// from max(arrival, its receive posted, the receiving NIC free); a send
// starts when its NIC is free, and above S completes no earlier than that
// processing start). Returns the sweep's end (the last process's finish).
Picoseconds every_block_sweep(std::int64_t n, std::int64_t mj, Picoseconds B, Picoseconds W, const MessageCosts& ci,
                              const MessageCosts& cj, Picoseconds sync, const LogGOPS& p, std::uint64_t si,
                              std::uint64_t sj) {
  const auto P = static_cast<std::size_t>(n * mj);
  // Per process (global index): completion of its last operation, and when
  // its NIC's send and receive sides are free.
  std::vector<Picoseconds> end(P, 0), nic_send(P, 0), nic_recv(P, 0);
  // Per block: arrival of the i and j message at their receiver; the
  // receiver's CPU time and NIC after its i receive.
  constexpr Picoseconds kNotYet = ~Picoseconds{0};
  std::vector<Picoseconds> arrive_i(P), arrive_j(P), after_i(P), nic_after_i(P);
  const Picoseconds yi = ci.rendezvous ? sync : 0, yj = cj.rendezvous ? sync : 0;
  const int dirs[4][2] = {{-1, -1}, {-1, +1}, {+1, -1}, {+1, +1}};
  for (const auto& d : dirs) {
    auto at = [&](std::int64_t x, std::int64_t y) {
      const std::int64_t gx = d[0] > 0 ? x : n - 1 - x, gy = d[1] > 0 ? y : mj - 1 - y;
      return static_cast<std::size_t>(gx * mj + gy);
    };
    for (Picoseconds b = 0; b < B; ++b) {
      std::fill(after_i.begin(), after_i.end(), kNotYet);
      // The i receive of (x, y) in this block (its sender, x-1, is done).
      auto receive_i = [&](std::int64_t x, std::int64_t y) {
        const std::size_t k = at(x, y);
        if (after_i[k] != kNotYet) return;
        Picoseconds t = end[k], nic = nic_recv[k];
        if (x > 0) {
          const Picoseconds start = std::max({arrive_i[k], t, nic});
          nic = start + ci.recv_nic;
          t = start + ci.recv;
        }
        after_i[k] = t;
        nic_after_i[k] = nic;
      };
      for (std::int64_t x = 0; x < n; ++x)
        for (std::int64_t y = 0; y < mj; ++y) {
          const std::size_t k = at(x, y);
          receive_i(x, y);
          Picoseconds t = after_i[k], nic = nic_after_i[k];
          if (y > 0) {
            const Picoseconds start = std::max({arrive_j[k], t, nic});
            nic = start + cj.recv_nic;
            t = start + cj.recv;
          }
          nic_recv[k] = nic;
          t += W;
          if (x + 1 < n) {
            const std::size_t r = at(x + 1, y);
            const Picoseconds start = std::max(t, nic_send[k]);
            arrive_i[r] = start + ci.arrive;
            nic_send[k] = start + yi + p.send_nic(si);
            t = start + yi + p.send_cpu(si);
            // The receiver's i receive is posted when its previous block ended.
            if (ci.rendezvous) t = std::max(t, std::max({arrive_i[r], end[r], nic_recv[r]}));
          }
          if (y + 1 < mj) {
            const std::size_t r = at(x, y + 1);
            const Picoseconds start = std::max(t, nic_send[k]);
            arrive_j[r] = start + cj.arrive;
            nic_send[k] = start + yj + p.send_nic(sj);
            t = start + yj + p.send_cpu(sj);
            // The receiver's j receive is posted after its i receive.
            if (cj.rendezvous) {
              receive_i(x, y + 1);
              t = std::max(t, std::max({arrive_j[r], after_i[r], nic_after_i[r]}));
            }
          }
          end[k] = t;
        }
    }
  }
  return *std::max_element(end.begin(), end.end());
}

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
  const Picoseconds sync = rendezvous_sync(p, m.rendezvous_handshake);
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
  const int nx = ax.size, ny = ay.size;
  // What a process does per block depends only on its class on each axis in
  // the pair's local frame, and every pair's frame has the same classes at
  // the same representative indices: one table serves all four pairs.
  struct Shape {
    bool has_ri, has_si, has_rj, has_sj;
    Picoseconds recvs, sends;    // one block's receives and sends
    Picoseconds period;          // one block on this process
    Picoseconds step_x, step_y;  // compute start at the previous representative to here: hops x hop cost
    Picoseconds rest, tail;      // (B-1) periods; the last block's W + sends
  };
  // Receives: i first; the j receive starts when the CPU and the NIC are both free.
  const Picoseconds ri_then = std::max(ci.recv, ci.recv_nic);
  // Sends: i first; the j send starts when the i send completed and the NIC is free.
  const Picoseconds gap_i = std::max(ci.complete, ci.nic_busy);
  // One block's sends by whether the process sends along i and j.
  auto sends_of = [&](bool si, bool sj) -> Picoseconds {
    return si ? (sj ? gap_i + cj.complete : ci.complete) : (sj ? cj.complete : 0);
  };
  const bool ring = ci.rendezvous && cj.rendezvous;
  Shape shapes[4][4];
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j) {
      const std::int64_t x = ax.at[i], y = ay.at[j];
      Shape& h = shapes[i][j];
      h.has_ri = x > 0;
      h.has_si = x < n - 1;
      h.has_rj = y > 0;
      h.has_sj = y < mj - 1;
      h.recvs = (h.has_ri ? (h.has_rj ? ri_then : ci.recv) : 0) + (h.has_rj ? cj.recv : 0);
      h.sends = sends_of(h.has_si, h.has_sj);
      // The CPU chain, or a busier NIC.
      Picoseconds period = W + h.recvs + h.sends;
      if (h.has_si && h.has_sj) period = std::max(period, gap_i + cj.nic_busy);
      if (h.has_si != h.has_sj) period = std::max(period, h.has_si ? ci.nic_busy : cj.nic_busy);
      period = std::max(period, (h.has_ri ? ci.recv_nic : 0) + (h.has_rj ? cj.recv_nic : 0));
      // Above S in both directions the unit square below-left of this process
      // forms a cycle per block (docs/models/sweep3d.md, "rendezvous ring"); it
      // binds where no interior process has a longer period.
      if (ring && h.has_ri && h.has_rj) period = std::max(period, W + ci.arrive + ci.recv + cj.arrive + cj.recv);
      h.period = period;
      const Picoseconds hop_x = W + ci.arrive + (h.has_rj ? ri_then + cj.recv : ci.recv);
      const Picoseconds hop_y = W + (h.has_si ? gap_i : 0) + cj.arrive + cj.recv;
      h.step_x = i > 0 ? static_cast<Picoseconds>(x - ax.at[i - 1]) * hop_x : 0;
      h.step_y = j > 0 ? static_cast<Picoseconds>(y - ay.at[j - 1]) * hop_y : 0;
      h.rest = (B - 1) * period;
      h.tail = W + h.sends;
    }

  // Per representative process (global coordinates): when it enters the
  // current pair (finishes the previous one); 0 for the first.
  Grid entry, finish;
  for (auto& row : entry) row.fill(0);
  // Octant pairs in Sweep3D order; +1 means data flows towards higher pi (pj).
  const int dirs[4][2] = {{-1, -1}, {-1, +1}, {+1, -1}, {+1, +1}};
  if (!ci.rendezvous && !cj.rendezvous) {
    // Below S nothing waits for a receiver to post: a process's first block
    // ends by W + sends, so the last block starts (B-1) periods after the
    // first (the period covers W + receives + sends) or when a hop delivers.
    Grid A, Z;  // first and last block's compute start (local indices)
    for (const auto& d : dirs) {
      for (int i = 0; i < nx; ++i) {
        const int g_i = d[0] > 0 ? i : nx - 1 - i;
        for (int j = 0; j < ny; ++j) {
          const int g_j = d[1] > 0 ? j : ny - 1 - j;
          const Shape& h = shapes[i][j];
          Picoseconds a = entry[g_i][g_j] + h.recvs;
          if (i > 0) a = std::max(a, A[i - 1][j] + h.step_x);
          if (j > 0) a = std::max(a, A[i][j - 1] + h.step_y);
          Picoseconds z = a + h.rest;
          if (i > 0) z = std::max(z, Z[i - 1][j] + h.step_x);
          if (j > 0) z = std::max(z, Z[i][j - 1] + h.step_y);
          A[i][j] = a;
          Z[i][j] = z;
          finish[g_i][g_j] = z + h.tail;
        }
      }
      entry = finish;
    }
  } else {
    // Where a coordinate next to a representative lies among the
    // representatives: at one (k == k1) or between k and k1 at fraction t.
    struct Pos {
      int k = 0, k1 = 0;
      double t = 0;
    };
    auto pos = [](const Axis& a, std::int64_t v) {
      Pos p;
      for (int k = 0; k < a.size; ++k) {
        if (a.at[k] == v) {
          p.k = p.k1 = k;
          return p;
        }
        if (k + 1 < a.size && a.at[k] < v && v < a.at[k + 1]) {
          p.k = k;
          p.k1 = k + 1;
          p.t = static_cast<double>(v - a.at[k]) / static_cast<double>(a.at[k + 1] - a.at[k]);
          return p;
        }
      }
      return p;
    };
    // The coordinates after (+1) and before (-1) each representative.
    Pos next_x[4], prev_x[4], next_y[4];
    for (int i = 0; i < nx; ++i) {
      next_x[i] = pos(ax, ax.at[i] + 1);
      prev_x[i] = pos(ax, ax.at[i] - 1);
    }
    for (int j = 0; j < ny; ++j) next_y[j] = pos(ay, ay.at[j] + 1);
    auto lerp = [](const Pos& p, auto f) -> Picoseconds {
      if (p.k == p.k1) return f(p.k);
      const double lo = static_cast<double>(f(p.k)), hi = static_cast<double>(f(p.k1));
      return static_cast<Picoseconds>(lo + (hi - lo) * p.t + 0.5);
    };
    for (const auto& d : dirs) {
      auto gi = [&](int i) { return d[0] > 0 ? i : nx - 1 - i; };
      auto gj = [&](int j) { return d[1] > 0 ? j : ny - 1 - j; };
      // A value of the process at local (px, py), anywhere on the grid, from a
      // grid of representatives: between them, interpolated (exact where the
      // value is affine in the coordinate, as hop counts are).
      auto local_at = [&](const Grid& g, const Pos& px, const Pos& py) {
        return lerp(px, [&](int i) { return lerp(py, [&](int j) { return g[i][j]; }); });
      };
      auto entry_at = [&](const Pos& px, const Pos& py) {
        return lerp(px, [&](int i) { return lerp(py, [&](int j) { return entry[gi(i)][gj(j)]; }); });
      };
      const Pos here_x[4] = {{0, 0, 0}, {1, 1, 0}, {2, 2, 0}, {3, 3, 0}};
      const Pos* here_y = here_x;
      // A: the first block's compute start; Z, Z2: the last and next-to-last
      // block's compute start; first_posted: above S, when the receivers of the
      // first block's sends have posted (local representative indices).
      Grid A, Z, Z2, first_posted, pace;
      // pace: above S a sender's blocks follow its receivers' posting, so from
      // the second block on a process runs no faster than any process
      // downstream of it along rendezvous messages (the slowest period there).
      for (int i = nx - 1; i >= 0; --i)
        for (int j = ny - 1; j >= 0; --j) {
          const Shape& h = shapes[i][j];
          Picoseconds v = h.period;
          if (h.has_si && ci.rendezvous && i + 1 < nx) v = std::max(v, pace[i + 1][j]);
          if (h.has_sj && cj.rendezvous && j + 1 < ny) v = std::max(v, pace[i][j + 1]);
          pace[i][j] = v;
        }
      // The first blocks first: the posting times below read any of them.
      for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j) {
          const Shape& h = shapes[i][j];
          Picoseconds a = entry[gi(i)][gj(j)] + h.recvs;
          if (i > 0) a = std::max(a, A[i - 1][j] + h.step_x);
          if (j > 0) a = std::max(a, A[i][j - 1] + h.step_y);
          A[i][j] = a;
        }
      for (int i = 0; i < nx; ++i) {
        for (int j = 0; j < ny; ++j) {
          const Shape& h = shapes[i][j];
          auto hops = [&](const Grid& g, Picoseconds v) {
            if (i > 0) v = std::max(v, g[i - 1][j] + h.step_x);
            if (j > 0) v = std::max(v, g[i][j - 1] + h.step_y);
            return v;
          };
          const Picoseconds a = A[i][j];
          // Above S the first block's sends complete only once the receivers
          // have posted, which they do when they finish the previous octant pair.
          Picoseconds posted = 0;
          if (h.has_si && ci.rendezvous) posted = entry_at(next_x[i], here_y[j]) + (h.has_sj ? cj.complete : 0);
          if (h.has_sj && cj.rendezvous) {
            // (x, y+1) posts its j receive once its i receive completed: the
            // i message of (x-1, y+1)'s first block.
            Picoseconds ready = entry_at(here_x[i], next_y[j]);
            if (h.has_ri) ready = std::max(ready, local_at(A, prev_x[i], next_y[j]) + W + ci.arrive) + ci.recv;
            posted = std::max(posted, ready);
          }
          first_posted[i][j] = posted;
          const Picoseconds first_done = std::max(a + W + h.sends, posted);
          auto stacked = [&](Picoseconds blocks_after_first) {
            if (blocks_after_first == 0) return a;
            return std::max(a + blocks_after_first * h.period,
                            first_done + h.recvs + (blocks_after_first - 1) * pace[i][j]);
          };
          Z[i][j] = hops(Z, stacked(B - 1));
          Z2[i][j] = B >= 2 ? hops(Z2, stacked(B - 2)) : 0;
        }
      }
      // Finish of each process: its last block's sends complete; above S no
      // earlier than the receivers post that block's receive, so a process
      // runs at the pace of a slower downstream neighbour.
      for (int i = 0; i < nx; ++i) {
        const std::int64_t x = ax.at[i];
        for (int j = 0; j < ny; ++j) {
          const std::int64_t y = ay.at[j];
          const Shape& h = shapes[i][j];
          Picoseconds f = Z[i][j] + h.tail;
          if (B < 2) {  // the last block is the first
            f = std::max(f, first_posted[i][j]);
          } else {
            if (h.has_si && ci.rendezvous)  // (x+1, y) posts block B-1 when it completes block B-2
              f = std::max(f, local_at(Z2, next_x[i], here_y[j]) + W + sends_of(x + 1 < n - 1, h.has_sj) +
                                  (h.has_sj ? cj.complete : 0));
            if (h.has_sj && cj.rendezvous) {  // (x, y+1) posts the j receive after its i receive
              Picoseconds posted = local_at(Z2, here_x[i], next_y[j]) + W + sends_of(h.has_si, y + 1 < mj - 1);
              if (h.has_ri) posted = std::max(posted, local_at(Z, prev_x[i], next_y[j]) + W + ci.arrive) + ci.recv;
              f = std::max(f, posted);
            }
          }
          finish[gi(i)][gj(j)] = f;
        }
      }
      entry = finish;
    }
  }
  Picoseconds sweep = 0;
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j) sweep = std::max(sweep, finish[i][j]);
  // Only where the ring exists (messages above S along both axes of a
  // two-dimensional grid): elsewhere the walk above is exact.
  if (ring && n > 1 && mj > 1 && static_cast<double>(B) * static_cast<double>(n * mj) <= kEveryBlockLimit)
    sweep = every_block_sweep(n, mj, B, W, ci, cj, sync, p, out.message_i_bytes, out.message_j_bytes);

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

const std::vector<std::string>& sweep3d_parameter_names() {
  static const std::vector<std::string> names = {"it_g", "jt_g", "kt", "npe_i",     "npe_j",
                                                 "mk",   "mmi",  "mm", "iterations"};
  return names;
}

namespace {

// Where each of sweep3d_parameter_names() sits among a model's parameters.
std::vector<std::size_t> parameter_slots(const std::vector<std::string>& names) {
  std::vector<std::size_t> slots;
  for (const std::string& want : sweep3d_parameter_names()) {
    auto it = std::find(names.begin(), names.end(), want);
    if (it == names.end())
      throw Sweep3DParameterError("the Sweep3D closed form needs the model parameter '" + want + "'");
    slots.push_back(static_cast<std::size_t>(it - names.begin()));
  }
  return slots;
}

Sweep3DConfig config_at(const std::vector<std::size_t>& slots, std::span<const double> values) {
  auto get = [&](std::size_t k) { return static_cast<std::int64_t>(values[slots[k]]); };
  Sweep3DConfig c;
  c.it_g = get(0);
  c.jt_g = get(1);
  c.kt = get(2);
  c.npe_i = get(3);
  c.npe_j = get(4);
  c.mk = get(5);
  c.mmi = get(6);
  c.mm = get(7);
  c.iterations = get(8);
  return c;
}

class BoundSweep3D : public BoundClosedForm {
 public:
  explicit BoundSweep3D(const std::vector<std::string>& names) : slots_(parameter_slots(names)) {}
  ClosedFormResult evaluate(std::span<const double> values, const ClosedFormMachine& m, bool details) const override {
    const Sweep3DConfig c = config_at(slots_, values);
    const Sweep3DPrediction s = predict_sweep3d(c, {m.params, m.rendezvous_handshake, m.ns_per_work});
    ClosedFormResult out;
    out.time = s.time;
    out.compute = s.compute;
    out.comm = s.comm;
    out.messages = s.messages;
    out.processes = static_cast<std::uint32_t>(c.npe_i * c.npe_j);
    if (details)
      out.details = {{"iteration_ns", static_cast<double>(s.iteration) / 1000.0},
                     {"allreduce_ns", static_cast<double>(s.allreduce) / 1000.0},
                     {"message_i_bytes", s.message_i_bytes},
                     {"message_j_bytes", s.message_j_bytes}};
    return out;
  }

 private:
  std::vector<std::size_t> slots_;
};

}  // namespace

Sweep3DConfig sweep3d_config(const std::vector<std::string>& names, const std::vector<double>& values) {
  const std::vector<std::size_t> slots = parameter_slots(names);
  if (values.size() < names.size()) throw Sweep3DParameterError("fewer values than Sweep3D parameters");
  return config_at(slots, values);
}

void register_sweep3d_closed_form() {
  register_closed_form({"Sweep3D", "the KBA wavefront (docs/models/sweep3d.md)",
                        [](const std::vector<std::string>& names) -> std::unique_ptr<BoundClosedForm> {
                          return std::make_unique<BoundSweep3D>(names);
                        }});
}

}  // namespace poems::components
