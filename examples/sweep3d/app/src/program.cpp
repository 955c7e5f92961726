// The Sweep3D program between MPI_Init and MPI_Finalize (see driver.h).
#include <mpi.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "poems/sweep3d/app/driver.h"
#include "poems/sweep3d/app/report.h"

namespace poems::sweep3d::app {

namespace {

constexpr int kExitOk = 0, kExitDeck = 1, kExitUsage = 2, kExitRun = 3;
constexpr std::streamsize kMaxDeckBytes = 1 << 20;

const char* const kUsage =
    "usage: sweep3d [DECK] [--modeled-wg NS]\n"
    "  DECK              the 5-line Sweep3D input deck (default: input)\n"
    "  --modeled-wg NS   replace the kernel by a spin of NS nanoseconds per cell-angle\n"
    "                    (no cell arrays; needs a fixed iteration count, epsi < 0)\n";

struct Arguments {
  std::string deck = "input";
  bool modeled = false;
  double wg_ns = 0;
  std::string error;  // usage error
  bool help = false;
};

Arguments parse_arguments(int argc, const char* const* argv) {
  Arguments a;
  bool have_deck = false;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "-h" || arg == "--help") {
      a.help = true;
    } else if (arg == "--modeled-wg") {
      if (k + 1 >= argc) {
        a.error = "--modeled-wg needs a value: nanoseconds per cell-angle, e.g. --modeled-wg 8";
        return a;
      }
      const std::string v = argv[++k];
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), a.wg_ns);
      if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(a.wg_ns) || a.wg_ns < 0 || a.wg_ns > 1e9) {
        a.error = "--modeled-wg " + v + ": allowed: a number of nanoseconds from 0 to 1e9";
        return a;
      }
      a.modeled = true;
    } else if (!arg.empty() && arg[0] == '-') {
      a.error = "unknown option '" + arg + "'";
      return a;
    } else if (have_deck) {
      a.error = "more than one deck given ('" + a.deck + "', '" + arg + "')";
      return a;
    } else {
      a.deck = arg;
      have_deck = true;
    }
  }
  return a;
}

}  // namespace

// A negative length broadcast means unreadable (or over kMaxDeckBytes).
bool read_and_share_deck(const std::string& path, int rank, std::string& text) {
  int length = -1;
  if (rank == 0) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream buffer;
      buffer << in.rdbuf();
      text = buffer.str();
      length = text.size() <= static_cast<std::size_t>(kMaxDeckBytes) && !in.bad() ? static_cast<int>(text.size()) : -2;
    }
  }
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (length < 0) return false;
  text.resize(static_cast<std::size_t>(length));
  if (length > 0) MPI_Bcast(text.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return true;
}

int sweep3d_program(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Arguments args = parse_arguments(argc, argv);
  if (args.help || !args.error.empty()) {
    if (rank == 0) (args.help ? out : err) << (args.help ? "" : "sweep3d: error: " + args.error + "\n") << kUsage;
    return args.help ? kExitOk : kExitUsage;
  }
  std::string text;
  if (!read_and_share_deck(args.deck, rank, text)) {
    if (rank == 0) err << "sweep3d: error: cannot read the deck '" << args.deck << "' (at most 1 MiB)\n";
    return kExitDeck;
  }
  DeckParse parsed = parse_deck(text, args.deck);
  if (parsed.ok())
    for (std::string& e : check_ranks(parsed.deck, ranks, args.deck)) parsed.errors.push_back(std::move(e));
  if (parsed.ok() && args.modeled && parsed.deck.epsi > 0)
    parsed.errors.push_back(args.deck + ":3: epsi = " + std::to_string(parsed.deck.epsi) +
                            ": a modeled computation has no flux to converge; allowed with --modeled-wg: "
                            "-N for exactly N iterations");
  if (!parsed.ok()) {
    if (rank == 0) {
      for (const std::string& e : parsed.errors) err << "sweep3d: error: " << e << '\n';
      err << parsed.errors.size() << " error" << (parsed.errors.size() == 1 ? "" : "s") << " in the deck\n";
    }
    return kExitDeck;
  }
  const Deck& deck = parsed.deck;
  try {
    const Decomposition d = decompose(deck, ranks, rank);
    ComputationInfo how{args.modeled, args.wg_ns};
    std::unique_ptr<BlockCompute> compute;
    if (args.modeled)
      compute = std::make_unique<ModeledCompute>(args.wg_ns, spin_for_ns);
    else
      compute = std::make_unique<TransportCompute>(deck, d);
    if (rank == 0) print_header(out, deck, ranks, how);
    const RunResult r =
        run_sweep3d(deck, d, *compute, [&out](int its, double change) { print_monitor_line(out, its, change); });
    if (rank == 0) print_summary(out, deck, r, how);
  } catch (const std::exception& e) {
    // Allocation failure or the like on one rank: the others cannot go on.
    err << "sweep3d: error on rank " << rank << ": " << e.what() << '\n';
    MPI_Abort(MPI_COMM_WORLD, kExitRun);
    return kExitRun;
  }
  return kExitOk;
}

}  // namespace poems::sweep3d::app
