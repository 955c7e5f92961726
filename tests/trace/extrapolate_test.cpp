// A trace of P ranks replayed as Q ranks (poems/trace/extrapolate.h): for
// programs whose ranks depend only on their place in a line, a ring or a
// 2-D grid, the trace written at P and extrapolated to Q replays exactly as
// the same program written at Q; what does not extrapolate is refused with
// the reason.
#include "poems/trace/extrapolate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "poems/trace/replay.h"
#include "trace_test_util.h"

namespace poems::trace::testing {
namespace {

const sim::SimulationOptions kMachine = machine(5000, 1000, 2000, 1'000'000, 65536);

std::vector<Picoseconds> replayed(const Trace& t) {
  const sim::SimulationResult r = replay(t, kMachine, ReplayOptions{});
  EXPECT_TRUE(r.completed);
  std::vector<Picoseconds> out;
  for (const auto& rank : r.per_rank) out.push_back(rank.finish);
  return out;
}

// A pipeline: each rank receives from the one before, computes 10 us, sends on.
Trace pipeline(std::uint32_t P) {
  TraceBuilder b(P);
  for (int step = 0; step < 3; ++step)
    for (std::uint32_t r = 0; r < P; ++r) {
      if (r > 0) b.call(r, "MPI_Recv").recv(static_cast<std::int32_t>(r - 1), step, 800).end();
      b.compute(r, ns(10000));
      if (r + 1 < P) b.call(r, "MPI_Send").send(static_cast<std::int32_t>(r + 1), step, 800).end();
    }
  return b.finish();
}

// A 2-D halo exchange on an nx x ny grid (rank = x + nx y), nonblocking, with
// an allreduce every step; the edge ranks do what their neighbours allow.
Trace halo(std::uint32_t nx, std::uint32_t ny) {
  TraceBuilder b(nx * ny);
  for (int step = 0; step < 2; ++step)
    for (std::uint32_t r = 0; r < nx * ny; ++r) {
      const std::uint32_t x = r % nx, y = r / nx;
      b.compute(r, ns(20000 + 1000 * step));
      b.call(r, "MPI_Waitall");
      std::uint32_t slot = 0;
      auto both = [&](bool has, std::uint32_t peer, int tag) {
        if (!has) return;
        b.irecv(static_cast<std::int32_t>(peer), tag, 4096, slot++);
        b.isend(static_cast<std::int32_t>(peer), tag, 4096, slot++);
      };
      both(x > 0, r - 1, 1);
      both(x + 1 < nx, r + 1, 1);
      both(y > 0, r - nx, 2);
      both(y + 1 < ny, r + nx, 2);
      for (std::uint32_t s = 0; s < slot; ++s) b.complete(s);
      b.end();
      b.call(r, "MPI_Allreduce").collective(Collective::Allreduce, 8).end();
    }
  return b.finish();
}

// A 3-D halo exchange on an nx x ny x nz grid (rank = x + nx (y + ny z)),
// nonblocking, with an allreduce every step.
Trace halo3(std::uint32_t nx, std::uint32_t ny, std::uint32_t nz) {
  TraceBuilder b(nx * ny * nz);
  for (int step = 0; step < 2; ++step)
    for (std::uint32_t r = 0; r < nx * ny * nz; ++r) {
      const std::uint32_t x = r % nx, y = r / nx % ny, z = r / (nx * ny);
      b.compute(r, ns(30000 + 500 * step));
      b.call(r, "MPI_Waitall");
      std::uint32_t slot = 0;
      auto both = [&](bool has, std::uint32_t peer, int tag) {
        if (!has) return;
        b.irecv(static_cast<std::int32_t>(peer), tag, 2048, slot++);
        b.isend(static_cast<std::int32_t>(peer), tag, 2048, slot++);
      };
      both(x > 0, r - 1, 1);
      both(x + 1 < nx, r + 1, 1);
      both(y > 0, r - nx, 2);
      both(y + 1 < ny, r + nx, 2);
      both(z > 0, r - nx * ny, 3);
      both(z + 1 < nz, r + nx * ny, 3);
      for (std::uint32_t s = 0; s < slot; ++s) b.complete(s);
      b.end();
      b.call(r, "MPI_Allreduce").collective(Collective::Allreduce, 8).end();
    }
  return b.finish();
}

// LULESH's exchange: every rank of an n x n x n grid posts receives from,
// then sends to, each of its up to 26 neighbours (faces, edges and corners,
// each its own size), waits for them, then an allreduce; a reduce to rank 0
// at the end.
Trace halo26(std::uint32_t n) {
  TraceBuilder b(n * n * n);
  for (std::uint32_t r = 0; r < n * n * n; ++r) {
    const int x = static_cast<int>(r % n), y = static_cast<int>(r / n % n), z = static_cast<int>(r / (n * n));
    const int N = static_cast<int>(n);
    for (int step = 0; step < 2; ++step) {
      b.compute(r, ns(40000 + 700 * step));
      b.call(r, "MPI_Waitall");
      std::uint32_t slot = 0;
      for (int pass = 0; pass < 2; ++pass)
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const int along = (dx != 0) + (dy != 0) + (dz != 0);
              if (along == 0 || x + dx < 0 || x + dx >= N || y + dy < 0 || y + dy >= N || z + dz < 0 || z + dz >= N)
                continue;
              const auto peer = static_cast<std::int32_t>((x + dx) + N * ((y + dy) + N * (z + dz)));
              const std::uint64_t bytes = along == 1 ? 3000 : along == 2 ? 300 : 24;
              // The tag names the direction the message travels.
              const int tag =
                  pass == 0 ? (-dx + 1) + 3 * (-dy + 1) + 9 * (-dz + 1) : (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1);
              if (pass == 0)
                b.irecv(peer, tag, bytes, slot++);
              else
                b.isend(peer, tag, bytes, slot++);
            }
      for (std::uint32_t s = 0; s < slot; ++s) b.complete(s);
      b.end();
      b.call(r, "MPI_Allreduce").collective(Collective::Allreduce, 8).end();
    }
    b.call(r, "MPI_Reduce").collective(Collective::Reduce, 8, 0).end();
  }
  return b.finish();
}

// A token ring: rank 0 starts, each passes it on, rank P-1 back to 0.
Trace ring(std::uint32_t P) {
  TraceBuilder b(P);
  for (std::uint32_t r = 0; r < P; ++r) {
    if (r == 0) {
      b.call(r, "MPI_Send").send(1, 0, 8).end();
      b.call(r, "MPI_Recv").recv(static_cast<std::int32_t>(P - 1), 0, 8).end();
    } else {
      b.call(r, "MPI_Recv").recv(static_cast<std::int32_t>(r - 1), 0, 8).end();
      b.compute(r, ns(3000));
      b.call(r, "MPI_Send").send(static_cast<std::int32_t>((r + 1) % P), 0, 8).end();
    }
  }
  return b.finish();
}

Extrapolation to(std::uint32_t q) {
  Extrapolation x;
  x.ranks = q;
  return x;
}

TEST(Extrapolate, APipelineOfFourReplaysAsThePipelineOfSixtyFour) {
  const Trace four = pipeline(4);
  EXPECT_EQ(recognize_grid(four).describe(), "line of 4");
  const Trace sixty_four = extrapolate(four, to(64));
  ASSERT_EQ(sixty_four.ranks.size(), 64u);
  EXPECT_EQ(replayed(sixty_four), replayed(pipeline(64)));
  EXPECT_EQ(sixty_four.warnings.back(), "extrapolated from 4 ranks (line of 4) to 64 (64)");
}

TEST(Extrapolate, AHaloExchangeOnThreeByThreeReplaysAsEightByEight) {
  const Trace traced = halo(3, 3);
  const GridPattern g = recognize_grid(traced);
  EXPECT_EQ(g.describe(), "2-D grid 3 x 3");
  EXPECT_EQ(replayed(extrapolate(traced, to(64))), replayed(halo(8, 8)));
  // A grid of another shape, given as such.
  Extrapolation wide;
  std::string error;
  ASSERT_TRUE(parse_extrapolation("16x4", wide, error)) << error;
  EXPECT_EQ(replayed(extrapolate(traced, wide)), replayed(halo(16, 4)));
  // Weak scaling keeps the computation; a factor scales it.
  Extrapolation strong = to(64);
  strong.compute_factor = 0.25;
  const Trace quarter = extrapolate(traced, strong);
  EXPECT_EQ(quarter.compute() * 4, extrapolate(traced, to(64)).compute());
}

TEST(Extrapolate, AThreeDimensionalHaloOnThreeCubedReplaysAsEightCubed) {
  const Trace traced = halo3(3, 3, 3);
  EXPECT_EQ(recognize_grid(traced).describe(), "3-D grid 3 x 3 x 3");
  const Trace big = extrapolate(traced, to(512));
  EXPECT_EQ(big.warnings.back(), "extrapolated from 27 ranks (3-D grid 3 x 3 x 3) to 512 (8 x 8 x 8)");
  EXPECT_EQ(replayed(big), replayed(halo3(8, 8, 8)));
  // Another shape, given; and one traced as a box.
  Extrapolation box;
  std::string error;
  ASSERT_TRUE(parse_extrapolation("8x4x2", box, error)) << error;
  EXPECT_EQ(replayed(extrapolate(traced, box)), replayed(halo3(8, 4, 2)));
  const Trace flat = halo3(4, 3, 3);
  EXPECT_EQ(recognize_grid(flat).describe(), "3-D grid 4 x 3 x 3");
  EXPECT_EQ(replayed(extrapolate(flat, to(4 * 3 * 3 * 8))), replayed(halo3(8, 6, 6)));
}

TEST(Extrapolate, ARingWrapsAroundAtEveryCount) {
  const Trace traced = ring(4);
  EXPECT_EQ(recognize_grid(traced).describe(), "ring of 4");
  EXPECT_EQ(replayed(extrapolate(traced, to(16))), replayed(ring(16)));
}

// A line of 4 whose middle ranks compute 11 and 12 us per step between a
// receive and a send (rank 0: 10 us, rank 3: 13 us). Resampled, every middle
// rank of the line of 64 computes the middle ranks' median, 11.5 us, times
// one of the two samples 11/11.5 and 12/11.5: 11 or 12 us, drawn per rank
// and step from the seed; rank 0's and rank 63's steps, which no two traced
// ranks share, are their own times times a drawn sample.
Trace varied_pipeline() {
  TraceBuilder b(4);
  for (int step = 0; step < 3; ++step)
    for (std::uint32_t r = 0; r < 4; ++r) {
      if (r > 0) b.call(r, "MPI_Recv").recv(static_cast<std::int32_t>(r - 1), step, 800).end();
      b.compute(r, ns(10000 + 1000 * static_cast<int>(r)));
      if (r + 1 < 4) b.call(r, "MPI_Send").send(static_cast<std::int32_t>(r + 1), step, 800).end();
    }
  return b.finish();
}

std::vector<Picoseconds> computation(const Rank& r) {
  std::vector<Picoseconds> out;
  for (const Step& s : r.steps)
    if (s.kind == StepKind::Compute) out.push_back(s.value);
  return out;
}

TEST(Extrapolate, ResampledComputationVariesAsTheTracedRanksDid) {
  Extrapolation x = to(64);
  std::string error;
  ASSERT_TRUE(parse_variation("resample", x, error)) << error;
  const Trace big = extrapolate(varied_pipeline(), x);
  EXPECT_EQ(big.warnings[big.warnings.size() - 2],
            "each rank's computation resampled from 6 samples: the computation steps (code region and visit) that "
            "two or more traced ranks make, 3 of them (seed 1)");
  for (const auto& [rank, own] : {std::pair{0u, 10000.0}, std::pair{63u, 13000.0}})
    for (Picoseconds c : computation(big.ranks[rank])) {
      const auto low = static_cast<Picoseconds>(std::llround(own * 1000 * 11 / 11.5));
      const auto high = static_cast<Picoseconds>(std::llround(own * 1000 * 12 / 11.5));
      EXPECT_TRUE(c == low || c == high) << "rank " << rank << ": " << c;
    }
  std::size_t elevens = 0, twelves = 0;
  for (std::uint32_t r = 1; r < 63; ++r)
    for (Picoseconds c : computation(big.ranks[r])) {
      EXPECT_TRUE(c == ns(11000) || c == ns(12000)) << "rank " << r << ": " << c;
      elevens += c == ns(11000), twelves += c == ns(12000);
    }
  EXPECT_EQ(elevens + twelves, 186u);
  EXPECT_GT(elevens, 60u);  // 186 fair draws: a count outside 60..126 has probability below 1e-5
  EXPECT_GT(twelves, 60u);
  // The same seed draws the same; another seed draws otherwise.
  const Trace again = extrapolate(varied_pipeline(), x);
  ASSERT_TRUE(parse_variation("resample,seed=7", x, error)) << error;
  const Trace other = extrapolate(varied_pipeline(), x);
  bool differs = false;
  for (std::uint32_t r = 0; r < 64; ++r) {
    EXPECT_EQ(computation(again.ranks[r]), computation(big.ranks[r]));
    differs = differs || computation(other.ranks[r]) != computation(big.ranks[r]);
  }
  EXPECT_TRUE(differs);
  // Without variation to draw from, refused with the reason: no step of 10 us.
  ASSERT_TRUE(parse_variation("resample", x, error)) << error;
  try {
    extrapolate(ring(4), x);
    ADD_FAILURE() << "extrapolated";
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "no code region that two traced ranks pass computes 10000 ns or more: nothing to resample");
  }
  EXPECT_FALSE(parse_variation("resample,seed=x", x, error));
  EXPECT_EQ(error, "'resample,seed=x' is not allowed; allowed: copy, resample or resample,seed=N (N: 0 to 10^19 - 1)");
}

std::string refusal(const Trace& t, const std::string& q) {
  Extrapolation x;
  std::string error;
  if (!parse_extrapolation(q, x, error)) return "parse: " + error;
  try {
    extrapolate(t, x);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "extrapolated";
}

TEST(Extrapolate, LuleshsTwentySixNeighbourExchangeOnThreeCubedReplaysAsEightCubed) {
  const Trace traced = halo26(3);
  EXPECT_EQ(recognize_grid(traced).describe(), "3-D grid 3 x 3 x 3");
  const Trace big = extrapolate(traced, to(512));
  EXPECT_EQ(big.warnings.back(), "extrapolated from 27 ranks (3-D grid 3 x 3 x 3) to 512 (8 x 8 x 8)");
  EXPECT_EQ(big.messages.size(), halo26(8).messages.size());
  EXPECT_EQ(replayed(big), replayed(halo26(8)));
  // On 2 x 2 x 2 every rank is a corner: refused, as LULESH traced on 8 is.
  EXPECT_EQ(recognize_grid(halo26(2)).describe(), "3-D grid 2 x 2 x 2");
  EXPECT_EQ(refusal(halo26(2), "64"),
            "the trace is a 3-D grid 2 x 2 x 2: no rank is in the middle of dimension 1, so none shows what a rank "
            "with neighbours on both sides does; trace 3 or more along it to extrapolate to 4 x 4 x 4");
}

TEST(Extrapolate, WhatDoesNotExtrapolateIsRefusedWithTheReason) {
  EXPECT_EQ(refusal(halo(2, 2), "16"),
            "the trace is a 2-D grid 2 x 2: no rank is in the middle of dimension 1, so none shows what a rank with "
            "neighbours on both sides does; trace 3 or more along it to extrapolate to 4 x 4");
  // A master sending to each worker: no line, ring or grid.
  TraceBuilder master(6);
  for (std::uint32_t w = 1; w < 6; ++w) {
    master.call(0, "MPI_Send").send(static_cast<std::int32_t>(w), 0, 8).end();
    master.call(w, "MPI_Recv").recv(0, 0, 8).end();
  }
  const std::string no_pattern = refusal(master.finish(), "64");
  EXPECT_NE(no_pattern.find("no Cartesian pattern"), std::string::npos) << no_pattern;
  // Another communicator.
  TraceBuilder split(4);
  const std::uint32_t half = split.comm({0, 1});
  for (std::uint32_t r = 0; r < 2; ++r) split.call(r, "MPI_Barrier").collective(Collective::Barrier, 0, -1, half).end();
  EXPECT_EQ(refusal(split.finish(), "8"),
            "rank 0 communicates on comm 1; only a program on MPI_COMM_WORLD alone is extrapolated (its members "
            "follow from the grid, another communicator's do not)");
  // Per-rank counts.
  TraceBuilder v(4);
  for (std::uint32_t r = 0; r < 4; ++r) v.call(r, "MPI_Alltoallv").collective(Collective::Alltoallv, 64).end();
  EXPECT_EQ(refusal(v.finish(), "8"),
            "rank 0 calls alltoallv, whose per-rank counts do not follow from the grid; it is not extrapolated");
  EXPECT_EQ(refusal(halo(3, 3), "4x4x4x4"), "parse: '4x4x4x4': at most 3 dimensions and 16777216 ranks");
  EXPECT_EQ(refusal(halo(3, 3), "4x4x4"), "the trace is a 2-D grid 3 x 3; a grid of 3 dimension(s) does not extend it");
  EXPECT_EQ(refusal(halo(3, 3), "0"), "parse: '0' is not a rank count or a grid; expected e.g. 1024 or 32x32");
  EXPECT_EQ(refusal(halo(3, 3), "64x1"), "the trace is a 2-D grid 3 x 3; dimension 2 cannot shrink to 1");
  EXPECT_EQ(refusal(ring(4), "3"),
            "the trace's ring of 4 wraps around the line; it needs 4 or more ranks along it, not 3");
}

}  // namespace
}  // namespace poems::trace::testing
