// Internal: validation of symbolic integer sets and maps with isl.
#pragma once

#include <map>
#include <string>

#include "poems/psl/ast.h"
#include "poems/psl/diagnostics.h"

struct isl_ctx;

namespace poems::psl {

// Writes an expression in isl notation; names other than `dims` become isl
// parameters (collected into `params`). Returns false after reporting a
// construct isl cannot represent (non-affine products, real division, ?:).
bool to_isl(const Expr& e, std::string& out, std::vector<std::string>& params, DiagnosticEngine& diags);

class IslChecker {
 public:
  explicit IslChecker(DiagnosticEngine& diags);
  ~IslChecker();
  IslChecker(const IslChecker&) = delete;
  IslChecker& operator=(const IslChecker&) = delete;

  // Checks a process set; `defaults` are parameter values known statically,
  // used to report an unbounded or empty set. Returns the isl text or "".
  std::string check_set(const IntegerSet& set, const std::map<std::string, long>& defaults, const char* what);
  // Checks a peer map whose domain must have `arity` coordinates.
  std::string check_map(const IntegerMap& map, std::size_t arity);

 private:
  // Reports at `at` when isl stopped on its operation budget (and clears it).
  bool over_budget(SourceLocation at, const char* what);

  DiagnosticEngine& diags_;
  ::isl_ctx* ctx_;
};

}  // namespace poems::psl
