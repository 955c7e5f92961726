// A whole file read into memory: one helper for the places that hash a
// binary, parse a mapping or network file, or read a child's output.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace poems::base {

// The file's bytes; nullopt when it cannot be opened or read (errno says why).
std::optional<std::string> read_file_bytes(const std::filesystem::path& path);

}  // namespace poems::base
