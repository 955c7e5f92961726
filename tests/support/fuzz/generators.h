// Deterministic input generators for the fuzz harness: grammar-aware PSL
// and GOAL programs (mostly valid, with hostile values), and byte- and
// token-level mutations of seed files. Everything is drawn from the caller's
// seeded generator, so a run is reproducible from its seed and index.
#pragma once

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "../psl_fragments.h"

namespace poems::fuzz {

using Rng = std::mt19937_64;

// A PSL specification from the grammar: a model with parameters, lets and a
// task graph (loops, branches, messages, collectives, tasks), components and
// sometimes a study; values range over the hostile ones of issue 25 (huge,
// negative, fractional, division by zero, long chains).
std::string generate_psl(Rng& rng);

// A GOAL schedule from its grammar: ranks, labelled calc/send/recv with
// sizes, tags, CPUs and NICs, requires/irequires (also forward and cyclic).
std::string generate_goal(Rng& rng);

// 1 to 8 byte-level edits: deletions, insertions of fragments from
// `vocabulary` or of random bytes, duplications, swaps, truncation, and
// splices with another seed.
std::string mutate_bytes(const std::string& seed, const std::vector<std::string>& seeds,
                         const std::vector<std::string>& vocabulary, Rng& rng);

// Token-level edits: the input split at word boundaries, tokens replaced,
// duplicated, dropped or repeated many times.
std::string mutate_tokens(const std::string& seed, const std::vector<std::string>& vocabulary, Rng& rng);

// Fragments worth inserting into PSL / GOAL text.
const std::vector<std::string>& psl_vocabulary();
const std::vector<std::string>& goal_vocabulary();

// Definitions (header-only: tests/fuzz/fuzz_test.cpp is the one user).
namespace detail {

inline int below(Rng& rng, int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
inline bool chance(Rng& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
template <class T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<std::size_t>(below(rng, static_cast<int>(v.size())))];
}

// ---------------------------------------------------------------- PSL

class PslWriter {
 public:
  explicit PslWriter(Rng& rng) : rng_(rng) {}

  std::string program() {
    const bool two_d = chance(rng_, 0.2);
    std::string s = "model M {\n  param P = " + small_count() + ", n = " + number() + ", w = " + number() +
                    ", k = " + number() + ";\n";
    names_ = {"P", "n", "w", "k"};
    if (chance(rng_, 0.5)) {
      s += "  let q = " + expr(3) + ";\n";
      names_.push_back("q");
    }
    s += "  taskgraph g {\n";
    if (two_d) {
      s += "    processes { [r, c] : 0 <= r < P and 0 <= c < 2 };\n";
      coords_ = {"r", "c"};
    } else {
      s += "    processes { [r] : 0 <= r < P };\n";
      coords_ = {"r"};
    }
    for (const std::string& c : coords_) names_.push_back(c);
    s += block(2, 1 + below(rng_, 5));
    s += "  }\n}\n";
    s += "component Work in application[M] {\n"
         "  accepts { profile { node_type = \"compute\"; } transaction compute(n: real); protocol dataflow; }\n"
         "  requests cpu {\n    selector domain == hardware[processor] and evaluation == study.compute;\n"
         "    transaction execute_code_block(work = n);\n    protocol call_return;\n  }\n}\n";
    if (chance(rng_, 0.6)) {
      const bool odd = chance(rng_, 0.2);  // a machine with hostile parameters
      s += "component Cpu in hardware[processor] {\n  param Wg = " + (odd ? pick(rng_, times()) : "50ns") +
           ";\n  accepts { profile { evaluation = processor[wg]; Wg = Wg; } transaction execute_code_block(work: "
           "real) -> time; protocol call_return; }\n}\n";
      s += "component Net in hardware[network] {\n  param L = " + (odd ? pick(rng_, times()) : "2us") +
           ", o = " + (odd ? pick(rng_, times()) : "1us") +
           ", g = 1us, G = " + (odd ? pick(rng_, per_byte()) : "0.5ns/B") +
           ", O = 0ns/B, S = " + (odd ? pick(rng_, sizes()) : "64KiB") +
           ";\n  accepts { profile { evaluation = analytic[LogGP]; L = L; o = o; g = g; G = G; O = O; S = S; } "
           "transaction message(bytes: bytes) -> time; protocol call_return; }\n}\n";
      if (chance(rng_, 0.5))
        s += "study s {\n  model M on Net;\n  set compute = processor[wg];\n  vary P in [1, 2, " + small_count() +
             "];\n  compare analytic[LogGP], simulation[MPI-Sim];\n  report time;\n}\n";
    }
    return s;
  }

 private:
  // Mostly ordinary values, a fifth of them hostile (issue 25's reproducers).
  std::string plain_number() {
    static const std::vector<std::string> ordinary = {"0", "1", "2", "3", "4", "7", "8", "16", "64", "100"};
    static const std::vector<std::string> hostile = {"-1",
                                                     "-8",
                                                     "0.5",
                                                     "2.5",
                                                     "1e300",
                                                     "1e15",
                                                     "1e-300",
                                                     "1e18",
                                                     "1000000000000",
                                                     "9007199254740993",
                                                     "9223372036854775807",
                                                     "4294967296",
                                                     "2147483648",
                                                     "1e999"};
    return chance(rng_, 0.8) ? pick(rng_, ordinary) : pick(rng_, hostile);
  }
  const std::vector<std::string>& times() {
    static const std::vector<std::string> v = {"1ns", "50ns", "2us", "0ns", "1e18us", "-1us", "5.3us", "1s"};
    return v;
  }
  const std::vector<std::string>& per_byte() {
    static const std::vector<std::string> v = {"0.5ns/B", "6ns/B", "0ns/B", "1e13ns/B", "1ns/B"};
    return v;
  }
  const std::vector<std::string>& sizes() {
    static const std::vector<std::string> v = {"64KiB", "0B", "1B", "32768B", "1e20B"};
    return v;
  }

  std::string small_count() { return chance(rng_, 0.9) ? std::to_string(1 + below(rng_, 6)) : number(); }
  std::string number() {
    if (chance(rng_, 0.02))
      return pick(rng_, std::vector<std::string>{"8KB", "5us", "1GiB"});  // a unit where none fits
    return plain_number();
  }

  std::string expr(int depth) {
    if (depth <= 0 || chance(rng_, 0.3)) return chance(rng_, 0.5) && !names_.empty() ? pick(rng_, names_) : number();
    switch (below(rng_, 9)) {
      case 0:
      case 1:
      case 2: {
        static const std::vector<std::string> ops = {"+", "-", "*", "/", "%"};
        return "(" + expr(depth - 1) + " " + pick(rng_, ops) + " " + expr(depth - 1) + ")";
      }
      case 3: {
        static const std::vector<std::string> f = {"floor", "ceil", "round", "abs", "sqrt", "log2"};
        return pick(rng_, f) + "(" + expr(depth - 1) + ")";
      }
      case 4: return std::string(chance(rng_, 0.5) ? "min(" : "max(") + expr(depth - 1) + ", " + expr(depth - 1) + ")";
      case 5: return "pow(" + expr(depth - 1) + ", " + expr(depth - 1) + ")";
      case 6: return "(" + condition(depth - 1) + " ? " + expr(depth - 1) + " : " + expr(depth - 1) + ")";
      case 7: {
        // A long chain: deep trees, near and past the depth limit.
        const int terms = chance(rng_, 0.8) ? 2 + below(rng_, 40) : 900 + below(rng_, 200);
        std::string s = expr(0);
        for (int i = 1; i < terms; ++i) s += (chance(rng_, 0.5) ? " + " : " * ") + expr(0);
        return "(" + s + ")";
      }
      default: return "-" + expr(depth - 1);
    }
  }

  std::string condition(int depth) {
    static const std::vector<std::string> cmp = {"<", "<=", ">", ">=", "==", "!="};
    std::string c = expr(depth) + " " + pick(rng_, cmp) + " " + expr(depth);
    if (chance(rng_, 0.2)) c += std::string(chance(rng_, 0.5) ? " and " : " or ") + expr(depth) + " < " + expr(depth);
    return c;
  }

  // An integer-valued expression (loop bounds, peers, tags, roots).
  std::string integer(int depth) { return "floor(" + expr(depth) + ")"; }

  std::string peer(int offset) {
    std::string p = "[";
    for (std::size_t i = 0; i < coords_.size(); ++i) {
      if (i) p += ", ";
      p += i == 0 ? (coords_[0] + (offset >= 0 ? " + " : " - ") + std::to_string(std::abs(offset))) : coords_[i];
    }
    return p + "]";
  }

  std::string block(int indent, int statements) {
    const std::size_t scope = names_.size();  // lets end with their block
    std::string s;
    for (int i = 0; i < statements; ++i) s += statement(indent);
    names_.resize(scope);
    return s;
  }

  std::string statement(int indent) {
    const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
    if (indent > 6) return pad + "barrier;\n";
    switch (below(rng_, 10)) {
      case 0: {
        const std::string v = "i" + std::to_string(loops_++);
        std::string first = chance(rng_, 0.7) ? "1" : integer(1);
        std::string last = chance(rng_, 0.6) ? std::to_string(1 + below(rng_, 4)) : integer(2);
        std::string s = pad + "for " + v + " in " + first + " .. " + last;
        if (chance(rng_, 0.2)) s += " step " + (chance(rng_, 0.7) ? std::to_string(1 + below(rng_, 3)) : integer(1));
        names_.push_back(v);
        s += " {\n" + block(indent + 1, 1 + below(rng_, 3)) + pad + "}\n";
        names_.pop_back();
        return s;
      }
      case 1: {
        std::string s = pad + "if " + condition(2) + " {\n" + block(indent + 1, 1 + below(rng_, 2)) + pad + "}";
        if (chance(rng_, 0.5)) s += " else {\n" + block(indent + 1, 1 + below(rng_, 2)) + pad + "}";
        return s + "\n";
      }
      case 2: {
        const std::string v = "x" + std::to_string(lets_++);
        names_.push_back(v);
        return pad + "let " + v + " = " + expr(3) + ";\n";
      }
      case 3:
      case 4: {  // a matched exchange: even ranks send up, odd ranks receive
        const std::string size = chance(rng_, 0.5) ? std::to_string(8 * below(rng_, 1000)) : expr(3);
        const std::string tag = chance(rng_, 0.7) ? "" : " tag " + integer(1);
        const bool nb = chance(rng_, 0.2);
        std::string s = pad + "if " + coords_[0] + " % 2 == 0 {\n" + pad + "  " + (nb ? "isend" : "send") + " to " +
                        peer(1) + " size " + size + tag + ";\n" + pad + "} else {\n" + pad + "  " +
                        (nb ? "irecv" : "recv") + " from " + (chance(rng_, 0.1) ? "any" : peer(-1)) + " size " + size +
                        tag + ";\n" + pad + "}\n";
        if (nb) s += pad + "waitall;\n";
        return s;
      }
      case 5: {
        static const std::vector<std::string> rooted = {"bcast", "reduce", "gather", "scatter"};
        return pad + pick(rng_, rooted) + " size " + (chance(rng_, 0.6) ? "8" : expr(2)) +
               (chance(rng_, 0.5) ? " root " + (chance(rng_, 0.6) ? std::string("0") : integer(1)) : "") + ";\n";
      }
      case 6: {
        static const std::vector<std::string> plain = {"allreduce", "allgather", "alltoall"};
        static const std::vector<std::string> algorithm = {"", " algorithm ring", " algorithm dissemination",
                                                           " algorithm linear", " algorithm binomial"};
        return pad + pick(rng_, plain) + " size " + (chance(rng_, 0.6) ? "16" : expr(2)) + pick(rng_, algorithm) +
               ";\n";
      }
      case 7: return pad + "barrier;\n";
      default: return pad + "task t" + std::to_string(tasks_++) + " : Work(n = " + expr(3) + ");\n";
    }
  }

  Rng& rng_;
  std::vector<std::string> names_, coords_;
  int loops_ = 0, lets_ = 0, tasks_ = 0;
};

// ---------------------------------------------------------------- GOAL

inline std::string goal_size(Rng& rng) {
  static const std::vector<std::string> ordinary = {"0b", "1b", "8b", "1024b", "65536b", "10b", "4096b"};
  static const std::vector<std::string> hostile = {"9223372036854775807b", "18446744073709551615b", "3070000000000000b",
                                                   "4096", "-8b"};
  return chance(rng, 0.9) ? pick(rng, ordinary) : pick(rng, hostile);
}

}  // namespace detail

using detail::below;
using detail::chance;
using detail::goal_size;
using detail::pick;
using detail::PslWriter;

inline std::string generate_psl(Rng& rng) { return PslWriter(rng).program(); }

inline std::string generate_goal(Rng& rng) {
  const int ranks = chance(rng, 0.9) ? 1 + below(rng, 8) : 1 + below(rng, 5000);
  std::string s = "num_ranks " + std::to_string(ranks) + "\n";
  const int described = std::min(ranks, 8);
  for (int r = 0; r < described; ++r) {
    s += "rank " + std::to_string(chance(rng, 0.97) ? r : below(rng, ranks + 2)) + " {\n";
    const int ops = below(rng, 8);
    for (int i = 0; i < ops; ++i) {
      s += "  l" + std::to_string(i) + ": ";
      const int peer = chance(rng, 0.97) ? (r + 1 + below(rng, std::max(1, ranks - 1))) % ranks : below(rng, ranks + 3);
      const int kind = below(rng, 3);
      switch (kind) {
        case 0: {
          static const std::vector<std::string> d = {"0", "100", "1.5", "5000", "250", "18446744073709551", "1e9"};
          s += "calc " + (chance(rng, 0.9) ? d[static_cast<std::size_t>(below(rng, 5))] : pick(rng, d));
          break;
        }
        case 1: s += "send " + goal_size(rng) + " to " + std::to_string(peer); break;
        default: s += "recv " + goal_size(rng) + " from " + (chance(rng, 0.1) ? "any" : std::to_string(peer)); break;
      }
      if (kind != 0 && chance(rng, 0.3)) s += " tag " + std::to_string(below(rng, 4));
      if (chance(rng, 0.1)) s += " cpu " + std::to_string(below(rng, 3));
      if (kind != 0 && chance(rng, 0.1)) s += " nic " + std::to_string(below(rng, 3));
      s += "\n";
    }
    for (int i = 1; i < ops; ++i)
      if (chance(rng, 0.6)) {
        const int from = chance(rng, 0.95) ? below(rng, i) : below(rng, ops);  // sometimes forward or itself
        s += "  l" + std::to_string(i) + (chance(rng, 0.2) ? " irequires l" : " requires l") + std::to_string(from) +
             "\n";
      }
    s += "}\n";
  }
  return s;
}

inline const std::vector<std::string>& psl_vocabulary() {
  static const std::vector<std::string> v = test::psl_fragments({"step",
                                                                 "if",
                                                                 "else",
                                                                 "send",
                                                                 "recv",
                                                                 "isend",
                                                                 "irecv",
                                                                 "waitall",
                                                                 "task",
                                                                 "allreduce",
                                                                 "barrier",
                                                                 "bcast",
                                                                 "root",
                                                                 "algorithm",
                                                                 "component",
                                                                 "accepts",
                                                                 "requests",
                                                                 "profile",
                                                                 "selector",
                                                                 "transaction",
                                                                 "protocol",
                                                                 "study",
                                                                 "vary",
                                                                 "compare",
                                                                 "report",
                                                                 "import",
                                                                 "\"machines.psl\"",
                                                                 "\"/dev/zero\"",
                                                                 "\"\"",
                                                                 "and",
                                                                 "or",
                                                                 "not",
                                                                 "true",
                                                                 "false",
                                                                 "5us",
                                                                 "8KB",
                                                                 "0.04ns/B",
                                                                 "1e999",
                                                                 "1e300",
                                                                 "-1",
                                                                 "0",
                                                                 "2.5",
                                                                 "9223372036854775807",
                                                                 "\"",
                                                                 "\"text\"",
                                                                 "/*",
                                                                 "*/",
                                                                 "//",
                                                                 "@",
                                                                 "$",
                                                                 "\x1b[31m",
                                                                 "\xc2\x9b",
                                                                 "\xff",
                                                                 "\x01",
                                                                 "\x7f",
                                                                 "\n",
                                                                 " ",
                                                                 "\t",
                                                                 "npe_i",
                                                                 "pi",
                                                                 "undefined",
                                                                 "hardware[network]",
                                                                 "simulation[MPI-Sim]",
                                                                 "{ [i] : 0 <= i < 4 }",
                                                                 "{ [i, j, k, l, m, n, o, p, q] : 0 <= i < 2 }",
                                                                 "ceil(",
                                                                 "max(1,",
                                                                 "pow(2, 63)",
                                                                 "floor(8 / 0)",
                                                                 "tag any",
                                                                 "size",
                                                                 "from any",
                                                                 "1 + 1 + 1 + 1 + 1 + 1 + 1 + 1"});
  return v;
}

inline const std::vector<std::string>& goal_vocabulary() {
  static const std::vector<std::string> v = {"num_ranks",
                                             "rank",
                                             "{",
                                             "}",
                                             ":",
                                             ";",
                                             "calc",
                                             "send",
                                             "recv",
                                             "to",
                                             "from",
                                             "any",
                                             "tag",
                                             "cpu",
                                             "nic",
                                             "comm",
                                             "requires",
                                             "irequires",
                                             "l1",
                                             "l2",
                                             "0",
                                             "1",
                                             "-1",
                                             "4294967296",
                                             "18446744073709551616",
                                             "9223372036854775807b",
                                             "1e9",
                                             "0.5",
                                             "b",
                                             "//",
                                             "#",
                                             "/*",
                                             "*/",
                                             "\n",
                                             " ",
                                             "\x1b[2J",
                                             "\xff",
                                             std::string(1, '\0')};  // a NUL byte ("\x00" would be empty)
  return v;
}

inline std::string mutate_bytes(const std::string& seed, const std::vector<std::string>& seeds,
                                const std::vector<std::string>& vocabulary, Rng& rng) {
  std::string s = seed;
  const int edits = 1 + below(rng, 8);
  for (int e = 0; e < edits; ++e) {
    if (s.empty()) s = pick(rng, vocabulary);
    if (s.empty()) continue;
    const std::size_t at = static_cast<std::size_t>(below(rng, static_cast<int>(s.size())));
    switch (below(rng, 9)) {
      case 0: s.erase(at, static_cast<std::size_t>(1 + below(rng, 16))); break;
      case 1: s.insert(at, pick(rng, vocabulary)); break;
      case 2: s[at] = static_cast<char>(below(rng, 256)); break;
      case 3: {  // duplicate a chunk somewhere
        const std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(1 + below(rng, 80)), s.size() - at);
        s.insert(static_cast<std::size_t>(below(rng, static_cast<int>(s.size()))), s.substr(at, len));
        break;
      }
      case 4: std::swap(s[at], s[static_cast<std::size_t>(below(rng, static_cast<int>(s.size())))]); break;
      case 5: s.resize(at); break;
      case 6: {  // splice the tail of another seed
        const std::string& other = pick(rng, seeds);
        if (!other.empty())
          s = s.substr(0, at) + other.substr(static_cast<std::size_t>(below(rng, static_cast<int>(other.size()))));
        break;
      }
      case 7: {  // a chunk repeated many times (long lines, long lists, deep nesting)
        const std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(1 + below(rng, 6)), s.size() - at);
        const std::string chunk = s.substr(at, len);
        std::string many;
        for (int i = 0, n = 50 + below(rng, 2000); i < n; ++i) many += chunk;
        s.insert(at, many);
        break;
      }
      default: {  // a number made huge, negative or fractional
        static const std::vector<std::string> n = {"0", "-", "999999999999", ".5", "e300", "9"};
        s.insert(at, pick(rng, n));
        break;
      }
    }
    if (s.size() > (1u << 20)) s.resize(1u << 20);  // inputs stay under a megabyte
  }
  return s;
}

inline std::string mutate_tokens(const std::string& seed, const std::vector<std::string>& vocabulary, Rng& rng) {
  // Words, numbers and single punctuation characters, whitespace kept with the token before it.
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < seed.size();) {
    std::size_t j = i + 1;
    const auto word = [&](std::size_t k) {
      return k < seed.size() && (std::isalnum(static_cast<unsigned char>(seed[k])) || seed[k] == '_' || seed[k] == '.');
    };
    if (word(i))
      while (word(j)) ++j;
    while (j < seed.size() && std::isspace(static_cast<unsigned char>(seed[j]))) ++j;
    tokens.push_back(seed.substr(i, j - i));
    i = j;
  }
  if (tokens.empty()) return pick(rng, vocabulary);
  const int edits = 1 + below(rng, 6);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = static_cast<std::size_t>(below(rng, static_cast<int>(tokens.size())));
    switch (below(rng, 5)) {
      case 0: tokens[at] = pick(rng, vocabulary) + " "; break;
      case 1: tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(at)); break;
      case 2: tokens.insert(tokens.begin() + static_cast<std::ptrdiff_t>(at), pick(rng, vocabulary) + " "); break;
      case 3: tokens.insert(tokens.begin() + static_cast<std::ptrdiff_t>(at), tokens[at]); break;
      default: {
        const std::string t = tokens[at];
        for (int i = 0, n = 20 + below(rng, 500); i < n; ++i)
          tokens.insert(tokens.begin() + static_cast<std::ptrdiff_t>(at), t);
        break;
      }
    }
    if (tokens.empty()) tokens.push_back(pick(rng, vocabulary));
  }
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

}  // namespace poems::fuzz
