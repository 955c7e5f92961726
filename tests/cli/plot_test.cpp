// `poems run --plot`: the x axis (--plot-x; the bindings when the process
// count does not vary), the title with the --set values, and a picture
// readable by others.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "run_command.h"

namespace fs = std::filesystem;

namespace {

const std::string kSource = POEMS_SOURCE_DIR;
const std::string kGrid = kSource + "/tests/cli/data/plot_grid.psl";
const std::string kSmall = kSource + "/tests/compiler/studies/sweep3d_small.psl";

fs::path temp_plot(const std::string& name, const std::string& ext) {
  fs::path p = fs::temp_directory_path() / ("poems_plot_" + name + "_" + std::to_string(::getpid()) + ext);
  fs::remove(p);
  return p;
}

}  // namespace

TEST(PlotCommand, ConstantProcessCountDrawsTheBindings) {
  const fs::path svg = temp_plot("grid", ".svg");
  CommandResult r = poems_in_process("run " + kGrid + " --study grid --no-store --plot " + svg.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(svg);
  // One tick per binding, labelled with its values; no speedup panel.
  EXPECT_NE(text.find("npe_i=1, npe_j=4"), std::string::npos) << text.substr(0, 2000);
  EXPECT_NE(text.find("npe_i=2, npe_j=2"), std::string::npos);
  EXPECT_NE(text.find("npe_i=4, npe_j=1"), std::string::npos);
  EXPECT_EQ(text.find("speedup"), std::string::npos);
  fs::remove(svg);
}

TEST(PlotCommand, SpeedupAgainstProcessesHasTheIdealLine) {
  const fs::path svg = temp_plot("scaling", ".svg");
  CommandResult r =
      poems_in_process("run " + kSmall + " --study small --no-store --only 'analytic[LogGP]' --plot " + svg.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(svg);
  EXPECT_NE(text.find("speedup"), std::string::npos);
  EXPECT_NE(text.find("ideal"), std::string::npos);
  fs::remove(svg);
}

TEST(PlotCommand, UnknownPlotXIsAUsageErrorNamingTheChoices) {
  const fs::path svg = temp_plot("badx", ".svg");
  CommandResult r =
      poems_in_process("run " + kGrid + " --study grid --no-store --plot " + svg.string() + " --plot-x nprocs");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--plot-x: 'nprocs' is not varied by the study; choose one of npe_i, npe_j, processes"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(svg));
}

TEST(PlotCommand, PlotXDrawsAgainstAVariedParameter) {
  const fs::path svg = temp_plot("npe_i", ".svg");
  CommandResult r =
      poems_in_process("run " + kGrid + " --study grid --no-store --plot " + svg.string() + " --plot-x npe_i");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(svg);
  EXPECT_EQ(text.find("npe_i=1, npe_j=4"), std::string::npos);
  EXPECT_EQ(text.find("speedup"), std::string::npos);
  fs::remove(svg);
}

TEST(PlotCommand, TitleCarriesTheSetOverrides) {
  const fs::path svg = temp_plot("title", ".svg");
  CommandResult r =
      poems_in_process("run " + kGrid + " --study grid --no-store --set iterations=2 --plot " + svg.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_text(svg);
  EXPECT_NE(text.find("POEMS study grid, model Sweep3D (--set iterations=2)"), std::string::npos)
      << text.substr(0, 2000);
  fs::remove(svg);
}

TEST(PlotCommand, PngIsReadableByOthers) {
  const fs::path png = temp_plot("mode", ".png");
  const mode_t old = ::umask(022);
  CommandResult r = poems_in_process("run " + kGrid + " --study grid --no-store --plot " + png.string());
  ::umask(old);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(png.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  fs::remove(png);
}
