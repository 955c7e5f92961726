#include "poems/psl/frontend.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>

#include "check.h"
#include "parse.h"
#include "poems/base/large_stack.h"

namespace poems::psl {

namespace {

// Replaces bytes that are not UTF-8 with '?', reporting the first one.
std::string sanitize_utf8(std::string text, std::size_t& bad_offset) {
  bad_offset = std::string::npos;
  std::size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (ok && len == 2 && c < 0xC2) ok = false;  // overlong
    if (!ok) {
      if (bad_offset == std::string::npos) bad_offset = i;
      text[i] = '?';
      ++i;
    } else {
      i += len;
    }
  }
  return text;
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

}  // namespace

FrontendLimits& default_frontend_limits() {
  static FrontendLimits limits;
  return limits;
}

std::string frontend_limit_problem(std::string_view name, unsigned long value) {
  // Every stage after parsing walks expressions recursively, on the main
  // thread's 8 MiB stack: the depth limits stop where that stack still holds
  // (measured: docs/limits.md), rather than lead past it to a crash.
  if (name == "expression-depth" && value > kMaxExpressionDepthLimit)
    return "expression-depth=" + std::to_string(value) +
           " is beyond what the evaluation's stack holds; it must be from 1 to " +
           std::to_string(kMaxExpressionDepthLimit);
  if (name == "nesting" && value > kMaxNestingLimit)
    return "nesting=" + std::to_string(value) + " is beyond what the evaluation's stack holds; it must be from 1 to " +
           std::to_string(kMaxNestingLimit);
  return {};
}

bool set_frontend_limit(std::string_view name, unsigned long value) {
  FrontendLimits& l = default_frontend_limits();
  if (name == "tokens")
    l.max_tokens = value;
  else if (name == "list-elements")
    l.max_list_elements = value;
  else if (name == "expression-depth")
    l.max_expression_depth = value;
  else if (name == "nesting")
    l.max_nesting = value;
  else if (name == "file-bytes")
    l.max_file_bytes = value;
  else if (name == "isl-operations")
    base::isl_operation_budget() = value;
  else if (name == "errors")
    default_diagnostic_limits().max_errors = value;
  else
    return false;
  return true;
}

Frontend::Frontend() : diagnostics_(sources_), limits_(default_frontend_limits()) {}

bool Frontend::load_files(const std::vector<std::string>& paths) {
  base::run_on_large_stack([&] {
    for (const std::string& p : paths) {
      std::vector<std::string> stack;
      read_and_load(p, SourceLocation{}, stack);
    }
    // Checking a tree that syntax errors left incomplete only adds noise.
    if (!diagnostics_.has_errors()) check_program(program_, diagnostics_);
  });
  return !diagnostics_.has_errors();
}

bool Frontend::load_text(const std::string& path, std::string text) {
  base::run_on_large_stack([&] {
    std::vector<std::string> stack;
    load_one(path, std::move(text), stack);
    if (!diagnostics_.has_errors()) check_program(program_, diagnostics_);
  });
  return !diagnostics_.has_errors();
}

void Frontend::read_and_load(const std::string& path, SourceLocation imported_at, std::vector<std::string>& stack) {
  // Only regular files: a device or a FIFO could be endless or block forever.
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    diagnostics_.error(imported_at, "cannot open '" + path + "': No such file or directory");
    return;
  }
  if (std::filesystem::is_directory(status)) {
    diagnostics_.error(imported_at, "cannot read '" + path + "': it is a directory");
    return;
  }
  if (!std::filesystem::is_regular_file(status)) {
    diagnostics_.error(imported_at, "cannot read '" + path + "': not a regular file");
    return;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diagnostics_.error(imported_at, "cannot open '" + path + "': " + std::strerror(errno));
    return;
  }
  // Read at most one byte past the limit, so an oversized file costs nothing.
  std::uintmax_t on_disk = std::filesystem::file_size(path, ec);
  std::size_t want = ec ? limits_.max_file_bytes + 1
                        : static_cast<std::size_t>(std::min<std::uintmax_t>(on_disk, limits_.max_file_bytes) + 1);
  std::string text(want, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > limits_.max_file_bytes) {
    diagnostics_.error(imported_at, "'" + path + "' is larger than " + std::to_string(limits_.max_file_bytes >> 20) +
                                        " MiB; PSL specifications are far smaller");
    return;
  }
  load_one(path, std::move(text), stack);
}

void Frontend::load_one(const std::string& path, std::string text, std::vector<std::string>& stack) {
  std::string key = canonical(path);
  if (std::find(loaded_.begin(), loaded_.end(), key) != loaded_.end()) return;  // already in the program
  loaded_.push_back(key);

  if (text.size() > limits_.max_file_bytes) {
    diagnostics_.error({}, "'" + path + "' is larger than " + std::to_string(limits_.max_file_bytes >> 20) +
                               " MiB; PSL specifications are far smaller");
    return;
  }
  std::size_t bad = std::string::npos;
  std::string clean = sanitize_utf8(std::move(text), bad);
  FileId file = sources_.add(path, clean);
  if (bad != std::string::npos) {
    std::uint32_t line = 1, col = 1;
    for (std::size_t i = 0; i < bad; ++i) {
      if (clean[i] == '\n') {
        ++line;
        col = 1;
      } else if ((static_cast<unsigned char>(clean[i]) & 0xC0) != 0x80) {
        ++col;  // columns count code points
      }
    }
    diagnostics_.error({file, line, col, 1}, "invalid UTF-8 byte in source file");
  }

  Module module;
  try {
    module = parse_module(file, sources_, diagnostics_, limits_);
  } catch (const std::exception& e) {
    diagnostics_.error({file, 1, 1, 1}, std::string("cannot parse this file: ") + e.what());
    return;
  }

  stack.push_back(key);
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (const ImportDecl& imp : module.imports) {
    std::filesystem::path target =
        std::filesystem::path(imp.path).is_absolute() ? std::filesystem::path(imp.path) : dir / imp.path;
    std::string target_key = canonical(target.string());
    auto cycle = std::find(stack.begin(), stack.end(), target_key);
    if (cycle != stack.end()) {
      std::string chain;
      for (auto it = cycle; it != stack.end(); ++it) chain += std::filesystem::path(*it).filename().string() + " -> ";
      chain += std::filesystem::path(target_key).filename().string();
      diagnostics_.error(imp.location, "import cycle: " + chain);
      continue;
    }
    if (imp.path.empty()) {
      diagnostics_.error(imp.location, "import of an empty path");
      continue;
    }
    read_and_load(target.lexically_normal().string(), imp.location, stack);
  }
  stack.pop_back();
  program_.modules.push_back(std::move(module));
}

}  // namespace poems::psl
