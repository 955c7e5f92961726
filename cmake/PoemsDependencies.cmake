# Every dependency is a Debian package installed by scripts/install-deps.
find_program(ANTLR4_TOOL NAMES antlr4 REQUIRED)
find_package(antlr4-runtime CONFIG REQUIRED)
find_package(nlohmann_json 3 CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS context)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ISL REQUIRED IMPORTED_TARGET isl)
if(POEMS_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
find_package(MPI COMPONENTS CXX)  # optional until measurement needs it
find_package(Threads REQUIRED)
