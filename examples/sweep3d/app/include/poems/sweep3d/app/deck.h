// The Sweep3D input deck (docs/references.md, Sweep3D facts): five lines of numbers,
//
//   line 1: npe_i npe_j mk mmi ncpu     processor grid, k-block, angle block, threads
//   line 2: it_g jt_g kt mm isct        global grid, angles per octant, scattering order
//   line 3: dx dy dz epsi               cell widths; epsi > 0: convergence tolerance,
//                                       epsi < 0: exactly -epsi source iterations
//   line 4: ibc jbc kbc                 boundary at i = 0, j = 0, k = 0: 0 vacuum, 1 reflective
//   line 5: iprint idsa ifixups         extra output, DSA (not implemented), flux fixups
//
// Parsing and validation only (no MPI): the real program, `poems measure`
// (which writes decks from a model binding) and the tests share it. Every
// error names the line, the field, the value and the allowed values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace poems::sweep3d::app {

struct Deck {
  int npe_i = 1, npe_j = 1, mk = 10, mmi = 3, ncpu = 1;
  int it_g = 50, jt_g = 50, kt = 50, mm = 6, isct = 0;
  double dx = 1, dy = 1, dz = 1, epsi = -12;
  int ibc = 0, jbc = 0, kbc = 0;
  int iprint = 0, idsa = 0, ifixups = 0;

  // epsi < 0: the fixed iteration count -epsi; 0 when iterating to convergence.
  int fixed_iterations() const { return epsi < 0 ? static_cast<int>(-epsi) : 0; }
  int angle_blocks() const { return mm / mmi; }        // mmo
  int k_blocks() const { return (kt + mk - 1) / mk; }  // kb
};

// The most iterations a converging run (epsi > 0) takes before it stops
// unconverged, and the most a fixed run may ask for.
inline constexpr int kMaxIterations = 100000;

struct DeckParse {
  Deck deck;                        // meaningful when errors is empty
  std::vector<std::string> errors;  // "deck:2: kt = 0: ...; allowed: ..."
  bool ok() const { return errors.empty(); }
};

// Parses and validates the deck text; `name` prefixes messages (a file name).
// Values are separated by blanks or commas; blank lines after line 5 are ignored.
DeckParse parse_deck(std::string_view text, const std::string& name = "deck");

// Errors of running the deck on `ranks` MPI processes (npe_i * npe_j must equal it).
std::vector<std::string> check_ranks(const Deck& deck, int ranks, const std::string& name = "deck");

// The deck as text that parse_deck reads back exactly (doubles with 17 digits).
std::string deck_text(const Deck& deck);

}  // namespace poems::sweep3d::app
