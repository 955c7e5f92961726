// Internal: a System over a front end that has loaded and checked the files
// already (poems check makes one per study of a file).
#pragma once

#include <memory>

#include "poems/core/system.h"
#include "poems/psl/frontend.h"

namespace poems::core {

// `check_messages`: run the static communication check of the model (poems
// check has checked every model once already).
std::unique_ptr<System> make_system(std::shared_ptr<psl::Frontend> frontend, const SystemRequest& request,
                                    bool check_messages);

}  // namespace poems::core
