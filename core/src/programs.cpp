#include "poems/core/programs.h"

#include "poems/base/executable_path.h"
#include "poems/base/registry.h"
#include "poems/measure/mpirun.h"

namespace poems::core {

namespace {

base::Registry<ModelProgram>& registry() {
  static base::Registry<ModelProgram> r;
  return r;
}

}  // namespace

void register_program(ModelProgram program) {
  std::string model = program.model;
  registry().add(model, std::move(program));
}

const ModelProgram* find_program(const std::string& model) { return registry().find(model); }

std::vector<std::string> models_with_programs(bool measured) {
  return registry().names_where(
      [measured](const ModelProgram& p) { return !(measured ? p.measured : p.direct).empty(); });
}

std::string sibling_program(const std::string& name) {
  const std::string dir = base::executable_directory();
  if (dir.empty()) return "";
  const std::filesystem::path p = std::filesystem::path(dir) / name;
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) ? p.string() : "";
}

}  // namespace poems::core
