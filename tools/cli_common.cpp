#include "cli_common.h"

#include <algorithm>
#include <iostream>

#include "loaded_model.h"
#include "poems/base/units.h"
#include "poems/psl/lower.h"

namespace poems::cli {

std::map<std::string, double> parse_bindings(const std::vector<std::string>& sets) {
  std::map<std::string, double> out;
  for (const std::string& s : sets) {
    std::size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw CLI::ValidationError("--set", "'" + s + "' is not name=value");
    std::string name = s.substr(0, eq), error;
    auto q = psl::parse_quantity(s.substr(eq + 1), &error);
    if (!q) throw CLI::ValidationError("--set " + name, error);
    out[name] = q->value;
  }
  return out;
}

bool load_model(const std::string& spec, const std::string& model, LoadedModel& out, int& result) {
  return load_model(std::vector<std::string>{spec}, model, out, result);
}

bool load_model(const std::vector<std::string>& files, const std::string& model, LoadedModel& out, int& result) {
  out.frontend = std::make_unique<psl::Frontend>();
  bool ok = out.frontend->load_files(files);
  out.frontend->diagnostics().print(std::cerr);
  if (!ok) {
    result = kExitInputError;
    return false;
  }
  try {
    out.graph = std::make_shared<taskgraph::StaticTaskGraph>(
        psl::lower_model(out.frontend->program(), out.frontend->sources(), model));
  } catch (const std::exception& e) {
    std::cerr << "poems: error: " << e.what() << '\n';
    result = kExitInputError;
    return false;
  }
  return true;
}

void print_table(const TextTable& table, std::ostream& out) {
  std::vector<std::size_t> width;
  for (const auto& row : table)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : table) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << line << '\n';
  }
}

}  // namespace poems::cli
