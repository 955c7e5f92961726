#include "isl_check.h"

#include "poems/psl/isl_text.h"
#include "poems/psl/value.h"

#include <isl/ctx.h>
#include <isl/ilp.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/set.h>
#include <isl/val.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "poems/psl/frontend.h"

namespace poems::psl {

namespace {

// 1.2e+09 style for counts too large to spell out.
std::string format_count(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, n < 1e15 ? "%.0f" : "%.3g", n);
  return buf;
}

// PSL names are written with a prefix so that none collides with an isl
// keyword (`exists`, `mod`, `infty`, ...).
std::string isl_name(const std::string& name) { return isl_identifier(name); }

bool is_constant(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Number: return true;
    case ExprKind::Unary:
    case ExprKind::Binary:
      return std::all_of(e.operands.begin(), e.operands.end(), [](const auto& o) { return is_constant(*o); });
    default: return false;
  }
}

struct IslWriter {
  const std::vector<std::string>& dims;
  std::vector<std::string>& params;
  DiagnosticEngine& diags;
  bool inside_rounding = false;

  bool fail(const Expr& e, const std::string& message) {
    diags.error(e.location, message);
    return false;
  }

  bool write(const Expr& e, std::string& out) {
    switch (e.kind) {
      case ExprKind::Number: {
        if (!e.dimension.dimensionless())
          return fail(e, "integer sets hold plain numbers, not " + dimension_name(e.dimension));
        if (std::floor(e.number) != e.number)
          return fail(e, "integer sets need integer constants, not " + Value::of_number(e.number).str());
        if (std::fabs(e.number) > 9007199254740992.0)  // 2^53: beyond it a double is not an exact integer
          return fail(e, "constant " + Value::of_number(e.number).str() + " is too large for an integer set");
        out += std::to_string(static_cast<long long>(e.number));
        return true;
      }
      case ExprKind::Bool: out += e.boolean ? "true" : "false"; return true;
      case ExprKind::Name: {
        if (e.text.find('.') != std::string::npos)
          return fail(e, "dotted name '" + e.text + "' cannot appear in an integer set");
        if (std::find(dims.begin(), dims.end(), e.text) == dims.end() &&
            std::find(params.begin(), params.end(), e.text) == params.end())
          params.push_back(e.text);
        out += isl_name(e.text);
        return true;
      }
      case ExprKind::Unary:
        out += e.op == Op::Neg ? "-(" : "(";
        if (!write(*e.operands[0], out)) return false;
        out += ")";
        return true;
      case ExprKind::Not:
        out += "not (";
        if (!write(*e.operands[0], out)) return false;
        out += ")";
        return true;
      case ExprKind::Binary: {
        const Expr &a = *e.operands[0], &b = *e.operands[1];
        if (e.op == Op::Mul && !is_constant(a) && !is_constant(b))
          return fail(e, "integer sets must be affine: '*' multiplies two non-constant terms");
        if (e.op == Op::Div) {
          if (!is_constant(b)) return fail(e, "integer sets must be affine: '/' divides by a non-constant term");
          if (!inside_rounding) return fail(e, "division in an integer set must be inside floor() or ceil()");
        }
        if (e.op == Op::Mod && !is_constant(b))
          return fail(e, "integer sets must be affine: '%' takes the remainder by a non-constant term");
        out += "(";
        if (!write(a, out)) return false;
        out += std::string(" ") + (e.op == Op::Mod ? "mod" : op_spelling(e.op)) + " ";
        if (!write(b, out)) return false;
        out += ")";
        return true;
      }
      case ExprKind::Logical:
        out += "(";
        for (std::size_t i = 0; i < e.operands.size(); ++i) {
          if (i) out += e.op == Op::And ? " and " : " or ";
          if (!write(*e.operands[i], out)) return false;
        }
        out += ")";
        return true;
      case ExprKind::Compare:
        for (std::size_t i = 0; i < e.operands.size(); ++i) {
          if (i) {
            Op op = e.compare_ops[i - 1];
            out += std::string(" ") + (op == Op::Eq ? "=" : op_spelling(op)) + " ";
          }
          if (!write(*e.operands[i], out)) return false;
        }
        return true;
      case ExprKind::Call: {
        if (e.text == "floor" || e.text == "ceil" || e.text == "min" || e.text == "max") {
          bool saved = inside_rounding;
          inside_rounding = e.text == "floor" || e.text == "ceil";
          out += e.text + "(";
          for (std::size_t i = 0; i < e.operands.size(); ++i) {
            if (i) out += ", ";
            if (!write(*e.operands[i], out)) return false;
          }
          out += ")";
          inside_rounding = saved;
          return true;
        }
        return fail(e, "function '" + e.text + "' cannot appear in an integer set (use floor, ceil, min, max)");
      }
      case ExprKind::Ternary:
        return fail(e, "conditional expressions cannot appear in an integer set; use 'or' of two constraints");
      case ExprKind::Invalid: return false;
      default: return fail(e, "this expression cannot appear in an integer set");
    }
  }
};

std::string with_params(const std::vector<std::string>& params, const std::string& body) {
  std::string out = "[";
  for (std::size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + isl_name(params[i]);
  return out + "] -> " + body;
}

}  // namespace

bool to_isl(const Expr& e, std::string& out, std::vector<std::string>& params, DiagnosticEngine& diags) {
  static const std::vector<std::string> no_dims;
  IslWriter w{no_dims, params, diags};
  return w.write(e, out);
}

namespace {
// The isl text of a set; errors go to `diags` at their PSL locations.
std::optional<std::string> set_text(const IntegerSet& set, std::vector<std::string>& params, DiagnosticEngine& diags) {
  std::vector<std::string> dims;
  for (const Identifier& d : set.dims) dims.push_back(d.name);
  std::string body = "{ [";
  for (std::size_t i = 0; i < dims.size(); ++i) body += (i ? ", " : "") + isl_name(dims[i]);
  body += "]";
  if (set.constraint) {
    body += " : ";
    IslWriter w{dims, params, diags};
    if (!w.write(*set.constraint, body)) return std::nullopt;
  }
  return with_params(params, body + " }");
}
}  // namespace

std::optional<std::string> integer_set_isl(const IntegerSet& set, std::vector<std::string>& params,
                                           std::string* error) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto text = set_text(set, params, diags);
  if (!text && error && !diags.all().empty()) *error = diags.all().front().message;
  return text;
}

IslChecker::IslChecker(DiagnosticEngine& diags) : diags_(diags), ctx_(isl_ctx_alloc()) {
  isl_options_set_on_error(ctx_, ISL_ON_ERROR_CONTINUE);
  // A budget instead of a clock: isl counts its own steps, so the answer is
  // the same on any machine and under any load.
  isl_ctx_set_max_operations(ctx_, default_frontend_limits().max_isl_operations);
}

bool IslChecker::over_budget(SourceLocation at, const char* what) {
  if (isl_ctx_last_error(ctx_) != isl_error_quota) return false;
  diags_.error(at, std::string("isl gave up on the ") + what + " after " +
                       std::to_string(isl_ctx_get_max_operations(ctx_)) +
                       " operations; simplify it (fewer coordinates or constraints) or raise the limit with "
                       "--limit isl-operations=N");
  isl_ctx_reset_error(ctx_);
  return true;
}

IslChecker::~IslChecker() { isl_ctx_free(ctx_); }

std::string IslChecker::check_set(const IntegerSet& set, const std::map<std::string, long>& defaults,
                                  const char* what) {
  std::vector<std::string> params;
  auto written = set_text(set, params, diags_);
  if (!written) return "";
  const std::string& text = *written;
  isl_ctx_reset_operations(ctx_);
  isl_set* s = isl_set_read_from_str(ctx_, text.c_str());
  if (s == nullptr && over_budget(set.location, what)) return "";
  if (s == nullptr) {
    const char* msg = isl_ctx_last_error_msg(ctx_);
    auto& d =
        diags_.error(set.location, std::string("isl rejected the ") + what + ": " + (msg ? msg : "unknown error"));
    DiagnosticEngine::note(d, set.location, "as isl reads it (PSL names prefixed with _): " + text);
    isl_ctx_reset_error(ctx_);
    return "";
  }
  // With every parameter at its default the set must be finite and non-empty.
  bool all_fixed = true;
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto it = defaults.find(params[i]);
    if (it == defaults.end()) {
      all_fixed = false;
      continue;
    }
    s = isl_set_fix_val(s, isl_dim_param, static_cast<unsigned>(i), isl_val_int_from_si(ctx_, it->second));
  }
  if (all_fixed) {
    const isl_bool bounded = isl_set_is_bounded(s);
    const isl_bool empty = bounded == isl_bool_true ? isl_set_is_empty(s) : isl_bool_error;
    if (bounded == isl_bool_false) {
      diags_.error(set.location,
                   std::string("the ") + what + " is unbounded for the default parameters; bound every coordinate");
    } else if (empty == isl_bool_true) {
      diags_.warning(set.location, std::string("the ") + what + " is empty for the default parameters");
    } else if (empty == isl_bool_false) {
      // Ranks are 32-bit signed integers in every evaluator (MPI's int).
      double points = 1;
      for (int d = 0; d < isl_set_dim(s, isl_dim_set); ++d) {
        isl_val* lo = isl_set_dim_min_val(isl_set_copy(s), d);
        isl_val* hi = isl_set_dim_max_val(isl_set_copy(s), d);
        if (lo && hi && isl_val_is_int(lo) == isl_bool_true && isl_val_is_int(hi) == isl_bool_true)
          points *= isl_val_get_d(hi) - isl_val_get_d(lo) + 1;
        isl_val_free(lo);
        isl_val_free(hi);
      }
      if (points > 2147483647.0)
        diags_.error(set.location, std::string("the ") + what + " spans " + format_count(points) +
                                       " points for the default parameters; at most 2^31 - 1 processes are supported");
    }
    over_budget(set.location, what);
  }
  isl_set_free(s);
  return text;
}

std::string IslChecker::check_map(const IntegerMap& map, std::size_t arity) {
  if (map.in_dims.size() != arity) {
    diags_.error(map.location, "peer map takes " + std::to_string(map.in_dims.size()) +
                                   " coordinates, but the process set has " + std::to_string(arity));
    return "";
  }
  if (map.out.size() != arity) {
    diags_.error(map.location, "peer map yields " + std::to_string(map.out.size()) +
                                   " coordinates, but the process set has " + std::to_string(arity));
    return "";
  }
  std::vector<std::string> dims, params;
  for (const Identifier& d : map.in_dims) dims.push_back(d.name);
  IslWriter w{dims, params, diags_};
  std::string body = "{ [";
  for (std::size_t i = 0; i < dims.size(); ++i) body += (i ? ", " : "") + isl_name(dims[i]);
  body += "] -> [";
  for (std::size_t i = 0; i < map.out.size(); ++i) {
    if (i) body += ", ";
    if (!w.write(*map.out[i], body)) return "";
  }
  body += "]";
  if (map.constraint) {
    body += " : ";
    if (!w.write(*map.constraint, body)) return "";
  }
  body += " }";
  std::string text = with_params(params, body);
  isl_ctx_reset_operations(ctx_);
  isl_map* m = isl_map_read_from_str(ctx_, text.c_str());
  if (m == nullptr && over_budget(map.location, "peer map")) return "";
  if (m == nullptr) {
    const char* msg = isl_ctx_last_error_msg(ctx_);
    auto& d = diags_.error(map.location, std::string("isl rejected the peer map: ") + (msg ? msg : "unknown error"));
    DiagnosticEngine::note(d, map.location, "as isl reads it (PSL names prefixed with _): " + text);
    isl_ctx_reset_error(ctx_);
    return "";
  }
  isl_map_free(m);
  return text;
}

}  // namespace poems::psl
