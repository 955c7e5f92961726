// The Sweep3D input deck and the KBA decomposition (no MPI).
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "poems/sweep3d/app/deck.h"
#include "poems/sweep3d/app/decomposition.h"

namespace poems::sweep3d::app {
namespace {

const char* const kDeck150 =
    "2 3 30 2 1\n"
    "150 150 150 6 0\n"
    "1.0 1.0 1.0 -12.0\n"
    "0 0 0\n"
    "0 0 1\n";

std::string only_error(const std::string& text) {
  const DeckParse p = parse_deck(text);
  EXPECT_EQ(p.errors.size(), 1u) << text;
  return p.errors.empty() ? "" : p.errors.front();
}

TEST(SweepDeck, ParsesTheStandardFiveLines) {
  const DeckParse p = parse_deck(kDeck150);
  ASSERT_TRUE(p.ok()) << p.errors.front();
  const Deck& d = p.deck;
  EXPECT_EQ(d.npe_i, 2);
  EXPECT_EQ(d.npe_j, 3);
  EXPECT_EQ(d.mk, 30);
  EXPECT_EQ(d.mmi, 2);
  EXPECT_EQ(d.it_g, 150);
  EXPECT_EQ(d.kt, 150);
  EXPECT_EQ(d.mm, 6);
  EXPECT_EQ(d.fixed_iterations(), 12);
  EXPECT_EQ(d.ifixups, 1);
  EXPECT_EQ(d.k_blocks(), 5);
  EXPECT_EQ(d.angle_blocks(), 3);
}

TEST(SweepDeck, AcceptsCommasFortranExponentsAndTrailingBlankLines) {
  const DeckParse p = parse_deck("1,1,5,3,1\n10 10 10 6 0\n0.5 0.5 0.5 1.0d-6\n1 0 1\n1 0 0\n\n\n");
  ASSERT_TRUE(p.ok()) << p.errors.front();
  EXPECT_DOUBLE_EQ(p.deck.epsi, 1e-6);
  EXPECT_EQ(p.deck.fixed_iterations(), 0);
  EXPECT_EQ(p.deck.ibc, 1);
  EXPECT_EQ(p.deck.kbc, 1);
}

TEST(SweepDeck, TextRoundTrips) {
  Deck d;
  d.npe_i = 3, d.npe_j = 1, d.mk = 7, d.mmi = 2, d.it_g = 31, d.jt_g = 5, d.kt = 22, d.dx = 0.1, d.dy = 1.0 / 3,
  d.epsi = 1e-7, d.jbc = 1, d.ifixups = 1;
  const DeckParse p = parse_deck(deck_text(d));
  ASSERT_TRUE(p.ok()) << p.errors.front();
  EXPECT_EQ(deck_text(p.deck), deck_text(d));
  EXPECT_EQ(p.deck.dy, 1.0 / 3);
}

TEST(SweepDeck, ErrorsNameLineFieldValueAndAllowedValues) {
  EXPECT_EQ(only_error("1 1 10 4 1\n10 10 10 6 0\n1 1 1 -2\n0 0 0\n0 0 0\n"),
            "deck:1: mmi = 4: must divide mm = 6; allowed: 1, 2, 3, 6");
  EXPECT_EQ(only_error("1 1 10 3 1\n10 10 10 6 0\n1 1 1 -2\n0 2 0\n0 0 0\n"),
            "deck:4: jbc = 2: not supported; allowed: 0 (vacuum) or 1 (reflective at j = 0)");
  EXPECT_EQ(only_error("1 1 20 3 1\n10 10 10 6 0\n1 1 1 -2\n0 0 0\n0 0 0\n"),
            "deck:1: mk = 20: larger than kt; allowed: 1 to 10");
  EXPECT_EQ(only_error("1 1 10 3 1\n10 10 10 6 0\n1 1 1 -2.5\n0 0 0\n0 0 0\n"),
            "deck:3: epsi = -2.5: a negative epsi is minus the iteration count; allowed: -1 to -100000 (whole "
            "numbers)");
  EXPECT_EQ(only_error("1 1 10 3 1\n10 10 10 6 0\n1 1 0 -2\n0 0 0\n0 0 0\n"),
            "deck:3: dz = 0: a cell width must be positive; allowed: > 0 and <= 1e12");
  EXPECT_EQ(only_error("4 1 10 3 1\n3 10 10 6 0\n1 1 1 -2\n0 0 0\n0 0 0\n"),
            "deck:2: it_g = 3: fewer cells than npe_i processes; allowed: 4 to 1000000");
  EXPECT_EQ(only_error("1 1 10 3 2\n10 10 10 6 0\n1 1 1 -2\n0 0 0\n0 0 0\n"),
            "deck:1: ncpu = 2: not supported; allowed: 1 (one thread per MPI process)");
  EXPECT_EQ(only_error("1 1 10 3 1\n10 10 10 6 1\n1 1 1 -2\n0 0 0\n0 0 0\n"),
            "deck:2: isct = 1: not supported; allowed: 0 (isotropic scattering; higher scattering orders are not "
            "implemented)");
  EXPECT_EQ(only_error("1 1 10 3 1\n10 10 10 6 0\n1 1 1 -2\n0 0 0\n0 1 0\n"),
            "deck:5: idsa = 1: not supported; allowed: 0 (diffusion synthetic acceleration is not implemented)");
}

TEST(SweepDeck, ShapeErrors) {
  EXPECT_EQ(only_error("1 1 10 3\n10 10 10 6 0\n1 1 1 -2\n0 0 0\n0 0 0\n"),
            "deck:1: 4 values; expected 5: npe_i npe_j mk mmi ncpu");
  EXPECT_EQ(only_error("1 1 10 3 1\n10 x 10 6 0\n1 1 1 -2\n0 0 0\n0 0 0\n"), "deck:2: jt_g = x: not a number");
  EXPECT_EQ(only_error("1 1 10 3 1\n10 10 10.5 6 0\n1 1 1 -2\n0 0 0\n0 0 0\n"),
            "deck:2: kt = 10.5: not a whole number");
  const DeckParse three = parse_deck("1 1 10 3 1\n10 10 10 6 0\n1 1 1 -2\n", "in.deck");
  ASSERT_EQ(three.errors.size(), 1u);
  EXPECT_EQ(three.errors[0].rfind("in.deck: the deck has 3 lines; a Sweep3D deck has 5", 0), 0u) << three.errors[0];
  EXPECT_FALSE(parse_deck("").ok());
}

TEST(SweepDeck, AllErrorsAreReported) {
  const DeckParse p = parse_deck("0 1 0 4 1\n10 10 10 6 0\n1 1 1 0\n3 0 0\n0 0 5\n");
  std::set<std::string> fields;
  for (const std::string& e : p.errors) fields.insert(e.substr(e.find(": ") + 2, e.find(" =") - e.find(": ") - 2));
  EXPECT_EQ(fields, (std::set<std::string>{"npe_i", "mk", "mmi", "epsi", "ibc", "ifixups"}));
}

TEST(SweepDeck, RanksMustMatchTheGrid) {
  const DeckParse p = parse_deck(kDeck150);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(check_ranks(p.deck, 6).empty());
  const auto errors = check_ranks(p.deck, 4);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "deck:1: npe_i * npe_j = 2 * 3 = 6, but the program runs on 4 MPI processes; allowed: npe_i * npe_j = 4");
}

TEST(SweepDecomposition, RemainderGoesToTheLowestRanks) {
  EXPECT_EQ(part_size(10, 3, 0), 4);
  EXPECT_EQ(part_size(10, 3, 1), 3);
  EXPECT_EQ(part_size(10, 3, 2), 3);
  EXPECT_EQ(first_index(10, 3, 0), 0);
  EXPECT_EQ(first_index(10, 3, 1), 4);
  EXPECT_EQ(first_index(10, 3, 2), 7);
  Deck deck;
  deck.npe_i = 3, deck.npe_j = 2, deck.it_g = 10, deck.jt_g = 7, deck.kt = 9, deck.mk = 4;
  int cells = 0;
  for (int r = 0; r < 6; ++r) {
    const Decomposition d = decompose(deck, 6, r);
    EXPECT_EQ(d.pi, r / 2);
    EXPECT_EQ(d.pj, r % 2);
    EXPECT_EQ(d.it_max, 4);
    EXPECT_EQ(d.jt_max, 4);
    cells += d.it * d.jt;
    EXPECT_EQ(d.kb, 3);
    EXPECT_EQ(d.block_nk(0), 4);
    EXPECT_EQ(d.block_nk(2), 1);  // the short last block
  }
  EXPECT_EQ(cells, 70);
  const Decomposition corner = decompose(deck, 6, 0);
  EXPECT_EQ(corner.neighbour(-1, 0), kNoNeighbour);
  EXPECT_EQ(corner.neighbour(1, 0), 2);
  EXPECT_EQ(corner.neighbour(0, 1), 1);
  EXPECT_THROW(decompose(deck, 4, 0), std::invalid_argument);
}

TEST(SweepDecomposition, OctantOrderIsSweep3Ds) {
  const int di[8] = {-1, -1, -1, -1, 1, 1, 1, 1}, dj[8] = {-1, -1, 1, 1, -1, -1, 1, 1};
  for (int iq = 0; iq < 8; ++iq) {
    EXPECT_EQ(octant_direction(iq).di, di[iq]);
    EXPECT_EQ(octant_direction(iq).dj, dj[iq]);
    EXPECT_EQ(octant_direction(iq).dk, iq % 2 == 0 ? -1 : 1);
  }
}

// The Sweep3D facts' form (docs/references.md)ula, valid for grids of at least 2 x 2.
std::uint64_t design_formula(int a, int b, int kb, int mmo) {
  const long long m2 = 2 * mmo;
  return static_cast<std::uint64_t>(kb * (4 * m2 * 4 + 2 * (a - 2) * m2 * 6 + 2 * (b - 2) * m2 * 6 +
                                          static_cast<long long>(a - 2) * (b - 2) * m2 * 8));
}

TEST(SweepDecomposition, MessageCountsFollowTheDesignFormula) {
  EXPECT_EQ(messages_per_iteration(2, 3, 5, 3), 840u);  // 150^3, 2x3, mk=30, mmi=2, mm=6
  for (int a = 2; a <= 9; ++a)
    for (int b = 2; b <= 9; ++b) EXPECT_EQ(messages_per_iteration(a, b, 7, 2), design_formula(a, b, 7, 2));
  EXPECT_EQ(messages_per_iteration(1, 1, 5, 3), 0u);
  EXPECT_EQ(messages_per_iteration(2, 1, 5, 2), 8u * 2 * 5);  // one i-message per block per octant
  EXPECT_EQ(pipeline_steps(2, 3, 5, 3), 8u * 3 * 5 + 2 + 8);
}

}  // namespace
}  // namespace poems::sweep3d::app
