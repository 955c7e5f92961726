#include "poems/base/source.h"

#include <algorithm>
#include <cstring>

namespace poems::base {

FileId SourceManager::add(std::string path, std::string text) {
  File f{std::move(path), std::move(text), {0}};
  // Counted first and found with memchr: a GOAL file has millions of lines.
  const char* const begin = f.text.data();
  const char* const end = begin + f.text.size();
  f.line_starts.reserve(1 + static_cast<std::size_t>(std::count(begin, end, '\n')));
  for (const char* p = begin; (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p))));)
    f.line_starts.push_back(static_cast<std::size_t>(++p - begin));
  files_.push_back(std::move(f));
  return static_cast<FileId>(files_.size() - 1);
}

std::string_view SourceManager::line(FileId id, std::uint32_t line) const {
  if (id >= files_.size()) return {};
  const File& f = files_[id];
  if (line == 0 || line > f.line_starts.size()) return {};
  std::size_t begin = f.line_starts[line - 1];
  std::size_t end = line < f.line_starts.size() ? f.line_starts[line] - 1 : f.text.size();
  std::string_view view(f.text);
  view = view.substr(begin, end - begin);
  if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
  return view;
}

}  // namespace poems::base
