// Where the running executable is (/proc/self/exe): `poems` finds the
// programs, wrappers and libraries of its build beside itself (bin/, ../lib).
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace poems::base {

// The running executable's path; empty with `error` set if unknown.
std::filesystem::path executable_path(std::error_code& error);

// The running executable's path; empty if unknown.
std::filesystem::path executable_path();

// The directory of the running executable; "" if unknown.
std::string executable_directory();

}  // namespace poems::base
