// What the Sweep3D example brings to the generic framework, registered by
// code: its closed form (analytic[LogGP]), its k-block kernel
// (processor[measured], calibration), its programs (measurement[mpirun]:
// sweep3d_mpi; simulation[direct]: sweep3d_direct) with the deck a binding
// gives them, and the questions the recommender asks of it.
#pragma once

namespace poems::sweep3d {

// Idempotent.
void register_sweep3d();

}  // namespace poems::sweep3d
