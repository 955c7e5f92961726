// Closed-form component models for analytic[LogGP]: a model's time as a
// formula of its parameters and the machine, evaluated in microseconds
// whatever the process count. Generic code knows no model: an application's
// closed form is registered under its model's name by the code that owns the
// model (from examples/), and analytic[LogGP] uses it
// where one is registered, the task graph's critical path elsewhere.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "poems/components/loggops.h"

namespace poems::components {

// The machine a closed form evaluates on: LogGOPS, the rendezvous handshake
// and the compute time per unit of work of the model's compute node.
struct ClosedFormMachine {
  LogGOPS params;
  bool rendezvous_handshake = false;
  double ns_per_work = 60;
};

// What a closed form predicts: the completion of the last process, and the
// per-process means of compute and of CPU time in communication (the rest of
// `time` is waiting); figures of its own for reports in `details`.
struct ClosedFormResult {
  Picoseconds time = 0, compute = 0, comm = 0;
  std::uint64_t messages = 0;
  std::uint32_t processes = 0;
  nlohmann::json details = nlohmann::json::object();
};

// A parameter outside the range where a closed form holds: the message names
// it and the range (an error in the input, not a failed evaluation).
class ParameterError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A closed form bound to one model's parameter order, so an evaluation is
// arithmetic only (the recommender evaluates millions).
class BoundClosedForm {
 public:
  virtual ~BoundClosedForm() = default;
  // `values`: the model's parameter values in the order of the names given to
  // ClosedForm::bind. `details` asks for ClosedFormResult::details. Throws
  // ParameterError.
  virtual ClosedFormResult evaluate(std::span<const double> values, const ClosedFormMachine& machine,
                                    bool details) const = 0;
};

struct ClosedForm {
  std::string model;        // the model it is registered for
  std::string description;  // for messages and `poems analyze`, e.g. "wavefront (docs/models/...)"
  // Binds the form to the model's parameter names; throws ParameterError
  // naming a parameter the form needs and the model lacks.
  std::function<std::unique_ptr<BoundClosedForm>(const std::vector<std::string>& parameters)> bind;
  // Whether the form also holds under the loggopsim semantics (messages
  // processed on arrival, no rendezvous synchronization); a form derived for
  // the matched semantics is refused there (docs/simulator.md).
  bool holds_under_loggopsim = false;
};

// Registers (or replaces) the closed form of `form.model`.
void register_closed_form(ClosedForm form);
// The closed form registered for `model`, or nullptr.
const ClosedForm* find_closed_form(const std::string& model);
// The models with a closed form, sorted (for messages).
std::vector<std::string> closed_form_models();

}  // namespace poems::components
