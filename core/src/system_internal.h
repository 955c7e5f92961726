// Internal: a System over a front end that has loaded and checked the files
// already (poems check makes one per study of a file).
#pragma once

#include <memory>

#include "poems/core/system.h"
#include "poems/psl/frontend.h"

namespace poems::core {

std::unique_ptr<System> make_system(std::shared_ptr<psl::Frontend> frontend, const SystemRequest& request);

}  // namespace poems::core
