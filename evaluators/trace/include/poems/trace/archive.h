// An OTF2 archive on disk: its files (the anchor NAME.otf2, NAME.def and the
// directory NAME/ of per-location files), their size, and a hash of their
// contents that keys stored results (docs/knowledge-base.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace poems::trace {

// The archive's files, sorted by their path relative to the anchor's directory.
std::vector<std::string> archive_files(const std::string& anchor);
std::uint64_t archive_bytes(const std::string& anchor);
// SHA-256 over every file's relative path and the SHA-256 of its contents:
// the same archive copied elsewhere has the same hash.
std::string archive_hash(const std::string& anchor);

}  // namespace poems::trace
