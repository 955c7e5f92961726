#include "poems/base/temporary_directory.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace poems::base {

TemporaryDirectory::TemporaryDirectory(std::string_view prefix) {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) {
    error_ = "no temporary directory: " + ec.message();
    return;
  }
  std::string pattern = (base / (std::string(prefix) + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    error_ = "cannot create a directory in " + base.string() + ": " + std::strerror(errno);
    return;
  }
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() { remove(); }

TemporaryDirectory::TemporaryDirectory(TemporaryDirectory&& other) noexcept
    : path_(std::exchange(other.path_, {})), error_(std::move(other.error_)) {}

TemporaryDirectory& TemporaryDirectory::operator=(TemporaryDirectory&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
    error_ = std::move(other.error_);
  }
  return *this;
}

std::filesystem::path TemporaryDirectory::release() { return std::exchange(path_, {}); }

void TemporaryDirectory::remove() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
  path_.clear();
}

}  // namespace poems::base
