#include "poems/taskgraph/goal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "poems/taskgraph/memory_budget.h"

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
// Columns come from the start of the line, so characters are looked at once.
class Lexer {
 public:
  // `text` starts at `line`, column `column` of its file.
  Lexer(std::string_view text, psl::FileId file, psl::DiagnosticEngine& diags, std::uint32_t line = 1,
        std::uint32_t column = 1)
      : text_(text), file_(file), diags_(diags), line_(line), first_line_(line), first_column_(column) {}
  // Where the next token starts (bytes into the text).
  std::size_t offset() const { return pos_; }

  Token next() {
    for (;;) {
      skip_space_and_comments();
      Token t;
      t.at = SourceLocation{file_, line_, column(), 1};
      if (pos_ >= text_.size()) return t;
      const char c = text_[pos_];
      if (c == '{' || c == '}' || c == ':' || c == ';') {
        t.kind = Token::Punct;
        t.text = text_.substr(pos_++, 1);
        return t;
      }
      const std::size_t start = pos_;
      while (pos_ < text_.size() && is_word(text_[pos_])) ++pos_;
      if (pos_ == start) {
        diags_.error(t.at, std::string("unexpected character '") + c + "'");
        ++pos_;
        continue;
      }
      t.kind = Token::Word;
      t.text = text_.substr(start, pos_ - start);
      t.at.length = static_cast<std::uint32_t>(t.text.size());
      return t;
    }
  }

 private:
  static bool is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-' || c == '+';
  }
  std::uint32_t column() const {
    return static_cast<std::uint32_t>(pos_ - line_start_ + 1) + (line_ == first_line_ ? first_column_ - 1 : 0);
  }
  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n') {
        line_start_ = ++pos_;
        ++line_;
      } else if (c == '#' || text_.substr(pos_, 2) == "//") {
        pos_ = std::min(text_.find('\n', pos_), text_.size());
      } else if (text_.substr(pos_, 2) == "/*") {
        SourceLocation open{file_, line_, column(), 2};
        std::size_t end = text_.find("*/", pos_ + 2);
        if (end == std::string_view::npos) {
          diags_.error(open, "unterminated comment");
          end = text_.size();
        } else {
          end += 2;
        }
        for (; pos_ < end; ++pos_)
          if (text_[pos_] == '\n') {
            ++line_;
            line_start_ = pos_ + 1;
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
  std::size_t line_start_ = 0;
  std::uint32_t line_ = 1;
  std::uint32_t first_line_ = 1, first_column_ = 1;
};

struct ParsedDep {
  std::string_view from, to;
  bool on_start;
  SourceLocation from_at, to_at;
};

// One rank's statements as read; reused from rank to rank.
struct ParsedRank {
  std::vector<Operation> ops;
  std::vector<std::string_view> labels;  // "" = unlabeled
  std::vector<SourceLocation> where;
  std::vector<ParsedDep> deps;
  void clear() {
    ops.clear();
    labels.clear();
    where.clear();
    deps.clear();
  }
};

// A resolved dependency: operation `from` waits for `on`. Grouped by `from`
// (CSR: edges of operation i are [first[i], first[i+1])).
struct Edge {
  std::uint32_t on;
  bool on_start;
  std::uint32_t stmt;  // index into ParsedRank::deps
};

// Where each rank's text lies in a file read by read_goal_file: what a node
// description is read back from.
struct RankText {
  std::uint32_t first_node;  // node ids first_node .. first_node + ops - 1, in file order
  std::uint32_t ops;
  std::uint64_t begin, end;    // bytes: just after the rank's '{', its '}'
  std::uint32_t line, column;  // of `begin`
};

// A parse of a file that is not kept in memory: node ids are numbered in
// file order instead of kept in a NodeTable, each rank's place is recorded,
// and the text behind the parser is handed back (`release(offset)`: nothing
// before `offset` is read again).
struct FileBacked {
  std::vector<RankText> ranks;
  std::uint32_t next_node = 1;
  std::function<void(std::size_t)> release;
};

class Parser {
 public:
  Parser(std::string_view text, psl::FileId file, std::string path, psl::DiagnosticEngine& diags,
         const GoalReadOptions& options, FileBacked* file_backed = nullptr, std::uint32_t line = 1,
         std::uint32_t column = 1)
      : text_(text),
        file_(file),
        path_(std::move(path)),
        diags_(diags),
        options_(options),
        file_backed_(file_backed),
        lex_(text, file, diags, line, column) {
    errors_before_ = diags_.error_count();  // before the first token: lexing it may report errors
    tok_ = lex_.next();
  }

  // Parses the statements of one rank's body (from just after its '{') and
  // returns the labels and locations of its operations, in file order.
  const ParsedRank& rank_body() {
    rank_.clear();
    num_ranks_ = std::numeric_limits<std::int32_t>::max();
    while (tok_.kind != Token::End && !is_punct('}')) {
      if (is_punct(';')) {
        bump();
        continue;
      }
      parse_statement(rank_);
    }
    return rank_;
  }

  std::unique_ptr<ExplicitSchedule> parse() {
    const std::size_t errors_before = errors_before_;
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
    return std::move(out_);
  }

 private:
  std::size_t errors_before_ = 0;
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
      bad_number(what, text, at, static_cast<double>(max), "0.." + std::to_string(max),
                 "a whole number written in digits");
      return std::nullopt;
    }
    return v;
  }

  // `text` is not a number of the form wanted. A number in another form
  // (negative, fractional, with an exponent, a sign) is named with the
  // allowed range, out of range if its value is; anything else is not a
  // number at all. Nothing is rounded, wrapped or clamped into the range.
  void bad_number(std::string_view what, std::string_view text, SourceLocation at, double max, const std::string& range,
                  std::string_view form) {
    std::string_view digits = text;
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    double value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    const bool numeric = !digits.empty() && ec != std::errc::invalid_argument && end == digits.data() + digits.size() &&
                         !std::isnan(value);
    const std::string quoted = std::string(what) + " '" + std::string(text) + "'";
    if (!numeric)
      diags_.error(at, "expected " + std::string(what) + ", found '" + std::string(text) + "'");
    else if (ec == std::errc::result_out_of_range || value < 0 || value > max)
      diags_.error(at, quoted + " is out of range (" + range + ")");
    else
      diags_.error(at, quoted + " is not " + std::string(form) + " (" + range + ")");
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
    const std::uint64_t max_ns = kMaxGoalCalc / kPsPerNs;
    const std::string range =
        "0.." + std::to_string(max_ns) + "." + std::to_string(kMaxGoalCalc % kPsPerNs) + ", 2^61 ps";
    auto all_digits = [](std::string_view d) {
      return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (whole.empty() || !all_digits(whole) || !all_digits(frac)) {
      bad_number("a duration in ns", t, at, static_cast<double>(kMaxGoalCalc) / kPsPerNs, range,
                 "a number of ns written in digits with at most 3 decimals");
      return std::nullopt;
    }
    if (frac.size() > 3) {
      diags_.error(at, "duration '" + std::string(t) + "' is finer than a picosecond (at most 3 decimals of ns)");
      return std::nullopt;
    }
    std::uint64_t w = 0, f = 0;
    const auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), w);
    (void)end;
    for (char c : frac) f = f * 10 + static_cast<std::uint64_t>(c - '0');
    for (std::size_t i = frac.size(); i < 3; ++i) f *= 10;
    if (ec != std::errc() || w > max_ns || w * kPsPerNs + f > kMaxGoalCalc) {
      diags_.error(at, "a duration in ns '" + std::string(t) + "' is out of range (" + range + ")");
      return std::nullopt;
    }
    return w * kPsPerNs + f;
  }

  std::optional<std::uint64_t> size_token() {
    if (tok_.kind != Token::Word) {
      diags_.error(tok_.at, "expected a size in bytes (e.g. 1024b), found " + found());
      return std::nullopt;
    }
    std::string_view t = tok_.text;
    SourceLocation at = tok_.at;
    bump();
    if (!t.empty() && (t.back() == 'b' || t.back() == 'B'))
      t.remove_suffix(1);
    else if (is("b") || is("B"))  // txt2bin allows "8 b"
      bump();
    return integer("a size in bytes", kMaxGoalBytes, t, at);
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
    const std::uint64_t own = ExplicitSchedule::kBytesPerRank + (file_backed_ ? sizeof(RankText) : 0);
    const std::uint64_t need = *n * (own + options_.more_bytes_per_rank);
    const std::uint64_t limit = memory_limit_or_available(options_.memory_limit);
    if (need > limit) {
      diags_.error(at, "num_ranks " + std::to_string(*n) + " needs about " + format_bytes(need) +
                           " before any operation (" + std::to_string(own) + " bytes per rank for the schedule" +
                           (options_.more_bytes_per_rank
                                ? ", " + std::to_string(options_.more_bytes_per_rank) + " for the simulation"
                                : std::string()) +
                           "); " + memory_limit_text(options_.memory_limit, limit));
      return;
    }
    try {
      out_ = std::make_unique<ExplicitSchedule>(*num_ranks_);
    } catch (const std::bad_alloc&) {
      diags_.error(at, "num_ranks " + std::to_string(*n) + " is more ranks than this machine's memory can index");
      return;
    }
    file_id_ = out_->nodes().add_file(path_);
  }

  void parse_rank(std::map<std::uint32_t, SourceLocation>& seen) {
    SourceLocation rank_at = tok_.at;
    bump();
    if (!num_ranks_) {
      diags_.error(rank_at, "missing 'num_ranks N' before the first rank");
      num_ranks_ = std::numeric_limits<std::int32_t>::max();  // keep checking the rest
    }
    SourceLocation number_at = tok_.at;
    auto r = integer_token("a rank", *num_ranks_ - 1);
    if (!is_punct('{')) {
      diags_.error(tok_.at, "expected '{' after the rank number, found " + found());
      recover_to_top_level();
      return;
    }
    // Counted from here: reading past '{' lexes the rank's first token.
    const std::size_t errors_before = diags_.error_count();
    const std::size_t body = static_cast<std::size_t>(tok_.text.data() - text_.data()) + 1;
    const SourceLocation body_at{file_, tok_.at.line, tok_.at.column + 1, 1};
    bump();
    bool fresh = false;
    if (r) {
      auto [it, inserted] = seen.emplace(static_cast<std::uint32_t>(*r), number_at);
      fresh = inserted;
      if (!fresh) {
        auto& d = diags_.error(number_at, "rank " + std::to_string(*r) + " is defined twice");
        psl::DiagnosticEngine::note(d, it->second, "first defined here");
      }
    }
    rank_.clear();
    while (!is_punct('}')) {
      if (tok_.kind == Token::End) {
        diags_.error(tok_.at, "expected '}' to close rank, found end of file");
        return;
      }
      if (is_punct(';')) {
        bump();
        continue;
      }
      parse_statement(rank_);
    }
    // Checked before reading past '}': an error in the next token is not this rank's.
    const bool clean = diags_.error_count() == errors_before;
    const std::size_t close = static_cast<std::size_t>(tok_.text.data() - text_.data());
    bump();
    // Each rank is resolved as soon as it is read, so the parser holds one
    // rank's statements, never the file's.
    if (fresh && out_ && clean) {
      if (file_backed_) rank_text_ = RankText{file_backed_->next_node, 0, body, close, body_at.line, body_at.column};
      build_rank(*r, rank_);
    }
    if (file_backed_ && file_backed_->release && tok_.kind != Token::End)
      file_backed_->release(static_cast<std::size_t>(tok_.text.data() - text_.data()));
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
        if (is("any") || is("-1")) {  // LogGOPSim matches a send's wildcard tag too
          op.tag = kAnyTag;
          bump();
          continue;
        }
        // LogGOPSim's tags are 32-bit unsigned (2^32-1 is its wildcard):
        // kept as the same bits in the int32.
        auto v = integer_token("a tag", std::numeric_limits<std::uint32_t>::max());
        if (!v) return skip_statement(line);
        op.tag = static_cast<std::int32_t>(static_cast<std::uint32_t>(*v));
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

  // Resolves labels, orders the rank topologically (file order when it
  // already is one) and stores it in the schedule.
  void build_rank(std::uint32_t r, const ParsedRank& pr) {
    const auto n = static_cast<std::uint32_t>(pr.ops.size());
    if (pr.ops.size() >= std::numeric_limits<std::uint32_t>::max()) {
      diags_.error(pr.where.back(), "rank " + std::to_string(r) + " has more than 2^32 - 1 operations");
      return;
    }
    if (pr.deps.size() >= std::numeric_limits<std::uint32_t>::max()) {
      diags_.error(pr.deps.back().from_at, "rank " + std::to_string(r) + " has more than 2^32 - 1 dependencies");
      return;
    }
    if ((file_backed_ ? file_backed_->next_node : out_->nodes().size()) >
        std::numeric_limits<std::uint32_t>::max() - n) {
      diags_.error(pr.where.back(), "the file has more than 2^32 - 1 operations (node ids are 32-bit)");
      return;
    }
    by_label_.clear();
    bool ok = true;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (pr.labels[i].empty()) continue;
      auto [it, fresh] = by_label_.emplace(pr.labels[i], i);
      if (!fresh) {
        auto& d = diags_.error(
            pr.where[i], "label '" + std::string(pr.labels[i]) + "' is defined twice in rank " + std::to_string(r));
        psl::DiagnosticEngine::note(d, pr.where[it->second], "first defined here");
        ok = false;
      }
    }
    // Dependencies grouped by the waiting operation, in statement order.
    first_.assign(n + 1, 0);
    from_.clear();
    bool in_file_order = true;
    // LogGOPSim frees the operations waiting on one operation in the order
    // their statements come (one list for irequires, one for requires); the
    // simulator in position order. Where every such list is in file order,
    // file order keeps both.
    bool lists_in_file_order = true;
    last_in_list_.assign(2 * std::size_t{n}, 0);
    for (std::uint32_t k = 0; k < pr.deps.size(); ++k) {
      const ParsedDep& d = pr.deps[k];
      auto from = by_label_.find(d.from), to = by_label_.find(d.to);
      if (from == by_label_.end())
        diags_.error(d.from_at, "unknown label '" + std::string(d.from) + "' in rank " + std::to_string(r));
      if (to == by_label_.end())
        diags_.error(d.to_at, "unknown label '" + std::string(d.to) + "' in rank " + std::to_string(r));
      if (from == by_label_.end() || to == by_label_.end()) {
        ok = false;
        continue;
      }
      if (from->second == to->second) {
        diags_.error(d.from_at, "operation '" + std::string(d.from) + "' depends on itself");
        ok = false;
      }
      in_file_order = in_file_order && to->second < from->second;
      std::uint32_t& last = last_in_list_[2 * std::size_t{to->second} + d.on_start];
      lists_in_file_order = lists_in_file_order && last <= from->second;
      last = from->second;
      ++first_[from->second + 1];
      from_.push_back(Edge{to->second, d.on_start, from->second});  // stmt holds `from` until sorted
    }
    if (!ok) return;
    for (std::uint32_t i = 0; i < n; ++i) first_[i + 1] += first_[i];
    edges_.resize(from_.size());
    edge_order_.resize(from_.size());
    {
      std::vector<std::uint32_t>& fill = scratch_;
      fill.assign(first_.begin(), first_.end() - 1);
      for (std::uint32_t k = 0; k < from_.size(); ++k) {
        const Edge& e = from_[k];
        edges_[fill[e.stmt]++] = Edge{e.on, e.on_start, k};
      }
    }
    // order[p]: the operation at position p; position[i]: where operation i goes.
    order_.resize(n);
    position_.resize(n);
    if (in_file_order) {
      for (std::uint32_t i = 0; i < n; ++i) order_[i] = position_[i] = i;
    } else if (!order_topologically(n)) {
      report_cycle(r, pr);
      return;
    }
    // Otherwise the simulator cannot free in position order what LogGOPSim
    // frees in statement order: each dependency carries the index of its
    // last statement (Dependency::order).
    const bool keyed = !(in_file_order && lists_in_file_order);
    if (keyed) {
      std::unordered_map<std::uint64_t, std::uint32_t>& last = statement_of_;
      last.clear();
      for (std::uint32_t k = 0; k < from_.size(); ++k)
        last[(std::uint64_t{from_[k].stmt} << 33) | (std::uint64_t{from_[k].on} << 1) | from_[k].on_start] = k + 1;
      for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t k = first_[i]; k < first_[i + 1]; ++k)
          edge_order_[k] = last[(std::uint64_t{i} << 33) | (std::uint64_t{edges_[k].on} << 1) | edges_[k].on_start];
    }
    buffer_.clear();
    buffer_.ops.reserve(n);
    buffer_.deps.reserve(edges_.size());
    for (std::uint32_t i : order_) {
      Operation op = pr.ops[i];
      if (file_backed_) {
        op.node = rank_text_.first_node + i;  // read back from the file (GoalFileNodes)
      } else {
        const std::string_view kind = op.kind == OpKind::Calc ? "calc" : op.kind == OpKind::Send ? "send" : "recv";
        const SourceLocation& at = pr.where[i];
        op.node = out_->nodes().add(pr.labels[i].empty() ? kind : pr.labels[i], file_id_, at.line, at.column);
      }
      op.first_dep = static_cast<std::uint32_t>(buffer_.deps.size());
      for (std::uint32_t k = first_[i]; k < first_[i + 1]; ++k)
        buffer_.deps.push_back(Dependency{position_[edges_[k].on], edges_[k].on_start, keyed ? edge_order_[k] : 0});
      op.dep_count = first_[i + 1] - first_[i];
      buffer_.ops.push_back(op);
    }
    out_->set_rank(r, buffer_);
    if (file_backed_) {
      rank_text_.ops = n;
      file_backed_->ranks.push_back(rank_text_);
      file_backed_->next_node += n;
    }
  }

  // Kahn's algorithm, always taking the earliest operation of the file that
  // is free; false if some operations are on a cycle (position_ = n for them).
  bool order_topologically(std::uint32_t n) {
    std::vector<std::uint32_t>& missing = scratch_;
    missing.assign(n, 0);
    std::vector<std::uint32_t> dependents_first(n + 1, 0), dependents(edges_.size());
    for (std::uint32_t i = 0; i < n; ++i) {
      missing[i] = first_[i + 1] - first_[i];
      for (std::uint32_t k = first_[i]; k < first_[i + 1]; ++k) ++dependents_first[edges_[k].on + 1];
    }
    for (std::uint32_t i = 0; i < n; ++i) dependents_first[i + 1] += dependents_first[i];
    {
      std::vector<std::uint32_t> fill(dependents_first.begin(), dependents_first.end() - 1);
      for (std::uint32_t i = 0; i < n; ++i)
        for (std::uint32_t k = first_[i]; k < first_[i + 1]; ++k) dependents[fill[edges_[k].on]++] = i;
    }
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> free;
    for (std::uint32_t i = 0; i < n; ++i)
      if (missing[i] == 0) free.push(i);
    std::fill(position_.begin(), position_.end(), n);
    std::uint32_t placed = 0;
    while (!free.empty()) {
      const std::uint32_t i = free.top();
      free.pop();
      position_[i] = placed;
      order_[placed++] = i;
      for (std::uint32_t k = dependents_first[i]; k < dependents_first[i + 1]; ++k)
        if (--missing[dependents[k]] == 0) free.push(dependents[k]);
    }
    return placed == n;
  }

  void report_cycle(std::uint32_t r, const ParsedRank& pr) {
    const auto n = static_cast<std::uint32_t>(pr.ops.size());
    // Walk unordered operations through unordered dependencies until one repeats.
    std::uint32_t at = 0;
    while (position_[at] != n) ++at;
    std::vector<std::uint32_t> seen_at(n, n), path;
    while (seen_at[at] == n) {
      seen_at[at] = static_cast<std::uint32_t>(path.size());
      path.push_back(at);
      for (std::uint32_t k = first_[at]; k < first_[at + 1]; ++k)
        if (position_[edges_[k].on] == n) {
          at = edges_[k].on;
          break;
        }
    }
    std::string chain;
    for (std::size_t k = seen_at[at]; k < path.size(); ++k) chain += std::string(pr.labels[path[k]]) + " -> ";
    chain += std::string(pr.labels[at]);
    // Point at the dependency statement that closes the cycle.
    const std::uint32_t last = path.back();
    SourceLocation where = pr.where[last];
    for (std::uint32_t k = first_[last]; k < first_[last + 1]; ++k)
      if (edges_[k].on == at) where = pr.deps[edges_[k].stmt].from_at;
    diags_.error(where, "dependency cycle in rank " + std::to_string(r) + ": " + chain);
  }

  std::string_view text_;
  psl::FileId file_;
  std::string path_;
  psl::DiagnosticEngine& diags_;
  GoalReadOptions options_;
  FileBacked* file_backed_;
  RankText rank_text_{};
  Lexer lex_;
  Token tok_;
  std::optional<std::uint32_t> num_ranks_;
  std::unique_ptr<ExplicitSchedule> out_;
  std::uint32_t file_id_ = 0;  // the file's id in out_'s node table
  // Per-rank working storage, kept across ranks so their capacity is reused.
  ParsedRank rank_;
  std::unordered_map<std::string_view, std::uint32_t> by_label_;
  std::vector<std::uint32_t> first_, order_, position_, scratch_, last_in_list_, edge_order_;
  std::unordered_map<std::uint64_t, std::uint32_t> statement_of_;
  std::vector<Edge> from_, edges_;
  OpBuffer buffer_;
};

// Node descriptions of a file read by read_goal_file: the rank's text is
// read back and its statements parsed again to find the operation.
class GoalFileNodes final : public NodeDescriber {
 public:
  GoalFileNodes(std::string path, std::vector<RankText> ranks, std::uint32_t count, std::uint64_t size,
                std::int64_t mtime)
      : path_(std::move(path)), ranks_(std::move(ranks)), count_(count), size_(size), mtime_(mtime) {}
  std::uint32_t count() const override { return count_; }
  std::size_t memory_bytes() const override { return ranks_.capacity() * sizeof(RankText) + path_.capacity(); }
  NodeInfo info(std::uint32_t node) const override {
    if (node == 0 || node >= count_) return {};
    auto it = std::upper_bound(ranks_.begin(), ranks_.end(), node,
                               [](std::uint32_t n, const RankText& r) { return n < r.first_node; });
    if (it == ranks_.begin()) return {};
    const RankText& rt = *--it;
    const std::uint32_t k = node - rt.first_node;
    NodeInfo fallback{"operation " + std::to_string(k) + " of its rank", path_};
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0 || static_cast<std::uint64_t>(st.st_size) != size_ ||
        st.st_mtim.tv_sec != mtime_)
      return fallback;  // changed since it was read
    std::ifstream in(path_, std::ios::binary);
    std::string body(rt.end - rt.begin, '\0');
    in.seekg(static_cast<std::streamoff>(rt.begin));
    if (!in.read(body.data(), static_cast<std::streamsize>(body.size()))) return fallback;
    psl::SourceManager sources;
    psl::DiagnosticEngine diags(sources);
    Parser again(body, 0, path_, diags, GoalReadOptions{}, nullptr, rt.line, rt.column);
    const ParsedRank& pr = again.rank_body();
    if (k >= pr.ops.size()) return fallback;
    const OpKind kind = pr.ops[k].kind;
    std::string label(pr.labels[k]);
    if (label.empty()) label = kind == OpKind::Calc ? "calc" : kind == OpKind::Send ? "send" : "recv";
    return NodeInfo{label, path_ + ":" + std::to_string(pr.where[k].line) + ":" + std::to_string(pr.where[k].column)};
  }

 private:
  std::string path_;
  std::vector<RankText> ranks_;
  std::uint32_t count_;
  std::uint64_t size_;
  std::int64_t mtime_;
};

// A read-only mapping of a whole file, released as the parser moves on.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return;
    size_ = static_cast<std::size_t>(st.st_size);
    mtime_ = st.st_mtim.tv_sec;
    ok_ = true;
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      ok_ = false;
      return;
    }
    data_ = static_cast<const char*>(p);
    ::madvise(p, size_, MADV_SEQUENTIAL);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  bool ok() const { return ok_; }
  std::string_view text() const { return {data_ ? data_ : "", size_}; }
  std::uint64_t size() const { return size_; }
  std::int64_t mtime() const { return mtime_; }
  // Pages wholly before `offset` leave this process's memory (they stay in
  // the page cache); released in steps of 16 MiB.
  void release_before(std::size_t offset) {
    constexpr std::size_t kStep = std::size_t{16} << 20;
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t upto = offset / page * page;
    if (!data_ || upto < released_ + kStep) return;
    ::madvise(const_cast<char*>(data_) + released_, upto - released_, MADV_DONTNEED);
    released_ = upto;
  }

 private:
  int fd_ = -1;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t released_ = 0;
  std::int64_t mtime_ = 0;
  bool ok_ = false;
};

}  // namespace

std::unique_ptr<ExplicitSchedule> parse_goal(const psl::SourceManager& sources, psl::FileId file,
                                             psl::DiagnosticEngine& diags, const GoalReadOptions& options) {
  return Parser(sources.text(file), file, sources.path(file), diags, options).parse();
}

std::unique_ptr<ExplicitSchedule> read_goal_file(const std::string& path, psl::SourceManager& sources,
                                                 psl::DiagnosticEngine& diags, const GoalReadOptions& options,
                                                 std::string& io_error) {
  std::unique_ptr<ExplicitSchedule> schedule;
  {
    MappedFile file(path);
    if (!file.ok()) {
      io_error = "cannot read '" + path + "'";
      return nullptr;
    }
    // Diagnostics of this pass quote nothing (the text is not kept): kept
    // aside, and only its warnings are passed on if it succeeds.
    psl::SourceManager none;
    const psl::FileId id = none.add(path, "");
    psl::DiagnosticEngine quiet(none);
    FileBacked backed;
    backed.release = [&file](std::size_t offset) { file.release_before(offset); };
    schedule = Parser(file.text(), id, path, quiet, options, &backed).parse();
    if (schedule) {
      schedule->set_node_describer(
          std::make_unique<GoalFileNodes>(path, std::move(backed.ranks), backed.next_node, file.size(), file.mtime()));
      if (quiet.warning_count() > 0) {  // rare: read the text to quote it
        std::ifstream in(path, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const psl::FileId f = sources.add(path, std::move(text));
        for (const psl::Diagnostic& d : quiet.all()) {
          psl::SourceLocation at = d.location;
          at.file = f;
          diags.warning(at, d.message);
        }
      }
      return schedule;
    }
  }
  // An error: parse again from the text, for diagnostics that quote it
  // (as the first pass did, so its memory estimate is the same).
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const psl::FileId f = sources.add(path, std::move(text));
  FileBacked again;
  Parser(sources.text(f), f, path, diags, options, &again).parse();
  return nullptr;
}

namespace {

std::string whole_ns_text(Picoseconds ps, GoalWriteStats& stats) {
  if (ps % kPsPerNs != 0) ++stats.rounded_calcs;
  return std::to_string(ps / kPsPerNs + (ps % kPsPerNs >= kPsPerNs / 2 ? 1 : 0));
}

// LogGOPSim's tags for POEMS's (communicator, tag) pairs.
class TagFolder {
 public:
  std::uint32_t tag(const Operation& op, std::uint32_t rank) {
    const auto tag = static_cast<std::uint32_t>(op.tag);
    if (op.comm == 0) {
      if (op.tag != kAnyTag && tag >= kFirstFolded) {
        if (used_.count(tag)) clash(tag);
        world_high_.insert(tag);
      }
      return tag;
    }
    if (op.tag == kAnyTag)
      throw std::runtime_error("rank " + std::to_string(rank) + ": a receive on communicator " +
                               std::to_string(op.comm) +
                               " takes any tag; LogGOPSim's GOAL has no communicators to keep it from other "
                               "communicators' messages");
    auto [it, fresh] = folded_.emplace((std::uint64_t{op.comm} << 32) | tag, 0);
    if (fresh) {
      if (next_ == kAnyAsTag) throw std::runtime_error("more than 2^31 - 1 (communicator, tag) pairs to fold");
      it->second = next_++;
      if (world_high_.count(it->second)) clash(it->second);
      used_.insert(it->second);
    }
    return it->second;
  }

 private:
  [[noreturn]] static void clash(std::uint32_t tag) {
    throw std::runtime_error("tag " + std::to_string(tag) +
                             " is used on the world communicator and is also the tag a communicator's messages "
                             "fold into; LogGOPSim's GOAL could not tell them apart");
  }
  static constexpr std::uint32_t kFirstFolded = std::uint32_t{1} << 31;
  static constexpr std::uint32_t kAnyAsTag = ~std::uint32_t{0};
  std::uint32_t next_ = kFirstFolded;
  std::unordered_map<std::uint64_t, std::uint32_t> folded_;
  std::unordered_set<std::uint32_t> used_, world_high_;
};

}  // namespace

GoalWriteStats write_goal(std::ostream& out, ScheduleSource& source) {
  GoalWriteStats stats;
  TagFolder folder;
  out << "num_ranks " << source.ranks() << "\n";
  OpBuffer buf;
  std::string line;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> statements;  // (operation, its dependency)
  for (std::uint32_t r = 0; r < source.ranks(); ++r) {
    buf.clear();
    while (source.pull(r, 1 << 16, buf) > 0) {
    }
    out << "rank " << r << " {\n";
    for (std::size_t i = 0; i < buf.ops.size(); ++i) {
      const Operation& op = buf.ops[i];
      line = "l" + std::to_string(i) + ": ";
      switch (op.kind) {
        case OpKind::Calc: line += "calc " + whole_ns_text(op.duration, stats); break;
        case OpKind::Send: line += "send " + std::to_string(op.bytes) + "b to " + std::to_string(op.peer); break;
        case OpKind::Recv:
          line += "recv " + std::to_string(op.bytes) + "b from " +
                  (op.peer == kAnySource ? std::string("-1") : std::to_string(op.peer));
          break;
      }
      if (op.kind != OpKind::Calc) {
        if (op.comm != 0) ++stats.folded_messages;
        if (op.tag == kAnyTag && op.comm == 0)
          line += " tag -1";
        else if (const std::uint32_t t = folder.tag(op, r); t != 0)
          line += " tag " + std::to_string(t);
      }
      if (op.cpu != 0) line += " cpu " + std::to_string(op.cpu);
      if (op.kind != OpKind::Calc && op.nic != 0) line += " nic " + std::to_string(op.nic);
      out << line << "\n";
    }
    // Dependencies in program order, or in the order they carry (a GOAL
    // file's statement order, which LogGOPSim frees by).
    statements.clear();
    for (std::size_t i = 0; i < buf.ops.size(); ++i)
      for (std::uint32_t k = 0; k < buf.ops[i].dep_count; ++k)
        statements.push_back({static_cast<std::uint32_t>(i), buf.ops[i].first_dep + k});
    std::stable_sort(statements.begin(), statements.end(),
                     [&](const auto& a, const auto& b) { return buf.deps[a.second].order < buf.deps[b.second].order; });
    for (const auto& [i, k] : statements) {
      const Dependency& d = buf.deps[k];
      out << "l" << i << (d.on_start ? " irequires l" : " requires l") << d.op << "\n";
    }
    out << "}\n";
  }
  return stats;
}

bool same_operations(const ExplicitSchedule& a, const ExplicitSchedule& b, std::string* why) {
  auto differ = [&](const std::string& what) {
    if (why) *why = what;
    return false;
  };
  if (a.ranks() != b.ranks()) return differ("rank counts differ");
  for (std::uint32_t r = 0; r < a.ranks(); ++r) {
    const OpBuffer x = a.operations(r), y = b.operations(r);
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

bool same_after_export(const ExplicitSchedule& a, const ExplicitSchedule& b, std::string* why) {
  std::string ignored;
  if (!why) why = &ignored;
  std::map<std::pair<std::uint32_t, std::int32_t>, std::int32_t> to;
  std::map<std::int32_t, std::pair<std::uint32_t, std::int32_t>> from;
  for (std::uint32_t r = 0; r < a.ranks(); ++r) {
    const OpBuffer x = a.operations(r), y = b.operations(r);
    if (x.ops.size() != y.ops.size()) return *why = "rank " + std::to_string(r) + ": counts differ", false;
    for (std::size_t i = 0; i < x.ops.size(); ++i) {
      const Operation &p = x.ops[i], &q = y.ops[i];
      const std::string where = "rank " + std::to_string(r) + " operation " + std::to_string(i);
      if (p.kind != q.kind || p.cpu != q.cpu || p.dep_count != q.dep_count || q.comm != 0)
        return *why = where + " differs", false;
      for (std::uint32_t k = 0; k < p.dep_count; ++k)
        if (x.deps[p.first_dep + k].op != y.deps[q.first_dep + k].op ||
            x.deps[p.first_dep + k].on_start != y.deps[q.first_dep + k].on_start)
          return *why = where + ": dependencies differ", false;
      if (p.kind == OpKind::Calc) {
        if (q.duration != (p.duration + 500) / 1000 * 1000) return *why = where + ": duration", false;
        continue;
      }
      if (p.nic != q.nic || p.peer != q.peer || p.bytes != q.bytes) return *why = where + " differs", false;
      if (p.tag == kAnyTag) {
        if (q.tag != kAnyTag) return *why = where + ": wildcard lost", false;
        continue;
      }
      auto [it, fresh] = to.emplace(std::pair{p.comm, p.tag}, q.tag);
      auto [back, fresh_back] = from.emplace(q.tag, std::pair{p.comm, p.tag});
      if (it->second != q.tag || back->second != std::pair{p.comm, p.tag})
        return *why = where + ": (comm, tag) not folded one to one", false;
    }
  }
  return true;
}

}  // namespace poems::taskgraph
