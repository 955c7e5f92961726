#include "isl_form.h"

#include <algorithm>
#include <cmath>

#include "poems/psl/isl_text.h"

namespace poems::psl {

namespace {

using psl::Expr;
using psl::ExprKind;
using psl::Op;

// One piece of a piecewise expression: `text` where `condition` holds.
struct Piece {
  std::string condition;  // "" = always
  std::string text;
};
using Pieces = std::vector<Piece>;

std::string conj(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return "(" + a + ") and (" + b + ")";
}

struct Writer {
  const IslResolver& resolve;
  std::vector<std::string>& params;
  bool prefix = true;
  int depth = 0;

  std::string name(const std::string& n) const { return prefix ? psl::isl_identifier(n) : n; }

  // Cross product of operand pieces combined by `combine`.
  template <typename F>
  std::optional<Pieces> combine(const std::vector<Pieces>& parts, F f) {
    Pieces acc{{"", ""}};
    std::vector<std::vector<std::string>> texts{{}};
    std::vector<std::string> conds{""};
    for (const Pieces& p : parts) {
      std::vector<std::vector<std::string>> nt;
      std::vector<std::string> nc;
      for (std::size_t i = 0; i < texts.size(); ++i)
        for (const Piece& q : p) {
          auto t = texts[i];
          t.push_back(q.text);
          nt.push_back(std::move(t));
          nc.push_back(conj(conds[i], q.condition));
        }
      texts = std::move(nt);
      conds = std::move(nc);
      if (texts.size() > 64) return std::nullopt;  // too many pieces to be useful
    }
    Pieces out;
    for (std::size_t i = 0; i < texts.size(); ++i) out.push_back({conds[i], f(texts[i])});
    return out;
  }

  // The pieces of every operand, or nothing if one is not representable.
  std::optional<std::vector<Pieces>> operand_pieces(const Expr& e) {
    std::vector<Pieces> parts;
    for (const auto& o : e.operands) {
      auto p = pieces(*o);
      if (!p) return std::nullopt;
      parts.push_back(*p);
    }
    return parts;
  }

  std::optional<Pieces> pieces(const Expr& e) {
    if (++depth > 64) return std::nullopt;
    auto r = pieces_inner(e);
    --depth;
    return r;
  }

  std::optional<Pieces> pieces_inner(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Number:
        if (!e.dimension.dimensionless() || std::floor(e.number) != e.number || std::fabs(e.number) > 9.0e15)
          return std::nullopt;
        return Pieces{{"", std::to_string(static_cast<long long>(e.number))}};
      case ExprKind::Bool: return Pieces{{"", e.boolean ? "true" : "false"}};
      case ExprKind::Name: {
        if (e.text.find('.') != std::string::npos) return std::nullopt;
        IslName n = resolve(e.text);
        if (n.kind == IslName::Kind::Let && n.definition) return pieces(*n.definition);
        if (n.kind == IslName::Kind::Parameter && std::find(params.begin(), params.end(), e.text) == params.end())
          params.push_back(e.text);
        return Pieces{{"", name(e.text)}};
      }
      case ExprKind::Unary:
      case ExprKind::Not: {
        auto p = pieces(*e.operands[0]);
        if (!p) return std::nullopt;
        std::string pre = e.kind == ExprKind::Not ? "not " : e.op == Op::Neg ? "-" : "";
        return combine({*p}, [&](const std::vector<std::string>& t) { return pre + "(" + t[0] + ")"; });
      }
      case ExprKind::Binary: {
        auto a = pieces(*e.operands[0]);
        auto b = pieces(*e.operands[1]);
        if (!a || !b) return std::nullopt;
        if (e.op == Op::Div) return std::nullopt;  // exact division: only inside floor/ceil
        const char* op = e.op == Op::Add ? " + " : e.op == Op::Sub ? " - " : e.op == Op::Mul ? " * " : " mod ";
        return combine({*a, *b}, [&](const std::vector<std::string>& t) { return "(" + t[0] + op + t[1] + ")"; });
      }
      case ExprKind::Logical:
      case ExprKind::Compare: {
        auto parts = operand_pieces(e);
        if (!parts) return std::nullopt;
        return combine(*parts, [&](const std::vector<std::string>& t) {
          std::string s = "(";
          for (std::size_t i = 0; i < t.size(); ++i) {
            if (i) {
              if (e.kind == ExprKind::Logical) {
                s += e.op == Op::And ? " and " : " or ";
              } else {
                Op c = e.compare_ops[i - 1];
                s += std::string(" ") + (c == Op::Eq ? "=" : psl::op_spelling(c)) + " ";
              }
            }
            s += t[i];
          }
          return s + ")";
        });
      }
      case ExprKind::Ternary: {
        auto c = pieces(*e.operands[0]);
        auto t = pieces(*e.operands[1]);
        auto f = pieces(*e.operands[2]);
        if (!c || !t || !f) return std::nullopt;
        Pieces out;
        for (const Piece& cp : *c) {
          for (const Piece& tp : *t) out.push_back({conj(conj(cp.condition, cp.text), tp.condition), tp.text});
          for (const Piece& fp : *f) out.push_back({conj(conj(cp.condition, "not " + cp.text), fp.condition), fp.text});
        }
        if (out.size() > 64) return std::nullopt;
        return out;
      }
      case ExprKind::Call: {
        const std::string& f = e.text;
        if ((f == "floor" || f == "ceil") && e.operands.size() == 1 && e.operands[0]->kind == ExprKind::Binary &&
            e.operands[0]->op == Op::Div) {
          auto a = pieces(*e.operands[0]->operands[0]);
          auto b = pieces(*e.operands[0]->operands[1]);
          if (!a || !b) return std::nullopt;
          return combine({*a, *b},
                         [&](const std::vector<std::string>& t) { return f + "((" + t[0] + ")/" + t[1] + ")"; });
        }
        if (f == "min" || f == "max" || f == "floor" || f == "ceil") {
          auto parts = operand_pieces(e);
          if (!parts) return std::nullopt;
          return combine(*parts, [&](const std::vector<std::string>& t) {
            std::string s = f + "(";
            for (std::size_t i = 0; i < t.size(); ++i) s += (i ? ", " : "") + t[i];
            return s + ")";
          });
        }
        return std::nullopt;
      }
      default: return std::nullopt;
    }
  }

  // One condition text (the disjunction of its true pieces).
  std::optional<std::string> condition(const Expr& e, bool holds) {
    auto p = pieces(e);
    if (!p) return std::nullopt;
    std::string out;
    for (const Piece& q : *p) {
      std::string one = conj(q.condition, holds ? q.text : "not " + q.text);
      out += (out.empty() ? "" : " or ") + ("(" + one + ")");
    }
    return out;
  }
};

std::string tuple(const std::vector<std::string>& names, bool prefix) {
  std::string s = "[";
  for (std::size_t i = 0; i < names.size(); ++i)
    s += (i ? ", " : "") + (prefix ? psl::isl_identifier(names[i]) : names[i]);
  return s + "]";
}

std::vector<std::string> domain_vars(const IslDomain& d) {
  std::vector<std::string> vars = d.dims;
  for (const auto& l : d.loops) vars.push_back(l.variable);
  return vars;
}

// Constraints of the domain: process set, loop ranges (with steps), branch conditions.
std::optional<std::string> domain_constraints(const IslDomain& d, const psl::Expr* process_constraint, Writer& w) {
  std::string out;
  if (process_constraint) {
    auto c = w.condition(*process_constraint, true);
    if (!c) return std::nullopt;
    out = *c;
  }
  for (const auto& l : d.loops) {
    auto first = w.pieces(*l.first);
    auto last = w.pieces(*l.last);
    if (!first || !last || first->size() != 1 || last->size() != 1 || !(*first)[0].condition.empty() ||
        !(*last)[0].condition.empty())
      return std::nullopt;
    std::string v = psl::isl_identifier(l.variable);
    std::string c = (*first)[0].text + " <= " + v + " <= " + (*last)[0].text;
    if (l.step) {
      auto step = w.pieces(*l.step);
      if (!step || step->size() != 1) return std::nullopt;
      c += " and (" + v + " - " + (*first)[0].text + ") mod " + (*step)[0].text + " = 0";
    }
    out = conj(out, c);
  }
  for (const auto& c : d.conditions) {
    auto t = w.condition(*c.condition, c.holds);
    if (!t) return std::nullopt;
    out = conj(out, *t);
  }
  return out;
}

std::string with_params(const std::vector<std::string>& params, const std::string& body) {
  return tuple(params, true) + " -> " + body;
}

}  // namespace

std::string domain_text(const IslDomain& domain, const psl::Expr* process_constraint, const IslResolver& resolve) {
  std::vector<std::string> params;
  Writer w{resolve, params};
  auto c = domain_constraints(domain, process_constraint, w);
  if (!c) return "";
  return with_params(params, "{ " + tuple(domain_vars(domain), true) + (c->empty() ? "" : " : " + *c) + " }");
}

std::string message_relation(const IslDomain& domain, const psl::Expr* process_constraint,
                             const std::vector<psl::ExprPtr>& peer, const psl::Expr* tag, bool is_send,
                             const IslResolver& resolve) {
  std::vector<std::string> params;
  Writer w{resolve, params};
  auto c = domain_constraints(domain, process_constraint, w);
  if (!c || peer.size() != domain.dims.size()) return "";
  std::vector<Pieces> parts;
  for (const auto& e : peer) {
    auto p = w.pieces(*e);
    if (!p) return "";
    parts.push_back(*p);
  }
  Pieces tag_pieces{{"", "0"}};
  if (tag) {
    auto t = w.pieces(*tag);
    if (!t) return "";
    tag_pieces = *t;
  }
  parts.push_back(tag_pieces);
  // The peer is a process: the process constraint over the peer's names.
  std::string peer_in_set;
  std::vector<std::string> peer_names;
  for (std::size_t k = 0; k < domain.dims.size(); ++k) peer_names.push_back("__peer" + std::to_string(k));
  if (process_constraint) {
    IslResolver renamed = [&](const std::string& n) -> IslName {
      if (std::find(domain.dims.begin(), domain.dims.end(), n) != domain.dims.end())
        return {IslName::Kind::Variable, nullptr};
      return resolve(n);
    };
    Writer w2{renamed, params};
    auto pc = w2.condition(*process_constraint, true);
    if (!pc) return "";
    peer_in_set = *pc;
    for (std::size_t k = 0; k < domain.dims.size(); ++k) {
      const std::string from = psl::isl_identifier(domain.dims[k]);
      std::string out;
      for (std::size_t pos = 0; pos < peer_in_set.size();) {
        bool at_name = peer_in_set.compare(pos, from.size(), from) == 0 &&
                       (pos == 0 || !(std::isalnum(static_cast<unsigned char>(peer_in_set[pos - 1])) ||
                                      peer_in_set[pos - 1] == '_')) &&
                       (pos + from.size() == peer_in_set.size() ||
                        !(std::isalnum(static_cast<unsigned char>(peer_in_set[pos + from.size()])) ||
                          peer_in_set[pos + from.size()] == '_'));
        if (at_name) {
          out += peer_names[k];
          pos += from.size();
        } else {
          out += peer_in_set[pos++];
        }
      }
      peer_in_set = out;
    }
  }
  std::vector<std::string> own;
  for (const std::string& d : domain.dims) own.push_back(psl::isl_identifier(d));
  std::vector<std::string> loops;
  for (const auto& l : domain.loops) loops.push_back(psl::isl_identifier(l.variable));
  auto join = [](const std::vector<std::string>& a, const std::vector<std::string>& b, const std::string& extra) {
    std::string s = "[";
    bool first = true;
    for (const auto* v : {&a, &b})
      for (const std::string& x : *v) {
        s += (first ? "" : ", ") + x;
        first = false;
      }
    if (!extra.empty()) s += (first ? "" : ", ") + extra;
    return s + "]";
  };
  const std::string sender = is_send ? join(own, loops, "") : join(peer_names, loops, "");
  const std::string receiver = is_send ? join(peer_names, loops, "__tag") : join(own, loops, "__tag");
  auto combos = w.combine(parts, [](const std::vector<std::string>& t) {
    std::string s;
    for (std::size_t i = 0; i < t.size(); ++i) s += (i ? "\x1f" : "") + t[i];
    return s;
  });
  if (!combos) return "";
  std::string body;
  for (const Piece& p : *combos) {
    std::vector<std::string> values;
    std::size_t start = 0;
    for (std::size_t pos; (pos = p.text.find('\x1f', start)) != std::string::npos; start = pos + 1)
      values.push_back(p.text.substr(start, pos - start));
    values.push_back(p.text.substr(start));
    std::string eqs;
    for (std::size_t k = 0; k < peer_names.size(); ++k) eqs = conj(eqs, peer_names[k] + " = " + values[k]);
    eqs = conj(eqs, "__tag = " + values.back());
    std::string cond = conj(conj(conj(*c, p.condition), eqs), peer_in_set);
    body += (body.empty() ? "" : "; ") + sender + " -> " + receiver + " : " + cond;
  }
  return with_params(params, "{ " + body + " }");
}

std::optional<std::string> isl_expression(const psl::Expr& e, std::vector<std::string>& params) {
  IslResolver none = [](const std::string&) { return IslName{IslName::Kind::Parameter, nullptr}; };
  Writer w{none, params, false};
  auto p = w.pieces(e);
  if (!p || p->size() != 1) return std::nullopt;
  return (*p)[0].text;
}

}  // namespace poems::psl
