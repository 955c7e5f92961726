// simulation[direct]: a model evaluated by running its real program under
// direct execution (the program registered for the model, e.g. Sweep3D's
// build/bin/sweep3d_direct), with the study's machine and processor model.
#pragma once

#include "model_evaluators.h"

namespace poems::cli {

// Throws std::runtime_error when the model has no program or the run fails.
EvaluationOutcome direct_execution(const ModelEvaluation& e);

}  // namespace poems::cli
