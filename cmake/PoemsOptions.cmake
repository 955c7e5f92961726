# Warnings and sanitizers for our own targets. Third-party and ANTLR-generated
# code is compiled without -Werror (see psl/CMakeLists.txt).
if(POEMS_SANITIZE)
  # -O1: ASan's documented setting for usable speed (at -O0 the tests run
  # several times longer, and CI runs both builds within its time budget).
  # -g1 (after the Debug type's -g, so it wins): the line tables a sanitizer's
  # report needs, without the type information that made the build a third
  # slower and its objects 2.5 times larger (docs/PERFORMANCE.md, "Build and CI time").
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -O1 -g1)
  add_link_options(-fsanitize=address,undefined)
endif()

function(poems_strict_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  # ASan at -O1 makes GCC 12 report -Wmaybe-uninitialized inside libstdc++
  # (std::function in std::regex); GCC's manual warns that sanitizers cause
  # such false positives. The Release build keeps the warning.
  if(POEMS_SANITIZE)
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
  endif()
  # GCC 12 at -O3 reports -Wrestrict on ordinary std::string concatenation
  # ("a" + std::to_string(n)): GCC bug 105329, fixed in GCC 13.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
endfunction()

# A static library whose objects libpoems_mpi.so (evaluators/direct) reuses:
# position-independent, and without semantic interposition, so calls between
# its functions inline and bind as in the executables (Debian's GCC builds
# executables as PIE, so this costs them nothing).
function(poems_shared_ready target)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE -fno-semantic-interposition)
endfunction()
