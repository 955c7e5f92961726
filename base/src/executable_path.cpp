#include "poems/base/executable_path.h"

namespace poems::base {

std::filesystem::path executable_path(std::error_code& error) {
  return std::filesystem::read_symlink("/proc/self/exe", error);
}

std::filesystem::path executable_path() {
  std::error_code ignored;
  return executable_path(ignored);
}

std::string executable_directory() {
  std::error_code error;
  const std::filesystem::path path = executable_path(error);
  return error ? "" : path.parent_path().string();
}

}  // namespace poems::base
