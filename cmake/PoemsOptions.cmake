# Warnings and sanitizers for our own targets. Third-party and ANTLR-generated
# code is compiled without -Werror (see psl/CMakeLists.txt).
if(POEMS_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

function(poems_strict_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
