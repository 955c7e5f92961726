// Internal: an isl context that reports errors through return values
// (no stderr, no abort), freed with its scope.
#pragma once

#include <isl/ctx.h>
#include <isl/options.h>

namespace poems::taskgraph {

struct IslContext {
  isl_ctx* ctx = isl_ctx_alloc();
  IslContext() { isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE); }
  ~IslContext() { isl_ctx_free(ctx); }
  IslContext(const IslContext&) = delete;
  IslContext& operator=(const IslContext&) = delete;
};

}  // namespace poems::taskgraph
