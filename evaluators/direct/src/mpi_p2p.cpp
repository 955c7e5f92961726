// Point-to-point communication: sends and receives become the engine's send
// and receive operations; data move when the engine matches them and reach
// the receive buffer when the receiving rank sees the receive complete.
#include <algorithm>
#include <cstring>
#include <vector>

#include "api.h"

namespace poems::direct::detail {

namespace {

std::uint32_t check_request(Runtime& rt, const char* call, MPI_Request handle) {
  if (!rt.requests().valid(handle, rt.current().world))
    rt.fail(call, "request " + std::to_string(handle) + " is not an active request of this rank (MPI_ERR_REQUEST)");
  return static_cast<std::uint32_t>(handle);
}

// A request that is complete from the start (a transfer with MPI_PROC_NULL).
std::uint32_t null_peer_request(Runtime& rt, Request::Kind kind, const char* call) {
  const std::uint32_t id = rt.new_request(kind, call);
  Request& q = rt.requests()[id];
  q.done = true;
  q.op = kNoOp;
  q.source = MPI_PROC_NULL;
  q.tag = MPI_ANY_TAG;
  return id;
}

// The request whose completion a handle stands for (a persistent request's current start).
std::uint32_t inner(Runtime& rt, std::uint32_t id) {
  const Request& q = rt.requests()[id];
  return q.persistent ? q.inner : id;
}

// An inactive persistent request (or MPI_REQUEST_NULL) counts as complete with an empty status.
bool inactive(Runtime& rt, MPI_Request handle) {
  return handle == MPI_REQUEST_NULL || (rt.requests().valid(handle, rt.current().world) &&
                                        rt.requests()[static_cast<std::uint32_t>(handle)].persistent &&
                                        rt.requests()[static_cast<std::uint32_t>(handle)].inner == kNoRequest);
}

// The status of a finished request; frees it (a persistent one becomes inactive).
void finish_request(Runtime& rt, MPI_Request* handle, MPI_Status* status) {
  const auto id = static_cast<std::uint32_t>(*handle);
  const std::uint32_t in = inner(rt, id);
  rt.complete_request(in);
  Request& outer = rt.requests()[id];
  const Request& q = rt.requests()[in];
  if (q.kind == Request::Kind::Recv)
    set_status(status, q.source, q.tag, q.bytes);
  else
    set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
  if (q.cancelled && status != MPI_STATUS_IGNORE) status->poems_cancelled = 1;
  if (outer.persistent) {
    if (in != kNoRequest && in != id) rt.free_request(in);
    outer.inner = kNoRequest;
    return;
  }
  rt.free_request(id);
  *handle = MPI_REQUEST_NULL;
}

void empty_status(MPI_Status* status) { set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0); }

// Waitall and Testall once every request is complete: each status (an inactive request's empty).
void finish_all(Runtime& rt, int count, MPI_Request requests[], MPI_Status statuses[]) {
  for (int i = 0; i < count; ++i) {
    MPI_Status* s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    if (inactive(rt, requests[i]))
      empty_status(s);
    else
      finish_request(rt, &requests[i], s);
  }
}

// Waitsome and Testsome: the requests `done` finished, their indices and statuses in order.
void finish_some(Runtime& rt, const std::vector<int>& done, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  *outcount = static_cast<int>(done.size());
  for (std::size_t j = 0; j < done.size(); ++j) {
    indices[j] = done[j];
    finish_request(rt, &requests[done[j]], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[j]);
  }
}

// The next operation of the rank also waits for the request's operation
// (its completion may lie in the future of the rank's own clock).
void depend_on(Runtime& rt, std::uint32_t id) {
  const Request& q = rt.requests()[id];
  // A companion's operation (a nonblocking collective) is not in this rank's
  // stream: the rank goes on when it is read again, at the completion.
  if (q.op != kNoOp && q.op_rank == rt.current().world) rt.current().after.push_back(Dependency{q.op, false});
}

struct Peer {
  std::int32_t world;  // -2: MPI_PROC_NULL, -1: MPI_ANY_SOURCE
  int tag;
};

Peer send_args(Runtime& rt, const char* call, const void* buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm) {
  const Comm& c = check_comm(rt, call, comm);
  const std::uint64_t bytes = check_bytes(rt, call, count, type);
  check_buffer(rt, call, buf, bytes, type, "the send buffer");
  return Peer{check_peer(rt, call, c, dest, false), check_tag(rt, call, tag, false)};
}

Peer recv_args(Runtime& rt, const char* call, const void* buf, int count, MPI_Datatype type, int source, int tag,
               MPI_Comm comm) {
  const Comm& c = check_comm(rt, call, comm);
  const std::uint64_t bytes = check_bytes(rt, call, count, type);
  check_buffer(rt, call, buf, bytes, type, "the receive buffer");
  return Peer{check_peer(rt, call, c, source, true), check_tag(rt, call, tag, true)};
}

// mode: 0 standard (also buffered and ready), 1 synchronous.
int blocking_send(const char* call, const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  int mode) {
  return mpi_call(call, [&](Runtime& rt) {
    const Peer p = send_args(rt, call, buf, count, datatype, dest, tag, comm);
    if (p.world == -2) return MPI_SUCCESS;
    const std::uint32_t id = rt.post_send(pack_data(rt, buf, count, datatype), static_cast<std::uint32_t>(p.world),
                                          p.tag, comm, true, mode, rt.node_of(call), call);
    if (id != kNoRequest) {  // rendezvous or synchronous: the send completes when matched
      rt.wait_for({&id, 1}, call);
      rt.free_request(id);
    }
    return MPI_SUCCESS;
  });
}

int nonblocking_send(const char* call, const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request, int mode) {
  return mpi_call(call, [&](Runtime& rt) {
    const Peer p = send_args(rt, call, buf, count, datatype, dest, tag, comm);
    if (p.world == -2) {
      *request = static_cast<MPI_Request>(null_peer_request(rt, Request::Kind::Send, call));
      return MPI_SUCCESS;
    }
    *request =
        static_cast<MPI_Request>(rt.post_send(pack_data(rt, buf, count, datatype), static_cast<std::uint32_t>(p.world),
                                              p.tag, comm, false, mode, rt.node_of(call), call));
    return MPI_SUCCESS;
  });
}

// The active requests among `handles` (MPI_REQUEST_NULL and inactive
// persistent ones left out): their inner ids, and where each is in `handles`.
void active_requests(Runtime& rt, const char* call, int count, MPI_Request handles[], std::vector<std::uint32_t>& ids,
                     std::vector<int>& where) {
  if (count < 0) rt.fail(call, "count " + std::to_string(count) + " is negative (MPI_ERR_COUNT)");
  for (int i = 0; i < count; ++i) {
    if (inactive(rt, handles[i])) continue;
    ids.push_back(inner(rt, check_request(rt, call, handles[i])));
    where.push_back(i);
  }
}

// Takes the requests of `ids` complete at the rank's present out of `ids` and
// `where` (appending their places to `done`): each becomes a dependency of
// what the rank does next, and a receive that owes its overhead
// (--receive-overhead wait) pays it, in the order they completed, each after
// its own message.
void take_completed(Runtime& rt, std::vector<std::uint32_t>& ids, std::vector<int>& where, std::vector<int>& done) {
  std::vector<std::uint32_t> owing;
  std::size_t kept = 0;
  for (std::size_t j = 0; j < ids.size(); ++j) {
    const Request& q = rt.requests()[ids[j]];
    if (!q.done) {
      ids[kept] = ids[j];
      where[kept++] = where[j];
      continue;
    }
    done.push_back(where[j]);
    if (q.overhead_owed)
      owing.push_back(ids[j]);
    else
      depend_on(rt, ids[j]);
  }
  ids.resize(kept);
  where.resize(kept);
  std::stable_sort(owing.begin(), owing.end(), [&](std::uint32_t a, std::uint32_t b) {
    return rt.requests()[a].done_time < rt.requests()[b].done_time;
  });
  for (std::uint32_t id : owing) rt.pay_receive_overhead(rt.requests()[id]);
}

// Waits for `need` of the requests (all with need = count); returns the
// indices (into `handles`) of those complete at the rank's present.
std::vector<int> wait_requests(Runtime& rt, const char* call, int count, MPI_Request handles[], std::size_t need) {
  std::vector<std::uint32_t> ids;
  std::vector<int> where;
  active_requests(rt, call, count, handles, ids, where);
  rt.issue_compute();
  std::vector<int> done;
  // Which requests are done when the call looks decides what it returns
  // (MPI_Waitany's index, MPI_Waitsome's set, the order SMPI's waitall pays
  // receive overheads in): the engine is brought to the rank's present first,
  // as for a test, so the answer is the requests complete by then, wherever
  // the engine had got to on the host (ranks on several host cores).
  const bool order_matters = ids.size() > 1 && (need < ids.size() || rt.options().receive_overhead_at_wait);
  if (order_matters) rt.checkpoint(call, rt.node_of(call));
  if (rt.options().receive_overhead_at_wait && need >= ids.size()) {
    // SMPI's MPI_Waitall completes its requests one at a time as they
    // finish (a waitany loop): a receive's o is paid when its message is in,
    // overlapping the wait for the next, so the rank wakes at each.
    while (!ids.empty()) {
      rt.wait_for(ids, call, 1);
      take_completed(rt, ids, where, done);
    }
    return done;
  }
  rt.wait_for(ids, call, need);
  take_completed(rt, ids, where, done);
  return done;
}

// Which of the requests are complete by the rank's present virtual time.
// A call whose answer is "not yet" costs `poll_cost`, so that a polling loop
// advances virtual time: for MPI_Testall that is any incomplete request
// (some done is still "not yet"), for the others none done.
std::vector<int> test_requests(Runtime& rt, const char* call, int count, MPI_Request handles[], bool& any_active,
                               bool needs_all = false) {
  std::vector<std::uint32_t> ids;
  std::vector<int> where;
  active_requests(rt, call, count, handles, ids, where);
  any_active = !ids.empty();
  std::vector<int> done;
  if (ids.empty()) return done;
  // Complete by the rank's present virtual time, as far as the engine has decided it.
  const Picoseconds now = rt.checkpoint(call, rt.node_of(call));
  for (std::size_t j = 0; j < ids.size(); ++j) {
    const Request& q = rt.requests()[ids[j]];
    if (q.done && q.done_time <= now) done.push_back(where[j]);
  }
  if (needs_all ? done.size() < ids.size() : done.empty()) rt.charge(static_cast<double>(rt.options().poll_cost));
  return done;
}

}  // namespace

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send("MPI_Send", buf, count, datatype, dest, tag, comm, 0);
}
// A buffered send copies the data: as a standard send here (the copy is the message's).
int MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send("MPI_Bsend", buf, count, datatype, dest, tag, comm, 0);
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send("MPI_Rsend", buf, count, datatype, dest, tag, comm, 0);
}
int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send("MPI_Ssend", buf, count, datatype, dest, tag, comm, 1);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return nonblocking_send("MPI_Isend", buf, count, datatype, dest, tag, comm, request, 0);
}
int MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return nonblocking_send("MPI_Ibsend", buf, count, datatype, dest, tag, comm, request, 0);
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return nonblocking_send("MPI_Irsend", buf, count, datatype, dest, tag, comm, request, 0);
}
int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return nonblocking_send("MPI_Issend", buf, count, datatype, dest, tag, comm, request, 1);
}

int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return mpi_call("MPI_Recv", [&](Runtime& rt) {
    const Peer p = recv_args(rt, "MPI_Recv", buf, count, datatype, source, tag, comm);
    if (p.world == -2) {
      set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
      return MPI_SUCCESS;
    }
    const std::uint32_t id =
        rt.post_recv(recv_target(rt, buf, count, datatype), p.world, p.tag, comm, rt.node_of("MPI_Recv"), "MPI_Recv");
    rt.current().after.assign(1, Dependency{rt.requests()[id].op, false});
    rt.wait_for({&id, 1}, "MPI_Recv");
    MPI_Request handle = static_cast<MPI_Request>(id);
    finish_request(rt, &handle, status);
    return MPI_SUCCESS;
  });
}

int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return mpi_call("MPI_Irecv", [&](Runtime& rt) {
    const Peer p = recv_args(rt, "MPI_Irecv", buf, count, datatype, source, tag, comm);
    if (p.world == -2) {
      *request = static_cast<MPI_Request>(null_peer_request(rt, Request::Kind::Recv, "MPI_Irecv"));
      return MPI_SUCCESS;
    }
    *request = static_cast<MPI_Request>(rt.post_recv(recv_target(rt, buf, count, datatype), p.world, p.tag, comm,
                                                     rt.node_of("MPI_Irecv"), "MPI_Irecv"));
    return MPI_SUCCESS;
  });
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return mpi_call("MPI_Wait", [&](Runtime& rt) {
    if (inactive(rt, *request)) {
      empty_status(status);
      return MPI_SUCCESS;
    }
    wait_requests(rt, "MPI_Wait", 1, request, 1);
    finish_request(rt, request, status);
    return MPI_SUCCESS;
  });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return mpi_call("MPI_Waitall", [&](Runtime& rt) {
    wait_requests(rt, "MPI_Waitall", count, requests, ~std::size_t{0});
    finish_all(rt, count, requests, statuses);
    return MPI_SUCCESS;
  });
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return mpi_call("MPI_Waitany", [&](Runtime& rt) {
    const std::vector<int> done = wait_requests(rt, "MPI_Waitany", count, requests, 1);
    if (done.empty()) {  // no active request
      *index = MPI_UNDEFINED;
      empty_status(status);
      return MPI_SUCCESS;
    }
    *index = done.front();
    finish_request(rt, &requests[done.front()], status);
    return MPI_SUCCESS;
  });
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return mpi_call("MPI_Waitsome", [&](Runtime& rt) {
    const std::vector<int> done = wait_requests(rt, "MPI_Waitsome", incount, requests, 1);
    if (done.empty()) {
      *outcount = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
    finish_some(rt, done, requests, outcount, indices, statuses);
    return MPI_SUCCESS;
  });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return mpi_call("MPI_Test", [&](Runtime& rt) {
    bool active = false;
    const std::vector<int> done = test_requests(rt, "MPI_Test", 1, request, active);
    if (!active) {
      *flag = 1;
      empty_status(status);
      return MPI_SUCCESS;
    }
    *flag = done.empty() ? 0 : 1;
    if (*flag) finish_request(rt, request, status);
    return MPI_SUCCESS;
  });
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return mpi_call("MPI_Testall", [&](Runtime& rt) {
    bool active = false;
    const std::vector<int> done = test_requests(rt, "MPI_Testall", count, requests, active, /*needs_all=*/true);
    int active_count = 0;
    for (int i = 0; i < count; ++i)
      if (!inactive(rt, requests[i])) ++active_count;
    *flag = static_cast<int>(done.size()) == active_count ? 1 : 0;
    if (!*flag) return MPI_SUCCESS;
    finish_all(rt, count, requests, statuses);
    return MPI_SUCCESS;
  });
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return mpi_call("MPI_Testany", [&](Runtime& rt) {
    bool active = false;
    const std::vector<int> done = test_requests(rt, "MPI_Testany", count, requests, active);
    if (!active) {
      *flag = 1;
      *index = MPI_UNDEFINED;
      empty_status(status);
      return MPI_SUCCESS;
    }
    *flag = done.empty() ? 0 : 1;
    *index = MPI_UNDEFINED;
    if (*flag) {
      *index = done.front();
      finish_request(rt, &requests[done.front()], status);
    }
    return MPI_SUCCESS;
  });
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return mpi_call("MPI_Testsome", [&](Runtime& rt) {
    bool active = false;
    const std::vector<int> done = test_requests(rt, "MPI_Testsome", incount, requests, active);
    if (!active) {
      *outcount = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
    finish_some(rt, done, requests, outcount, indices, statuses);
    return MPI_SUCCESS;
  });
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return mpi_call("MPI_Request_get_status", [&](Runtime& rt) {
    bool active = false;
    MPI_Request copy = request;
    const std::vector<int> done = test_requests(rt, "MPI_Request_get_status", 1, &copy, active);
    if (!active) {
      *flag = 1;
      empty_status(status);
      return MPI_SUCCESS;
    }
    *flag = done.empty() ? 0 : 1;
    if (*flag) {
      const std::uint32_t id = inner(rt, static_cast<std::uint32_t>(request));
      rt.complete_request(id);
      const Request& q = rt.requests()[id];
      if (q.kind == Request::Kind::Recv)
        set_status(status, q.source, q.tag, q.bytes);
      else
        empty_status(status);
    }
    return MPI_SUCCESS;
  });
}

int MPI_Request_free(MPI_Request* request) {
  return mpi_call("MPI_Request_free", [&](Runtime& rt) {
    if (*request == MPI_REQUEST_NULL) rt.fail("MPI_Request_free", "the request is MPI_REQUEST_NULL (MPI_ERR_REQUEST)");
    const std::uint32_t id = check_request(rt, "MPI_Request_free", *request);
    Request& q = rt.requests()[id];
    // The operation goes on; nobody waits for it. A receive's data still
    // arrive in the buffer when the rank next sees it complete.
    if (q.persistent) {
      if (q.inner != kNoRequest) rt.requests()[q.inner].call = "";  // orphaned: freed when it completes
      rt.free_request(id);
    } else if (q.done) {
      rt.complete_request(id);
      rt.free_request(id);
    } else {
      q.call = "";  // orphaned
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
  });
}

int MPI_Cancel(MPI_Request* request) {
  return mpi_call("MPI_Cancel", [&](Runtime& rt) {
    check_request(rt, "MPI_Cancel", *request);
    // Cancelling cannot take back an operation the engine has: the request
    // completes as it would (the MPI standard lets a cancel fail).
    return MPI_SUCCESS;
  });
}

int MPI_Test_cancelled(const MPI_Status* status, int* flag) {
  *flag = status->poems_cancelled != 0;
  return MPI_SUCCESS;
}

// ---- persistent requests ----------------------------------------------------------------

namespace {

int persistent(const char* call, Request::Kind kind, const void* buf, int count, MPI_Datatype datatype, int peer,
               int tag, MPI_Comm comm, MPI_Request* request, int mode) {
  return mpi_call(call, [&](Runtime& rt) {
    if (kind == Request::Kind::Send)
      send_args(rt, call, buf, count, datatype, peer, tag, comm);
    else
      recv_args(rt, call, buf, count, datatype, peer, tag, comm);
    const std::uint32_t id = rt.new_request(kind, call);
    Request& q = rt.requests()[id];
    q.persistent = true;
    q.inner = kNoRequest;
    q.send_buffer = buf;
    q.count = count;
    q.ptype = datatype;
    q.peer = peer;
    q.ptag = tag;
    q.comm = comm;
    q.mode = mode;
    *request = static_cast<MPI_Request>(id);
    return MPI_SUCCESS;
  });
}

void start_one(Runtime& rt, const char* call, MPI_Request handle) {
  const std::uint32_t id = check_request(rt, call, handle);
  if (!rt.requests()[id].persistent) rt.fail(call, "request " + std::to_string(handle) + " is not persistent");
  if (rt.requests()[id].inner != kNoRequest)
    rt.fail(call, "request " + std::to_string(handle) + " is active already (MPI_ERR_REQUEST)");
  const Request q = rt.requests()[id];  // a copy: new requests may move the table
  const Comm& c = check_comm(rt, call, q.comm);
  std::uint32_t started;
  if (q.kind == Request::Kind::Send) {
    const std::int32_t dest = check_peer(rt, call, c, q.peer, false);
    started = dest == -2
                  ? null_peer_request(rt, Request::Kind::Send, call)
                  : rt.post_send(pack_data(rt, q.send_buffer, q.count, q.ptype), static_cast<std::uint32_t>(dest),
                                 q.ptag, q.comm, false, q.mode, rt.node_of(call), call);
  } else {
    const std::int32_t src = check_peer(rt, call, c, q.peer, true);
    started = src == -2 ? null_peer_request(rt, Request::Kind::Recv, call)
                        : rt.post_recv(recv_target(rt, const_cast<void*>(q.send_buffer), q.count, q.ptype), src, q.ptag,
                                       q.comm, rt.node_of(call), call);
  }
  rt.requests()[id].inner = started;
}

}  // namespace

int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return persistent("MPI_Send_init", Request::Kind::Send, buf, count, datatype, dest, tag, comm, request, 0);
}
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return persistent("MPI_Bsend_init", Request::Kind::Send, buf, count, datatype, dest, tag, comm, request, 0);
}
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return persistent("MPI_Rsend_init", Request::Kind::Send, buf, count, datatype, dest, tag, comm, request, 0);
}
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return persistent("MPI_Ssend_init", Request::Kind::Send, buf, count, datatype, dest, tag, comm, request, 1);
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return persistent("MPI_Recv_init", Request::Kind::Recv, buf, count, datatype, source, tag, comm, request, 0);
}

int MPI_Start(MPI_Request* request) {
  return mpi_call("MPI_Start", [&](Runtime& rt) {
    start_one(rt, "MPI_Start", *request);
    return MPI_SUCCESS;
  });
}

int MPI_Startall(int count, MPI_Request requests[]) {
  return mpi_call("MPI_Startall", [&](Runtime& rt) {
    check_count(rt, "MPI_Startall", count);
    for (int i = 0; i < count; ++i) start_one(rt, "MPI_Startall", requests[i]);
    return MPI_SUCCESS;
  });
}

// ---- combined and probing calls --------------------------------------------------------

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return mpi_call("MPI_Sendrecv", [&](Runtime& rt) {
    const Peer s = send_args(rt, "MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, comm);
    const Peer r = recv_args(rt, "MPI_Sendrecv", recvbuf, recvcount, recvtype, source, recvtag, comm);
    const std::uint32_t node = rt.node_of("MPI_Sendrecv");
    std::vector<std::uint32_t> ids;
    std::vector<Dependency> done;
    // The receive is posted first, so two ranks exchanging never wait for each other.
    std::uint32_t rid = kNoRequest;
    if (r.world != -2) {
      rid = rt.post_recv(recv_target(rt, recvbuf, recvcount, recvtype), r.world, r.tag, comm, node, "MPI_Sendrecv");
      ids.push_back(rid);
      done.push_back(Dependency{rt.requests()[rid].op, false});
    }
    if (s.world != -2) {
      const std::uint32_t sid =
          rt.post_send(pack_data(rt, sendbuf, sendcount, sendtype), static_cast<std::uint32_t>(s.world), s.tag, comm,
                       false, 0, node, "MPI_Sendrecv");
      ids.push_back(sid);
      done.push_back(Dependency{rt.requests()[sid].op, false});
    }
    if (!ids.empty()) rt.current().after.assign(done.begin(), done.end());
    rt.wait_for(ids, "MPI_Sendrecv");
    if (rid != kNoRequest) {
      MPI_Request handle = static_cast<MPI_Request>(rid);
      finish_request(rt, &handle, status);
    } else {
      set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
    }
    if (s.world != -2) rt.free_request(ids.back());
    return MPI_SUCCESS;
  });
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  // The send's data are packed when it is posted: the buffer may then receive.
  return MPI_Sendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag, comm, status);
}

namespace {

// The four probes. A blocking one (flag == nullptr) waits until a message
// matches; MPI_Iprobe and MPI_Improbe look once. A matched probe (message !=
// nullptr) takes the message out of matching: the returned handle names
// exactly its sender and tag for MPI_Mrecv / MPI_Imrecv.
int probe(const char* call, int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  return mpi_call(call, [&](Runtime& rt) {
    const Comm& c = check_comm(rt, call, comm);
    const std::int32_t src = check_peer(rt, call, c, source, true);
    const int t = check_tag(rt, call, tag, true);
    if (src == -2) {
      if (flag) *flag = 1;
      if (message) *message = MPI_MESSAGE_NO_PROC;
      set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
      return MPI_SUCCESS;
    }
    rt.checkpoint(call, rt.node_of(call));
    const Message* m = rt.probe_match(src, t, comm);
    if (flag) {
      *flag = m ? 1 : 0;
      if (!m) {
        rt.charge(static_cast<double>(rt.options().poll_cost));
        return MPI_SUCCESS;
      }
    } else {
      while (!m) {
        rt.block_in_probe(src, t, comm, call);  // until a matching message arrives
        m = rt.probe_match(src, t, comm);
      }
    }
    set_status(status, m->source, m->tag, m->bytes);
    if (message) {
      const auto key = rt.probe_match_key(src, t, comm);
      const std::uint32_t id = rt.new_request(Request::Kind::Marker, call);
      Request& q = rt.requests()[id];
      q.peer = static_cast<int>(key.first);
      q.ptag = m->tag;
      q.comm = comm;
      q.op = key.second;
      *message = static_cast<MPI_Message>(id);
    }
    return MPI_SUCCESS;
  });
}

}  // namespace

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return probe("MPI_Probe", source, tag, comm, nullptr, nullptr, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return probe("MPI_Iprobe", source, tag, comm, flag, nullptr, status);
}

int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  // A pure function: it also works outside a rank on a kept status (predefined types).
  const std::uint64_t bytes = status_bytes(status);
  std::uint64_t size = predefined_size(datatype);
  if (Runtime::active() && Runtime::active()->running()) {
    mpi_call(
        "MPI_Get_count",
        [&](Runtime& rt) {
          size = check_type(rt, "MPI_Get_count", datatype).size;
          return MPI_SUCCESS;
        },
        false);
  } else if (!is_predefined(datatype)) {
    return MPI_ERR_TYPE;
  }
  if (size == 0)
    *count = bytes == 0 ? 0 : MPI_UNDEFINED;
  else
    *count = bytes % size == 0 ? static_cast<int>(bytes / size) : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int MPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return mpi_call(
      "MPI_Get_elements",
      [&](Runtime& rt) {
        const std::int64_t n = basic_elements(check_type(rt, "MPI_Get_elements", datatype), status_bytes(status));
        *count = n < 0 ? MPI_UNDEFINED : static_cast<int>(n);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  int c = 0;
  const int rc = MPI_Get_elements(status, datatype, &c);
  *count = c;
  return rc;
}

int MPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return mpi_call(
      "MPI_Status_set_elements",
      [&](Runtime& rt) {
        const TypeInfo& t = check_type(rt, "MPI_Status_set_elements", datatype);
        const std::uint64_t element = t.elements ? t.size / t.elements : t.size;
        set_status(status, status->MPI_SOURCE, status->MPI_TAG, static_cast<std::uint64_t>(count) * element);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  return MPI_Status_set_elements(status, datatype, static_cast<int>(count));
}

int MPI_Status_set_cancelled(MPI_Status* status, int flag) {
  status->poems_cancelled = flag != 0;
  return MPI_SUCCESS;
}

// ---- matched probes (MPI-3): the message is taken out of matching ----------------------------

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return probe("MPI_Mprobe", source, tag, comm, nullptr, message, status);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  return probe("MPI_Improbe", source, tag, comm, flag, message, status);
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  return mpi_call("MPI_Imrecv", [&](Runtime& rt) {
    if (*message == MPI_MESSAGE_NO_PROC) {
      *request = static_cast<MPI_Request>(null_peer_request(rt, Request::Kind::Recv, "MPI_Imrecv"));
      *message = MPI_MESSAGE_NULL;
      return MPI_SUCCESS;
    }
    if (*message < 0 || static_cast<std::size_t>(*message) >= 0x7fffffff ||
        rt.requests()[static_cast<std::uint32_t>(*message)].kind != Request::Kind::Marker)
      rt.fail("MPI_Imrecv", "the message handle is not one MPI_Mprobe returned (MPI_ERR_ARG)");
    const Request m = rt.requests()[static_cast<std::uint32_t>(*message)];
    rt.free_request(static_cast<std::uint32_t>(*message));
    check_bytes(rt, "MPI_Imrecv", count, datatype);
    // The receive names the message's sender and tag: the first such message
    // in the queue is the probed one (messages from one sender stay in order).
    *request =
        static_cast<MPI_Request>(rt.post_recv(recv_target(rt, buf, count, datatype), static_cast<std::int32_t>(m.peer),
                                              m.ptag, m.comm, rt.node_of("MPI_Imrecv"), "MPI_Imrecv"));
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  });
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = MPI_Imrecv(buf, count, datatype, message, &request);
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Wait(&request, status);
}

// ---- buffered mode ------------------------------------------------------------------------

int MPI_Buffer_attach(void* buffer, int size) {
  return mpi_call("MPI_Buffer_attach", [&](Runtime& rt) {
    if (size < 0) rt.fail("MPI_Buffer_attach", "size " + std::to_string(size) + " is negative (MPI_ERR_ARG)");
    rt.current().bsend_buffer = buffer;
    rt.current().bsend_size = size;
    return MPI_SUCCESS;
  });
}

int MPI_Buffer_detach(void* buffer_addr, int* size) {
  return mpi_call("MPI_Buffer_detach", [&](Runtime& rt) {
    Rank& k = rt.current();
    void* b = k.bsend_buffer;
    std::memcpy(buffer_addr, &b, sizeof b);
    *size = k.bsend_size;
    k.bsend_buffer = nullptr;
    k.bsend_size = 0;
    return MPI_SUCCESS;
  });
}

}  // extern "C"
