// Every file in tests/psl/errors/ is a malformed PSL input that starts with
// `// expect: <substring>` lines; the front end must reject it with located
// diagnostics containing each substring.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "poems/psl/compiler.h"
#include "poems/psl/frontend.h"
#include "poems/psl/lower.h"
#include "poems/taskgraph/comm_check.h"

namespace fs = std::filesystem;
using poems::psl::Frontend;
using poems::psl::Severity;

namespace {

std::vector<std::string> corpus_files() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(POEMS_ERROR_CORPUS))
    if (entry.path().extension() == ".psl") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

struct Expectations {
  std::vector<std::string> errors;    // `// expect: ...`
  std::vector<std::string> warnings;  // `// expect-warning: ...`
  // `// compose: ...`: the file passes the front end and fails composition
  // (the compiler stage); `// compose: machine=NAME` chooses a component.
  bool compose = false;
  std::vector<std::string> chosen;
};

Expectations read_expectations(const std::string& path) {
  std::ifstream in(path);
  Expectations e;
  std::string line;
  while (std::getline(in, line)) {
    const std::string error_tag = "// expect: ", warning_tag = "// expect-warning: ";
    if (line.rfind(error_tag, 0) == 0)
      e.errors.push_back(line.substr(error_tag.size()));
    else if (line.rfind(warning_tag, 0) == 0)
      e.warnings.push_back(line.substr(warning_tag.size()));
    else if (line.rfind("// compose:", 0) == 0)
      e.compose = true;
    if (line.rfind("// compose: machine=", 0) == 0) e.chosen.push_back(line.substr(20));
  }
  return e;
}

class ErrorCorpus : public testing::TestWithParam<std::string> {};

TEST(ErrorCorpusSize, HasAtLeastThirtyFiles) { EXPECT_GE(corpus_files().size(), 30u); }

TEST_P(ErrorCorpus, RejectedWithLocatedDiagnostics) {
  const std::string path = GetParam();
  Expectations expect = read_expectations(path);
  ASSERT_FALSE(expect.errors.empty() && expect.warnings.empty()) << path << " has no '// expect:' line";

  // The same checks as `poems check`: the front end, then static communication.
  Frontend fe;
  bool ok = fe.load_files({path});
  if (ok) ok = poems::psl::check_program_communication(fe.program(), fe.sources(), fe.mutable_diagnostics()) == 0;
  if (expect.compose) {
    // The same stage as `poems compile`: associative matching of the model's components.
    EXPECT_TRUE(ok) << path << " must pass the front end to test composition";
    poems::psl::CompileRequest request;
    request.chosen = expect.chosen;
    ok = ok && poems::psl::compile_system(fe.program(), request, fe.mutable_diagnostics()).has_value();
  }
  std::ostringstream rendered;
  fe.diagnostics().print(rendered);
  const std::string text = rendered.str();
  if (!expect.errors.empty()) {
    EXPECT_FALSE(ok) << path << " was accepted";
  }
  for (const std::string& want : expect.errors)
    EXPECT_NE(text.find(want), std::string::npos) << "missing '" << want << "' in:\n" << text;
  for (const std::string& want : expect.warnings)
    EXPECT_NE(text.find(want), std::string::npos) << "missing warning '" << want << "' in:\n" << text;

  // Every error is `file:line:col: error: ...` followed by the line and a caret.
  static const std::regex header(R"(^[^:\n]+:\d+:\d+: (error|warning): .+$)");
  for (const auto& d : fe.diagnostics().all()) {
    if (d.severity != Severity::Error) continue;
    std::string one = fe.diagnostics().render(d);
    std::string first = one.substr(0, one.find('\n'));
    EXPECT_TRUE(std::regex_match(first, header)) << "unlocated diagnostic: " << first;
    EXPECT_NE(one.find('^'), std::string::npos) << "no caret in:\n" << one;
  }
}

std::string test_name(const testing::TestParamInfo<std::string>& info) {
  std::string stem = fs::path(info.param).stem().string();
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return stem;
}

INSTANTIATE_TEST_SUITE_P(Files, ErrorCorpus, testing::ValuesIn(corpus_files()), test_name);

}  // namespace
