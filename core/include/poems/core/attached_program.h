// A real program attached to a PSL model (`program { }`) and the kernels
// attached to its application components (`kernel { }`): docs/psl.md,
// "Programs and kernels". The program becomes the model's ModelProgram for
// simulation[direct] and measurement[mpirun]; a kernel times its
// component's tasks for processor[measured] and `poems calibrate`.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "poems/core/programs.h"
#include "poems/psl/ast.h"

namespace poems::core {

// The directory a PSL location's relative paths start from (its file's).
using PathBase = std::function<std::string(const psl::SourceLocation& where)>;

// A problem with a file the program names, at its place in the PSL.
struct AttachedProblem {
  psl::SourceLocation where;
  std::string message;
};

// The model's program, or nullptr when it attaches none. Files it names that
// do not exist are reported in `problems`. It evaluates `model`'s
// expressions, so it holds `owner` (what keeps the parsed PSL alive, the
// front end) for as long as it lives.
std::shared_ptr<const ModelProgram> attached_program(const psl::ModelDecl& model, const PathBase& base,
                                                     std::shared_ptr<const void> owner,
                                                     std::vector<AttachedProblem>& problems);

// Registers the `kernel { }` of every application component of the model:
// processor[measured] times a task of the component by running the
// program's measured executable with the kernel's arguments, and `poems
// calibrate` fits it (both under the component's name).
// The kernels hold `owner` as the program does; registering a component's
// kernel again (another load of the model) replaces it.
void register_attached_kernels(const psl::Program& program, const psl::ModelDecl& model,
                               const std::shared_ptr<const ModelProgram>& attached,
                               const std::shared_ptr<const void>& owner);

// The times in `output` matched by `pattern`'s first group, times `unit_ns`.
std::vector<double> matched_times_ns(const std::string& output, const std::string& pattern, double unit_ns);

}  // namespace poems::core
