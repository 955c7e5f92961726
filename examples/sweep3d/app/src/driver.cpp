// The KBA wavefront sweep over MPI (see driver.h).
#include "poems/sweep3d/app/driver.h"

#include <mpi.h>

#include <array>
#include <ctime>

namespace poems::sweep3d::app {

namespace {

constexpr int kTagJ = 100;  // j-direction messages: tag 100 + iq

// Seconds of process CPU time.
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Everything one process does in one iteration's eight octants.
class Sweeper {
 public:
  Sweeper(const Decomposition& d, BlockCompute& compute, RankTimes& times)
      : d_(d), compute_(compute), times_(times), face_i_(d.face_i_doubles()), face_j_(d.face_j_doubles()) {}

  void sweep(int iteration) {
    for (int iq = 0; iq < 8; ++iq) {
      const OctantDirection dir = octant_direction(iq);
      const int up_i = d_.neighbour(-dir.di, 0), up_j = d_.neighbour(0, -dir.dj);
      const int down_i = d_.neighbour(dir.di, 0), down_j = d_.neighbour(0, dir.dj);
      BlockStep step;
      step.iteration = iteration;
      step.octant = iq;
      step.dir = dir;
      step.angles = d_.mmi;
      step.it = d_.it;
      step.jt = d_.jt;
      step.i_upstream = up_i != kNoNeighbour;
      step.j_upstream = up_j != kNoNeighbour;
      step.i_downstream = down_i != kNoNeighbour;
      step.j_downstream = down_j != kNoNeighbour;
      for (int mo = 0; mo < d_.mmo; ++mo) {
        step.angle_block = mo;
        step.first_angle = mo * d_.mmi;
        for (int kk = 0; kk < d_.kb; ++kk) {
          step.k_block = dir.dk > 0 ? kk : d_.kb - 1 - kk;
          step.k0 = d_.block_k0(step.k_block);
          step.nk = d_.block_nk(step.k_block);
          step.first_k_block = kk == 0;
          step.last_k_block = kk == d_.kb - 1;
          block(step, iq, up_i, up_j, down_i, down_j);
        }
      }
    }
  }

 private:
  void block(const BlockStep& step, int iq, int up_i, int up_j, int down_i, int down_j) {
    const int ni = static_cast<int>(face_i_.size()), nj = static_cast<int>(face_j_.size());
    double t = MPI_Wtime();
    if (up_i != kNoNeighbour) MPI_Recv(face_i_.data(), ni, MPI_DOUBLE, up_i, iq, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (up_j != kNoNeighbour)
      MPI_Recv(face_j_.data(), nj, MPI_DOUBLE, up_j, kTagJ + iq, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double now = MPI_Wtime();
    times_.recv += now - t;
    t = now;
    compute_.compute(step, face_i_.data(), face_j_.data());
    now = MPI_Wtime();
    times_.compute += now - t;
    t = now;
    if (down_i != kNoNeighbour) {
      MPI_Send(face_i_.data(), ni, MPI_DOUBLE, down_i, iq, MPI_COMM_WORLD);
      times_.messages += 1;
      times_.bytes += sizeof(double) * face_i_.size();
    }
    if (down_j != kNoNeighbour) {
      MPI_Send(face_j_.data(), nj, MPI_DOUBLE, down_j, kTagJ + iq, MPI_COMM_WORLD);
      times_.messages += 1;
      times_.bytes += sizeof(double) * face_j_.size();
    }
    times_.send += MPI_Wtime() - t;
  }

  const Decomposition& d_;
  BlockCompute& compute_;
  RankTimes& times_;
  std::vector<double> face_i_, face_j_;  // the message buffers (Sweep3D's phiib, phijb)
};

// Reductions over all processes onto rank 0.
void reduce(const Deck& deck, const Decomposition& d, const BlockCompute& compute, RunResult& r) {
  const RankTimes& t = r.local;
  const LocalTallies tl = compute.tallies();
  std::array<double, 15> sums{t.compute,
                              t.recv,
                              t.send,
                              t.allreduce,
                              static_cast<double>(t.messages),
                              static_cast<double>(t.bytes),
                              tl.external,
                              tl.source,
                              tl.collisions,
                              tl.absorption,
                              tl.inflow,
                              tl.outflow,
                              tl.flux_sum,
                              tl.fixups,
                              0};
  std::array<double, 15> total{};
  MPI_Reduce(sums.data(), total.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  std::array<double, 3> maxima{t.loop, t.compute, t.cpu}, largest{};
  MPI_Reduce(maxima.data(), largest.data(), 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  const double p = static_cast<double>(d.ranks);
  r.ranks = d.ranks;
  r.compute_mean = total[0] / p;
  r.recv_mean = total[1] / p;
  r.send_mean = total[2] / p;
  r.allreduce_mean = total[3] / p;
  r.messages = static_cast<std::uint64_t>(total[4]);
  r.bytes = static_cast<std::uint64_t>(total[5]);
  r.totals.external = total[6];
  r.totals.source = total[7];
  r.totals.collisions = total[8];
  r.totals.absorption = total[9];
  r.totals.inflow = total[10];
  r.totals.outflow = total[11];
  r.totals.flux_sum = total[12];
  r.totals.fixups = total[13];
  r.time = largest[0];
  r.compute_max = largest[1];
  r.cpu_max = largest[2];

  if (deck.iprint != 1) return;
  // Per-process times, and the flux along i through the grid's centre.
  std::array<double, 8> mine{t.loop,
                             t.compute,
                             t.recv,
                             t.send,
                             t.allreduce,
                             t.cpu,
                             static_cast<double>(t.messages),
                             static_cast<double>(t.bytes)};
  std::vector<double> all(d.rank == 0 ? 8 * static_cast<std::size_t>(d.ranks) : 0);
  MPI_Gather(mine.data(), 8, MPI_DOUBLE, all.data(), 8, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (d.rank == 0)
    for (int q = 0; q < d.ranks; ++q) {
      const double* v = all.data() + 8 * static_cast<std::size_t>(q);
      r.per_rank.push_back(
          {v[0], v[1], v[2], v[3], v[4], v[5], static_cast<std::uint64_t>(v[6]), static_cast<std::uint64_t>(v[7])});
    }
  if (!compute.physical()) return;
  const int jc = deck.jt_g / 2, kc = deck.kt / 2;
  std::vector<double> line(static_cast<std::size_t>(d.it_max), 0.0);
  if (jc >= d.j0 && jc < d.j0 + d.jt)
    for (int i = 0; i < d.it; ++i) line[static_cast<std::size_t>(i)] = compute.flux_at(i, jc - d.j0, kc);
  std::vector<double> lines(d.rank == 0 ? line.size() * static_cast<std::size_t>(d.ranks) : 0);
  MPI_Gather(line.data(), d.it_max, MPI_DOUBLE, lines.data(), d.it_max, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (d.rank != 0) return;
  r.flux_line.assign(static_cast<std::size_t>(deck.it_g), 0.0);
  for (int q = 0; q < d.ranks; ++q) {
    const Decomposition other = decompose(deck, d.ranks, q);
    if (jc < other.j0 || jc >= other.j0 + other.jt) continue;
    for (int i = 0; i < other.it; ++i)
      r.flux_line[static_cast<std::size_t>(other.i0 + i)] =
          lines[static_cast<std::size_t>(q) * line.size() + static_cast<std::size_t>(i)];
  }
}

}  // namespace

RunResult run_sweep3d(const Deck& deck, const Decomposition& d, BlockCompute& compute, const Monitor& monitor) {
  RunResult r;
  Sweeper sweeper(d, compute, r.local);
  const int fixed = deck.fixed_iterations();
  const int limit = fixed > 0 ? fixed : kMaxIterations;
  MPI_Barrier(MPI_COMM_WORLD);
  const double cpu_start = cpu_seconds();
  const double start = MPI_Wtime();
  for (int its = 1; its <= limit; ++its) {
    compute.start_iteration(its);
    sweeper.sweep(its);
    const double local_change = compute.finish_iteration();
    double change = 0;
    const double t = MPI_Wtime();
    MPI_Allreduce(&local_change, &change, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    r.local.allreduce += MPI_Wtime() - t;
    r.iterations = its;
    r.change = change;
    if (monitor && d.rank == 0) monitor(its, change);
    if (fixed == 0 && change < deck.epsi) {
      r.converged = true;
      break;
    }
  }
  r.local.loop = MPI_Wtime() - start;
  r.local.cpu = cpu_seconds() - cpu_start;
  reduce(deck, d, compute, r);
  return r;
}

}  // namespace poems::sweep3d::app
