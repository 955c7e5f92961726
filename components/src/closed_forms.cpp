#include "poems/components/closed_forms.h"

#include <map>
#include <mutex>

namespace poems::components {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, ClosedForm> forms;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_closed_form(ClosedForm form) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::string model = form.model;
  r.forms[model] = std::move(form);
}

const ClosedForm* find_closed_form(const std::string& model) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.forms.find(model);
  return it == r.forms.end() ? nullptr : &it->second;  // entries are never erased: the pointer stays valid
}

std::vector<std::string> closed_form_models() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, _] : r.forms) names.push_back(name);
  return names;
}

}  // namespace poems::components
