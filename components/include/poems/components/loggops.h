// LogGOPS parameters and the per-message costs every POEMS evaluator shares;
// they belong to the network component model, so the simulator, the analytic
// evaluator and the closed forms all read them from here
// (docs/simulator.md; the LogGOPSim paper, section 1.3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "poems/taskgraph/schedule.h"

namespace poems::components {

using taskgraph::Picoseconds;

// Per-byte costs are kept in femtoseconds per byte so that e.g. G = 0.04 ns/B
// (a 200 Gb/s link) or 0.0125 ns/B are exact; a message's per-byte term is
// rounded to the nearest picosecond (half up) once per message.
using FemtosecondsPerByte = std::uint64_t;

struct LogGOPS {
  Picoseconds L = 2'500'000;          // latency
  Picoseconds o = 1'500'000;          // CPU overhead per message
  Picoseconds g = 1'000'000;          // NIC gap per message
  FemtosecondsPerByte G = 6'000'000;  // NIC gap per byte
  FemtosecondsPerByte O = 0;          // CPU overhead per byte
  std::uint64_t S = 65535;            // eager limit: messages of more than S bytes use rendezvous

  // n·X fs, rounded to the nearest ps (half up).
  static Picoseconds times_bytes(std::uint64_t n, FemtosecondsPerByte x) {
    if (n < (std::uint64_t{1} << 32) && x < (std::uint64_t{1} << 31))  // no overflow: stay in 64 bits
      return (n * x + 500) / 1000;
    unsigned __int128 fs = static_cast<unsigned __int128>(n) * x;
    return static_cast<Picoseconds>((fs + 500) / 1000);
  }
  // (s-1)·X for a message of s bytes; 0 for s <= 1.
  static Picoseconds per_byte(std::uint64_t bytes, FemtosecondsPerByte x) {
    if (bytes <= 1 || x == 0) return 0;
    return times_bytes(bytes - 1, x);
  }
  Picoseconds send_cpu(std::uint64_t s) const { return o + per_byte(s, O); }
  Picoseconds send_nic(std::uint64_t s) const { return g + per_byte(s, G); }
  Picoseconds recv_cpu(std::uint64_t s) const {
    Picoseconds so = per_byte(s, O), sg = per_byte(s, G);
    return o + (so > sg ? so : sg);
  }
  Picoseconds recv_nic(std::uint64_t s) const { return g + per_byte(s, G); }
  bool rendezvous(std::uint64_t s) const { return s > S; }
};

// What a rendezvous message (more than S bytes) adds before its data moves:
// L for the request to reach the receiver, or the request/acknowledge round
// trip 2L + 2o with the handshake option. The simulator, the analytic
// evaluator and the closed forms all take it from here.
inline Picoseconds rendezvous_sync(const LogGOPS& p, bool handshake) { return handshake ? 2 * (p.L + p.o) : p.L; }

// Converts nanoseconds (or ns per byte) given as a double to integer ps (fs
// per byte), rounding to the nearest unit; nullopt if negative, not finite or
// too large.
std::optional<Picoseconds> ns_to_ps(double ns);
std::optional<FemtosecondsPerByte> ns_per_byte_to_fs(double ns_per_byte);

// Exact decimal nanoseconds of a picosecond count: 34914, 0.04, 6995.5.
std::string ps_to_ns_text(Picoseconds ps);
// "2500ns", "0.04ns/B": the canonical text of a parameter value.
std::string format_ps(Picoseconds ps);
std::string format_fs_per_byte(FemtosecondsPerByte fs);

// The machine as run keys hold it ({"L_ps", "o_ps", "g_ps", "G_fs_per_byte",
// "O_fs_per_byte", "S_bytes", "rendezvous_handshake"}): `poems simulate`,
// `poems analyze` and the recommender key runs alike, so each finds the
// others' stored results.
nlohmann::json machine_key_json(const LogGOPS& params, bool rendezvous_handshake);

}  // namespace poems::components
