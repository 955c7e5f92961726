#include "poems/sweep3d/direct/charged_compute.h"

#include <mpi.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "poems/direct/runtime.h"
#include "poems/sweep3d/app/driver.h"
#include "poems/sweep3d/app/report.h"

namespace poems::sweep3d::direct {

void charge_block(const app::BlockStep& s) {
  const double cells = static_cast<double>(s.it) * s.jt * s.nk;
  processor::TaskRequest task{
      "KBlock",
      "execute_code_block",
      {{"work", cells * s.angles}, {"cells", cells}, {"angles", s.angles}, {"it", s.it}, {"jt", s.jt}, {"mk", s.nk}}};
  poems::direct::compute_task(task);
}

namespace {

constexpr int kExitOk = 0, kExitDeck = 1, kExitUsage = 2, kExitRun = 3;

const char* const kUsage =
    "usage: sweep3d_direct [DECK] [--reduced]   (run it with `poems direct sweep3d_direct -np P -- DECK`)\n"
    "  DECK       the 5-line Sweep3D input deck (default: input)\n"
    "  --reduced  memory-reduced: no kernel and no cell arrays, each block charged through the\n"
    "             processor model (run with --compute model; needs a fixed iteration count)\n";

}  // namespace

int sweep3d_direct_program(int argc, const char* const* argv) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::string deck_path = "input", error;
  bool reduced = false;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--reduced")
      reduced = true;
    else if (!arg.empty() && arg[0] == '-')
      error = "unknown option '" + arg + "'";
    else
      deck_path = arg;
  }
  if (!error.empty()) {
    if (rank == 0) std::cerr << "sweep3d_direct: error: " << error << '\n' << kUsage;
    return kExitUsage;
  }
  std::string text;
  if (!app::read_and_share_deck(deck_path, rank, text)) {
    if (rank == 0) std::cerr << "sweep3d_direct: error: cannot read the deck '" << deck_path << "' (at most 1 MiB)\n";
    return kExitDeck;
  }
  app::DeckParse parsed = app::parse_deck(text, deck_path);
  if (parsed.ok())
    for (std::string& e : app::check_ranks(parsed.deck, ranks, deck_path)) parsed.errors.push_back(std::move(e));
  if (parsed.ok() && reduced && parsed.deck.epsi > 0)
    parsed.errors.push_back(deck_path + ":3: epsi = " + std::to_string(parsed.deck.epsi) +
                            ": a reduced computation has no flux to converge; allowed with --reduced: -N for "
                            "exactly N iterations");
  if (!parsed.ok()) {
    if (rank == 0)
      for (const std::string& e : parsed.errors) std::cerr << "sweep3d_direct: error: " << e << '\n';
    return kExitDeck;
  }
  const app::Deck& deck = parsed.deck;
  try {
    const app::Decomposition d = app::decompose(deck, ranks, rank);
    std::unique_ptr<app::BlockCompute> compute;
    if (reduced)
      compute = std::make_unique<ReducedCompute>();
    else
      compute = std::make_unique<ChargedCompute>(std::make_unique<app::TransportCompute>(deck, d));
    // The report's modeled time per cell-angle is not known here (the processor model has it).
    const app::ComputationInfo how{reduced, 0};
    if (rank == 0) app::print_header(std::cout, deck, ranks, how);
    const app::RunResult r = app::run_sweep3d(
        deck, d, *compute, [](int its, double change) { app::print_monitor_line(std::cout, its, change); });
    if (rank == 0) app::print_summary(std::cout, deck, r, how);
  } catch (const std::exception& e) {
    std::cerr << "sweep3d_direct: error on rank " << rank << ": " << e.what() << '\n';
    MPI_Abort(MPI_COMM_WORLD, kExitRun);
    return kExitRun;
  }
  return kExitOk;
}

}  // namespace poems::sweep3d::direct
