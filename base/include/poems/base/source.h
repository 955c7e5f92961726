// Source files and locations: what every diagnostic points into (PSL, GOAL).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace poems::base {

using FileId = std::uint32_t;
inline constexpr FileId kNoFile = ~FileId{0};

// A location is 1-based line and column; length is the width of the caret run.
struct SourceLocation {
  FileId file = kNoFile;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::uint32_t length = 1;

  bool valid() const { return file != kNoFile && line > 0; }
};

// Owns the text of every file the front end has read, so diagnostics can quote
// the offending line long after parsing.
class SourceManager {
 public:
  // Registers text under a display path; returns its id.
  FileId add(std::string path, std::string text);
  const std::string& path(FileId id) const { return files_.at(id).path; }
  const std::string& text(FileId id) const { return files_.at(id).text; }
  // The 1-based line without its newline; empty if out of range.
  std::string_view line(FileId id, std::uint32_t line) const;
  std::size_t size() const { return files_.size(); }

 private:
  struct File {
    std::string path;
    std::string text;
    std::vector<std::size_t> line_starts;
  };
  std::vector<File> files_;
};

}  // namespace poems::base

// The PSL front end grew these and most code still names them psl::X.
namespace poems::psl {
using base::FileId;
using base::kNoFile;
using base::SourceLocation;
using base::SourceManager;
}  // namespace poems::psl
