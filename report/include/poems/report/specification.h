// What `poems check` and `poems taskgraph --stats` print of a specification:
// the front end's diagnostics and counts, the instantiated task graph's size.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "poems/core/check.h"
#include "poems/taskgraph/dtg.h"

namespace poems::report {

// The diagnostics of `frontend` as JSON: severity, message, file, line,
// column and notes of each.
nlohmann::json diagnostics_json(const psl::Frontend& frontend);

// `poems check` of several files, one result at a time: as text the
// diagnostics of each go to `err` when it is added and "OK: ..." to `out`
// at the end if every file passed; as json everything goes to `out` at the end.
class CheckReport {
 public:
  explicit CheckReport(std::string format) : format_(std::move(format)) {}
  void add(const core::CheckResult& result, std::ostream& err);
  void finish(std::ostream& out) const;
  bool ok() const { return ok_; }

 private:
  std::string format_;
  bool ok_ = true;
  std::size_t models_ = 0, components_ = 0, studies_ = 0;
  nlohmann::json diagnostics_ = nlohmann::json::array();
};

// The counts of a model's instantiated task graph as `format` (json, with
// the traversal's `seconds`, else a text table).
void write_graph_statistics(const std::string& model, const taskgraph::GraphStatistics& stats, double seconds,
                            const std::string& format, std::ostream& out);

}  // namespace poems::report
