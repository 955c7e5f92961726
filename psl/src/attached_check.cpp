#include "attached_check.h"

#include <map>
#include <regex>
#include <vector>

namespace poems::psl {

namespace {

enum class EntryType { Text, Texts, Arguments, Integer, Time, Compute };

struct EntryRule {
  const char* name;
  EntryType type;
  const char* means;
};

// A program runs under mpirun (measurement) and on simulated ranks (direct
// execution); a kernel runs the model's program alone for one task's arguments.
const std::vector<EntryRule>& rules(AttachedKind kind) {
  static const std::vector<EntryRule> program{
      {"sources", EntryType::Texts, "source files, built with mpicc and with poems-mpicc"},
      {"flags", EntryType::Texts, "compiler and linker flags"},
      {"executable", EntryType::Text, "an executable built with the real MPI (measurement)"},
      {"direct_executable", EntryType::Text, "an executable built with poems-mpicc (direct execution)"},
      {"args", EntryType::Arguments, "the arguments, over the model's parameters"},
      {"ranks", EntryType::Integer, "the process count, over the model's parameters"},
      {"inputs", EntryType::Texts, "files copied into the run's working directory"},
      {"time", EntryType::Text, "a regular expression whose first group is the run's time"},
      {"time_unit", EntryType::Time, "the unit of that time (default 1s)"},
      {"compute", EntryType::Compute, "direct execution's computation: \"measured\" or \"model\""},
      {"timeout", EntryType::Time, "the longest a run may take"},
  };
  static const std::vector<EntryRule> kernel{
      {"args", EntryType::Arguments, "the program's arguments for one task, over the transaction's parameters"},
      {"time", EntryType::Text, "a regular expression whose first group is one task's time"},
      {"time_unit", EntryType::Time, "the unit of that time (default 1s)"},
      {"timeout", EntryType::Time, "the longest a run may take"},
  };
  return kind == AttachedKind::Program ? program : kernel;
}

const char* block_name(AttachedKind kind) { return kind == AttachedKind::Program ? "program" : "kernel"; }

class AttachedChecker {
 public:
  AttachedChecker(AttachedKind kind, const Scope& scope, const Analyzer::Hooks& hooks, DiagnosticEngine& diags)
      : kind_(kind), scope_(scope), hooks_(hooks), diags_(diags) {}

  void run(const AttachedCommand& block) {
    std::map<std::string, SourceLocation> seen;
    std::vector<std::string> known;
    for (const EntryRule& r : rules(kind_)) known.push_back(r.name);
    for (const Binding& b : block.entries) {
      if (auto [it, inserted] = seen.emplace(b.name.name, b.name.location); !inserted) {
        auto& d = diags_.error(b.name.location,
                               std::string("duplicate ") + block_name(kind_) + " entry '" + b.name.name + "'");
        DiagnosticEngine::note(d, it->second, "first entry is here");
        continue;
      }
      const EntryRule* rule = nullptr;
      for (const EntryRule& r : rules(kind_))
        if (b.name.name == r.name) rule = &r;
      if (!rule) {
        std::string list;
        for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
        diags_.error(b.name.location, std::string("unknown ") + block_name(kind_) + " entry '" + b.name.name +
                                          "' (entries: " + list + ")" + did_you_mean_suffix(b.name.name, known));
        continue;
      }
      if (b.value) check_entry(*rule, *b.value);
    }
    const auto has = [&](const char* name) { return seen.count(name) > 0; };
    if (!has("time"))
      diags_.error(block.location, std::string("the ") + block_name(kind_) +
                                       " has no 'time': give a regular expression whose first group is the time it "
                                       "prints, e.g. time = \"time_s=([0-9.e+-]+)\";");
    if (kind_ == AttachedKind::Program) {
      if (!has("ranks"))
        diags_.error(block.location, "the program has no 'ranks': give its process count, e.g. ranks = px * py;");
      if (!has("sources") && !has("executable") && !has("direct_executable"))
        diags_.error(block.location,
                     "the program has no 'sources', 'executable' or 'direct_executable': say what to run");
      if (has("sources") && (has("executable") || has("direct_executable")))
        diags_.error(block.location, "the program gives 'sources' and an executable: give one or the other");
    }
  }

 private:
  Analysis analyze(const Expr& e) {
    Analyzer analyzer(diags_, scope_, hooks_);
    return analyzer.analyze(e);
  }

  void check_entry(const EntryRule& rule, const Expr& e) {
    const std::string what = std::string(block_name(kind_)) + " entry '" + rule.name + "'";
    switch (rule.type) {
      case EntryType::Text:
        if (const Analysis a = analyze(e); a.typed && (a.kind != Value::Kind::String || !a.value))
          diags_.error(e.location, what + " is " + rule.means + ": a string, e.g. \"...\"");
        else if (a.value && std::string(rule.name) == "time")
          check_pattern(a.value->text, e);
        else if (a.value && a.value->text.empty())
          diags_.error(e.location, what + " is empty");
        return;
      case EntryType::Texts:
        for (const Expr* item : list_items(e))
          if (const Analysis a = analyze(*item); a.typed && (a.kind != Value::Kind::String || !a.value))
            diags_.error(item->location, what + " lists " + rule.means + ": strings, e.g. [\"a.c\", \"b.c\"]");
        return;
      case EntryType::Arguments:
        for (const Expr* item : list_items(e)) {
          const Analysis a = analyze(*item);
          if (!a.typed) continue;  // an unknown name, already reported
          if (a.kind == Value::Kind::String) continue;
          if (a.kind != Value::Kind::Number || a.dimension != kDimensionless)
            diags_.error(item->location, what + ": an argument is a string or a plain number, not " +
                                             (a.kind == Value::Kind::Number ? "a quantity with a unit"
                                                                            : std::string(kind_name(a.kind))));
        }
        return;
      case EntryType::Integer: {
        Analyzer analyzer(diags_, scope_, hooks_);
        analyzer.require_integer(analyzer.analyze(e), e, what);
        return;
      }
      case EntryType::Time:
        if (const Analysis a = analyze(e); a.typed) {
          if (a.kind != Value::Kind::Number || a.dimension != kTime)
            diags_.error(e.location, what + " is a time, e.g. 1s or 1ms");
          else if (a.value && !(a.value->number > 0))
            diags_.error(e.location, what + " must be greater than 0");
        }
        return;
      case EntryType::Compute:
        if (const Analysis a = analyze(e); a.typed) {
          if (a.kind != Value::Kind::String || !a.value || (a.value->text != "measured" && a.value->text != "model"))
            diags_.error(e.location, what +
                                         " is \"measured\" (the host's time between MPI calls) or \"model\" "
                                         "(only what the program charges with POEMS_Compute)");
        }
        return;
    }
  }

  void check_pattern(const std::string& pattern, const Expr& e) {
    try {
      const std::regex re(pattern);
      if (re.mark_count() < 1)
        diags_.error(e.location,
                     "the 'time' pattern has no group: put the number in parentheses, e.g. "
                     "\"time_s=([0-9.e+-]+)\"");
    } catch (const std::regex_error& x) {
      diags_.error(e.location, std::string("the 'time' pattern is not a regular expression: ") + x.what());
    }
  }

  AttachedKind kind_;
  const Scope& scope_;
  const Analyzer::Hooks& hooks_;
  DiagnosticEngine& diags_;
};

}  // namespace

void check_attached(const AttachedCommand& block, AttachedKind kind, const Scope& scope, const Analyzer::Hooks& hooks,
                    DiagnosticEngine& diags) {
  AttachedChecker(kind, scope, hooks, diags).run(block);
}

}  // namespace poems::psl
