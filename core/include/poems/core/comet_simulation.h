// The simulation column of `poems comet` (docs/comet.md, "The PSL model"):
// the CoMet kernels written in PSL (examples/comet/comet.psl, one model per
// kernel) simulated by simulation[MPI-Sim] on the machine of the other
// predictions, and timed as comet.c times them: per repetition, the slowest
// rank's time from its own exit of the barrier to the end of its part of
// the kernel; the minimum, median and maximum over the timed repetitions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "poems/core/comet.h"
#include "poems/core/machine.h"
#include "poems/taskgraph/dtg.h"

namespace poems::core {

class System;

// examples/comet/comet.psl: beside the registered comet.c.
std::string comet_model_file();
// The PSL model of a kernel ("echo" -> "CometEcho").
std::string comet_model_name(const std::string& kernel);

// What comet.c derives from the number of ranks, for the models' parameters.
struct CometLayout {
  std::uint32_t rows = 1, cols = 1;  // the squarest grid: rows the largest divisor of P up to sqrt(P)
  std::uint64_t matrix = 256;        // 256 rounded up to a multiple of P
  double load = 1;                   // contention: the share of the other ranks exchanging
  std::uint32_t warmup = 2;          // untimed repetitions first
};
CometLayout comet_layout(std::uint32_t procs);

class CometSimulator {
 public:
  // Loads comet.psl (InputError for errors in it) once per kernel asked.
  CometSimulator(const Machine& machine, std::uint32_t procs, std::uint32_t reps);
  ~CometSimulator();
  CometSimulator(const CometSimulator&) = delete;
  CometSimulator& operator=(const CometSimulator&) = delete;

  // The kernel at `bytes`: nullopt for a kernel comet.c skips on these
  // ranks (echo, pairwise, contention, overlap on one rank). Throws
  // EvaluationError when a simulation fails.
  // `previous`: the size comet.c runs before this one (nullopt: the first),
  // whose repetitions and MPI_Allreduce of their times the model replays.
  std::optional<CometFigure> figure(const std::string& kernel, std::uint64_t bytes,
                                    std::optional<std::uint64_t> previous);
  // The model parameters of one kernel at one size, the repetitions aside
  // (what the run key binds).
  taskgraph::ParameterBinding parameters(const std::string& kernel, std::uint64_t bytes,
                                         std::optional<std::uint64_t> previous) const;
  // SHA-256 of comet.psl's text.
  const std::string& spec_hash() const { return hash_; }

 private:
  // Each rank's finish time (ps) after `repetitions`, the last one stopping
  // after its barrier when `barrier_only_last`.
  std::vector<std::uint64_t> finish_times(const std::string& kernel, std::uint64_t bytes,
                                          std::optional<std::uint64_t> previous, std::uint32_t repetitions,
                                          bool barrier_only_last);
  const System& system(const std::string& kernel);

  Machine machine_;
  std::uint32_t procs_, reps_;
  CometLayout layout_;
  std::string hash_;
  std::map<std::string, std::unique_ptr<System>> systems_;
};

}  // namespace poems::core
