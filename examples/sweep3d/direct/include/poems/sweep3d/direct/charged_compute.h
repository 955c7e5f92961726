// Sweep3D's block computation under direct execution (simulation[direct]):
// the app's BlockCompute interface (examples/sweep3d/app) with the block's
// work charged through the processor model, so `poems direct --compute model`
// times a block as the task graph's KBlock node does (work = cells x angles).
//
//   ChargedCompute  the real kernel (TransportCompute: real flux, real data in
//                   the messages) plus the charge; under --compute measured
//                   the charge adds nothing and the kernel's CPU time counts.
//   ReducedCompute  memory-reduced mode (POEMS paper section 6.1): the kernel
//                   and its cell arrays are gone, only the charge remains.
#pragma once

#include <memory>

#include "poems/sweep3d/app/block_compute.h"

namespace poems::sweep3d::direct {

// Charges one block: work = it·jt·nk·angles of the step (POEMS_Compute with
// the KBlock task's parameters cells, angles, it, jt, mk).
void charge_block(const app::BlockStep& step);

class ChargedCompute final : public app::BlockCompute {
 public:
  explicit ChargedCompute(std::unique_ptr<app::BlockCompute> real) : real_(std::move(real)) {}
  void start_iteration(int iteration) override { real_->start_iteration(iteration); }
  void compute(const app::BlockStep& step, double* face_i, double* face_j) override {
    real_->compute(step, face_i, face_j);
    charge_block(step);
  }
  double finish_iteration() override { return real_->finish_iteration(); }
  app::LocalTallies tallies() const override { return real_->tallies(); }
  bool physical() const override { return real_->physical(); }
  double flux_at(int i, int j, int k) const override { return real_->flux_at(i, j, k); }

 private:
  std::unique_ptr<app::BlockCompute> real_;
};

class ReducedCompute final : public app::BlockCompute {
 public:
  void start_iteration(int) override {}
  void compute(const app::BlockStep& step, double*, double*) override { charge_block(step); }
  double finish_iteration() override { return 0; }
  bool physical() const override { return false; }
};

// The program: `sweep3d_direct [DECK] [--reduced]`, the app's program flow
// (deck read by rank 0 and broadcast, validation, decomposition, sweeps,
// report) with ChargedCompute, or ReducedCompute with --reduced (which needs
// a fixed iteration count). Returns 0 ok, 1 bad deck, 2 usage, 3 run failure.
int sweep3d_direct_program(int argc, const char* const* argv);

}  // namespace poems::sweep3d::direct
