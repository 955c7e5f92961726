// Running a kernel under cachegrind (processor[cachesim]): the runs, their
// output, the difference that leaves one steady-state call, the calls made
// (from the cycle a kernel registers) and the cache of counts the core installs.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "common.h"
#include "poems/base/child_process.h"
#include "poems/base/escaped.h"
#include "poems/base/executable_path.h"
#include "poems/base/file_bytes.h"
#include "poems/base/registry.h"
#include "poems/base/temporary_directory.h"
#include "poems/processor/cachesim.h"

namespace poems::processor {
namespace {

std::mutex& cache_mutex() {
  static auto* m = new std::mutex;
  return *m;
}

CachesimCountsCache& counts_cache() {
  static auto* cache = new CachesimCountsCache;
  return *cache;
}

std::string number_text(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

// The runner's own messages: valgrind's lines ("==123== ...") left out.
std::string program_errors(const std::string& err) {
  std::istringstream in(err);
  std::string line, out;
  int lines = 0;
  while (std::getline(in, line) && lines < 6)
    if (line.rfind("==", 0) != 0 && !line.empty()) out += "\n  " + base::escaped(line.substr(0, 400)), ++lines;
  if (out.empty()) {  // valgrind itself failed: its own lines say why
    std::istringstream again(err);
    while (std::getline(again, line) && lines < 6)
      if (!line.empty()) out += "\n  " + base::escaped(line.substr(0, 400)), ++lines;
  }
  return out.empty() ? " (nothing on stderr)" : ":" + out;
}

struct RunRequest {
  std::vector<std::string> argv;
  std::string out_file;
  double timeout_ns = 0;
};

CacheCounts run_cachegrind(const RunRequest& request, const std::string& what) {
  base::ChildOptions o;
  o.argv = request.argv;
  o.timeout_seconds = request.timeout_ns / 1e9;
  o.keeper = true;  // valgrind and anything it starts end with the run
  o.own_process_group = true;
  o.out = base::ChildStream::discard();
  o.err = base::ChildStream::capture(64 << 10);
  const base::ChildResult r = base::run_child(o);
  if (!r.started) {
    if (r.start_errno == ENOENT)
      throw ProcessorError(what + ": '" + request.argv[0] +
                           "' was not found (install Valgrind: Debian package valgrind, `apt-get install valgrind`)");
    throw ProcessorError(what + ": cannot start valgrind: " + r.error);
  }
  if (r.timed_out)
    throw ProcessorError(what + " timed out after " + detail::format_number(request.timeout_ns / 1e9) +
                         " s (set the processor's `timeout`); valgrind and the kernel were killed");
  if (r.keeper_lost) throw ProcessorError(what + ": the process that ran valgrind ended unexpectedly");
  if (!r.ok()) throw ProcessorError(what + " failed (" + r.status_text() + ")" + program_errors(r.err));
  const std::optional<std::string> text = base::read_file_bytes(request.out_file);
  if (!text) throw ProcessorError(what + ": cachegrind wrote no output file " + request.out_file);
  try {
    return parse_cachegrind_output(*text);
  } catch (const ProcessorError& e) {
    throw ProcessorError(what + ": " + e.what());
  }
}

}  // namespace

std::string CacheLevel::text() const {
  return detail::format_number(size) + "," + detail::format_number(assoc) + "," + detail::format_number(line);
}

CacheLevel shared_level(const CacheLevel& level, int sharers) {
  if (sharers <= 1) return level;
  double sets = level.size / (level.assoc * level.line) / sharers;
  sets = sets >= 1 ? std::exp2(std::floor(std::log2(sets))) : 1;
  return {sets * level.assoc * level.line, level.assoc, level.line};
}

double cachesim_time_ns(const CacheCounts& c, const CachesimRates& r, int sharers) {
  const double others = sharers > 1 ? sharers - 1 : 0;
  return c.Ir * r.ns_per_instruction + c.l1_misses() * r.ns_per_L1_miss +
         c.ll_misses() * (r.ns_per_LL_miss + others * r.ns_per_LL_miss_shared);
}

CacheCounts parse_cachegrind_output(const std::string& text) {
  std::istringstream in(text);
  std::string line, events, summary;
  while (std::getline(in, line)) {
    if (line.rfind("events:", 0) == 0) events = line.substr(7);
    if (line.rfind("summary:", 0) == 0) summary = line.substr(8);
  }
  if (events.empty()) throw ProcessorError("cachegrind output has no 'events:' line");
  if (summary.empty()) throw ProcessorError("cachegrind output has no 'summary:' line");
  std::istringstream names(events), values(summary);
  std::map<std::string, double> counts;
  std::string name;
  while (names >> name) {
    double v = 0;
    if (!(values >> v) || v < 0)
      throw ProcessorError("cachegrind output: the 'summary:' line has no count for event '" + name + "'");
    counts[name] = v;
  }
  CacheCounts c;
  const std::pair<const char*, double*> wanted[] = {{"Ir", &c.Ir}, {"I1mr", &c.I1mr}, {"ILmr", &c.ILmr},
                                                    {"Dr", &c.Dr}, {"D1mr", &c.D1mr}, {"DLmr", &c.DLmr},
                                                    {"Dw", &c.Dw}, {"D1mw", &c.D1mw}, {"DLmw", &c.DLmw}};
  for (const auto& [event, slot] : wanted) {
    auto it = counts.find(event);
    if (it == counts.end())
      throw ProcessorError(std::string("cachegrind output has no event '") + event +
                           "' (was the cache simulation on? --cache-sim=yes)");
    *slot = it->second;
  }
  return c;
}

CacheCounts per_call_counts(const CacheCounts& a, int calls1, const CacheCounts& b, int calls2) {
  if (calls2 <= calls1)
    throw ProcessorError("per_call_counts: the second run must make more calls than the first (" +
                         std::to_string(calls1) + " and " + std::to_string(calls2) + ")");
  const double n = calls2 - calls1;
  CacheCounts c;
  auto diff = [&](double CacheCounts::*field, const char* name) {
    // The start-up's few instruction-cache misses were once seen to differ
    // between two runs (the longer one counting fewer): a small negative
    // difference is noise, a count of 0 per call.
    double d = b.*field - a.*field;
    if (d < 0 && -d <= 100 + 0.01 * a.*field) d = 0;
    if (d < 0)
      throw ProcessorError(std::string("cachegrind counted fewer ") + name + " in the run of " +
                           std::to_string(calls2) + " calls than in the run of " + std::to_string(calls1));
    c.*field = d / n;
  };
  diff(&CacheCounts::Ir, "Ir"), diff(&CacheCounts::I1mr, "I1mr"), diff(&CacheCounts::ILmr, "ILmr");
  diff(&CacheCounts::Dr, "Dr"), diff(&CacheCounts::D1mr, "D1mr"), diff(&CacheCounts::DLmr, "DLmr");
  diff(&CacheCounts::Dw, "Dw"), diff(&CacheCounts::D1mw, "D1mw"), diff(&CacheCounts::DLmw, "DLmw");
  return c;
}

SimulatedCalls simulated_calls(const std::string& kernel, const std::map<std::string, double>& params) {
  const KernelCycle cycle = find_kernel_cycle(kernel);
  if (!cycle) return {};
  int calls = 1;
  try {
    calls = cycle(params);
  } catch (const std::exception& e) {
    throw ProcessorError("kernel '" + kernel + "': " + e.what());
  }
  calls = std::clamp(calls, 1, 100000);  // as processor[measured] bounds a cycle: warm-up + counted fit an int
  return {calls, calls};
}

void set_cachesim_counts_cache(CachesimCountsCache cache) {
  std::lock_guard lock(cache_mutex());
  counts_cache() = std::move(cache);
}

std::string default_kernel_runner() {
  const std::string dir = base::executable_directory();
  if (dir.empty()) return "";
  const std::filesystem::path p = std::filesystem::path(dir) / "poems-kernel";
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) ? p.string() : "";
}

void check_cache_level(const std::string& who, const std::string& name, const CacheLevel& c) {
  auto bad = [&](const std::string& attribute, double v, const std::string& range) {
    throw ProcessorError(who + ": attribute '" + name + "_" + attribute + "' is " + detail::format_number(v) + "; " +
                         range);
  };
  auto whole = [](double v) { return std::isfinite(v) && v == std::floor(v); };
  auto power_of_two = [&](double v) {
    return whole(v) && v >= 1 && v < 1e15 && std::exp2(std::round(std::log2(v))) == v;
  };
  if (!power_of_two(c.line) || c.line < 16 || c.line > 65536)
    bad("line", c.line, "it must be a power of two from 16 B to 64 KiB, e.g. `" + name + "_line = 64B;`");
  if (!whole(c.assoc) || c.assoc < 1 || c.assoc > 1024)
    bad("assoc", c.assoc, "it must be a whole number from 1 to 1024, e.g. `" + name + "_assoc = 8;`");
  if (!whole(c.size) || c.size < c.line * c.assoc || c.size > 1099511627776.0)
    bad("size", c.size,
        "it must be a whole number of bytes from " + name + "_assoc x " + name + "_line (" +
            detail::format_number(c.line * c.assoc) + " B) to 1 TiB, e.g. `" + name + "_size = 32KiB;`");
  const double sets = c.size / (c.assoc * c.line);
  if (!power_of_two(sets))
    bad("size", c.size,
        "size / (assoc x line) = " + detail::format_number(sets) +
            " sets; cachegrind needs a power of two (e.g. 48KiB with assoc 12 and 64-B lines: 64 sets)");
}

Simulation simulate_kernel(const std::string& kernel, const std::map<std::string, double>& params,
                           const CacheConfig& caches, const SimulationOptions& options) {
  SimulationKey key;
  key.kernel = kernel;
  key.params = params;
  key.caches = caches;
  key.calls = simulated_calls(kernel, params);
  key.runner = options.runner.empty() ? default_kernel_runner() : options.runner;
  const std::string what = "cachegrind run of kernel '" + kernel + "'";
  if (key.runner.empty())
    throw ProcessorError(what +
                         ": poems-kernel is not beside this executable (build it: cmake --build build "
                         "--target poems-kernel)");
  CachesimCountsCache cache;
  {
    std::lock_guard lock(cache_mutex());
    cache = counts_cache();
  }
  if (cache.find)
    if (std::optional<CacheCounts> stored = cache.find(key)) return {*stored, 0, true};

  // The runs' output files, removed with everything in it.
  const base::TemporaryDirectory dir("poems-cachesim-");
  if (!dir.created()) throw ProcessorError("processor[cachesim]: " + dir.error());
  auto request = [&](int calls) {
    RunRequest r;
    r.out_file = (dir.path() / ("calls-" + std::to_string(calls) + ".out")).string();
    r.timeout_ns = options.timeout_ns;
    r.argv = {options.valgrind,
              "--tool=cachegrind",
              "--cache-sim=yes",
              "--I1=" + caches.I1.text(),
              "--D1=" + caches.D1.text(),
              "--LL=" + caches.LL.text(),
              "--cachegrind-out-file=" + r.out_file,
              key.runner,
              kernel,
              "--calls",
              std::to_string(calls)};
    for (const auto& [name, value] : params) r.argv.push_back(name + "=" + number_text(value));
    return r;
  };
  const int calls1 = key.calls.warmup, calls2 = calls1 + key.calls.counted;
  const RunRequest first = request(calls1), second = request(calls2);
  const auto start = std::chrono::steady_clock::now();
  // The two runs at once: the short one costs nothing on a machine with two cores.
  CacheCounts counts1;
  std::string failure;
  std::thread other([&] {
    try {
      counts1 = run_cachegrind(first, what + " (" + std::to_string(calls1) + " calls)");
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  CacheCounts counts2;
  try {
    counts2 = run_cachegrind(second, what + " (" + std::to_string(calls2) + " calls)");
  } catch (...) {
    other.join();
    throw;
  }
  other.join();
  if (!failure.empty()) throw ProcessorError(failure);
  Simulation s;
  s.per_call = per_call_counts(counts1, calls1, counts2, calls2);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (cache.store) cache.store(key, s.per_call, s.seconds);
  return s;
}

}  // namespace poems::processor
