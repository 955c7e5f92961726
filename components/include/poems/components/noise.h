// Operating-system noise (docs/simulator.md, "OS noise"): detours during
// which a rank's CPU runs something else, so a computation that meets one
// ends that much later. The engine asks one question per computation: when
// does `work` ps started by rank r at time t end? Every evaluator that runs
// on the simulator (PSL models, GOAL, collectives, direct execution, trace
// replay, the critical path) therefore sees the same noise.
//
// Three sources of detours, each rank with its own, reproducible from a seed:
// - periodic: a detour of length d every T, at a phase of its own per rank
//   (uniform in [0, T), or 0 for all ranks when aligned);
// - poisson: detours of length d starting as a Poisson process of mean
//   interval I (overlapping detours merge: the CPU is taken once);
// - a trace: detours (start, length) read from a file, repeated with the
//   file's period, each rank shifted by a phase of its own (or 0 when aligned).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/taskgraph/schedule.h"

namespace poems::components {

using taskgraph::Picoseconds;

enum class NoiseKind : std::uint8_t { None, Periodic, Poisson, Trace };
const char* noise_kind_name(NoiseKind k);  // "none", "periodic", "poisson", "trace"

struct NoiseSpec {
  NoiseKind kind = NoiseKind::None;
  Picoseconds period = 0;    // periodic: T; trace: the cycle (0: the end of its last detour)
  Picoseconds interval = 0;  // poisson: mean time between detour starts
  Picoseconds detour = 0;    // periodic and poisson: each detour's length
  bool aligned = false;      // every rank at phase 0 (else an independent uniform phase each)
  std::uint64_t seed = 1;
  std::string file;  // trace: the file the detours were read from (for messages)
  // trace: detours as (start, length) within one cycle, sorted, merged.
  std::vector<std::pair<Picoseconds, Picoseconds>> detours;
};

// A noise description out of range, or a noise file that cannot be read:
// the message names the parameter and its range, or locates the line.
class NoiseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command line's description (docs/simulator.md, "OS noise"):
//   none
//   periodic:period=1ms,detour=25us[,phase=aligned|random][,seed=N]
//   poisson:interval=1ms,detour=25us[,seed=N]
//   file:PATH[,period=10ms][,phase=...][,seed=N]
// Times take units (ns if none). Throws NoiseError naming the field.
NoiseSpec parse_noise(std::string_view text);
// A trace file: one detour per line, "start length" in ns (units allowed,
// e.g. "1.5ms 20us"); '#' starts a comment. Throws NoiseError with
// "file:line: ..." on a bad line or a detour that overlaps the one before.
std::vector<std::pair<Picoseconds, Picoseconds>> read_noise_file(const std::string& path);
// Checks a spec built field by field (from PSL); NoiseError on a bad one.
void check_noise(const NoiseSpec& spec);

class Noise {
 public:
  explicit Noise(NoiseSpec spec);  // check_noise first
  const NoiseSpec& spec() const { return spec_; }
  bool active() const { return spec_.kind != NoiseKind::None; }

  // The end of `work` ps of computation rank `rank` starts at `t`: the work
  // plus every detour that falls into it, one in progress at `t` included.
  // Work of 0 ends at t.
  Picoseconds finish(std::uint32_t rank, Picoseconds t, Picoseconds work) const;
  // The rank's phase: where its pattern starts (periodic and trace).
  Picoseconds phase(std::uint32_t rank) const;
  // The fraction of time the CPU is taken, on average.
  double load() const;
  std::string describe() const;  // "periodic noise: 25us every 1ms, random phases (seed 1)"

 private:
  Picoseconds finish_periodic(Picoseconds t, Picoseconds work, Picoseconds phase) const;
  Picoseconds finish_trace(Picoseconds t, Picoseconds work, Picoseconds phase) const;
  Picoseconds finish_poisson(std::uint32_t rank, Picoseconds t, Picoseconds work) const;

  NoiseSpec spec_;
  Picoseconds cycle_ = 0;       // trace: its period
  Picoseconds cycle_busy_ = 0;  // trace: detour time per cycle
};

// The noise as run keys hold it (a trace by its detours' digest).
nlohmann::json noise_key_json(const NoiseSpec& spec);
// The whole spec, detours included, and back (direct execution's runtime
// gets its machine this way); NoiseError on a malformed or out-of-range one.
nlohmann::json noise_spec_json(const NoiseSpec& spec);
NoiseSpec noise_spec_from_json(const nlohmann::json& j);

}  // namespace poems::components
