// A recorded run of P ranks replayed as Q ranks (docs/trace.md,
// "Extrapolation"), as LogGOPSim's tool chain does: the ranks are
// classified by their communication pattern, and every rank of the larger
// grid copies the program of a traced rank in the same role, its
// point-to-point peers moved by the same offsets; collectives on the world
// communicator are lowered again at Q ranks by the replay. A pattern that is
// not recognized is refused with the reason, never extrapolated blindly.
//
// Recognized: a 1-D, 2-D or 3-D Cartesian grid (the layout MPI_Cart_create or
// the program's own decomposition gives), every message between ranks at
// most one step apart in each dimension, with or without wrap-around (a
// ring, a periodic grid; 4 or more ranks along a wrapping dimension, as
// around 3 every pair is neighbours). A rank's role is, per dimension,
// first, last or in the middle (in a ring too: its first rank may start
// it); a dimension that grows needs a traced rank in the middle of it, so 3
// or more traced along it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "poems/trace/trace.h"

namespace poems::trace {

struct Extrapolation {
  std::uint32_t ranks = 0;          // Q; or
  std::vector<std::uint32_t> grid;  // its dimensions ("32x32", "16x16x16"); empty: chosen from Q
  // Each computation step's time x this factor: 1 keeps it (weak scaling:
  // a rank's share stays); for strong scaling, a scaling model's value at Q
  // over its value at P (docs/scaling.md).
  double compute_factor = 1.0;
  // false: each rank's computation is its traced rank's (a copy). true: the
  // traced ranks' variation resampled (src/compute_variation.h): each
  // computation step of 10 us or more is the median of the traced ranks'
  // steps in the same code region and visit, times a sample of how they
  // varied about it, drawn per rank and step from `seed`; `cpu_time` says
  // which time varies (Step::cpu).
  bool resample = false;
  std::uint64_t seed = 1;
  bool cpu_time = false;
};

// "copy" (the default), "resample" or "resample,seed=N"; false with `error`.
bool parse_variation(std::string_view text, Extrapolation& out, std::string& error);

// "1024", "32x32" or "16x16x16"; false with `error` on bad text.
bool parse_extrapolation(std::string_view text, Extrapolation& out, std::string& error);

// The pattern `trace` shows: its grid's dimensions and whether each wraps;
// TraceError saying why when there is none.
struct GridPattern {
  std::vector<std::uint32_t> dims;  // the first varies fastest: rank = x + dims[0] * y
  std::vector<bool> periodic;
  std::string describe() const;  // "2-D grid 4 x 4", "3-D grid 3 x 3 x 3", "ring of 8"
};
GridPattern recognize_grid(const Trace& trace);

// The trace of Q ranks; TraceError when the pattern is not recognized or Q
// does not fit it (the message says which and why).
Trace extrapolate(const Trace& trace, const Extrapolation& x);

}  // namespace poems::trace
