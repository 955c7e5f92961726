#include "api.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace poems::direct::detail {

Runtime& runtime_for(const char* call) {
  Runtime* rt = Runtime::active();
  if (rt && forked_from_rank() >= 0) rt->forked_call(call);
  if (rt && Runtime::mpi_function(call)) rt->check_thread(call);
  if (!rt || !rt->running()) {
    std::fprintf(stderr,
                 "poems: %s called outside a simulated rank (programs built with poems-mpicc, poems-mpicxx or "
                 "poems-mpif90 run under `poems direct PROGRAM -np P`, or alone as one rank)\n",
                 call);
    std::abort();
  }
  return *rt;
}

Comm& check_comm(Runtime& rt, const char* call, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) rt.fail(call, "the communicator is MPI_COMM_NULL (MPI_ERR_COMM)");
  Comm* c = rt.comms().find(comm, rt.current().world);
  if (!c) rt.fail(call, "communicator " + std::to_string(comm) + " is not one of this rank's (MPI_ERR_COMM)");
  return *c;
}

TypeInfo& check_type_handle(Runtime& rt, const char* call, MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) rt.fail(call, "the datatype is MPI_DATATYPE_NULL (MPI_ERR_TYPE)");
  TypeInfo* t = rt.objects().type(type);
  if (!t) rt.fail(call, "datatype " + std::to_string(type) + " is not a datatype (MPI_ERR_TYPE)");
  return *t;
}

const TypeInfo& check_type(Runtime& rt, const char* call, MPI_Datatype type) {
  const TypeInfo& t = check_type_handle(rt, call, type);
  if (!t.committed) rt.fail(call, "datatype " + std::to_string(type) + " is not committed (MPI_ERR_TYPE)");
  return t;
}

int check_count(Runtime& rt, const char* call, int count) {
  if (count < 0) rt.fail(call, "count " + std::to_string(count) + " is negative (MPI_ERR_COUNT)");
  return count;
}

std::uint64_t check_bytes(Runtime& rt, const char* call, int count, MPI_Datatype type) {
  check_count(rt, call, count);
  return static_cast<std::uint64_t>(count) * check_type(rt, call, type).size;
}

void check_buffer(Runtime& rt, const char* call, const void* buf, std::uint64_t bytes, MPI_Datatype type,
                  const char* what) {
  // A derived datatype may address absolute memory from MPI_BOTTOM (NULL).
  if (bytes > 0 && buf == nullptr && is_predefined(type))
    rt.fail(call, std::string(what) + " is null but holds " + std::to_string(bytes) + " bytes (MPI_ERR_BUFFER)");
}

std::int32_t check_peer(Runtime& rt, const char* call, const Comm& c, int rank, bool any_allowed) {
  if (rank == MPI_PROC_NULL) return -2;
  if (any_allowed && rank == MPI_ANY_SOURCE) return -1;
  if (rank < 0 || rank >= c.size())
    rt.fail(call, "rank " + std::to_string(rank) + " is not in the communicator of size " + std::to_string(c.size()) +
                      " (MPI_ERR_RANK)");
  return static_cast<std::int32_t>(Communicators::world_rank(c, rank, rt.current().world));
}

int check_tag(Runtime& rt, const char* call, int tag, bool any_allowed) {
  if (any_allowed && tag == MPI_ANY_TAG) return tag;
  if (tag < 0 || tag > 0x3fffffff)
    rt.fail(call, "tag " + std::to_string(tag) + " is not in 0..1073741823 (MPI_ERR_TAG)");
  return tag;
}

int check_root(Runtime& rt, const char* call, const Comm& c, int root) {
  if (root < 0 || root >= c.size())
    rt.fail(call, "root " + std::to_string(root) + " is not in the communicator of size " + std::to_string(c.size()) +
                      " (MPI_ERR_ROOT)");
  return root;
}

void check_op(Runtime& rt, const char* call, MPI_Op op, MPI_Datatype type) {
  const TypeInfo& t = check_type(rt, call, type);
  if (rt.objects().user_op(op)) return;
  if (!predefined_op(op)) rt.fail(call, "operator " + std::to_string(op) + " is not a reduction operator (MPI_ERR_OP)");
  if (t.size > 0 && (t.element == MPI_DATATYPE_NULL || !op_applies(op, t.element)))
    rt.fail(call, std::string(op_name(op)) + " does not apply to " +
                      (t.predefined ? std::string(predefined_name(type))
                                    : "a derived datatype of " + std::string(t.element == MPI_DATATYPE_NULL
                                                                                 ? "mixed types"
                                                                                 : predefined_name(t.element))) +
                      " (MPI_ERR_OP)");
}

Group& check_group(Runtime& rt, const char* call, MPI_Group group) {
  if (group == MPI_GROUP_NULL) rt.fail(call, "the group is MPI_GROUP_NULL (MPI_ERR_GROUP)");
  Group* g = rt.comms().group(group);
  if (!g) rt.fail(call, "group " + std::to_string(group) + " is not a group (MPI_ERR_GROUP)");
  return *g;
}

svector<std::byte> pack_data(Runtime& rt, const void* buf, int count, MPI_Datatype type) {
  const TypeInfo& t = *rt.objects().type(type);
  svector<std::byte> out(static_cast<std::size_t>(count) * t.size);
  if (!out.empty()) pack(t, buf, static_cast<std::uint64_t>(count), out.data());
  return out;
}

void pack_into(Runtime& rt, const void* buf, std::uint64_t count, MPI_Datatype type, std::byte* out) {
  pack(*rt.objects().type(type), buf, count, out);
}

void unpack_into(Runtime& rt, const std::byte* in, std::uint64_t bytes, void* buf, std::uint64_t count,
                 MPI_Datatype type) {
  unpack(*rt.objects().type(type), in, bytes, buf, count);
}

RecvTarget recv_target(Runtime& rt, void* buf, int count, MPI_Datatype type) {
  const TypeInfo& t = *rt.objects().type(type);
  RecvTarget target;
  target.buffer = buf;
  target.count = static_cast<std::uint64_t>(count);
  target.type = type;
  target.capacity = target.count * t.size;
  if (!t.predefined) {  // the program may free the type before the data arrive
    target.blocks = t.blocks;
    target.extent = t.extent();
    target.size = t.size;
  }
  return target;
}

void reduce_packed(Runtime& rt, MPI_Op op, MPI_Datatype type, std::uint64_t count, std::byte* acc, const std::byte* in,
                   bool in_is_earlier) {
  const TypeInfo& t = *rt.objects().type(type);
  if (ObjectTables::UserOp* u = rt.objects().user_op(op)) {
    // The function sees the program's layout: unpack both, call, pack back.
    // It computes inoutvec = invec op inoutvec, invec from the earlier rank.
    const std::int64_t ext = t.extent();
    const std::size_t span = static_cast<std::size_t>(ext) * count + 64;
    std::vector<std::byte> a(span), b(span);
    std::byte* pa = a.data() - t.lb;
    std::byte* pb = b.data() - t.lb;
    unpack(t, acc, count * t.size, pa, count);
    unpack(t, in, count * t.size, pb, count);
    int len = static_cast<int>(count);
    MPI_Datatype dt = type;
    if (in_is_earlier) {
      u->fn(pb, pa, &len, &dt);
      pack(t, pa, count, acc);
    } else {
      u->fn(pa, pb, &len, &dt);
      pack(t, pb, count, acc);
    }
    return;
  }
  reduce_into(op, t.element, acc, in, count * t.elements);
}

void set_status(MPI_Status* status, int source, int tag, std::uint64_t bytes) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = source;
  status->MPI_TAG = tag;
  status->MPI_ERROR = MPI_SUCCESS;
  status->poems_count_lo = static_cast<int>(static_cast<std::uint32_t>(bytes));
  status->poems_count_hi = static_cast<int>(static_cast<std::uint32_t>(bytes >> 32));
  status->poems_cancelled = 0;
}

std::uint64_t status_bytes(const MPI_Status* status) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(status->poems_count_lo)) |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(status->poems_count_hi)) << 32;
}

}  // namespace poems::direct::detail
