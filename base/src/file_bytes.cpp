#include "poems/base/file_bytes.h"

#include <fstream>
#include <sstream>

namespace poems::base {

std::optional<std::string> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  // An empty file leaves failbit set after <<; only a bad stream is an error.
  if (in.peek() != std::ifstream::traits_type::eof()) bytes << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(bytes).str();
}

}  // namespace poems::base
