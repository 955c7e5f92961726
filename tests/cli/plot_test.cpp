// `poems run --plot`: the x axis (--plot-x; the bindings when the process
// count does not vary), the title with the --set values, and a picture
// readable by others.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "poems/report/study_table.h"
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

// Every kind of plot, drawn, then checked with what gnuplot reports of each
// panel (its axes and its plot area): every point of the study inside its
// panel's axes, no panel over another, none reaching the legend's band.
namespace {

using poems::core::StudyCell;
using poems::core::StudyRow;
using poems::core::StudyTable;

StudyRow study_row(std::vector<std::pair<std::string, double>> values, std::uint32_t processes,
                   const std::vector<std::pair<std::string, double>>& times_s) {
  StudyRow r;
  for (const auto& [k, v] : values) r.binding.emplace_back(k, poems::base::Value::of_number(v));
  r.processes = processes;
  for (const auto& [p, t] : times_s) {
    StudyCell c;
    c.time_ns = t * 1e9;
    c.processes = processes;
    r.cells[p] = c;
  }
  return r;
}

// Decks of (mk, nx) on 1 and 2 processes (two layouts of 2), three paradigms,
// measured faster than ideal: the main job's validation study in shape.
StudyTable validation_like(int decks) {
  StudyTable t;
  t.study = "validation";
  t.model = "Model";
  t.paradigms = {"analytic[LogGP]", "simulation[MPI-Sim]", "measurement[mpirun]"};
  t.targets = {"mk", "nx", "pi", "pj"};
  t.process_params = {"pi", "pj"};
  for (int d = 0; d < decks; ++d) {
    const double base = 0.2 * (d + 1);
    for (auto [pi, pj] : {std::pair{1, 1}, {2, 1}, {1, 2}}) {
      const double p = pi * pj;
      t.rows.push_back(study_row({{"mk", 5.0 + d}, {"nx", 50.0 * (d % 3 + 1)}, {"pi", pi}, {"pj", pj}},
                                 static_cast<std::uint32_t>(p),
                                 {{t.paradigms[0], base / p * 1.05},
                                  {t.paradigms[1], base / p * (pi == 2 ? 0.95 : 1.1)},
                                  {t.paradigms[2], base / (p == 1 ? 1 : 2.45)}}));
    }
  }
  poems::core::finish_study_table(t);
  return t;
}

void expect_readable(const poems::report::PlotResult& r, std::size_t panels, const std::string& what) {
  ASSERT_EQ(r.error, "") << what;
  ASSERT_EQ(r.panels.size(), panels) << what;
  for (std::size_t i = 0; i < r.panels.size(); ++i) {
    const poems::report::PlotPanel& p = r.panels[i];
    SCOPED_TRACE(what + ", panel " + std::to_string(i));
    EXPECT_GT(p.term_y_size, 0);
    EXPECT_LE(p.x_min, p.data_x_min);
    EXPECT_GE(p.x_max, p.data_x_max);
    EXPECT_LE(p.y_min, p.data_y_min);
    EXPECT_GE(p.y_max, p.data_y_max);
    EXPECT_LT(p.term_y_max / p.term_y_size, r.key_bottom) << "the panel reaches the legend's band";
    for (std::size_t j = 0; j < i; ++j) {
      const poems::report::PlotPanel& q = r.panels[j];
      const bool apart = p.term_x_min >= q.term_x_max || q.term_x_min >= p.term_x_max || p.term_y_min >= q.term_y_max ||
                         q.term_y_min >= p.term_y_max;
      EXPECT_TRUE(apart) << "panels " << j << " and " << i << " overlap";
    }
  }
}

}  // namespace

TEST(PlotLayout, GroupsGetARowEachWithTheLegendAboveAndEveryPointInside) {
  for (const char* ext : {".png", ".svg"}) {
    const fs::path out = temp_plot("validation", ext);
    poems::report::PlotResult r = poems::report::draw_plot(validation_like(4), {out.string(), "", {}});
    expect_readable(r, 8, std::string("4 decks") + ext);  // 4 rows of time and speedup
    // Speedups up to 2.45 measured: the speedup panels reach them.
    EXPECT_GE(r.panels[1].y_max, 2.45);
    EXPECT_TRUE(fs::exists(out));
    fs::remove(out);
  }
}

TEST(PlotLayout, ManyGroupsShareOnePanelPair) {
  const fs::path out = temp_plot("many", ".svg");
  poems::report::PlotResult r = poems::report::draw_plot(validation_like(9), {out.string(), "", {}});
  expect_readable(r, 2, "9 decks");
  const std::string text = read_text(out);
  EXPECT_NE(text.find("measurement[mpirun] mk=13, nx=150"), std::string::npos) << "curves named by their group";
  fs::remove(out);
}

TEST(PlotLayout, AParameterAxisAndABindingsAxis) {
  StudyTable t = validation_like(1);
  const fs::path a = temp_plot("param", ".png");
  // Against pi, the bindings that differ in pj are two groups: two rows.
  expect_readable(poems::report::draw_plot(t, {a.string(), "pi", {}}), 2, "against pi");
  fs::remove(a);
  StudyTable fixed = t;
  fixed.rows.erase(fixed.rows.begin());  // 2 processes only: the bindings axis
  const fs::path b = temp_plot("bindings", ".svg");
  expect_readable(poems::report::draw_plot(fixed, {b.string(), "", {}}), 1, "bindings");
  fs::remove(b);
}
