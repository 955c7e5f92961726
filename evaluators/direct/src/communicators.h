// The direct-execution runtime's communicators and groups: the tables behind
// MPI_Comm and MPI_Group handles, shared by every rank (handles are indices).
// Ranks are world ranks; a communicator rank is a rank within one of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "mpi.h"
#include "shared_memory.h"

namespace poems::direct::detail {

// Communicator ids on the wire: application messages use the communicator's
// handle; collectives use taskgraph::collective_comm; acknowledgements of
// synchronous sends and one-sided traffic use these (never matched by programs).
inline constexpr std::uint32_t kAckComm = 0x40000000u;
inline constexpr std::uint32_t kRmaComm = 0x20000000u;

struct CartTopology {
  svector<int> dims, periods;
};

// A rank's neighbours in a distributed graph topology (communicator ranks).
struct Neighbors {
  svector<int> sources, destinations;
};

struct Comm {
  svector<std::uint32_t> members;              // world ranks by communicator rank
  sunordered_map<std::uint32_t, int> rank_of;  // world rank -> rank (empty for the world: identity)
  svector<std::uint64_t> started;              // per member: collectives it has started
  bool self = false;                           // MPI_COMM_SELF: one member, whoever asks
  bool freed = false;
  int topology = 0;  // MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH or 0
  CartTopology cart;
  svector<int> graph_index, graph_edges;     // MPI_Graph_create
  smap<std::uint32_t, Neighbors> neighbors;  // distributed graph: by world rank
  sstring name;
  int errhandler = MPI_ERRORS_ARE_FATAL;
  std::uint32_t ranks_per_node = 0;  // MPI_Comm_split_type results (0: not from one)
  int size() const { return self ? 1 : static_cast<int>(members.size()); }
};

struct Group {
  svector<std::uint32_t> members;  // world ranks
  bool used = false;
};

class Communicators {
 public:
  Communicators() = default;
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;
  ~Communicators() {
    for (Comm* c : comms_) shared_delete(c);
  }

  // MPI_COMM_WORLD and MPI_COMM_SELF of `ranks` program ranks, MPI_GROUP_EMPTY.
  void init(std::uint32_t ranks) {
    Comm* world = shared_new<Comm>();
    world->members.resize(ranks);
    for (std::uint32_t r = 0; r < ranks; ++r) world->members[r] = r;
    world->started.assign(ranks, 0);
    world->name = "MPI_COMM_WORLD";
    comms_.push_back(world);
    Comm* self = shared_new<Comm>();
    self->self = true;
    self->started.assign(ranks, 0);  // by world rank
    self->name = "MPI_COMM_SELF";
    comms_.push_back(self);
    groups_.emplace_back();  // MPI_GROUP_EMPTY
    groups_.back().used = true;
  }

  // The communicator `handle` if world rank `caller` is one of its members, else null.
  Comm* find(MPI_Comm handle, std::uint32_t caller) {
    if (handle < 0 || static_cast<std::size_t>(handle) >= comms_.size()) return nullptr;
    Comm* c = comms_[static_cast<std::size_t>(handle)];
    if (c->freed) return nullptr;
    return rank(*c, caller) < 0 ? nullptr : c;
  }
  Comm& at(MPI_Comm handle) { return *comms_[static_cast<std::size_t>(handle)]; }
  std::size_t count() const { return comms_.size(); }
  // World rank `world`'s rank in `c`, or -1.
  static int rank(const Comm& c, std::uint32_t world) {
    if (c.self) return 0;
    if (c.rank_of.empty()) return static_cast<int>(world);  // the world: identity
    auto it = c.rank_of.find(world);
    return it == c.rank_of.end() ? -1 : it->second;
  }
  // The world rank of `rank` in `c` (MPI_COMM_SELF: `caller` itself).
  static std::uint32_t world_rank(const Comm& c, int rank, std::uint32_t caller) {
    return c.self ? caller : c.members[static_cast<std::size_t>(rank)];
  }
  MPI_Comm add(svector<std::uint32_t> members) {
    Comm* c = shared_new<Comm>();
    for (std::size_t i = 0; i < members.size(); ++i) c->rank_of.emplace(members[i], static_cast<int>(i));
    c->started.assign(members.size(), 0);
    c->members = std::move(members);
    if (comms_.size() >= static_cast<std::size_t>(kRmaComm)) {
      shared_delete(c);
      throw std::length_error("too many communicators");
    }
    comms_.push_back(c);
    return static_cast<MPI_Comm>(comms_.size() - 1);
  }
  // MPI_Comm_create_group: the communicator world rank `caller`'s next call
  // with this (communicator, tag, members) joins.
  MPI_Comm group_comm(MPI_Comm parent, int tag, const svector<std::uint32_t>& members, std::uint32_t caller) {
    GroupComms& entry = group_comms_[{{parent, tag}, members}];
    std::uint32_t& calls = entry.calls[caller];
    if (calls == entry.made.size()) entry.made.push_back(add(members));
    return entry.made[calls++];
  }

  MPI_Group add_group(svector<std::uint32_t> members) {
    if (members.empty()) return MPI_GROUP_EMPTY;
    for (std::size_t i = 1; i < groups_.size(); ++i)
      if (!groups_[i].used) {
        groups_[i].members = std::move(members);
        groups_[i].used = true;
        return static_cast<MPI_Group>(i);
      }
    groups_.emplace_back();
    groups_.back().members = std::move(members);
    groups_.back().used = true;
    return static_cast<MPI_Group>(groups_.size() - 1);
  }
  Group* group(MPI_Group handle) {
    if (handle < 0 || static_cast<std::size_t>(handle) >= groups_.size()) return nullptr;
    Group& g = groups_[static_cast<std::size_t>(handle)];
    return g.used ? &g : nullptr;
  }

 private:
  struct GroupComms {
    svector<MPI_Comm> made;
    smap<std::uint32_t, std::uint32_t> calls;  // by world rank
  };
  svector<Comm*> comms_;
  svector<Group> groups_;
  smap<std::pair<std::pair<MPI_Comm, int>, svector<std::uint32_t>>, GroupComms> group_comms_;
};

}  // namespace poems::direct::detail
