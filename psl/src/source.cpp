#include "poems/psl/source.h"

namespace poems::psl {

FileId SourceManager::add(std::string path, std::string text) {
  File f{std::move(path), std::move(text), {0}};
  for (std::size_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.line_starts.push_back(i + 1);
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

}  // namespace poems::psl
