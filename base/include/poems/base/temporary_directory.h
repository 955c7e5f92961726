// A private directory under the system's temporary directory ($TMPDIR or
// /tmp), removed with everything in it when its owner goes: the one way
// POEMS makes a scratch directory for a run, a build or a plot.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace poems::base {

class TemporaryDirectory {
 public:
  // Creates TMPDIR/PREFIX + six random characters (mkdtemp: mode 0700, never
  // an existing path). On failure created() is false and error() says why.
  explicit TemporaryDirectory(std::string_view prefix);
  ~TemporaryDirectory();  // removes the directory, unless released
  TemporaryDirectory(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory& operator=(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  bool created() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }
  const std::string& error() const { return error_; }
  // Hands the directory over: it is no longer removed here.
  std::filesystem::path release();

 private:
  void remove();
  std::filesystem::path path_;
  std::string error_;
};

}  // namespace poems::base
