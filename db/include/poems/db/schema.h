// Schema versions and forward migrations (PRAGMA user_version).
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace poems::db {

struct Migration {
  int version;            // user_version after it ran
  std::string_view what;  // one line for humans
  std::string_view sql;   // statements, run in one transaction
};

// In order: migrations()[i].version == i + 1.
const std::vector<Migration>& migrations();
int current_schema_version();
// The oldest version a read-only open accepts as it is: later migrations
// only added indexes, which make reading faster, not possible.
int oldest_readable_schema_version();

// Creates or migrates `path` up to `version` only (tests build old files with it).
void migrate_file_to(const std::filesystem::path& path, int version);

}  // namespace poems::db
