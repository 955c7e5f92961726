// The progress display of long evaluations: the terminal line's text, delay,
// rate limit and erasure (base::ProgressLine, fed by hand with a fake
// clock); the simulator's hook (called every kProgressInterval events and at
// the end, without changing the run); and the `poems` executable on a
// pseudo-terminal, with --quiet and with stderr not a terminal.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/run_command.h"
#include "poems/base/progress.h"
#include "poems/core/machine.h"
#include "poems/core/progress.h"
#include "poems/sim/simulator.h"
#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/explicit_schedule.h"

namespace {

using poems::base::ProgressFigures;
using poems::base::ProgressLine;
using Clock = ProgressLine::Clock;
using namespace std::chrono_literals;

const std::string kErase = "\r\033[K";

ProgressFigures figures(double elapsed, std::uint64_t events, double simulated, std::uint64_t done,
                        std::uint64_t total) {
  ProgressFigures f;
  f.elapsed_seconds = elapsed;
  f.events = events;
  f.simulated_seconds = simulated;
  f.done = done;
  f.total = total;
  return f;
}

TEST(ProgressText, FieldsInHumanUnits) {
  EXPECT_EQ(poems::base::progress_text(figures(3, 41000, 1.5, 50, 100), 20000, 2),
            "simulated 1.500 s | 41.0 k events | 20.0 k events/s | 50 % | ETA 0:02");
  EXPECT_EQ(poems::base::progress_text(figures(3, 2'500'000'000, 12.5e-6, 0, 0), 3.25e6, -1),
            "simulated 12.500 \u00b5s | 2.50 G events | 3.2 M events/s | no ETA");
  EXPECT_EQ(poems::base::progress_text(figures(3, 999, 0.0025, 1, 3), -1, 3723),
            "simulated 2.500 ms | 999 events | 33 % | ETA 1:02:03");
  // A batch of evaluations on workers (poems recommend --jobs): no simulated
  // time or events, its own count.
  ProgressFigures batch = figures(3, 0, 0, 12, 40);
  batch.unit = "evaluations";
  EXPECT_EQ(poems::base::progress_text(batch, -1, 7), "12/40 evaluations | 30 % | ETA 0:07");
  batch.total = 0;
  EXPECT_EQ(poems::base::progress_text(batch, -1, -1), "12 evaluations | no ETA");
  // One conversion for every report: the simulator's carries no unit.
  poems::sim::SimulationProgress report;
  report.done = 3;
  report.total = 4;
  report.unit = "evaluations";
  EXPECT_STREQ(poems::base::progress_figures(report).unit, "evaluations");
  EXPECT_EQ(poems::base::progress_figures(poems::sim::SimulationProgress{}).unit, nullptr);
}

TEST(ProgressLine, DisabledWritesNothing) {
  std::ostringstream out;
  {
    ProgressLine line(out, 2.0, 100);
    const Clock::time_point t0{};
    line.update(figures(0.5, 1000, 0.1, 0, 100), t0);
    line.update(figures(5, 90000, 1.0, 50, 100), t0 + 5s);
    line.clear();
    ProgressFigures end = figures(6, 100000, 1.0, 100, 100);
    end.finished = true;
    line.update(end, t0 + 6s);
  }
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressLine, ShownAfterTheDelayRateLimitedAndErasedAtTheEnd) {
  std::ostringstream out;
  ProgressLine line(out, 2.0, 100);
  line.enable();
  const Clock::time_point t0{};
  line.update(figures(0.5, 1000, 0.1, 0, 100), t0);
  line.update(figures(1.9, 30000, 0.9, 40, 100), t0 + 1400ms);
  EXPECT_EQ(out.str(), "") << "shown before the delay";
  // Rate since the first report: (41000 - 1000) / (2.5 - 0.5); ETA: half the
  // work in 2 s, half left.
  line.update(figures(2.5, 41000, 1.5, 50, 100), t0 + 2s);
  std::string expected = kErase + "simulated 1.500 s | 41.0 k events | 20.0 k events/s | 50 % | ETA 0:02";
  EXPECT_EQ(out.str(), expected);
  line.update(figures(2.6, 45000, 1.6, 55, 100), t0 + 2100ms);
  EXPECT_EQ(out.str(), expected) << "redrawn within the refresh interval";
  // Rate between the drawings: (81000 - 41000) / (3.5 - 2.5).
  line.update(figures(3.5, 81000, 2.0, 75, 100), t0 + 3s);
  expected += kErase + "simulated 2.000 s | 81.0 k events | 40.0 k events/s | 75 % | ETA 0:01";
  EXPECT_EQ(out.str(), expected);
  ProgressFigures end = figures(4, 100000, 2.5, 100, 100);
  end.finished = true;
  line.update(end, t0 + 3100ms);
  expected += kErase;
  EXPECT_EQ(out.str(), expected) << "not erased at the end";
  line.clear();
  EXPECT_EQ(out.str(), expected) << "erased twice";
}

TEST(ProgressLine, WithoutATotalSaysNoEta) {
  std::ostringstream out;
  ProgressLine line(out, 0, 100);
  line.enable();
  line.update(figures(0.25, 16384, 0.001, 0, 0), Clock::time_point{});
  EXPECT_EQ(out.str(), kErase + "simulated 1.000 ms | 16.4 k events | 65.5 k events/s | no ETA");  // 16384 / 0.25 s
}

TEST(ProgressLine, CutToTheTerminalWidth) {
  std::ostringstream out;
  ProgressLine line(out, 0, 20);
  line.enable();
  line.update(figures(0.25, 16384, 12.5e-6, 0, 0), Clock::time_point{});
  EXPECT_EQ(out.str(), kErase + "simulated 12.500 \u00b5s");  // 19 columns (the µ is one), the last left free
}

TEST(ProgressLine, ANewRunStartsOver) {
  std::ostringstream out;
  ProgressLine line(out, 2.0, 100);
  line.enable();
  const Clock::time_point t0{};
  line.update(figures(2.5, 50000, 1, 10, 100), t0);
  // An abandoned lazy attempt: the run starts again from 0 s; nothing until its own delay.
  const std::size_t shown = out.str().size();
  line.update(figures(0.5, 16384, 0.1, 1, 100), t0 + 1s);
  EXPECT_EQ(out.str().size(), shown);
}

// The simulator's reports of one run.
struct Recorder {
  std::vector<poems::sim::SimulationProgress> reports;
  static void record(void* self, const poems::sim::SimulationProgress& p) {
    static_cast<Recorder*>(self)->reports.push_back(p);
  }
};

poems::taskgraph::CollectiveCall allreduce(std::uint32_t procs) {
  poems::taskgraph::CollectiveCall call;
  call.op = poems::taskgraph::CollectiveOp::Allreduce;
  call.algorithm = poems::taskgraph::CollectiveAlgorithm::Dissemination;
  call.procs = procs;
  call.bytes = 8;
  return call;
}

void check_reports(const Recorder& rec, const poems::sim::SimulationResult& r, std::uint64_t total) {
  using poems::sim::kProgressInterval;
  ASSERT_EQ(rec.reports.size(), r.events / kProgressInterval + 1);
  for (std::size_t i = 0; i + 1 < rec.reports.size(); ++i) {
    const auto& p = rec.reports[i];
    EXPECT_EQ(p.events, (i + 1) * kProgressInterval);
    EXPECT_FALSE(p.finished);
    EXPECT_EQ(p.total, total);
    EXPECT_LE(p.now, r.max_finish);
    if (i > 0) {
      EXPECT_GE(p.now, rec.reports[i - 1].now);
      EXPECT_GE(p.operations, rec.reports[i - 1].operations);
      EXPECT_GE(p.wall_seconds, rec.reports[i - 1].wall_seconds);
    }
  }
  const auto& last = rec.reports.back();
  EXPECT_TRUE(last.finished);
  EXPECT_EQ(last.events, r.events);
  EXPECT_EQ(last.operations, r.operations);
  EXPECT_LE(last.now, r.max_finish);  // the last event's time (completions may follow it)
  EXPECT_GE(last.now, rec.reports.size() > 1 ? rec.reports[rec.reports.size() - 2].now : 0);
  EXPECT_EQ(last.total, total);
  if (total) {
    EXPECT_EQ(last.done, total);
  }
}

TEST(SimulationProgress, OneConversionToTheDisplaysFigures) {
  // base::progress_figures is what core's hooks and the direct runtime draw.
  poems::sim::SimulationProgress p;
  p.now = 1'500'000'000'000;  // 1.5 s in picoseconds
  p.events = 41000;
  p.operations = 7;
  p.done = 50;
  p.total = 100;
  p.wall_seconds = 3;
  const ProgressFigures f = poems::base::progress_figures(p);
  EXPECT_DOUBLE_EQ(f.simulated_seconds, 1.5);
  EXPECT_EQ(f.events, 41000u);
  EXPECT_EQ(f.done, 50u);
  EXPECT_EQ(f.total, 100u);
  EXPECT_DOUBLE_EQ(f.elapsed_seconds, 3);
  EXPECT_FALSE(f.finished);
  p.finished = true;
  EXPECT_TRUE(poems::base::progress_figures(p).finished);
  // Drawn through the hook function on a line (shown: past the delay).
  std::ostringstream out;
  ProgressLine line(out, 0, 200);
  line.enable();
  p.finished = false;
  poems::base::draw_progress<poems::sim::SimulationProgress>(&line, p);
  EXPECT_NE(out.str().find("simulated 1.500 s | 41.0 k events"), std::string::npos) << out.str();
}

TEST(SimulationProgress, ReportedEveryIntervalAndAtTheEndWithoutChangingTheRun) {
  poems::sim::SimulationOptions options;
  poems::taskgraph::CollectiveSchedule plain(allreduce(4096));
  const poems::sim::SimulationResult expected = poems::sim::simulate(plain, options);
  ASSERT_GT(expected.events, 4 * poems::sim::kProgressInterval);
  Recorder rec;
  options.progress = {Recorder::record, &rec};
  poems::taskgraph::CollectiveSchedule watched(allreduce(4096));
  const poems::sim::SimulationResult r = poems::sim::simulate(watched, options);
  EXPECT_EQ(r.max_finish, expected.max_finish);
  EXPECT_EQ(r.events, expected.events);
  EXPECT_EQ(r.operations, expected.operations);
  check_reports(rec, r, 0);  // read as it runs: no total
}

TEST(SimulationProgress, AScheduleInMemoryGivesItsTotal) {
  poems::taskgraph::CollectiveSchedule source(allreduce(2048));
  poems::taskgraph::ExplicitSchedule schedule(2048);
  for (std::uint32_t r = 0; r < 2048; ++r) {
    poems::taskgraph::OpBuffer ops;
    while (source.pull(r, 1024, ops) > 0) {
    }
    schedule.set_rank(r, ops);
  }
  Recorder rec;
  poems::sim::SimulationOptions options;
  options.progress = {Recorder::record, &rec};
  options.semantics = poems::sim::Semantics::Loggopsim;
  const poems::sim::SimulationResult r = poems::sim::simulate(schedule, options);
  ASSERT_TRUE(r.completed);
  ASSERT_GT(r.events, poems::sim::kProgressInterval);
  EXPECT_FALSE(r.lazy_attempt_abandoned);
  check_reports(rec, r, schedule.total_operations());
}

TEST(SimulationProgress, TheCoreScopeReachesSimulationOptions) {
  EXPECT_FALSE(poems::core::current_progress());
  std::ostringstream out;
  ProgressLine line(out);
  {
    const poems::core::ProgressScope disabled(poems::core::progress_hook(line));
    EXPECT_FALSE(poems::core::current_progress()) << "a disabled line needs no hook";
  }
  line.enable();
  {
    const poems::core::ProgressScope scope(poems::core::progress_hook(line));
    EXPECT_EQ(poems::core::current_progress().context, &line);
    EXPECT_EQ(poems::core::simulation_options(poems::core::Machine{}).progress.context, &line);
  }
  EXPECT_FALSE(poems::core::current_progress());
  EXPECT_FALSE(poems::core::simulation_options(poems::core::Machine{}).progress);
}

// `poems ARGS` with stdout and stderr on a pseudo-terminal: all it printed.
std::string run_on_terminal(const std::vector<std::string>& args) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return "forkpty failed";
  if (pid == 0) {
    ::setenv("TERM", "xterm", 1);
    ::setenv("POEMS_PROGRESS_DELAY", "0", 1);
    std::vector<char*> argv{const_cast<char*>(POEMS_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(POEMS_BINARY, argv.data());
    ::_exit(127);
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the child has closed the terminal
    text.append(buf, static_cast<std::size_t>(n));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) text += "\n[exit status " + std::to_string(status) + "]";
  return text;
}

const std::vector<std::string> kSimulate = {"simulate", "--collective", "allreduce", "--procs", "8192", "--no-store"};

TEST(ProgressCli, ShownOnATerminalAndErasedBeforeTheTable) {
  const std::string text = run_on_terminal(kSimulate);
  const std::size_t line = text.find(kErase + "simulated ");
  ASSERT_NE(line, std::string::npos) << text;
  EXPECT_NE(text.find(" events/s | no ETA", line), std::string::npos) << text;
  const std::size_t table = text.find(" ns (rank ");
  ASSERT_NE(table, std::string::npos) << text;
  // The line is erased (the last erase comes after the last drawing) before the table.
  const std::size_t last_drawing = text.rfind(kErase + "simulated ");
  const std::size_t last_erase = text.rfind(kErase);
  EXPECT_GT(last_erase, last_drawing);
  EXPECT_LT(last_erase, table) << text;
}

TEST(ProgressCli, QuietOnATerminalPrintsNoProgress) {
  std::vector<std::string> args = kSimulate;
  args.push_back("--quiet");
  const std::string text = run_on_terminal(args);
  EXPECT_NE(text.find(" ns (rank "), std::string::npos) << text;
  EXPECT_EQ(text.find("\033["), std::string::npos) << text;
  args = kSimulate;
  args.insert(args.begin(), "--quiet");  // a global option, before the command too
  EXPECT_EQ(run_on_terminal(args).find("\033["), std::string::npos);
}

// Direct execution: the program's process runs the engine and draws the
// line itself (when `poems` would: a terminal, no --quiet).
TEST(ProgressCli, ADirectRunShowsTheEnginesProgress) {
  const std::vector<std::string> ring = {
      "direct", std::string(POEMS_BIN_DIR) + "/direct_ring", "-np", "4", "--compute", "model", "--no-store", "--",
      "5000"};
  std::string text = run_on_terminal(ring);
  EXPECT_NE(text.find(kErase + "simulated "), std::string::npos) << text;
  EXPECT_NE(text.find("token 35000 after 5000 lap(s)"), std::string::npos) << text;
  std::vector<std::string> quiet = ring;
  quiet.insert(quiet.begin(), "--quiet");
  text = run_on_terminal(quiet);
  EXPECT_EQ(text.find("\033["), std::string::npos) << text;
  EXPECT_NE(text.find("finish "), std::string::npos) << text;
}

// A study cell evaluated by simulation[direct] shows it as other long
// evaluations do (its program's process draws it; --jobs 1: cells of forked
// workers show none), and not with --quiet.
TEST(ProgressCli, ASimulationDirectStudyCellShowsIt) {
  const std::vector<std::string> study = {
      "run",       std::string(POEMS_SOURCE_DIR) + "/tests/progress/direct_study.psl",
      "--study",   "direct_progress",
      "--jobs",    "1",
      "--no-store"};
  std::string text = run_on_terminal(study);
  EXPECT_NE(text.find(kErase + "simulated "), std::string::npos) << text;
  EXPECT_EQ(text.find("[exit status"), std::string::npos) << text;
  std::vector<std::string> quiet = study;
  quiet.insert(quiet.begin(), "--quiet");
  text = run_on_terminal(quiet);
  EXPECT_EQ(text.find("\033["), std::string::npos) << text;
  EXPECT_EQ(text.find("[exit status"), std::string::npos) << text;
}

// `poems recommend --jobs 2`: the batch of gap-filling evaluations on
// workers shows how many came back, not a simulation's figures.
TEST(ProgressCli, ARecommendBatchCountsItsEvaluations) {
  const std::string text = run_on_terminal(
      {"recommend", std::string(POEMS_SOURCE_DIR) + "/tests/scaleout/recommend_pipeline.psl", "--vary",
       "chunk=1,2,3,4,5,6,8,10,12,15,20,24,30,40", "--procs-range", "2..20", "--jobs", "2", "--no-store"});
  EXPECT_EQ(text.find("[exit status"), std::string::npos) << text;
  // "k/n evaluations | p % | ...", drawn right after an erase.
  const std::size_t at = text.find(" evaluations | ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::size_t drawn = text.rfind(kErase, at) + kErase.size();
  EXPECT_NE(text.find('/', drawn), std::string::npos);
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(text[drawn]))) << text;
  EXPECT_EQ(text.find("simulated "), std::string::npos) << text;
}

TEST(ProgressCli, NothingWhenStderrIsNotATerminal) {
  std::string command = "POEMS_PROGRESS_DELAY=0 TERM=xterm " + std::string(POEMS_BINARY);
  for (const std::string& a : kSimulate) command += " " + a;
  const CommandResult r = run_command(command);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" ns (rank "), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
}

}  // namespace
