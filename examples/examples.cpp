#include "poems/examples/examples.h"

#include <filesystem>
#include <mutex>

#include "poems/core/comet.h"
#include "poems/core/direct_run.h"
#include "poems/sweep3d/registration.h"

namespace poems::examples {

void register_examples() {
  static std::once_flag once;
  std::call_once(once, [] {
    sweep3d::register_sweep3d();
    // poems direct --machine Odin reads Odin from here unless --import names a file.
    core::set_default_machine_files({POEMS_EXAMPLES_DIR "/sweep3d/machines.psl"});
    // poems comet runs this program (docs/comet.md).
    core::set_comet_source(POEMS_EXAMPLES_DIR "/comet/comet.c");
  });
}

std::string default_specification() {
  // As `poems analyze` is usually given it, so run keys and paths match.
  const char* relative = "examples/sweep3d/sweep3d.psl";
  std::error_code ec;
  if (std::filesystem::is_regular_file(relative, ec)) return relative;
  const std::string in_tree = POEMS_EXAMPLES_DIR "/sweep3d/sweep3d.psl";
  return std::filesystem::is_regular_file(in_tree, ec) ? in_tree : "";
}

}  // namespace poems::examples
