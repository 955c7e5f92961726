// Runs the real Sweep3D under mpirun for the tests: tiny decks in a
// temporary directory, the result line parsed.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../cli/run_command.h"

struct SweepRun {
  CommandResult command;
  nlohmann::json result;  // the POEMS_SWEEP3D_RESULT object, or null
};

// mpirun as this machine needs it: root must be allowed explicitly, and more
// ranks than cores need --oversubscribe.
inline std::string mpirun_prefix(int ranks) {
  return std::string("mpirun ") + (::geteuid() == 0 ? "--allow-run-as-root " : "") + "--oversubscribe -np " +
         std::to_string(ranks) + " ";
}

inline std::filesystem::path write_deck(const std::string& name, const std::string& text) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("poems_sweep3d_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / name;
  std::ofstream(path) << text;
  return path;
}

// ranks = 0: the program alone, an MPI singleton of one process (what a
// failing run is tested with: mpirun takes seconds to wind down a job whose
// processes exit non-zero).
inline SweepRun run_sweep3d(int ranks, const std::string& deck_name, const std::string& deck,
                            const std::string& extra = "") {
  SweepRun r;
  const auto path = write_deck(deck_name, deck);
  r.command = run_command(sanitizer_environment() + (ranks > 0 ? mpirun_prefix(ranks) : std::string()) +
                          POEMS_SWEEP3D_BINARY + " " + path.string() + extra);
  const std::string prefix = "POEMS_SWEEP3D_RESULT ";
  const auto at = r.command.out.find(prefix);
  if (at != std::string::npos) {
    const auto end = r.command.out.find('\n', at);
    r.result = nlohmann::json::parse(r.command.out.substr(at + prefix.size(), end - at - prefix.size()));
  }
  return r;
}
