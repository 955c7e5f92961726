#include "poems/core/attached_program.h"
#include "poems/base/file_bytes.h"

#include "poems/base/last_lines.h"
#include "poems/base/temporary_directory.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <regex>

#include "poems/core/calibration.h"
#include "poems/core/direct_program.h"
#include "poems/core/error.h"
#include "poems/db/run_key.h"
#include "poems/measure/process.h"
#include "poems/processor/processor_model.h"
#include "poems/psl/value.h"

namespace poems::core {

namespace fs = std::filesystem;

namespace {

// A constant's value (the checker made sure it is one); nullopt otherwise.
std::optional<base::Value> constant(const psl::Expr& e) {
  return psl::evaluate(e, [](std::string_view) -> const base::Value* { return nullptr; }).value;
}

std::string text_of(const psl::AttachedCommand& block, const char* name) {
  const psl::Binding* b = block.find(name);
  if (!b || !b->value) return "";
  const std::optional<base::Value> v = constant(*b->value);
  return v && v->kind == base::Value::Kind::String ? v->text : "";
}

double time_ns_of(const psl::AttachedCommand& block, const char* name, double fallback) {
  const psl::Binding* b = block.find(name);
  if (!b || !b->value) return fallback;
  const std::optional<base::Value> v = constant(*b->value);
  return v && v->kind == base::Value::Kind::Number ? v->number : fallback;  // PSL times are in ns
}

// Numbers as a program expects them: integers without a decimal point.
std::string argument_text(const base::Value& v) {
  if (v.kind == base::Value::Kind::String) return v.text;
  if (v.kind == base::Value::Kind::Bool) return v.boolean ? "1" : "0";
  char buffer[64];
  if (v.number == std::trunc(v.number) && std::fabs(v.number) < 9e15)
    std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(v.number));
  else
    std::snprintf(buffer, sizeof buffer, "%.17g", v.number);
  return buffer;
}

using ValueOf = std::function<std::optional<base::Value>(const std::string& name)>;

base::Value evaluate(const psl::Expr& e, const ValueOf& value_of, const std::string& what) {
  std::map<std::string, base::Value, std::less<>> seen;
  const psl::EvalResult r = psl::evaluate(e, [&](std::string_view name) -> const base::Value* {
    auto it = seen.find(name);
    if (it != seen.end()) return &it->second;
    std::optional<base::Value> v = value_of(std::string(name));
    if (!v) return nullptr;
    return &seen.emplace(std::string(name), *v).first->second;
  });
  if (!r.value) throw InputError(what + " (" + psl::to_source(e) + "): " + r.error);
  return *r.value;
}

std::vector<std::string> arguments(const psl::Binding* args, const ValueOf& value_of, const std::string& what) {
  std::vector<std::string> out;
  if (!args || !args->value) return out;
  for (const psl::Expr* item : psl::list_items(*args->value))
    out.push_back(argument_text(evaluate(*item, value_of, what)));
  return out;
}

bool is_fortran(const std::string& path) { return source_language(path) == SourceLanguage::Fortran; }

bool is_cxx(const std::string& path) { return source_language(path) == SourceLanguage::Cxx; }

// What a program attached in PSL is, its files resolved.
struct AttachedSpec {
  const psl::ModelDecl* model = nullptr;
  std::vector<std::string> sources, flags, inputs;
  std::string executable, direct_executable;
  std::string pattern;
  double unit_ns = 1e9;
  std::string identity;  // names it in messages and run keys (changes with its sources)
};

// The build directories of this process, removed when it exits: a kernel's
// registration keeps its program (and its builds) for the process's life.
class BuildDirectories {
 public:
  static BuildDirectories& instance() {
    static BuildDirectories all;
    return all;
  }
  void add(const std::string& dir) {
    std::lock_guard lock(mutex_);
    dirs_.push_back(dir);
  }
  ~BuildDirectories() {
    if (::getpid() != owner_) return;  // a forked worker leaves its parent's alone
    for (const std::string& d : dirs_) {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  }

 private:
  BuildDirectories() : owner_(::getpid()) {}
  std::mutex mutex_;
  std::vector<std::string> dirs_;
  pid_t owner_;
};

// Executables built from the sources once per process, in a directory
// removed when the process that made it ends (not by forked workers).
class Builds {
 public:
  explicit Builds(std::shared_ptr<const AttachedSpec> spec) : spec_(std::move(spec)), owner_(::getpid()) {}
  ~Builds() {
    if (dir_.empty() || ::getpid() != owner_) return;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Builds(const Builds&) = delete;
  Builds& operator=(const Builds&) = delete;

  std::string executable(bool direct) {
    const AttachedSpec& s = *spec_;
    const std::string& given = direct ? s.direct_executable : s.executable;
    if (!given.empty()) return given;
    if (s.sources.empty())
      throw EvaluationError("model " + s.model->name.name + "'s program gives no " +
                            (direct ? "'direct_executable' or 'sources' (simulation[direct] runs it built with "
                                      "poems-mpicc)"
                                    : "'executable' or 'sources' (measurement[mpirun] runs it built with mpicc)"));
    std::lock_guard lock(mutex_);
    std::string& built = direct ? direct_ : measured_;
    if (!built.empty()) return built;
    if (dir_.empty()) {
      base::TemporaryDirectory dir("poems_program_");
      if (!dir.created()) throw EvaluationError("cannot create a directory to build the program in: " + dir.error());
      dir_ = dir.release().string();  // removed by ~Builds and at exit
      BuildDirectories::instance().add(dir_);
    }
    const fs::path out = fs::path(dir_) / (direct ? "direct" : "measured") / fs::path(s.sources.front()).stem();
    fs::create_directories(out.parent_path());
    // A study's forked workers share the directory (made before they fork)
    // but not `built`: a sibling's executable is used as it is, and each is
    // linked under a name of its own and renamed into place whole, so that
    // no process runs a file another is still writing (the linker makes it
    // executable only at the end: exec fails with EACCES until then).
    std::error_code ec;
    if (fs::is_regular_file(out, ec)) return built = out.string();
    const fs::path part = out.string() + ".part" + std::to_string(::getpid());
    const bool fortran = std::any_of(s.sources.begin(), s.sources.end(), is_fortran);
    const bool cxx = std::any_of(s.sources.begin(), s.sources.end(), is_cxx);
    std::string compiler;
    if (direct)
      compiler = bin_path(fortran ? "poems-mpif90" : cxx ? "poems-mpicxx" : "poems-mpicc");
    else
      compiler = fortran ? "mpif90" : cxx ? "mpicxx" : "mpicc";
    std::vector<std::string> argv{compiler, "-O2"};
    argv.insert(argv.end(), s.sources.begin(), s.sources.end());
    argv.insert(argv.end(), s.flags.begin(), s.flags.end());
    argv.insert(argv.end(), {"-o", part.string()});
    const measure::ProcessResult r = measure::run_process(argv, 600);
    if (!r.ok() || !fs::exists(part, ec)) {
      fs::remove(part, ec);
      std::string command;
      for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
      throw EvaluationError("model " + s.model->name.name + "'s program does not build (" + command +
                            "): " + r.status_text() + "\n" + base::last_lines(r.err.empty() ? r.out : r.err, 15));
    }
    fs::rename(part, out, ec);
    if (ec) {
      const std::string why = ec.message();
      fs::remove(part, ec);
      throw EvaluationError("model " + s.model->name.name + "'s program was built but cannot be moved to " +
                            out.string() + ": " + why);
    }
    built = out.string();
    return built;
  }

 private:
  std::shared_ptr<const AttachedSpec> spec_;
  pid_t owner_;
  std::mutex mutex_;
  std::string dir_, direct_, measured_;
};

std::string file_text(const std::string& path) { return base::read_file_bytes(path).value_or(""); }

}  // namespace

std::vector<double> matched_times_ns(const std::string& output, const std::string& pattern, double unit_ns) {
  const std::regex re(pattern);
  std::vector<double> out;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), re); it != std::sregex_iterator(); ++it) {
    const std::string number = (*it)[1].str();
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v))
      throw EvaluationError("the time pattern \"" + pattern + "\" matched '" + it->str() + "', whose group '" + number +
                            "' is not a number");
    out.push_back(v * unit_ns);
  }
  return out;
}

std::shared_ptr<const ModelProgram> attached_program(const psl::ModelDecl& model, const PathBase& base,
                                                     std::shared_ptr<const void> owner,
                                                     std::vector<AttachedProblem>& problems) {
  if (!model.program) return nullptr;
  const psl::AttachedCommand& block = *model.program;
  auto spec = std::make_shared<AttachedSpec>();
  spec->model = &model;
  // Paths relative to the PSL file that names them, each checked to exist.
  auto files = [&](const char* name, bool must_exist) {
    std::vector<std::string> out;
    const psl::Binding* b = block.find(name);
    if (!b || !b->value) return out;
    for (const psl::Expr* item : psl::list_items(*b->value)) {
      const std::optional<base::Value> v = constant(*item);
      if (!v || v->kind != base::Value::Kind::String) continue;
      fs::path p(v->text);
      if (p.is_relative()) p = fs::path(base(item->location)) / p;
      std::error_code ec;
      if (must_exist && !fs::is_regular_file(p, ec))
        problems.push_back({item->location, std::string("no file '") + v->text + "' (" + p.string() + ")"});
      out.push_back(p.lexically_normal().string());
    }
    return out;
  };
  spec->sources = files("sources", true);
  spec->inputs = files("inputs", true);
  if (auto e = files("executable", true); !e.empty()) spec->executable = e.front();
  if (auto e = files("direct_executable", true); !e.empty()) spec->direct_executable = e.front();
  if (const psl::Binding* f = block.find("flags"); f && f->value)
    for (const psl::Expr* item : psl::list_items(*f->value))
      if (std::optional<base::Value> v = constant(*item); v && v->kind == base::Value::Kind::String)
        spec->flags.push_back(v->text);
  spec->pattern = text_of(block, "time");
  spec->unit_ns = time_ns_of(block, "time_unit", 1e9);

  // The identity changes with what is built and what it reads, so a
  // measurement of other code or another input deck is another run.
  std::string contents;
  for (const std::vector<std::string>* list : {&spec->sources, &spec->flags, &spec->inputs})
    for (const std::string& s : *list) contents += s + '\0' + (list != &spec->flags ? file_text(s) : "") + '\0';
  for (const std::string* exe : {&spec->executable, &spec->direct_executable})
    if (!exe->empty()) contents += *exe + '\0' + file_text(*exe) + '\0';
  std::string names;
  for (const std::string& s : spec->sources) names += (names.empty() ? "" : " ") + fs::path(s).filename().string();
  if (names.empty()) names = fs::path(spec->executable.empty() ? spec->direct_executable : spec->executable).filename();
  spec->identity = "program of " + model.name.name + " (" + names + ", " + db::sha256_hex(contents).substr(0, 12) + ")";

  auto builds = std::make_shared<Builds>(spec);
  auto program = std::make_shared<ModelProgram>();
  program->model = model.name.name;
  const bool builds_from_sources = !spec->sources.empty();
  program->measured = builds_from_sources || !spec->executable.empty() ? spec->identity : "";
  program->direct = builds_from_sources || !spec->direct_executable.empty() ? spec->identity : "";
  program->executable = [builds, owner](bool direct) { return builds->executable(direct); };
  program->measured_compute = text_of(block, "compute") != "model";
  program->timeout_seconds = time_ns_of(block, "timeout", 0) / 1e9;

  const psl::Binding* args = block.find("args");
  const psl::Binding* ranks = block.find("ranks");
  auto value_of = [](const Evaluation& e) -> ValueOf {
    return [&e](const std::string& name) -> std::optional<base::Value> {
      if (auto t = e.text_parameters.find(name); t != e.text_parameters.end()) return base::Value::of_string(t->second);
      for (std::uint32_t i = 0; i < e.graph->model_slot_count() && i < e.values.size(); ++i)
        if (e.graph->slot_names[i] == name) return base::Value::of_number(e.values[i]);
      return std::nullopt;
    };
  };
  auto rank_count = [ranks, value_of](const Evaluation& e) {
    const base::Value v = evaluate(*ranks->value, value_of(e), "the program's ranks");
    return v.kind == base::Value::Kind::Number ? v.number : -1.0;
  };
  program->refuses = [rank_count, owner](const Evaluation& e) -> std::string {
    try {
      const double n = rank_count(e);
      if (!(n >= 1 && n <= 1e6 && n == std::trunc(n)))
        return "the program's ranks = " + argument_text(base::Value::of_number(n)) + " (an integer in 1..1000000)";
    } catch (const Error& x) {
      return x.what();
    }
    return "";
  };
  program->input = [spec, args, rank_count, value_of, owner](const Evaluation& e, const fs::path& dir) {
    ProgramInput in;
    in.args = arguments(args, value_of(e), "the program's args");
    in.ranks = static_cast<std::uint32_t>(rank_count(e));
    in.working_directory = dir.string();
    for (const std::string& f : spec->inputs) {
      std::error_code ec;
      fs::copy_file(f, dir / fs::path(f).filename(), fs::copy_options::overwrite_existing, ec);
      if (ec)
        throw EvaluationError("cannot copy the program's input " + f + " to " + dir.string() + ": " + ec.message());
    }
    in.record = {{"args", in.args}, {"program", spec->identity}};
    return in;
  };
  program->read_output = [spec](const std::string& output) {
    const std::vector<double> times = matched_times_ns(output, spec->pattern, spec->unit_ns);
    if (times.empty())
      throw EvaluationError("the program printed no time matching \"" + spec->pattern + "\"; its output ends:\n" +
                            base::last_lines(output, 12));
    ProgramResult r;
    r.time_ns = *std::max_element(times.begin(), times.end());  // the slowest rank's, where several print it
    return r;
  };
  return program;
}

void register_attached_kernels(const psl::Program& program, const psl::ModelDecl& model,
                               const std::shared_ptr<const ModelProgram>& attached,
                               const std::shared_ptr<const void>& owner) {
  if (!attached) return;
  for (const psl::Module& m : program.modules)
    for (const psl::ComponentDecl& c : m.components) {
      if (!c.kernel || c.domain.head != "application" || c.domain.path != model.name.name) continue;
      const psl::AttachedCommand* kernel = &*c.kernel;
      const std::string pattern = text_of(*kernel, "time");
      const double unit_ns = time_ns_of(*kernel, "time_unit", 1e9);
      const double timeout_s = time_ns_of(*kernel, "timeout", 600e9) / 1e9;
      const std::string name = c.name.name;
      processor::register_timed_kernel(name, [attached, kernel, pattern, unit_ns, timeout_s, name,
                                              owner](const std::map<std::string, double>& params) {
        const ValueOf value_of = [&params](const std::string& n) -> std::optional<base::Value> {
          auto it = params.find(n);
          if (it == params.end()) return std::nullopt;
          return base::Value::of_number(it->second);
        };
        std::vector<std::string> argv{attached->executable(false)};
        for (std::string& a : arguments(kernel->find("args"), value_of, "kernel " + name + "'s args"))
          argv.push_back(std::move(a));
        const measure::ProcessResult r = measure::run_process(argv, timeout_s);
        if (!r.ok())
          throw std::runtime_error(r.status_text() + ": " + base::last_lines(r.err.empty() ? r.out : r.err, 8));
        std::vector<double> times = matched_times_ns(r.out, pattern, unit_ns);
        if (times.empty())
          throw std::runtime_error("it printed no time matching \"" + pattern + "\"; its output ends:\n" +
                                   base::last_lines(r.out, 8));
        return times;
      });
      CalibrationKernel k;
      k.kernel = name;
      k.description = "the kernel of " + name + " (" + attached->measured + ")";
      k.component = name;
      for (const psl::Interface& a : c.accepts)
        if (a.transaction) k.transaction = a.transaction->name.name;
      register_calibration_kernel(std::move(k));
    }
}

}  // namespace poems::core
