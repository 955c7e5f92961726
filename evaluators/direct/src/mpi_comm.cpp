// Groups, communicators and process topologies (MPI 3.1 chapters 6 and 7).
// A new communicator costs what MPI libraries spend on it: an allgather of
// (color, key) for a split, an allreduce of the context id otherwise.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "api.h"
#include "attributes.h"
#include "poems/components/network.h"

namespace poems::direct::detail {

namespace {

using taskgraph::CollectiveOp;

void wait_part(Runtime& rt, std::uint32_t request, const char* call) {
  if (request == kNoRequest) return;
  rt.wait_for({&request, 1}, call);
  rt.free_request(request);
}

int my_rank(Runtime& rt, const Comm& c) { return Communicators::rank(c, rt.current().world); }

svector<std::uint32_t> members_of(Runtime& rt, const Comm& c) {
  svector<std::uint32_t> m;
  for (int r = 0; r < c.size(); ++r) m.push_back(Communicators::world_rank(c, r, rt.current().world));
  return m;
}

// Every member of `comm` contributes (color, key); members of one color form
// a communicator ordered by key, then by rank. Ranks with MPI_UNDEFINED get
// MPI_COMM_NULL. `prepare` may set a topology on each new communicator.
MPI_Comm split(Runtime& rt, const char* call, MPI_Comm comm, int color, int key,
               const std::function<void(Comm&)>& prepare = {}) {
  const Comm& c = check_comm(rt, call, comm);
  if (color < 0 && color != MPI_UNDEFINED)
    rt.fail(call, "color " + std::to_string(color) + " is negative and not MPI_UNDEFINED (MPI_ERR_ARG)");
  const int me = my_rank(rt, c);
  std::uint32_t request;
  Collective& col = rt.start_collective(comm, CollectiveOp::Allgather, 8, 0, call, true, request);
  col.split.resize(static_cast<std::size_t>(c.size()));
  col.split[static_cast<std::size_t>(me)] = {color, key};
  ++col.contributed;
  wait_part(rt, request, call);
  MPI_Comm out = MPI_COMM_NULL;
  if (color != MPI_UNDEFINED) {
    if (auto it = col.created.find(color); it != col.created.end()) {
      out = it->second;
    } else {
      std::vector<int> ranks;
      for (int r = 0; r < c.size(); ++r)
        if (col.split[static_cast<std::size_t>(r)].first == color) ranks.push_back(r);
      std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
        return col.split[static_cast<std::size_t>(a)].second < col.split[static_cast<std::size_t>(b)].second;
      });
      svector<std::uint32_t> members;
      for (int r : ranks) members.push_back(Communicators::world_rank(c, r, rt.current().world));
      out = col.created[color] = rt.comms().add(std::move(members));
      if (prepare) prepare(rt.comms().at(out));
    }
  }
  rt.collectives().finish(rt.comms().at(comm), col);
  return out;
}

// A collective creation over `comm` whose members (in order) the first rank
// to enter decides; ranks not among them get MPI_COMM_NULL. `members` is a
// copy: the rank waits in the collective, and meanwhile other ranks' calls
// may move what it was read from (a group's members: the groups' table grows).
MPI_Comm create_from(Runtime& rt, const char* call, MPI_Comm comm, svector<std::uint32_t> members,
                     const std::function<void(Comm&)>& prepare = {}) {
  std::uint32_t request;
  Collective& col = rt.start_collective(comm, CollectiveOp::Allreduce, 4, 0, call, true, request);
  wait_part(rt, request, call);
  MPI_Comm out = MPI_COMM_NULL;
  const bool member = std::find(members.begin(), members.end(), rt.current().world) != members.end();
  if (auto it = col.created.find(0); it != col.created.end()) {
    out = it->second;
  } else if (!members.empty()) {
    out = col.created[0] = rt.comms().add(members);
    if (prepare) prepare(rt.comms().at(out));
  }
  rt.collectives().finish(rt.comms().at(comm), col);
  return member ? out : MPI_COMM_NULL;
}

const Comm& check_cart(Runtime& rt, const char* call, MPI_Comm comm) {
  const Comm& c = check_comm(rt, call, comm);
  if (c.cart.dims.empty() && c.topology != MPI_CART)
    rt.fail(call, "the communicator has no Cartesian topology (MPI_ERR_TOPOLOGY)");
  return c;
}

void coords_of(const Comm& c, int rank, int* coords) {
  const int n = static_cast<int>(c.cart.dims.size());
  for (int d = n - 1; d >= 0; --d) {
    const int size = c.cart.dims[static_cast<std::size_t>(d)];
    coords[d] = rank % size;
    rank /= size;
  }
}

// The rank at `coords` (periodic dimensions wrap), or MPI_PROC_NULL outside.
int rank_at(const Comm& c, const int* coords) {
  int rank = 0;
  for (std::size_t d = 0; d < c.cart.dims.size(); ++d) {
    const int size = c.cart.dims[d];
    int x = coords[d];
    if (x < 0 || x >= size) {
      if (!c.cart.periods[d]) return MPI_PROC_NULL;
      x = ((x % size) + size) % size;
    }
    rank = rank * size + x;
  }
  return rank;
}

}  // namespace

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

extern "C" {

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  return mpi_call("MPI_Comm_rank", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Comm_rank", comm);
    *rank = Communicators::rank(c, rt.current().world);
    return MPI_SUCCESS;
  });
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  return mpi_call("MPI_Comm_size", [&](Runtime& rt) {
    *size = check_comm(rt, "MPI_Comm_size", comm).size();
    return MPI_SUCCESS;
  });
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return mpi_call("MPI_Comm_split", [&](Runtime& rt) {
    *newcomm = split(rt, "MPI_Comm_split", comm, color, key);
    return MPI_SUCCESS;
  });
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info, MPI_Comm* newcomm) {
  return mpi_call("MPI_Comm_split_type", [&](Runtime& rt) {
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
      rt.fail("MPI_Comm_split_type", "split type " + std::to_string(split_type) +
                                         " is neither MPI_COMM_TYPE_SHARED nor MPI_UNDEFINED (MPI_ERR_ARG)");
    // The ranks of one simulated node (docs/network.md: the machine's mapping).
    int color = MPI_UNDEFINED;
    if (split_type != MPI_UNDEFINED) {
      const std::uint32_t world = rt.current().world;
      const auto& network = rt.options().sim.network;
      color = network && !network->flat() ? static_cast<int>(network->place(rt.options().ranks).node_of[world])
                                          : static_cast<int>(world / rt.options().ranks_per_node);
    }
    *newcomm = split(rt, "MPI_Comm_split_type", comm, color, key);
    return MPI_SUCCESS;
  });
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return mpi_call("MPI_Comm_dup", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Comm_dup", comm);
    const CartTopology cart = c.cart;
    const int topology = c.topology;
    *newcomm = create_from(rt, "MPI_Comm_dup", comm, members_of(rt, c), [&](Comm& n) {
      n.cart = cart;
      n.topology = topology;
      n.graph_index = rt.comms().at(comm).graph_index;
      n.graph_edges = rt.comms().at(comm).graph_edges;
      n.neighbors = rt.comms().at(comm).neighbors;
    });
    copy_attributes(rt, ObjectTables::kCommAttr, comm, *newcomm);
    return MPI_SUCCESS;
  });
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info, MPI_Comm* newcomm) { return MPI_Comm_dup(comm, newcomm); }

// Duplicates at once (a blocking duplicate); the request is already complete.
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  const int rc = MPI_Comm_dup(comm, newcomm);
  *request = MPI_REQUEST_NULL;
  return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return mpi_call("MPI_Comm_create", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Comm_create", comm);
    const Group& g = check_group(rt, "MPI_Comm_create", group);
    for (std::uint32_t w : g.members)
      if (Communicators::rank(c, w) < 0)
        rt.fail("MPI_Comm_create", "the group holds world rank " + std::to_string(w) +
                                       ", which is not in the communicator (MPI_ERR_GROUP)");
    *newcomm = create_from(rt, "MPI_Comm_create", comm, g.members);
    return MPI_SUCCESS;
  });
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return mpi_call("MPI_Comm_create_group", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Comm_create_group", comm);
    const Group& g = check_group(rt, "MPI_Comm_create_group", group);
    check_tag(rt, "MPI_Comm_create_group", tag, false);
    const std::uint32_t me = rt.current().world;
    if (std::find(g.members.begin(), g.members.end(), me) == g.members.end()) {
      *newcomm = MPI_COMM_NULL;  // MPI-3.1 6.4.2: a local operation for a rank outside the group
      return MPI_SUCCESS;
    }
    for (std::uint32_t w : g.members)
      if (Communicators::rank(c, w) < 0)
        rt.fail("MPI_Comm_create_group", "the group holds world rank " + std::to_string(w) +
                                             ", which is not in the communicator (MPI_ERR_GROUP)");
    // Only the group's members call: the i-th call of a member with this
    // (communicator, tag, group) joins the i-th communicator made for it.
    const MPI_Comm made = rt.comms().group_comm(comm, tag, g.members, rt.current().world);
    // Its creation costs an allreduce among the members, on the new communicator.
    std::uint32_t request;
    Collective& col = rt.start_collective(made, CollectiveOp::Allreduce, 4, 0, "MPI_Comm_create_group", true, request);
    wait_part(rt, request, "MPI_Comm_create_group");
    rt.collectives().finish(rt.comms().at(made), col);
    *newcomm = made;
    return MPI_SUCCESS;
  });
}

int MPI_Comm_free(MPI_Comm* comm) {
  return mpi_call("MPI_Comm_free", [&](Runtime& rt) {
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
      rt.fail("MPI_Comm_free", "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed (MPI_ERR_COMM)");
    check_comm(rt, "MPI_Comm_free", *comm);
    delete_attributes(rt, ObjectTables::kCommAttr, *comm);
    *comm = MPI_COMM_NULL;  // communicators are small: their records live until the run ends
    return MPI_SUCCESS;
  });
}

int MPI_Comm_disconnect(MPI_Comm* comm) { return MPI_Comm_free(comm); }

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  return mpi_call("MPI_Comm_compare", [&](Runtime& rt) {
    const Comm& a = check_comm(rt, "MPI_Comm_compare", comm1);
    const Comm& b = check_comm(rt, "MPI_Comm_compare", comm2);
    if (comm1 == comm2) {
      *result = MPI_IDENT;
      return MPI_SUCCESS;
    }
    svector<std::uint32_t> ma = members_of(rt, a), mb = members_of(rt, b);
    if (ma == mb) {
      *result = MPI_CONGRUENT;
      return MPI_SUCCESS;
    }
    std::sort(ma.begin(), ma.end());
    std::sort(mb.begin(), mb.end());
    *result = ma == mb ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
  });
}

int MPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  return mpi_call("MPI_Comm_test_inter", [&](Runtime& rt) {
    check_comm(rt, "MPI_Comm_test_inter", comm);
    *flag = 0;
    return MPI_SUCCESS;
  });
}

int MPI_Comm_set_name(MPI_Comm comm, const char* name) {
  return mpi_call("MPI_Comm_set_name", [&](Runtime& rt) {
    check_comm(rt, "MPI_Comm_set_name", comm).name = sstring(name).substr(0, MPI_MAX_OBJECT_NAME - 1);
    return MPI_SUCCESS;
  });
}

int MPI_Comm_get_name(MPI_Comm comm, char* name, int* resultlen) {
  return mpi_call("MPI_Comm_get_name", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Comm_get_name", comm);
    *resultlen = std::snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c.name.c_str());
    return MPI_SUCCESS;
  });
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  return mpi_call("MPI_Comm_group", [&](Runtime& rt) {
    *group = rt.comms().add_group(members_of(rt, check_comm(rt, "MPI_Comm_group", comm)));
    return MPI_SUCCESS;
  });
}

// ---- groups ----------------------------------------------------------------------------------

int MPI_Group_size(MPI_Group group, int* size) {
  return mpi_call("MPI_Group_size", [&](Runtime& rt) {
    *size = static_cast<int>(check_group(rt, "MPI_Group_size", group).members.size());
    return MPI_SUCCESS;
  });
}

int MPI_Group_rank(MPI_Group group, int* rank) {
  return mpi_call("MPI_Group_rank", [&](Runtime& rt) {
    const Group& g = check_group(rt, "MPI_Group_rank", group);
    auto it = std::find(g.members.begin(), g.members.end(), rt.current().world);
    *rank = it == g.members.end() ? MPI_UNDEFINED : static_cast<int>(it - g.members.begin());
    return MPI_SUCCESS;
  });
}

int MPI_Group_free(MPI_Group* group) {
  return mpi_call("MPI_Group_free", [&](Runtime& rt) {
    Group& g = check_group(rt, "MPI_Group_free", *group);
    if (*group != MPI_GROUP_EMPTY) {
      g.used = false;
      g.members.clear();
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
  });
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return mpi_call("MPI_Group_incl", [&](Runtime& rt) {
    const svector<std::uint32_t> from = check_group(rt, "MPI_Group_incl", group).members;
    check_count(rt, "MPI_Group_incl", n);
    svector<std::uint32_t> m;
    for (int i = 0; i < n; ++i) {
      if (ranks[i] < 0 || static_cast<std::size_t>(ranks[i]) >= from.size())
        rt.fail("MPI_Group_incl", "rank " + std::to_string(ranks[i]) + " is not in the group (MPI_ERR_RANK)");
      m.push_back(from[static_cast<std::size_t>(ranks[i])]);
    }
    *newgroup = rt.comms().add_group(std::move(m));
    return MPI_SUCCESS;
  });
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return mpi_call("MPI_Group_excl", [&](Runtime& rt) {
    const svector<std::uint32_t> from = check_group(rt, "MPI_Group_excl", group).members;
    check_count(rt, "MPI_Group_excl", n);
    std::vector<bool> out(from.size(), false);
    for (int i = 0; i < n; ++i) {
      if (ranks[i] < 0 || static_cast<std::size_t>(ranks[i]) >= from.size())
        rt.fail("MPI_Group_excl", "rank " + std::to_string(ranks[i]) + " is not in the group (MPI_ERR_RANK)");
      out[static_cast<std::size_t>(ranks[i])] = true;
    }
    svector<std::uint32_t> m;
    for (std::size_t i = 0; i < from.size(); ++i)
      if (!out[i]) m.push_back(from[i]);
    *newgroup = rt.comms().add_group(std::move(m));
    return MPI_SUCCESS;
  });
}

namespace {
std::vector<int> expand_ranges(Runtime& rt, const char* call, int n, int ranges[][3], std::size_t size) {
  std::vector<int> r;
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) rt.fail(call, "a range has stride 0 (MPI_ERR_ARG)");
    for (int x = first; stride > 0 ? x <= last : x >= last; x += stride) {
      if (x < 0 || static_cast<std::size_t>(x) >= size)
        rt.fail(call, "rank " + std::to_string(x) + " is not in the group (MPI_ERR_RANK)");
      r.push_back(x);
    }
  }
  return r;
}
}  // namespace

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  std::vector<int> r;
  const int rc = mpi_call("MPI_Group_range_incl", [&](Runtime& rt) {
    r = expand_ranges(rt, "MPI_Group_range_incl", n, ranges,
                      check_group(rt, "MPI_Group_range_incl", group).members.size());
    return MPI_SUCCESS;
  });
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Group_incl(group, static_cast<int>(r.size()), r.data(), newgroup);
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  std::vector<int> r;
  const int rc = mpi_call("MPI_Group_range_excl", [&](Runtime& rt) {
    r = expand_ranges(rt, "MPI_Group_range_excl", n, ranges,
                      check_group(rt, "MPI_Group_range_excl", group).members.size());
    return MPI_SUCCESS;
  });
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Group_excl(group, static_cast<int>(r.size()), r.data(), newgroup);
}

namespace {
int set_op(const char* call, MPI_Group a, MPI_Group b, MPI_Group* out, int which) {
  return mpi_call(call, [&](Runtime& rt) {
    const svector<std::uint32_t> ma = check_group(rt, call, a).members;
    const svector<std::uint32_t> mb = check_group(rt, call, b).members;
    auto in = [](const svector<std::uint32_t>& m, std::uint32_t w) {
      return std::find(m.begin(), m.end(), w) != m.end();
    };
    svector<std::uint32_t> m;
    if (which == 0) {  // union: a, then b's not in a
      m = ma;
      for (std::uint32_t w : mb)
        if (!in(ma, w)) m.push_back(w);
    } else if (which == 1) {  // intersection, in a's order
      for (std::uint32_t w : ma)
        if (in(mb, w)) m.push_back(w);
    } else {  // difference
      for (std::uint32_t w : ma)
        if (!in(mb, w)) m.push_back(w);
    }
    *out = rt.comms().add_group(std::move(m));
    return MPI_SUCCESS;
  });
}
}  // namespace

int MPI_Group_union(MPI_Group a, MPI_Group b, MPI_Group* newgroup) {
  return set_op("MPI_Group_union", a, b, newgroup, 0);
}
int MPI_Group_intersection(MPI_Group a, MPI_Group b, MPI_Group* newgroup) {
  return set_op("MPI_Group_intersection", a, b, newgroup, 1);
}
int MPI_Group_difference(MPI_Group a, MPI_Group b, MPI_Group* newgroup) {
  return set_op("MPI_Group_difference", a, b, newgroup, 2);
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
  return mpi_call("MPI_Group_translate_ranks", [&](Runtime& rt) {
    const svector<std::uint32_t> a = check_group(rt, "MPI_Group_translate_ranks", group1).members;
    const svector<std::uint32_t> b = check_group(rt, "MPI_Group_translate_ranks", group2).members;
    for (int i = 0; i < n; ++i) {
      if (ranks1[i] == MPI_PROC_NULL) {
        ranks2[i] = MPI_PROC_NULL;
        continue;
      }
      if (ranks1[i] < 0 || static_cast<std::size_t>(ranks1[i]) >= a.size())
        rt.fail("MPI_Group_translate_ranks", "rank " + std::to_string(ranks1[i]) + " is not in group1 (MPI_ERR_RANK)");
      auto it = std::find(b.begin(), b.end(), a[static_cast<std::size_t>(ranks1[i])]);
      ranks2[i] = it == b.end() ? MPI_UNDEFINED : static_cast<int>(it - b.begin());
    }
    return MPI_SUCCESS;
  });
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  return mpi_call("MPI_Group_compare", [&](Runtime& rt) {
    svector<std::uint32_t> a = check_group(rt, "MPI_Group_compare", group1).members;
    svector<std::uint32_t> b = check_group(rt, "MPI_Group_compare", group2).members;
    if (a == b) {
      *result = MPI_IDENT;
      return MPI_SUCCESS;
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    *result = a == b ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
  });
}

// ---- Cartesian topologies ----------------------------------------------------------------

int MPI_Dims_create(int nnodes, int ndims, int dims[]) {
  // Open MPI's assignment: the prime factors of the free processes, largest
  // first, each to the free dimension with the smallest product; then the
  // free dimensions in non-increasing order.
  if (nnodes <= 0 || ndims < 0) return MPI_ERR_DIMS;
  int fixed = 1, free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) return MPI_ERR_DIMS;
    if (dims[i] > 0)
      fixed *= dims[i];
    else
      ++free_dims;
  }
  if (fixed == 0 || nnodes % fixed != 0) return MPI_ERR_DIMS;
  int rest = nnodes / fixed;
  if (free_dims == 0) return rest == 1 ? MPI_SUCCESS : MPI_ERR_DIMS;
  std::vector<int> factors;
  for (int f = 2; f * f <= rest; ++f)
    while (rest % f == 0) {
      factors.push_back(f);
      rest /= f;
    }
  if (rest > 1) factors.push_back(rest);
  std::vector<int> bins(static_cast<std::size_t>(free_dims), 1);
  for (auto it = factors.rbegin(); it != factors.rend(); ++it) *std::min_element(bins.begin(), bins.end()) *= *it;
  std::sort(bins.begin(), bins.end(), std::greater<int>());
  std::size_t b = 0;
  for (int i = 0; i < ndims; ++i)
    if (dims[i] == 0) dims[i] = bins[b++];
  return MPI_SUCCESS;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int, MPI_Comm* comm_cart) {
  return mpi_call("MPI_Cart_create", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Cart_create", comm_old);
    if (ndims < 0) rt.fail("MPI_Cart_create", "ndims " + std::to_string(ndims) + " is negative (MPI_ERR_DIMS)");
    long long total = 1;
    CartTopology cart;
    for (int i = 0; i < ndims; ++i) {
      if (dims[i] <= 0)
        rt.fail("MPI_Cart_create",
                "dimension " + std::to_string(i) + " is " + std::to_string(dims[i]) + " (MPI_ERR_DIMS)");
      total *= dims[i];
      cart.dims.push_back(dims[i]);
      cart.periods.push_back(periods[i] != 0);
    }
    if (total > c.size())
      rt.fail("MPI_Cart_create", "the grid needs " + std::to_string(total) + " ranks, the communicator has " +
                                     std::to_string(c.size()) + " (MPI_ERR_DIMS)");
    svector<std::uint32_t> members;  // no reordering: the first `total` ranks
    for (int r = 0; r < static_cast<int>(total); ++r)
      members.push_back(Communicators::world_rank(c, r, rt.current().world));
    *comm_cart = create_from(rt, "MPI_Cart_create", comm_old, members, [&](Comm& n) {
      n.cart = cart;
      n.topology = MPI_CART;
    });
    return MPI_SUCCESS;
  });
}

int MPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  return mpi_call("MPI_Cartdim_get", [&](Runtime& rt) {
    *ndims = static_cast<int>(check_cart(rt, "MPI_Cartdim_get", comm).cart.dims.size());
    return MPI_SUCCESS;
  });
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  return mpi_call("MPI_Cart_get", [&](Runtime& rt) {
    const Comm& c = check_cart(rt, "MPI_Cart_get", comm);
    const int n = std::min(maxdims, static_cast<int>(c.cart.dims.size()));
    std::vector<int> xyz(c.cart.dims.size() + 1);
    coords_of(c, Communicators::rank(c, rt.current().world), xyz.data());
    for (int i = 0; i < n; ++i) {
      dims[i] = c.cart.dims[static_cast<std::size_t>(i)];
      periods[i] = c.cart.periods[static_cast<std::size_t>(i)];
      coords[i] = xyz[static_cast<std::size_t>(i)];
    }
    return MPI_SUCCESS;
  });
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  return mpi_call("MPI_Cart_rank", [&](Runtime& rt) {
    const Comm& c = check_cart(rt, "MPI_Cart_rank", comm);
    *rank = rank_at(c, coords);
    if (*rank == MPI_PROC_NULL)
      rt.fail("MPI_Cart_rank", "the coordinates lie outside a non-periodic dimension (MPI_ERR_ARG)");
    return MPI_SUCCESS;
  });
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  return mpi_call("MPI_Cart_coords", [&](Runtime& rt) {
    const Comm& c = check_cart(rt, "MPI_Cart_coords", comm);
    if (rank < 0 || rank >= c.size())
      rt.fail("MPI_Cart_coords", "rank " + std::to_string(rank) + " is not in the communicator (MPI_ERR_RANK)");
    std::vector<int> xyz(c.cart.dims.size() + 1);
    coords_of(c, rank, xyz.data());
    for (int i = 0; i < std::min(maxdims, static_cast<int>(c.cart.dims.size())); ++i)
      coords[i] = xyz[static_cast<std::size_t>(i)];
    return MPI_SUCCESS;
  });
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  return mpi_call("MPI_Cart_shift", [&](Runtime& rt) {
    const Comm& c = check_cart(rt, "MPI_Cart_shift", comm);
    if (direction < 0 || static_cast<std::size_t>(direction) >= c.cart.dims.size())
      rt.fail("MPI_Cart_shift", "direction " + std::to_string(direction) + " is not a dimension (MPI_ERR_DIMS)");
    std::vector<int> xyz(c.cart.dims.size() + 1);
    coords_of(c, Communicators::rank(c, rt.current().world), xyz.data());
    const int here = xyz[static_cast<std::size_t>(direction)];
    xyz[static_cast<std::size_t>(direction)] = here + disp;
    *rank_dest = rank_at(c, xyz.data());
    xyz[static_cast<std::size_t>(direction)] = here - disp;
    *rank_source = rank_at(c, xyz.data());
    return MPI_SUCCESS;
  });
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return mpi_call("MPI_Cart_sub", [&](Runtime& rt) {
    const Comm& c = check_cart(rt, "MPI_Cart_sub", comm);
    const CartTopology cart = c.cart;
    std::vector<int> xyz(cart.dims.size() + 1);
    coords_of(c, Communicators::rank(c, rt.current().world), xyz.data());
    // Ranks with the same coordinates in the dropped dimensions form a new grid.
    int color = 0, key = 0;
    CartTopology sub;
    for (std::size_t d = 0; d < cart.dims.size(); ++d) {
      if (remain_dims[d]) {
        key = key * cart.dims[d] + xyz[d];
        sub.dims.push_back(cart.dims[d]);
        sub.periods.push_back(cart.periods[d]);
      } else {
        color = color * cart.dims[d] + xyz[d];
      }
    }
    *newcomm = split(rt, "MPI_Cart_sub", comm, color, key, [&](Comm& n) {
      n.cart = sub;
      n.topology = MPI_CART;
    });
    return MPI_SUCCESS;
  });
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int[], int* newrank) {
  return mpi_call("MPI_Cart_map", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Cart_map", comm);
    long long total = 1;
    for (int i = 0; i < ndims; ++i) total *= dims[i];
    const int me = Communicators::rank(c, rt.current().world);
    *newrank = me < total ? me : MPI_UNDEFINED;
    return MPI_SUCCESS;
  });
}

int MPI_Topo_test(MPI_Comm comm, int* status) {
  return mpi_call("MPI_Topo_test", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Topo_test", comm);
    *status = c.topology != 0 ? c.topology : MPI_UNDEFINED;
    return MPI_SUCCESS;
  });
}

// ---- graph topologies ------------------------------------------------------------------------

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int, MPI_Comm* comm_graph) {
  return mpi_call("MPI_Graph_create", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Graph_create", comm_old);
    if (nnodes < 0 || nnodes > c.size())
      rt.fail("MPI_Graph_create",
              "nnodes " + std::to_string(nnodes) + " is not in 0.." + std::to_string(c.size()) + " (MPI_ERR_ARG)");
    svector<int> idx(index, index + nnodes), e(edges, edges + (nnodes > 0 ? index[nnodes - 1] : 0));
    svector<std::uint32_t> members;
    for (int r = 0; r < nnodes; ++r) members.push_back(Communicators::world_rank(c, r, rt.current().world));
    *comm_graph = create_from(rt, "MPI_Graph_create", comm_old, members, [&](Comm& n) {
      n.topology = MPI_GRAPH;
      n.graph_index = idx;
      n.graph_edges = e;
    });
    return MPI_SUCCESS;
  });
}

namespace {
const Comm& check_graph(Runtime& rt, const char* call, MPI_Comm comm) {
  const Comm& c = check_comm(rt, call, comm);
  if (c.topology != MPI_GRAPH) rt.fail(call, "the communicator has no graph topology (MPI_ERR_TOPOLOGY)");
  return c;
}
}  // namespace

int MPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  return mpi_call("MPI_Graphdims_get", [&](Runtime& rt) {
    const Comm& c = check_graph(rt, "MPI_Graphdims_get", comm);
    *nnodes = static_cast<int>(c.graph_index.size());
    *nedges = static_cast<int>(c.graph_edges.size());
    return MPI_SUCCESS;
  });
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  return mpi_call("MPI_Graph_get", [&](Runtime& rt) {
    const Comm& c = check_graph(rt, "MPI_Graph_get", comm);
    for (int i = 0; i < std::min(maxindex, static_cast<int>(c.graph_index.size())); ++i)
      index[i] = c.graph_index[static_cast<std::size_t>(i)];
    for (int i = 0; i < std::min(maxedges, static_cast<int>(c.graph_edges.size())); ++i)
      edges[i] = c.graph_edges[static_cast<std::size_t>(i)];
    return MPI_SUCCESS;
  });
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  return mpi_call("MPI_Graph_neighbors_count", [&](Runtime& rt) {
    const Comm& c = check_graph(rt, "MPI_Graph_neighbors_count", comm);
    if (rank < 0 || static_cast<std::size_t>(rank) >= c.graph_index.size())
      rt.fail("MPI_Graph_neighbors_count", "rank " + std::to_string(rank) + " is not a node (MPI_ERR_RANK)");
    *nneighbors = c.graph_index[static_cast<std::size_t>(rank)] -
                  (rank == 0 ? 0 : c.graph_index[static_cast<std::size_t>(rank) - 1]);
    return MPI_SUCCESS;
  });
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  return mpi_call("MPI_Graph_neighbors", [&](Runtime& rt) {
    const Comm& c = check_graph(rt, "MPI_Graph_neighbors", comm);
    if (rank < 0 || static_cast<std::size_t>(rank) >= c.graph_index.size())
      rt.fail("MPI_Graph_neighbors", "rank " + std::to_string(rank) + " is not a node (MPI_ERR_RANK)");
    const int first = rank == 0 ? 0 : c.graph_index[static_cast<std::size_t>(rank) - 1];
    const int last = c.graph_index[static_cast<std::size_t>(rank)];
    for (int i = first; i < last && i - first < maxneighbors; ++i)
      neighbors[i - first] = c.graph_edges[static_cast<std::size_t>(i)];
    return MPI_SUCCESS;
  });
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int[], const int[], int* newrank) {
  return mpi_call("MPI_Graph_map", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Graph_map", comm);
    const int me = Communicators::rank(c, rt.current().world);
    *newrank = me < nnodes ? me : MPI_UNDEFINED;
    return MPI_SUCCESS;
  });
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int[], int outdegree,
                                   const int destinations[], const int[], MPI_Info, int, MPI_Comm* comm_dist_graph) {
  return mpi_call("MPI_Dist_graph_create_adjacent", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Dist_graph_create_adjacent", comm_old);
    const svector<std::uint32_t> members = members_of(rt, c);
    const MPI_Comm made = create_from(rt, "MPI_Dist_graph_create_adjacent", comm_old, members,
                                      [&](Comm& n) { n.topology = MPI_DIST_GRAPH; });
    // Each rank's own neighbours (sources, then destinations), by its world rank.
    Comm& n = rt.comms().at(made);
    Neighbors& mine = n.neighbors[rt.current().world];
    mine.sources.assign(sources, sources + indegree);
    mine.destinations.assign(destinations, destinations + outdegree);
    *comm_dist_graph = made;
    return MPI_SUCCESS;
  });
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  return mpi_call("MPI_Dist_graph_neighbors_count", [&](Runtime& rt) {
    Comm& c = check_comm(rt, "MPI_Dist_graph_neighbors_count", comm);
    if (c.topology != MPI_DIST_GRAPH)
      rt.fail("MPI_Dist_graph_neighbors_count",
              "the communicator has no distributed graph topology (MPI_ERR_TOPOLOGY)");
    const Neighbors& mine = c.neighbors[rt.current().world];
    *indegree = static_cast<int>(mine.sources.size());
    *outdegree = static_cast<int>(mine.destinations.size());
    *weighted = 0;
    return MPI_SUCCESS;
  });
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int[], int maxoutdegree, int destinations[],
                             int[]) {
  return mpi_call("MPI_Dist_graph_neighbors", [&](Runtime& rt) {
    Comm& c = check_comm(rt, "MPI_Dist_graph_neighbors", comm);
    if (c.topology != MPI_DIST_GRAPH)
      rt.fail("MPI_Dist_graph_neighbors", "the communicator has no distributed graph topology (MPI_ERR_TOPOLOGY)");
    const Neighbors& mine = c.neighbors[rt.current().world];
    for (int i = 0; i < std::min(maxindegree, static_cast<int>(mine.sources.size())); ++i)
      sources[i] = mine.sources[static_cast<std::size_t>(i)];
    for (int i = 0; i < std::min(maxoutdegree, static_cast<int>(mine.destinations.size())); ++i)
      destinations[i] = mine.destinations[static_cast<std::size_t>(i)];
    return MPI_SUCCESS;
  });
}

}  // extern "C"
