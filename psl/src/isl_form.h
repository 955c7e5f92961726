// Internal: the symbolic (isl) forms of static nodes: instance sets over
// process coordinates and enclosing loop variables, and message relations.
// Lets inside the task graph are inlined; a conditional (?:) becomes pieces
// of a union, so a wavefront's octant directions stay exact.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "poems/psl/ast.h"

namespace poems::psl {

struct IslName {
  enum class Kind { Parameter, Variable, Let };
  Kind kind;
  const psl::Expr* definition;  // Let
};
using IslResolver = std::function<IslName(const std::string&)>;

struct IslDomain {
  struct Loop {
    std::string variable;
    const psl::Expr* first;
    const psl::Expr* last;
    const psl::Expr* step;
  };
  struct Condition {
    const psl::Expr* condition;
    bool holds;
  };
  std::vector<std::string> dims;  // process coordinates
  std::vector<Loop> loops;
  std::vector<Condition> conditions;
};

// isl text of the instances of a node in `domain`; "" when not representable.
std::string domain_text(const IslDomain& domain, const psl::Expr* process_constraint, const IslResolver& resolve);
// The messages of a send or receive node as an isl map written from the
// sender's side: [sender coordinates, loop variables] -> [receiver
// coordinates, loop variables, tag]. A send and the receive that matches it
// produce the same pairs, so matching is map equality. "" when not representable.
std::string message_relation(const IslDomain& domain, const psl::Expr* process_constraint,
                             const std::vector<psl::ExprPtr>& peer, const psl::Expr* tag, bool is_send,
                             const IslResolver& resolve);
// An expression alone, in isl notation without the '_' prefix (for display).
std::optional<std::string> isl_expression(const psl::Expr& e, std::vector<std::string>& params);

}  // namespace poems::psl
