// Internal: an isl context that reports errors through return values
// (no stderr, no abort), freed with its scope.
#pragma once

#include <isl/ctx.h>
#include <isl/options.h>

#include "poems/psl/frontend.h"

namespace poems::taskgraph {

// Work is bounded by isl's own operation count (psl's FrontendLimits, `--limit
// isl-operations=N`), reset by each caller for each question it asks.
struct IslContext {
  isl_ctx* ctx = isl_ctx_alloc();
  IslContext() {
    isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE);
    isl_ctx_set_max_operations(ctx, psl::default_frontend_limits().max_isl_operations);
  }
  bool over_budget() const { return isl_ctx_last_error(ctx) == isl_error_quota; }
  ~IslContext() { isl_ctx_free(ctx); }
  IslContext(const IslContext&) = delete;
  IslContext& operator=(const IslContext&) = delete;
};

}  // namespace poems::taskgraph
