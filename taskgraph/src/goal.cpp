#include "poems/taskgraph/goal.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <queue>
#include <string_view>

namespace poems::taskgraph {

namespace {

using psl::SourceLocation;

struct Token {
  enum Kind { Word, Punct, End } kind = End;
  std::string_view text;
  SourceLocation at;
};

// Words are runs of letters, digits, '_', '.', '-' and '+'; punctuation is
// one of `{ } : ;`. Newlines are whitespace: statements delimit themselves.
class Lexer {
 public:
  Lexer(std::string_view text, psl::FileId file, psl::DiagnosticEngine& diags)
      : text_(text), file_(file), diags_(diags) {}

  Token next() {
    skip_space_and_comments();
    Token t;
    t.at = SourceLocation{file_, line_, col_, 1};
    if (pos_ >= text_.size()) return t;
    char c = text_[pos_];
    if (c == '{' || c == '}' || c == ':' || c == ';') {
      t.kind = Token::Punct;
      t.text = text_.substr(pos_, 1);
      advance(1);
      return t;
    }
    std::size_t start = pos_;
    while (pos_ < text_.size() && is_word(text_[pos_])) advance(1);
    if (pos_ == start) {
      diags_.error(t.at, std::string("unexpected character '") + c + "'");
      advance(1);
      return next();
    }
    t.kind = Token::Word;
    t.text = text_.substr(start, pos_ - start);
    t.at.length = static_cast<std::uint32_t>(t.text.size());
    return t;
  }

 private:
  static bool is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-' || c == '+';
  }
  void advance(std::size_t n) {
    for (std::size_t i = 0; i < n && pos_ < text_.size(); ++i, ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }
  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance(1);
      } else if (c == '#' || text_.substr(pos_, 2) == "//") {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance(1);
      } else if (text_.substr(pos_, 2) == "/*") {
        SourceLocation open{file_, line_, col_, 2};
        std::size_t end = text_.find("*/", pos_ + 2);
        if (end == std::string_view::npos) {
          diags_.error(open, "unterminated comment");
          advance(text_.size() - pos_);
        } else {
          advance(end + 2 - pos_);
        }
      } else {
        break;
      }
    }
  }

  std::string_view text_;
  psl::FileId file_;
  psl::DiagnosticEngine& diags_;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1, col_ = 1;
};

struct ParsedDep {
  std::string_view from, to;
  bool on_start;
  SourceLocation from_at, to_at;
};

struct ParsedRank {
  std::vector<Operation> ops;
  std::vector<std::string_view> labels;  // "" = unlabeled
  std::vector<SourceLocation> where;
  std::vector<ParsedDep> deps;
};

class Parser {
 public:
  Parser(const psl::SourceManager& sources, psl::FileId file, psl::DiagnosticEngine& diags)
      : sources_(sources), file_(file), diags_(diags), lex_(sources.text(file), file, diags) {
    tok_ = lex_.next();
  }

  std::unique_ptr<ExplicitSchedule> parse() {
    const std::size_t errors_before = diags_.error_count();
    std::map<std::uint32_t, SourceLocation> seen_ranks;
    while (tok_.kind != Token::End) {
      if (is("num_ranks")) {
        parse_num_ranks();
      } else if (is("rank")) {
        parse_rank(seen_ranks);
      } else {
        diags_.error(tok_.at, "expected 'num_ranks' or 'rank', found '" + std::string(tok_.text) + "'");
        recover_to_top_level();
      }
    }
    if (!num_ranks_ && diags_.error_count() == errors_before)
      diags_.error(SourceLocation{file_, 1, 1, 1}, "missing 'num_ranks N' before the first rank");
    if (diags_.error_count() > errors_before || !num_ranks_) return nullptr;
    return build();
  }

 private:
  bool is(std::string_view w) const { return tok_.kind == Token::Word && tok_.text == w; }
  bool is_punct(char c) const { return tok_.kind == Token::Punct && tok_.text[0] == c; }
  void bump() { tok_ = lex_.next(); }
  std::string found() const { return tok_.kind == Token::End ? "end of file" : "'" + std::string(tok_.text) + "'"; }

  void recover_to_top_level() {
    int depth = 0;
    while (tok_.kind != Token::End) {
      if (is_punct('{')) ++depth;
      if (is_punct('}') && --depth <= 0) {
        bump();
        return;
      }
      if (depth == 0 && (is("rank") || is("num_ranks"))) return;
      bump();
    }
  }

  // An unsigned integer within [0, max]; reports and returns nullopt otherwise.
  std::optional<std::uint64_t> integer(std::string_view what, std::uint64_t max, std::string_view text,
                                       SourceLocation at) {
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && end == text.data() + text.size() && v > max)) {
      diags_.error(at,
                   std::string(what) + " '" + std::string(text) + "' is out of range (0.." + std::to_string(max) + ")");
      return std::nullopt;
    }
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
      diags_.error(at, "expected " + std::string(what) + ", found '" + std::string(text) + "'");
      return std::nullopt;
    }
    return v;
  }
  std::optional<std::uint64_t> integer_token(std::string_view what, std::uint64_t max) {
    if (tok_.kind != Token::Word) {
      diags_.error(tok_.at, "expected " + std::string(what) + ", found " + found());
      return std::nullopt;
    }
    auto v = integer(what, max, tok_.text, tok_.at);
    bump();
    return v;
  }

  // Nanoseconds with up to three decimals, as exact picoseconds.
  std::optional<Picoseconds> duration_token() {
    if (tok_.kind != Token::Word) {
      diags_.error(tok_.at, "expected a duration in ns, found " + found());
      return std::nullopt;
    }
    std::string_view t = tok_.text;
    SourceLocation at = tok_.at;
    bump();
    if (t.size() > 2 && t.substr(t.size() - 2) == "ns") t.remove_suffix(2);
    std::size_t dot = t.find('.');
    std::string_view whole = t.substr(0, dot), frac = dot == std::string_view::npos ? "" : t.substr(dot + 1);
    if (frac.size() > 3) {
      diags_.error(at, "duration '" + std::string(t) + "' is finer than a picosecond (at most 3 decimals of ns)");
      return std::nullopt;
    }
    auto w = integer("a duration in ns", std::numeric_limits<std::uint64_t>::max() / 1000 - 1, whole, at);
    if (!w) return std::nullopt;
    std::uint64_t f = 0;
    if (!frac.empty()) {
      auto fv = integer("a duration in ns", 999, frac, at);
      if (!fv) return std::nullopt;
      f = *fv;
      for (std::size_t i = frac.size(); i < 3; ++i) f *= 10;
    }
    return *w * kPsPerNs + f;
  }

  std::optional<std::uint64_t> size_token() {
    if (tok_.kind != Token::Word) {
      diags_.error(tok_.at, "expected a size in bytes (e.g. 1024b), found " + found());
      return std::nullopt;
    }
    std::string_view t = tok_.text;
    SourceLocation at = tok_.at;
    bump();
    if (!t.empty() && (t.back() == 'b' || t.back() == 'B')) t.remove_suffix(1);
    return integer("a size in bytes", std::numeric_limits<std::uint64_t>::max(), t, at);
  }

  // A rank number, or `any` / -1 where wildcards are allowed.
  std::optional<std::int32_t> peer_token(bool wildcard_ok) {
    if (wildcard_ok && (is("any") || is("-1"))) {
      bump();
      return kAnySource;
    }
    auto v = integer_token("a rank", num_ranks_ ? *num_ranks_ - 1 : std::numeric_limits<std::int32_t>::max());
    if (!v) return std::nullopt;
    return static_cast<std::int32_t>(*v);
  }

  void parse_num_ranks() {
    SourceLocation at = tok_.at;
    bump();
    auto n = integer_token("a number of ranks", std::numeric_limits<std::int32_t>::max());
    if (!n) return;
    if (*n == 0) {
      diags_.error(at, "num_ranks must be at least 1");
      return;
    }
    if (num_ranks_) {
      diags_.error(at, "num_ranks given twice");
      return;
    }
    num_ranks_ = static_cast<std::uint32_t>(*n);
    ranks_.resize(*num_ranks_);
  }

  void parse_rank(std::map<std::uint32_t, SourceLocation>& seen) {
    SourceLocation rank_at = tok_.at;
    bump();
    if (!num_ranks_) {
      diags_.error(rank_at, "missing 'num_ranks N' before the first rank");
      num_ranks_ = std::numeric_limits<std::int32_t>::max();  // keep checking the rest
      ranks_.clear();
    }
    SourceLocation number_at = tok_.at;
    auto r = integer_token("a rank", *num_ranks_ - 1);
    if (!is_punct('{')) {
      diags_.error(tok_.at, "expected '{' after the rank number, found " + found());
      recover_to_top_level();
      return;
    }
    bump();
    ParsedRank scratch;
    ParsedRank* rank = &scratch;
    if (r && *r < ranks_.size()) {
      auto [it, fresh] = seen.emplace(static_cast<std::uint32_t>(*r), number_at);
      if (!fresh) {
        auto& d = diags_.error(number_at, "rank " + std::to_string(*r) + " is defined twice");
        psl::DiagnosticEngine::note(d, it->second, "first defined here");
      } else {
        rank = &ranks_[*r];
      }
    }
    while (!is_punct('}')) {
      if (tok_.kind == Token::End) {
        diags_.error(tok_.at, "expected '}' to close rank, found end of file");
        return;
      }
      if (is_punct(';')) {
        bump();
        continue;
      }
      parse_statement(*rank);
    }
    bump();
  }

  // After an error, skips the rest of the statement's line (statements are
  // normally one per line) so the next one is checked too.
  void skip_statement(std::uint32_t line) {
    while (tok_.kind != Token::End && tok_.at.line == line && !is_punct(';') && !is_punct('}')) bump();
  }

  void parse_statement(ParsedRank& rank) {
    Token first = tok_;
    const std::uint32_t line = first.at.line;
    if (tok_.kind != Token::Word) {
      diags_.error(tok_.at, "expected an operation or a dependency, found " + found());
      bump();
      return;
    }
    bump();
    std::string_view label;
    SourceLocation label_at{};
    if (is_punct(':')) {
      label = first.text;
      label_at = first.at;
      bump();
      if (tok_.kind != Token::Word) {
        diags_.error(tok_.at, "expected calc, send or recv after the label, found " + found());
        return skip_statement(line);
      }
      first = tok_;
      bump();
    } else if (is("requires") || is("irequires")) {
      bool on_start = is("irequires");
      bump();
      if (tok_.kind != Token::Word) {
        diags_.error(tok_.at, "expected a label after '" + std::string(on_start ? "irequires" : "requires") +
                                  "', found " + found());
        return;
      }
      rank.deps.push_back(ParsedDep{first.text, tok_.text, on_start, first.at, tok_.at});
      bump();
      return;
    }
    Operation op;
    if (first.text == "calc") {
      op.kind = OpKind::Calc;
      auto d = duration_token();
      if (!d) return skip_statement(line);
      op.duration = *d;
    } else if (first.text == "send" || first.text == "recv") {
      const bool send = first.text == "send";
      op.kind = send ? OpKind::Send : OpKind::Recv;
      auto s = size_token();
      if (!s) return skip_statement(line);
      op.bytes = *s;
      const char* dir = send ? "to" : "from";
      if (!is(dir)) {
        diags_.error(tok_.at, std::string("expected '") + dir + "' and a rank, found " + found());
        return skip_statement(line);
      }
      bump();
      auto p = peer_token(!send);
      if (!p) return skip_statement(line);
      op.peer = *p;
    } else {
      diags_.error(first.at, "expected calc, send, recv or a dependency, found '" + std::string(first.text) + "'");
      return skip_statement(line);
    }
    // Optional fields, in any order.
    while (is("tag") || is("cpu") || is("nic") || is("comm")) {
      std::string_view field = tok_.text;
      SourceLocation field_at = tok_.at;
      bump();
      if (op.kind == OpKind::Calc && field != "cpu") {
        diags_.error(field_at, "calc has no '" + std::string(field) + "'");
        return skip_statement(line);
      }
      if (field == "tag") {
        if (op.kind == OpKind::Recv && (is("any") || is("-1"))) {
          op.tag = kAnyTag;
          bump();
          continue;
        }
        auto v = integer_token("a tag", std::numeric_limits<std::int32_t>::max());
        if (!v) return skip_statement(line);
        op.tag = static_cast<std::int32_t>(*v);
      } else if (field == "comm") {
        auto v = integer_token("a communicator", std::numeric_limits<std::uint32_t>::max());
        if (!v) return skip_statement(line);
        op.comm = static_cast<std::uint32_t>(*v);
      } else {
        auto v = integer_token(field == "cpu" ? "a CPU index" : "a NIC index", 255);
        if (!v) return skip_statement(line);
        (field == "cpu" ? op.cpu : op.nic) = static_cast<std::uint8_t>(*v);
      }
    }
    rank.ops.push_back(op);
    rank.labels.push_back(label);
    rank.where.push_back(label.empty() ? first.at : label_at);
  }

  // Resolves labels, orders each rank topologically and builds the schedule.
  std::unique_ptr<ExplicitSchedule> build() {
    auto out = std::make_unique<ExplicitSchedule>(*num_ranks_);
    bool ok = true;
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) ok = build_rank(r, *out) && ok;
    if (!ok) return nullptr;
    return out;
  }

  bool build_rank(std::uint32_t r, ExplicitSchedule& out) {
    ParsedRank& pr = ranks_[r];
    const std::size_t n = pr.ops.size();
    std::map<std::string_view, std::size_t> by_label;
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
      if (pr.labels[i].empty()) continue;
      auto [it, fresh] = by_label.emplace(pr.labels[i], i);
      if (!fresh) {
        auto& d = diags_.error(
            pr.where[i], "label '" + std::string(pr.labels[i]) + "' is defined twice in rank " + std::to_string(r));
        psl::DiagnosticEngine::note(d, pr.where[it->second], "first defined here");
        ok = false;
      }
    }
    // deps_of[i]: (operation i depends on, on_start, index of the statement)
    struct Edge {
      std::size_t on;
      bool on_start;
      std::size_t stmt;
    };
    std::vector<std::vector<Edge>> deps_of(n);
    for (std::size_t k = 0; k < pr.deps.size(); ++k) {
      const ParsedDep& d = pr.deps[k];
      auto from = by_label.find(d.from), to = by_label.find(d.to);
      if (from == by_label.end())
        diags_.error(d.from_at, "unknown label '" + std::string(d.from) + "' in rank " + std::to_string(r));
      if (to == by_label.end())
        diags_.error(d.to_at, "unknown label '" + std::string(d.to) + "' in rank " + std::to_string(r));
      if (from == by_label.end() || to == by_label.end()) {
        ok = false;
        continue;
      }
      if (from->second == to->second) {
        diags_.error(d.from_at, "operation '" + std::string(d.from) + "' depends on itself");
        ok = false;
        continue;
      }
      deps_of[from->second].push_back(Edge{to->second, d.on_start, k});
    }
    if (!ok) return false;
    // Kahn's algorithm, always taking the earliest operation of the file that is free.
    std::vector<std::size_t> missing(n, 0);
    std::vector<std::vector<std::size_t>> dependents(n);
    for (std::size_t i = 0; i < n; ++i)
      for (const Edge& e : deps_of[i]) {
        ++missing[i];
        dependents[e.on].push_back(i);
      }
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> free;
    for (std::size_t i = 0; i < n; ++i)
      if (missing[i] == 0) free.push(i);
    std::vector<std::size_t> order, position(n, n);
    order.reserve(n);
    while (!free.empty()) {
      std::size_t i = free.top();
      free.pop();
      position[i] = order.size();
      order.push_back(i);
      for (std::size_t j : dependents[i])
        if (--missing[j] == 0) free.push(j);
    }
    if (order.size() < n) {
      report_cycle(r, pr, deps_of, position, n);
      return false;
    }
    OpBuffer& buf = out.rank(r);
    buf.ops.reserve(n);
    for (std::size_t i : order) {
      Operation op = pr.ops[i];
      const std::string_view kind = op.kind == OpKind::Calc ? "calc" : op.kind == OpKind::Send ? "send" : "recv";
      const SourceLocation& at = pr.where[i];
      op.node = out.add_node(
          NodeInfo{pr.labels[i].empty() ? std::string(kind) : std::string(pr.labels[i]),
                   sources_.path(file_) + ":" + std::to_string(at.line) + ":" + std::to_string(at.column)});
      op.first_dep = static_cast<std::uint32_t>(buf.deps.size());
      for (const auto& e : deps_of[i]) buf.deps.push_back(Dependency{position[e.on], e.on_start});
      op.dep_count = static_cast<std::uint32_t>(deps_of[i].size());
      buf.ops.push_back(op);
    }
    return true;
  }

  template <typename Edges>
  void report_cycle(std::uint32_t r, const ParsedRank& pr, const Edges& deps_of,
                    const std::vector<std::size_t>& position, std::size_t n) {
    // Walk unordered operations through unordered dependencies until one repeats.
    std::size_t at = 0;
    while (position[at] != n) ++at;
    std::vector<std::size_t> seen_at(n, n), path;
    while (seen_at[at] == n) {
      seen_at[at] = path.size();
      path.push_back(at);
      for (const auto& e : deps_of[at])
        if (position[e.on] == n) {
          at = e.on;
          break;
        }
    }
    std::string chain;
    for (std::size_t k = seen_at[at]; k < path.size(); ++k) chain += std::string(pr.labels[path[k]]) + " -> ";
    chain += std::string(pr.labels[at]);
    // Point at the dependency statement that closes the cycle.
    std::size_t last = path.back();
    SourceLocation where = pr.where[last];
    for (const auto& e : deps_of[last])
      if (e.on == at) where = pr.deps[e.stmt].from_at;
    diags_.error(where, "dependency cycle in rank " + std::to_string(r) + ": " + chain);
  }

  const psl::SourceManager& sources_;
  psl::FileId file_;
  psl::DiagnosticEngine& diags_;
  Lexer lex_;
  Token tok_;
  std::optional<std::uint32_t> num_ranks_;
  std::vector<ParsedRank> ranks_;
};

std::string ns_text(Picoseconds ps) {
  std::string s = std::to_string(ps / kPsPerNs);
  if (Picoseconds f = ps % kPsPerNs; f != 0) {
    std::string d = std::to_string(f);
    d.insert(0, 3 - d.size(), '0');
    while (d.back() == '0') d.pop_back();
    s += "." + d;
  }
  return s;
}

}  // namespace

std::unique_ptr<ExplicitSchedule> parse_goal(const psl::SourceManager& sources, psl::FileId file,
                                             psl::DiagnosticEngine& diags) {
  return Parser(sources, file, diags).parse();
}

void write_goal(std::ostream& out, ScheduleSource& source) {
  out << "num_ranks " << source.ranks() << "\n";
  OpBuffer buf;
  for (std::uint32_t r = 0; r < source.ranks(); ++r) {
    buf.clear();
    while (source.pull(r, 1 << 16, buf) > 0) {
    }
    out << "rank " << r << " {\n";
    for (std::size_t i = 0; i < buf.ops.size(); ++i) {
      const Operation& op = buf.ops[i];
      out << "  l" << i << ": ";
      switch (op.kind) {
        case OpKind::Calc: out << "calc " << ns_text(op.duration); break;
        case OpKind::Send: out << "send " << op.bytes << "b to " << op.peer; break;
        case OpKind::Recv:
          out << "recv " << op.bytes << "b from ";
          if (op.peer == kAnySource)
            out << "any";
          else
            out << op.peer;
          break;
      }
      if (op.kind != OpKind::Calc) {
        if (op.tag == kAnyTag && op.kind == OpKind::Recv)
          out << " tag any";
        else if (op.tag != 0)
          out << " tag " << op.tag;
      }
      if (op.cpu != 0) out << " cpu " << static_cast<unsigned>(op.cpu);
      if (op.kind != OpKind::Calc && op.nic != 0) out << " nic " << static_cast<unsigned>(op.nic);
      if (op.kind != OpKind::Calc && op.comm != 0) out << " comm " << op.comm;
      out << "\n";
    }
    for (std::size_t i = 0; i < buf.ops.size(); ++i) {
      const Operation& op = buf.ops[i];
      for (std::uint32_t k = 0; k < op.dep_count; ++k) {
        const Dependency& d = buf.deps[op.first_dep + k];
        out << "  l" << i << (d.on_start ? " irequires l" : " requires l") << d.op << "\n";
      }
    }
    out << "}\n";
  }
}

bool same_operations(const ExplicitSchedule& a, const ExplicitSchedule& b, std::string* why) {
  auto differ = [&](const std::string& what) {
    if (why) *why = what;
    return false;
  };
  if (a.ranks() != b.ranks()) return differ("rank counts differ");
  for (std::uint32_t r = 0; r < a.ranks(); ++r) {
    const OpBuffer &x = a.rank(r), &y = b.rank(r);
    if (x.ops.size() != y.ops.size()) return differ("rank " + std::to_string(r) + ": operation counts differ");
    for (std::size_t i = 0; i < x.ops.size(); ++i) {
      const Operation &p = x.ops[i], &q = y.ops[i];
      bool same = p.kind == q.kind && p.cpu == q.cpu && p.dep_count == q.dep_count;
      if (p.kind == OpKind::Calc)
        same = same && p.duration == q.duration;
      else
        same = same && p.nic == q.nic && p.peer == q.peer && p.tag == q.tag && p.comm == q.comm && p.bytes == q.bytes;
      for (std::uint32_t k = 0; same && k < p.dep_count; ++k) {
        const Dependency &d = x.deps[p.first_dep + k], &e = y.deps[q.first_dep + k];
        same = d.op == e.op && d.on_start == e.on_start;
      }
      if (!same) return differ("rank " + std::to_string(r) + " operation " + std::to_string(i) + " differs");
    }
  }
  return true;
}

}  // namespace poems::taskgraph
