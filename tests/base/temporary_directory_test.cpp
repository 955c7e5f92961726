// base::TemporaryDirectory: the scratch directory of runs, builds and plots.
#include "poems/base/temporary_directory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace fs = std::filesystem;
using poems::base::TemporaryDirectory;

TEST(TemporaryDirectory, PrivateUnderTheTemporaryDirectoryAndRemovedWithItsContents) {
  fs::path kept;
  {
    TemporaryDirectory dir("poems_tmp_test_");
    ASSERT_TRUE(dir.created()) << dir.error();
    kept = dir.path();
    EXPECT_EQ(kept.parent_path(), fs::temp_directory_path());
    const std::string name = kept.filename().string();
    EXPECT_EQ(name.rfind("poems_tmp_test_", 0), 0u);
    EXPECT_EQ(name.size(), std::string("poems_tmp_test_").size() + 6);
    struct stat st {};
    ASSERT_EQ(::stat(kept.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    fs::create_directories(kept / "a" / "b");
    std::ofstream(kept / "a" / "b" / "file") << "x";
    TemporaryDirectory other("poems_tmp_test_");
    EXPECT_NE(other.path(), kept);
  }
  EXPECT_FALSE(fs::exists(kept));
}

TEST(TemporaryDirectory, AMoveHandsOverTheDirectoryOnce) {
  std::optional<TemporaryDirectory> first(std::in_place, "poems_tmp_test_");
  const fs::path path = first->path();
  TemporaryDirectory second = std::move(*first);
  EXPECT_FALSE(first->created());
  first.reset();  // the moved-from one removes nothing
  EXPECT_TRUE(fs::is_directory(path));
  EXPECT_EQ(second.path(), path);
  TemporaryDirectory third("poems_tmp_test_");
  const fs::path replaced = third.path();
  third = std::move(second);  // the directory it held goes
  EXPECT_FALSE(fs::exists(replaced));
  EXPECT_EQ(third.path(), path);
}

TEST(TemporaryDirectory, ReleasedItStays) {
  fs::path path;
  {
    TemporaryDirectory dir("poems_tmp_test_");
    path = dir.release();
    EXPECT_FALSE(dir.created());
  }
  EXPECT_TRUE(fs::is_directory(path));
  fs::remove_all(path);
}

TEST(TemporaryDirectory, AFailureSaysWhyAndMakesNothing) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  TemporaryDirectory holder("poems_tmp_test_");
  const fs::path file = holder.path() / "not_a_directory";
  std::ofstream(file) << "x";
  ::setenv("TMPDIR", (holder.path() / "missing").c_str(), 1);
  TemporaryDirectory missing("p_");
  ::setenv("TMPDIR", file.c_str(), 1);
  TemporaryDirectory not_a_directory("p_");
  if (old)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  EXPECT_FALSE(missing.created());
  EXPECT_FALSE(missing.error().empty());
  EXPECT_FALSE(not_a_directory.created());
  EXPECT_FALSE(not_a_directory.error().empty());
  EXPECT_EQ(std::distance(fs::directory_iterator(holder.path()), fs::directory_iterator()), 1);
}
