#include "poems/trace/archive.h"
#include "poems/base/file_bytes.h"

#include <algorithm>
#include <filesystem>

#include "poems/db/run_key.h"
#include "poems/trace/trace.h"

namespace poems::trace {

namespace fs = std::filesystem;

std::vector<std::string> archive_files(const std::string& anchor) {
  const fs::path a(anchor);
  const fs::path dir = a.parent_path().empty() ? fs::path(".") : a.parent_path();
  const std::string stem = a.stem().string();
  std::vector<std::string> files{a.filename().string()};
  std::error_code ec;
  if (fs::is_regular_file(dir / (stem + ".def"), ec)) files.push_back(stem + ".def");
  if (fs::is_directory(dir / stem, ec))
    for (const auto& e : fs::recursive_directory_iterator(dir / stem, ec))
      if (e.is_regular_file()) files.push_back(fs::relative(e.path(), dir).string());
  std::sort(files.begin(), files.end());
  return files;
}

std::uint64_t archive_bytes(const std::string& anchor) {
  const fs::path dir = fs::path(anchor).parent_path().empty() ? fs::path(".") : fs::path(anchor).parent_path();
  std::uint64_t total = 0;
  std::error_code ec;
  for (const std::string& f : archive_files(anchor)) total += fs::file_size(dir / f, ec);
  return total;
}

std::string archive_hash(const std::string& anchor) {
  const fs::path dir = fs::path(anchor).parent_path().empty() ? fs::path(".") : fs::path(anchor).parent_path();
  std::string manifest;
  for (const std::string& f : archive_files(anchor)) {
    const std::optional<std::string> content = base::read_file_bytes(dir / f);
    if (!content) throw TraceError("cannot read '" + (dir / f).string() + "'");
    manifest += f;
    manifest += '\0';
    manifest += db::sha256_hex(*content);
    manifest += '\n';
  }
  return db::sha256_hex(manifest);
}

}  // namespace poems::trace
