// Point-to-point communication: sends and receives become the engine's send
// and receive operations; data moves when the engine matches them.
#include "api.h"

namespace poems::direct::detail {

namespace {

std::uint32_t check_request(Runtime& rt, const char* call, MPI_Request handle) {
  if (!rt.valid_request(handle))
    rt.fail(call, "request " + std::to_string(handle) + " is not an active request of this rank (MPI_ERR_REQUEST)");
  return static_cast<std::uint32_t>(handle);
}

// A request that is complete from the start (a transfer with MPI_PROC_NULL).
MPI_Request null_peer_request(Runtime& rt, Request::Kind kind) {
  const std::uint32_t id = rt.new_request(kind);
  Request& q = rt.request(id);
  q.done = true;
  q.op = kNoOp;
  q.source = MPI_PROC_NULL;
  q.tag = MPI_ANY_TAG;
  return static_cast<MPI_Request>(id);
}

// The status of a finished request; frees it.
void finish_request(Runtime& rt, MPI_Request* handle, MPI_Status* status) {
  const auto id = static_cast<std::uint32_t>(*handle);
  const Request& q = rt.request(id);
  if (q.kind == Request::Kind::Recv)
    set_status(status, q.source, q.tag, q.bytes);
  else
    set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
  rt.free_request(id);
  *handle = MPI_REQUEST_NULL;
}

// The next operation of the rank also waits for the request's operation
// (its completion may lie in the future of the rank's own clock).
void depend_on(Runtime& rt, std::uint32_t id) {
  const Request& q = rt.request(id);
  if (q.op != kNoOp) rt.current().after.push_back(Dependency{q.op, false});
}

struct Peer {
  std::int32_t world;  // -2: MPI_PROC_NULL, -1: MPI_ANY_SOURCE
  std::uint64_t bytes;
  int tag;
};

Peer send_args(Runtime& rt, const char* call, const void* buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm) {
  const Comm& c = check_comm(rt, call, comm);
  const std::uint64_t bytes = check_bytes(rt, call, count, type);
  check_buffer(rt, call, buf, bytes, "the send buffer");
  return Peer{check_peer(rt, call, c, dest, false), bytes, check_tag(rt, call, tag, false)};
}

Peer recv_args(Runtime& rt, const char* call, const void* buf, int count, MPI_Datatype type, int source, int tag,
               MPI_Comm comm) {
  const Comm& c = check_comm(rt, call, comm);
  const std::uint64_t bytes = check_bytes(rt, call, count, type);
  check_buffer(rt, call, buf, bytes, "the receive buffer");
  return Peer{check_peer(rt, call, c, source, true), bytes, check_tag(rt, call, tag, true)};
}

}  // namespace

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return mpi_call("MPI_Send", [&](Runtime& rt) {
    const Peer p = send_args(rt, "MPI_Send", buf, count, datatype, dest, tag, comm);
    if (p.world == -2) return MPI_SUCCESS;
    const std::uint32_t id =
        rt.post_send(buf, p.bytes, static_cast<std::uint32_t>(p.world), p.tag, comm, true, rt.node_of("MPI_Send"));
    if (id != kNoRequest) {  // rendezvous: the buffer is read when the receiver matches
      rt.wait_for({&id, 1}, "MPI_Send");
      rt.free_request(id);
    }
    return MPI_SUCCESS;
  });
}

int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return mpi_call("MPI_Recv", [&](Runtime& rt) {
    const Peer p = recv_args(rt, "MPI_Recv", buf, count, datatype, source, tag, comm);
    if (p.world == -2) {
      set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
      return MPI_SUCCESS;
    }
    const std::uint32_t id = rt.post_recv(buf, p.bytes, p.world, p.tag, comm, rt.node_of("MPI_Recv"));
    rt.current().after.assign(1, Dependency{rt.request(id).op, false});
    rt.wait_for({&id, 1}, "MPI_Recv");
    MPI_Request handle = static_cast<MPI_Request>(id);
    finish_request(rt, &handle, status);
    return MPI_SUCCESS;
  });
}

int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return mpi_call("MPI_Isend", [&](Runtime& rt) {
    const Peer p = send_args(rt, "MPI_Isend", buf, count, datatype, dest, tag, comm);
    if (p.world == -2) {
      *request = null_peer_request(rt, Request::Kind::Send);
      return MPI_SUCCESS;
    }
    *request = static_cast<MPI_Request>(
        rt.post_send(buf, p.bytes, static_cast<std::uint32_t>(p.world), p.tag, comm, false, rt.node_of("MPI_Isend")));
    return MPI_SUCCESS;
  });
}

int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return mpi_call("MPI_Irecv", [&](Runtime& rt) {
    const Peer p = recv_args(rt, "MPI_Irecv", buf, count, datatype, source, tag, comm);
    if (p.world == -2) {
      *request = null_peer_request(rt, Request::Kind::Recv);
      return MPI_SUCCESS;
    }
    *request = static_cast<MPI_Request>(rt.post_recv(buf, p.bytes, p.world, p.tag, comm, rt.node_of("MPI_Irecv")));
    return MPI_SUCCESS;
  });
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return mpi_call("MPI_Wait", [&](Runtime& rt) {
    if (*request == MPI_REQUEST_NULL) {
      set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
      return MPI_SUCCESS;
    }
    const std::uint32_t id = check_request(rt, "MPI_Wait", *request);
    rt.issue_compute();
    depend_on(rt, id);
    rt.wait_for({&id, 1}, "MPI_Wait");
    finish_request(rt, request, status);
    return MPI_SUCCESS;
  });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return mpi_call("MPI_Waitall", [&](Runtime& rt) {
    if (count < 0) rt.fail("MPI_Waitall", "count " + std::to_string(count) + " is negative (MPI_ERR_COUNT)");
    std::vector<std::uint32_t> ids;
    for (int i = 0; i < count; ++i)
      if (requests[i] != MPI_REQUEST_NULL) ids.push_back(check_request(rt, "MPI_Waitall", requests[i]));
    rt.issue_compute();
    for (std::uint32_t id : ids) depend_on(rt, id);
    rt.wait_for(ids, "MPI_Waitall");
    for (int i = 0; i < count; ++i) {
      MPI_Status* s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
      if (requests[i] == MPI_REQUEST_NULL)
        set_status(s, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
      else
        finish_request(rt, &requests[i], s);
    }
    return MPI_SUCCESS;
  });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return mpi_call("MPI_Test", [&](Runtime& rt) {
    if (*request == MPI_REQUEST_NULL) {
      *flag = 1;
      set_status(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
      return MPI_SUCCESS;
    }
    const std::uint32_t id = check_request(rt, "MPI_Test", *request);
    // Complete by the rank's present virtual time, as far as the engine has decided it.
    const Picoseconds now = rt.checkpoint("MPI_Test", rt.node_of("MPI_Test"));
    const Request& q = rt.request(id);
    *flag = q.done && q.done_time <= now ? 1 : 0;
    if (*flag) {
      finish_request(rt, request, status);
    } else {
      rt.charge(static_cast<double>(rt.options().poll_cost));
    }
    return MPI_SUCCESS;
  });
}

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
      rid = rt.post_recv(recvbuf, r.bytes, r.world, r.tag, comm, node);
      ids.push_back(rid);
      done.push_back(Dependency{rt.request(rid).op, false});
    }
    if (s.world != -2) {
      const std::uint32_t sid =
          rt.post_send(sendbuf, s.bytes, static_cast<std::uint32_t>(s.world), s.tag, comm, false, node);
      ids.push_back(sid);
      done.push_back(Dependency{rt.request(sid).op, false});
    }
    if (!ids.empty()) rt.current().after = done;
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

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return mpi_call("MPI_Probe", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Probe", comm);
    const std::int32_t src = check_peer(rt, "MPI_Probe", c, source, true);
    const int t = check_tag(rt, "MPI_Probe", tag, true);
    if (src == -2) {
      set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
      return MPI_SUCCESS;
    }
    rt.checkpoint("MPI_Probe", rt.node_of("MPI_Probe"));
    for (;;) {
      if (const Message* m = rt.probe_match(src, t, comm)) {
        set_status(status, m->source, m->tag, m->bytes);
        return MPI_SUCCESS;
      }
      rt.block_in_probe(src, t, comm, "MPI_Probe");  // until a matching message arrives
    }
  });
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return mpi_call("MPI_Iprobe", [&](Runtime& rt) {
    const Comm& c = check_comm(rt, "MPI_Iprobe", comm);
    const std::int32_t src = check_peer(rt, "MPI_Iprobe", c, source, true);
    const int t = check_tag(rt, "MPI_Iprobe", tag, true);
    if (src == -2) {
      *flag = 1;
      set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
      return MPI_SUCCESS;
    }
    rt.checkpoint("MPI_Iprobe", rt.node_of("MPI_Iprobe"));
    const Message* m = rt.probe_match(src, t, comm);
    *flag = m ? 1 : 0;
    if (m)
      set_status(status, m->source, m->tag, m->bytes);
    else
      rt.charge(static_cast<double>(rt.options().poll_cost));
    return MPI_SUCCESS;
  });
}

}  // extern "C"
