#include "poems/components/closed_forms.h"

#include "poems/base/registry.h"

namespace poems::components {

namespace {

base::Registry<ClosedForm>& registry() {
  static base::Registry<ClosedForm> r;
  return r;
}

}  // namespace

void register_closed_form(ClosedForm form) {
  std::string model = form.model;
  registry().add(model, std::move(form));
}

const ClosedForm* find_closed_form(const std::string& model) { return registry().find(model); }

std::vector<std::string> closed_form_models() { return registry().names(); }

}  // namespace poems::components
