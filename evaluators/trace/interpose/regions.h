// The MPI functions `poems trace` records, each an OTF2 region (X-macro:
// name, OTF2 region role; evaluators/direct/bindings/generate.py writes the
// list). Region ids are the positions in this list on every rank, so no
// unification is needed for them.
#pragma once

#include "generated/regions.inc"  // POEMS_TRACE_REGIONS(X), from the MPI surface's description

namespace poems::trace::interpose {

enum class Region : unsigned {
#define POEMS_TRACE_REGION_ID(name, role) name,
  POEMS_TRACE_REGIONS(POEMS_TRACE_REGION_ID)
#undef POEMS_TRACE_REGION_ID
      kCount
};

}  // namespace poems::trace::interpose
