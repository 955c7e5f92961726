// The running executable's path (poems/base/executable_path.h): this test
// binary's own.
#include "poems/base/executable_path.h"

#include <gtest/gtest.h>

namespace poems::base {
namespace {

TEST(ExecutablePath, IsThisTestBinary) {
  std::error_code error;
  const std::filesystem::path path = executable_path(error);
  EXPECT_FALSE(error) << error.message();
  EXPECT_TRUE(path.is_absolute()) << path;
  EXPECT_EQ(path.filename(), "base_process_tests");
  EXPECT_TRUE(std::filesystem::equivalent(path, POEMS_TEST_BINARY)) << path;
  EXPECT_EQ(executable_path(), path);
  EXPECT_EQ(executable_directory(), path.parent_path().string());
}

}  // namespace
}  // namespace poems::base
