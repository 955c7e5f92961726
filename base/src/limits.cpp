#include "poems/base/limits.h"

namespace poems::base {

unsigned long& isl_operation_budget() {
  static unsigned long budget = 10'000'000;
  return budget;
}

}  // namespace poems::base
