// Sweep3D input deck: parsing and validation (see deck.h).
#include "poems/sweep3d/app/deck.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace poems::sweep3d::app {

namespace {

constexpr std::array<std::array<const char*, 5>, 5> kFields{{
    {"npe_i", "npe_j", "mk", "mmi", "ncpu"},
    {"it_g", "jt_g", "kt", "mm", "isct"},
    {"dx", "dy", "dz", "epsi", nullptr},
    {"ibc", "jbc", "kbc", nullptr, nullptr},
    {"iprint", "idsa", "ifixups", nullptr, nullptr},
}};

constexpr int kMaxGrid = 1000000;       // cells along one axis
constexpr double kMaxLocalCells = 1e8;  // per process: 2.4 GB of cell arrays

std::size_t field_count(std::size_t line) {
  std::size_t n = 0;
  while (n < 5 && kFields[line][n]) ++n;
  return n;
}

std::string number_text(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  while (!lines.empty() && lines.back().find_first_not_of(" \t,") == std::string_view::npos) lines.pop_back();
  return lines;
}

std::vector<std::string_view> split_values(std::string_view line) {
  std::vector<std::string_view> values;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == ',')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != ',') ++j;
    if (j > i) values.push_back(line.substr(i, j - i));
    i = j;
  }
  return values;
}

// Collects the errors of one deck; `at` locates a field by name.
class Checker {
 public:
  Checker(const std::string& name, std::vector<std::string>& errors) : name_(name), errors_(errors) {}

  void error(const char* field, const std::string& value, const std::string& message) {
    errors_.push_back(name_ + ":" + std::to_string(line_of(field)) + ": " + field + " = " + value + ": " + message);
  }

  // `why_low`/`why_high` explain a violated bound that is not the plain range.
  void whole(const char* field, int value, int lo, int hi, const std::string& why_low = "",
             const std::string& why_high = "") {
    if (value >= lo && value <= hi) return;
    const std::string& why = value < lo ? why_low : why_high;
    error(field, std::to_string(value),
          (why.empty() ? "out of range" : why) + "; allowed: " + std::to_string(lo) + " to " + std::to_string(hi));
  }

  void choice(const char* field, int value, std::initializer_list<int> allowed, const std::string& meaning) {
    for (int a : allowed)
      if (value == a) return;
    error(field, std::to_string(value), "not supported; allowed: " + meaning);
  }

  static int line_of(const char* field) {
    for (std::size_t l = 0; l < kFields.size(); ++l)
      for (std::size_t f = 0; f < field_count(l); ++f)
        if (std::string_view(kFields[l][f]) == field) return static_cast<int>(l) + 1;
    return 0;
  }

 private:
  const std::string& name_;
  std::vector<std::string>& errors_;
};

void validate(const Deck& d, Checker& c) {
  c.whole("npe_i", d.npe_i, 1, kMaxGrid);
  c.whole("npe_j", d.npe_j, 1, kMaxGrid);
  c.whole("it_g", d.it_g, std::max(1, d.npe_i), kMaxGrid, d.it_g >= 1 ? "fewer cells than npe_i processes" : "");
  c.whole("jt_g", d.jt_g, std::max(1, d.npe_j), kMaxGrid, d.jt_g >= 1 ? "fewer cells than npe_j processes" : "");
  c.whole("kt", d.kt, 1, kMaxGrid);
  c.whole("mk", d.mk, 1, std::max(1, d.kt), "", "larger than kt");
  c.whole("mm", d.mm, 1, 48);
  if (d.mmi < 1 || d.mm < 1 || d.mmi > d.mm || d.mm % d.mmi != 0) {
    std::string divisors;
    for (int v = 1; v <= std::max(d.mm, 1); ++v)
      if (d.mm >= 1 && d.mm % v == 0) divisors += (divisors.empty() ? "" : ", ") + std::to_string(v);
    c.error("mmi", std::to_string(d.mmi), "must divide mm = " + std::to_string(d.mm) + "; allowed: " + divisors);
  }
  c.choice("ncpu", d.ncpu, {1}, "1 (one thread per MPI process)");
  c.choice("isct", d.isct, {0}, "0 (isotropic scattering; higher scattering orders are not implemented)");
  for (auto [field, v] : {std::pair{"dx", d.dx}, std::pair{"dy", d.dy}, std::pair{"dz", d.dz}})
    if (!(v > 0) || !std::isfinite(v) || v > 1e12)
      c.error(field, number_text(v), "a cell width must be positive; allowed: > 0 and <= 1e12");
  if (!std::isfinite(d.epsi) || d.epsi == 0 || d.epsi >= 1)
    c.error("epsi", number_text(d.epsi),
            "allowed: a tolerance 0 < epsi < 1 (iterate until the flux changes less), or -N for exactly N iterations");
  else if (d.epsi < 0 && (d.epsi != std::floor(d.epsi) || -d.epsi > kMaxIterations))
    c.error("epsi", number_text(d.epsi),
            "a negative epsi is minus the iteration count; allowed: -1 to -" + std::to_string(kMaxIterations) +
                " (whole numbers)");
  c.choice("ibc", d.ibc, {0, 1}, "0 (vacuum) or 1 (reflective at i = 0)");
  c.choice("jbc", d.jbc, {0, 1}, "0 (vacuum) or 1 (reflective at j = 0)");
  c.choice("kbc", d.kbc, {0, 1}, "0 (vacuum) or 1 (reflective at k = 0)");
  c.choice("iprint", d.iprint, {0, 1}, "0 (summary) or 1 (also per-process times and the flux along i)");
  c.choice("idsa", d.idsa, {0}, "0 (diffusion synthetic acceleration is not implemented)");
  c.choice("ifixups", d.ifixups, {0, 1}, "0 (no fixups) or 1 (set-to-zero negative flux fixups)");
  if (d.npe_i >= 1 && d.npe_j >= 1 && d.it_g >= d.npe_i && d.jt_g >= d.npe_j && d.kt >= 1) {
    const double local = std::ceil(static_cast<double>(d.it_g) / d.npe_i) *
                         std::ceil(static_cast<double>(d.jt_g) / d.npe_j) * static_cast<double>(d.kt);
    if (local > kMaxLocalCells)
      c.error("it_g", std::to_string(d.it_g),
              "a process would hold " + number_text(local) + " cells; allowed: at most 1e8 cells per process " +
                  "(ceil(it_g/npe_i) * ceil(jt_g/npe_j) * kt)");
  }
}

}  // namespace

DeckParse parse_deck(std::string_view text, const std::string& name) {
  DeckParse out;
  Checker check(name, out.errors);
  const std::vector<std::string_view> lines = split_lines(text);
  if (lines.size() != 5) {
    out.errors.push_back(name + ": the deck has " + std::to_string(lines.size()) +
                         " lines; a Sweep3D deck has 5: 'npe_i npe_j mk mmi ncpu', 'it_g jt_g kt mm isct', "
                         "'dx dy dz epsi', 'ibc jbc kbc', 'iprint idsa ifixups'");
    if (lines.size() < 5) return out;
  }
  std::array<std::array<double, 5>, 5> values{};
  bool readable = true;
  for (std::size_t l = 0; l < 5; ++l) {
    const auto fields = split_values(lines[l]);
    const std::size_t want = field_count(l);
    std::string names;
    for (std::size_t f = 0; f < want; ++f) names += std::string(f ? " " : "") + kFields[l][f];
    if (fields.size() != want) {
      out.errors.push_back(name + ":" + std::to_string(l + 1) + ": " + std::to_string(fields.size()) +
                           " values; expected " + std::to_string(want) + ": " + names);
      readable = false;
      continue;
    }
    for (std::size_t f = 0; f < want; ++f) {
      const std::string_view v = fields[f];
      double x = 0;
      // Fortran decks may write exponents with d/D ("1.0d-6").
      std::string normalized(v);
      for (char& ch : normalized)
        if (ch == 'd' || ch == 'D') ch = 'e';
      const char* first = normalized.data() + (normalized.size() > 1 && normalized[0] == '+' ? 1 : 0);
      auto [end, ec] = std::from_chars(first, normalized.data() + normalized.size(), x);
      const bool integer_field = l != 2;
      if (ec != std::errc() || end != normalized.data() + normalized.size() || !std::isfinite(x)) {
        out.errors.push_back(name + ":" + std::to_string(l + 1) + ": " + kFields[l][f] + " = " + std::string(v) +
                             ": not a number");
        readable = false;
      } else if (integer_field && (x != std::floor(x) || std::fabs(x) > 2e9)) {
        out.errors.push_back(name + ":" + std::to_string(l + 1) + ": " + kFields[l][f] + " = " + std::string(v) +
                             ": not a whole number");
        readable = false;
      }
      values[l][f] = x;
    }
  }
  if (!readable) return out;
  auto i = [&](std::size_t l, std::size_t f) { return static_cast<int>(values[l][f]); };
  Deck& d = out.deck;
  d.npe_i = i(0, 0), d.npe_j = i(0, 1), d.mk = i(0, 2), d.mmi = i(0, 3), d.ncpu = i(0, 4);
  d.it_g = i(1, 0), d.jt_g = i(1, 1), d.kt = i(1, 2), d.mm = i(1, 3), d.isct = i(1, 4);
  d.dx = values[2][0], d.dy = values[2][1], d.dz = values[2][2], d.epsi = values[2][3];
  d.ibc = i(3, 0), d.jbc = i(3, 1), d.kbc = i(3, 2);
  d.iprint = i(4, 0), d.idsa = i(4, 1), d.ifixups = i(4, 2);
  validate(d, check);
  return out;
}

std::vector<std::string> check_ranks(const Deck& deck, int ranks, const std::string& name) {
  std::vector<std::string> errors;
  if (static_cast<long long>(deck.npe_i) * deck.npe_j != ranks)
    errors.push_back(name + ":1: npe_i * npe_j = " + std::to_string(deck.npe_i) + " * " + std::to_string(deck.npe_j) +
                     " = " + std::to_string(static_cast<long long>(deck.npe_i) * deck.npe_j) +
                     ", but the program runs on " + std::to_string(ranks) +
                     (ranks == 1 ? " MPI process" : " MPI processes") +
                     "; allowed: npe_i * npe_j = " + std::to_string(ranks));
  return errors;
}

std::string deck_text(const Deck& d) {
  auto n = [](int v) { return std::to_string(v); };
  return n(d.npe_i) + " " + n(d.npe_j) + " " + n(d.mk) + " " + n(d.mmi) + " " + n(d.ncpu) + "\n" + n(d.it_g) + " " +
         n(d.jt_g) + " " + n(d.kt) + " " + n(d.mm) + " " + n(d.isct) + "\n" + number_text(d.dx) + " " +
         number_text(d.dy) + " " + number_text(d.dz) + " " + number_text(d.epsi) + "\n" + n(d.ibc) + " " + n(d.jbc) +
         " " + n(d.kbc) + "\n" + n(d.iprint) + " " + n(d.idsa) + " " + n(d.ifixups) + "\n";
}

}  // namespace poems::sweep3d::app
