// The real program's computation (TransportCompute) against the kernel's
// pieces: the column processor[measured] times is the same computation, and
// the modeled computation allocates nothing and costs what it is told.
#include <gtest/gtest.h>

#include "poems/sweep3d/app/block_compute.h"
#include "poems/sweep3d/column.h"

namespace poems::sweep3d::app {
namespace {

// One source iteration of a 1-process run, block by block as the driver does it.
void sweep_once(const Decomposition& d, BlockCompute& compute) {
  std::vector<double> fi(d.face_i_doubles()), fj(d.face_j_doubles());
  compute.start_iteration(1);
  for (int iq = 0; iq < 8; ++iq)
    for (int mo = 0; mo < d.mmo; ++mo)
      for (int kk = 0; kk < d.kb; ++kk) {
        BlockStep s;
        s.octant = iq;
        s.dir = octant_direction(iq);
        s.angle_block = mo;
        s.first_angle = mo * d.mmi;
        s.angles = d.mmi;
        s.k_block = s.dir.dk > 0 ? kk : d.kb - 1 - kk;
        s.k0 = d.block_k0(s.k_block);
        s.nk = d.block_nk(s.k_block);
        s.it = d.it;
        s.jt = d.jt;
        s.first_k_block = kk == 0;
        s.last_k_block = kk == d.kb - 1;
        compute.compute(s, fi.data(), fj.data());
      }
  compute.finish_iteration();
}

TEST(SweepTransport, TheTimedColumnIsTheProgramsComputation) {
  Deck deck;
  deck.it_g = 7, deck.jt_g = 5, deck.kt = 11, deck.mk = 4, deck.mmi = 6, deck.mm = 6;
  const Decomposition d = decompose(deck, 1, 0);
  TransportCompute program(deck, d);
  sweep_once(d, program);
  KColumn column;
  column.reshape(KBlockShape{7, 5, 4, 6}, 11);
  for (int step = 0; step < 8 * d.kb; ++step) column.sweep_next();
  ASSERT_EQ(column.flux().size(), program.flux().size());
  for (std::size_t c = 0; c < program.flux().size(); ++c) EXPECT_DOUBLE_EQ(column.flux()[c], program.flux()[c]) << c;
  EXPECT_GT(program.flux()[0], 0);
}

// processor[measured] with the run's mm: the iteration's source update
// (TransportCompute's arithmetic, q = 1, sigma_s = 0.5) a slice after each
// cycle of 8 x kb blocks, every cell once in `passes` cycles.
TEST(SweepTransport, TheColumnsSourceUpdateCoversItOnceAnIteration) {
  KColumn column;
  column.reshape(KBlockShape{7, 5, 4, 3}, 11);
  column.set_iteration_passes(3);
  const int kb = 3, cycle = 8 * kb;
  const std::size_t n = 7 * 5 * 11;
  for (int step = 0; step < cycle; ++step) column.sweep_next();
  const std::vector<double> swept = column.flux();
  for (double source : column.source()) ASSERT_EQ(source, 1.0);
  column.sweep_next();  // the first block of the next cycle, after the update of the first third
  for (std::size_t c = 0; c < n; ++c) {
    ASSERT_GT(swept[c], 0) << c;
    EXPECT_DOUBLE_EQ(column.source()[c], c < n / 3 ? 1.0 + 0.5 * swept[c] : 1.0) << c;
  }
  for (int step = 1; step < 2 * cycle + 1; ++step) column.sweep_next();  // the other two thirds
  for (std::size_t c = 0; c < n; ++c) EXPECT_GT(column.source()[c], 1.0) << c;
  EXPECT_THROW(column.set_iteration_passes(-1), std::invalid_argument);
}

TEST(SweepTransport, OrdinatesWeighAnEighthPerOctant) {
  for (int mm : {1, 3, 6, 10}) {
    double total = 0;
    for (const Ordinate& o : TransportCompute::ordinates(mm)) total += o.w;
    EXPECT_NEAR(total, 1.0 / 8, 1e-15) << mm;
  }
  EXPECT_DOUBLE_EQ(TransportCompute::ordinates(6)[4].w, default_ordinate(4).w);
}

TEST(SweepTransport, ModeledComputationCostsWhatItIsTold) {
  double spent = 0;
  ModeledCompute modeled(2.5, [&](double ns) { spent += ns; });
  Deck deck;
  deck.it_g = 6, deck.jt_g = 4, deck.kt = 9, deck.mk = 4, deck.mmi = 3, deck.mm = 6;
  const Decomposition d = decompose(deck, 1, 0);
  sweep_once(d, modeled);
  EXPECT_DOUBLE_EQ(spent, 2.5 * 6 * 4 * 9 * 8 * 6);  // every cell-angle of 8 octants once
  EXPECT_FALSE(modeled.physical());
  EXPECT_THROW(ModeledCompute(-1, {}), std::invalid_argument);
}

}  // namespace
}  // namespace poems::sweep3d::app
