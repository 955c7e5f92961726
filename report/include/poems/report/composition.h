// What `poems compile` prints: a composed model (its components, the
// bindings of requests to accepts, the evaluation plan with a TED per node),
// or what a model read from a trace is (docs/compiler.md, docs/trace.md).
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "poems/core/composition.h"
#include "poems/core/system.h"
#include "poems/core/trace_model.h"

namespace poems::report {

// The composition `c` of `system`'s model as `format` (json, else text).
void write_composition(const core::System& system, const core::Composition& c, const std::string& format,
                       std::ostream& out);
// A model from a trace composes no components: what it is, is the archive
// its replay reads and the machine it runs on.
nlohmann::json trace_model_json(const core::System& system, const core::TraceGraph& graph, const core::Composition& c);
// trace_model_json as `format` (json, else text).
void write_trace_model(const core::System& system, const core::TraceGraph& graph, const core::Composition& c,
                       const std::string& format, std::ostream& out);

}  // namespace poems::report
