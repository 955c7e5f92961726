// A progress line on a terminal for long evaluations (a large simulation, a
// trace replay, a direct execution): simulated time reached, events, their
// rate and an ETA when the total work is known, redrawn in place a few times
// a second once the work has run for a while, erased when it ends. Nothing
// at all is written when disabled (stderr not a terminal, TERM=dumb,
// --quiet): output redirected to a file or a pipe stays as it was.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace poems::base {

// One report of the work (the simulator's SimulationProgress, in units the
// display needs; base knows no simulator).
struct ProgressFigures {
  double elapsed_seconds = 0;    // since the work began
  double simulated_seconds = 0;  // simulated time reached
  std::uint64_t events = 0;
  std::uint64_t done = 0, total = 0;  // work done of the total; total 0: unknown (no ETA)
  bool finished = false;              // the work ended: erase the line
  // Not null: the work is a batch of these ("evaluations"), counted by done
  // and total; there is no simulated time or event count to show.
  const char* unit = nullptr;
};

// The figures of a simulator's report: sim::SimulationProgress (`now` in
// picoseconds, events, done/total, wall_seconds, finished). A template so
// base needs no simulator; the one conversion for every display, core's and
// the direct runtime's (libpoems_mpi.so, which has no core).
template <typename Report>
ProgressFigures progress_figures(const Report& report) {
  ProgressFigures f;
  f.elapsed_seconds = report.wall_seconds;
  f.simulated_seconds = static_cast<double>(report.now) * 1e-12;
  f.events = report.events;
  f.done = report.done;
  f.total = report.total;
  f.finished = report.finished;
  if constexpr (requires { report.unit; }) f.unit = report.unit;
  return f;
}

// The line for `figures` with `rate` events per second (negative: not known
// yet) and `eta_seconds` (negative: none), without terminal controls:
// "simulated 1.25 s | 12.3 M events | 4.56 M events/s | 42 % | ETA 0:07",
// or for a batch "12/40 evaluations | 30 % | ETA 0:07".
std::string progress_text(const ProgressFigures& figures, double rate, double eta_seconds);

// True if file descriptor 2 is a terminal and TERM is set and not "dumb".
bool stderr_is_terminal();

// The delay before a line is shown: POEMS_PROGRESS_DELAY seconds if set
// (the tests use 0), else ProgressLine::kDelaySeconds. Read by `poems` and by
// the direct runtime (a program's process draws its own line).
double progress_delay_seconds();

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  // Shown once the work has run this long; redrawn at most this often.
  static constexpr double kDelaySeconds = 2.0;
  static constexpr double kRefreshSeconds = 0.25;

  // Writes to `out` once enabled, showing the line after `delay_seconds` of
  // work; `columns` caps its width (0: the terminal's width on fd 2, or 80),
  // since a wrapped line cannot be redrawn.
  explicit ProgressLine(std::ostream& out, double delay_seconds = kDelaySeconds, unsigned columns = 0);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void enable() { enabled_ = true; }
  bool enabled() const { return enabled_; }
  // A report: drawn if the work has run the delay and the last drawing
  // is kRefreshSeconds old (`now` is the clock's time, given by tests);
  // erased if `figures.finished`.
  void update(const ProgressFigures& figures, Clock::time_point now);
  void update(const ProgressFigures& figures) { update(figures, Clock::now()); }
  // Erases the line if it is shown (before other output, at the end).
  void clear();

 private:
  std::ostream& out_;
  double delay_;
  bool enabled_ = false;
  unsigned columns_;
  bool shown_ = false;
  Clock::time_point drawn_at_{};
  // The rate between drawings, and the ETA from the work done since the first report.
  double last_elapsed_ = -1;
  std::uint64_t last_events_ = 0;
  double first_elapsed_ = -1, first_fraction_ = 0;
};

// A progress hook's function (sim::ProgressHook: function and data) drawing
// each report on the ProgressLine given as the hook's data.
template <typename Report>
void draw_progress(void* line, const Report& report) {
  static_cast<ProgressLine*>(line)->update(progress_figures(report));
}

}  // namespace poems::base
