// A checked specification with one model's static task graph.
#pragma once

#include <memory>

#include "poems/psl/frontend.h"
#include "poems/taskgraph/stg.h"

namespace poems::cli {

struct LoadedModel {
  std::unique_ptr<psl::Frontend> frontend;
  std::shared_ptr<const taskgraph::StaticTaskGraph> graph;
};

}  // namespace poems::cli
