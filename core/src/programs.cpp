#include "poems/core/programs.h"

#include <map>
#include <mutex>

#include "poems/measure/mpirun.h"

namespace poems::core {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, ModelProgram> programs;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_program(ModelProgram program) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::string model = program.model;
  r.programs[model] = std::move(program);
}

const ModelProgram* find_program(const std::string& model) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.programs.find(model);
  return it == r.programs.end() ? nullptr : &it->second;  // never erased: the pointer stays valid
}

std::vector<std::string> models_with_programs(bool measured) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> out;
  for (const auto& [model, p] : r.programs)
    if (!(measured ? p.measured : p.direct).empty()) out.push_back(model);
  return out;
}

std::string sibling_program(const std::string& name) {
  const std::string dir = measure::executable_directory();
  if (dir.empty()) return "";
  const std::filesystem::path p = std::filesystem::path(dir) / name;
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) ? p.string() : "";
}

}  // namespace poems::core
