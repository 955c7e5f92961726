// One-sided communication (MPI 3.1 chapter 11). Data move when the origin
// calls MPI_Put, MPI_Get, MPI_Accumulate, ...: the origin's process reads or
// writes the target's window memory (process_vm_readv/writev between rank
// processes; directly for threads, for the origin's own window and for
// windows allocated in the shared region). Only one rank runs at a time and
// an epoch's accesses are ordered by its synchronization, so this is what a
// program can observe. Time is modelled as LogGOPS messages served by the
// target's companion (its RMA engine, with a CPU and NIC of its own): a put
// or accumulate is a message of its data; a get is a request answered with
// the data; flush, lock and unlock are request/answer round trips; a fence
// flushes every target the rank accessed and then is a barrier
// (docs/simulator.md, "One-sided communication").
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "api.h"
#include "attributes.h"

namespace poems::direct::detail {

namespace {

constexpr int kPostTag = 0x7ffffff0;      // MPI_Win_post to an origin (beyond programs' tags)
constexpr int kCompleteTag = 0x7ffffff1;  // MPI_Win_complete to a target

Window& check_win(Runtime& rt, const char* call, MPI_Win win) {
  auto& ws = rt.one_sided().windows();
  if (win < 0 || static_cast<std::size_t>(win) >= ws.size() || !ws[static_cast<std::size_t>(win)].used)
    rt.fail(call, "window " + std::to_string(win) + " is not a window (MPI_ERR_WIN)");
  Window& w = ws[static_cast<std::size_t>(win)];
  if (Communicators::rank(rt.comms().at(w.comm), rt.current().world) < 0)
    rt.fail(call, "window " + std::to_string(win) + " is not one of this rank's (MPI_ERR_WIN)");
  return w;
}

int win_rank(Runtime& rt, const Window& w) { return Communicators::rank(rt.comms().at(w.comm), rt.current().world); }

int check_target(Runtime& rt, const char* call, const Window& w, int target) {
  if (target == MPI_PROC_NULL) return target;
  if (target < 0 || static_cast<std::size_t>(target) >= w.ranks.size())
    rt.fail(call, "target rank " + std::to_string(target) + " is not in the window's group of " +
                      std::to_string(w.ranks.size()) + " (MPI_ERR_RANK)");
  return target;
}

// Whether the origin may touch the target's memory directly (same address space).
bool direct_access(Runtime& rt, const Window& w, int target) {
  return rt.threads() || w.ranks[static_cast<std::size_t>(target)].shared ||
         w.ranks[static_cast<std::size_t>(target)].world == rt.current().world;
}

std::uintptr_t target_address(const Window& w, int target, MPI_Aint disp) {
  const WindowRank& r = w.ranks[static_cast<std::size_t>(target)];
  if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) return static_cast<std::uintptr_t>(disp);
  return r.base + static_cast<std::uintptr_t>(disp * r.disp_unit);
}

void check_range(Runtime& rt, const char* call, const Window& w, int target, MPI_Aint disp, int count,
                 const TypeInfo& t) {
  if (count == 0 || t.size == 0) return;
  const WindowRank& r = w.ranks[static_cast<std::size_t>(target)];
  const std::uintptr_t addr = target_address(w, target, disp);
  const std::int64_t lo = t.true_lb, hi = (static_cast<std::int64_t>(count) - 1) * t.extent() + t.true_ub;
  const auto first = static_cast<std::int64_t>(addr) + lo, last = static_cast<std::int64_t>(addr) + hi;
  if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    for (const auto& [base, size] : w.attached)
      if (first >= static_cast<std::int64_t>(base) && last <= static_cast<std::int64_t>(base) + size) return;
    rt.fail(call, "the access lies outside the memory attached to the dynamic window (MPI_ERR_RMA_RANGE)");
  }
  if (first < static_cast<std::int64_t>(r.base) || last > static_cast<std::int64_t>(r.base) + r.size)
    rt.fail(call, "the access of " + std::to_string(hi - lo) + " bytes at displacement " + std::to_string(disp) +
                      " lies outside the target's window of " + std::to_string(r.size) + " bytes (MPI_ERR_RMA_RANGE)");
}

// Moves `count` items of `type` between the target's memory at `addr` and
// packed bytes: the origin's process does it (process_vm_* into the target's).
void target_io(Runtime& rt, const char* call, const Window& w, int target, std::uintptr_t addr, int count,
               const TypeInfo& t, std::byte* packed, bool write) {
  if (count == 0 || t.size == 0) return;
  if (direct_access(rt, w, target)) {
    if (write)
      unpack(t, packed, t.size * static_cast<std::uint64_t>(count), reinterpret_cast<void*>(addr),
             static_cast<std::uint64_t>(count));
    else
      pack(t, reinterpret_cast<const void*>(addr), static_cast<std::uint64_t>(count), packed);
    return;
  }
  const pid_t pid = rt.pid_of(w.ranks[static_cast<std::size_t>(target)].world);
  // The target's pieces in order, adjacent ones merged: a contiguous type
  // (count bytes of MPI_CHAR) is one piece, not one a byte.
  std::vector<iovec> remote;
  for (int i = 0; i < count; ++i)
    for (const Block& b : t.blocks) {
      auto* base = reinterpret_cast<std::byte*>(addr + static_cast<std::uintptr_t>(i * t.extent() + b.disp));
      const auto len = static_cast<std::size_t>(b.len);
      if (len == 0) continue;
      if (!remote.empty() && static_cast<std::byte*>(remote.back().iov_base) + remote.back().iov_len == base)
        remote.back().iov_len += len;
      else
        remote.push_back(iovec{base, len});
    }
  std::size_t offset = 0;
  for (std::size_t first = 0; first < remote.size(); first += IOV_MAX) {
    const std::size_t n = std::min<std::size_t>(IOV_MAX, remote.size() - first);
    std::size_t bytes = 0;
    for (std::size_t i = first; i < first + n; ++i) bytes += remote[i].iov_len;
    iovec local{packed + offset, bytes};
    const ssize_t done = write ? ::process_vm_writev(pid, &local, 1, remote.data() + first, n, 0)
                               : ::process_vm_readv(pid, &local, 1, remote.data() + first, n, 0);
    if (done != static_cast<ssize_t>(bytes))
      rt.fail(call, "cannot reach the target's window memory (" +
                        std::string(done < 0 ? std::strerror(errno) : "a partial transfer") +
                        "): one-sided communication between rank processes needs process_vm_readv; "
                        "run with --isolation threads");
    offset += bytes;
  }
}

void note_access(Window& w, std::uint32_t origin, int target) {
  svector<int>& a = w.accessed[origin];
  if (std::find(a.begin(), a.end(), target) == a.end()) a.push_back(target);
}

// Sends the one-sided message of an access to the target's companion.
std::uint32_t access_message(Runtime& rt, MPI_Win win, Window& w, int target, RmaMessage::Kind kind,
                             std::uint64_t bytes, std::uint64_t reply_bytes, const char* call) {
  RmaMessage m;
  m.kind = kind;
  m.window = static_cast<std::uint32_t>(win);
  m.origin = rt.current().world;
  m.target = target;
  m.reply_bytes = reply_bytes;
  const std::uint32_t request = rt.one_sided().send(rt, m, w.ranks[static_cast<std::size_t>(target)].world, bytes,
                                                    kind == RmaMessage::Fetch, call);
  note_access(w, rt.current().world, target);
  if (request != kNoRequest) w.outstanding[rt.current().world].push_back(Outstanding{target, request});
  return request;
}

// Waits for the operations `ids` and for the outstanding ones to the
// targets `to_target` accepts (taken out of `out`), then frees them all.
template <typename Accept>
void wait_outstanding(Runtime& rt, const char* call, svector<Outstanding>& out, std::vector<std::uint32_t>& ids,
                      Accept to_target) {
  for (auto it = out.begin(); it != out.end();) {
    if (to_target(it->target)) {
      ids.push_back(it->request);
      it = out.erase(it);
    } else {
      ++it;
    }
  }
  rt.issue_compute();
  for (std::uint32_t id : ids) rt.current().after.push_back(Dependency{rt.requests()[id].op, false});
  rt.wait_for(ids, call);
  for (std::uint32_t id : ids) rt.free_request(id);
}

// Round trips to the companions of `targets` (flush, unlock), answered in
// order after everything the origin sent them; then waits for the answers
// and for outstanding replies from those targets.
void round_trips(Runtime& rt, MPI_Win win, Window& w, const std::vector<int>& targets, RmaMessage::Kind kind,
                 const char* call) {
  const std::uint32_t me = rt.current().world;
  std::vector<std::uint32_t> ids;
  for (int t : targets) {
    RmaMessage m;
    m.kind = kind;
    m.window = static_cast<std::uint32_t>(win);
    m.origin = me;
    m.target = t;
    ids.push_back(rt.one_sided().send(rt, m, w.ranks[static_cast<std::size_t>(t)].world, 0, true, call));
  }
  wait_outstanding(rt, call, w.outstanding[me], ids,
                   [&](int target) { return std::find(targets.begin(), targets.end(), target) != targets.end(); });
  // Looked up again: while this rank waited, another may have created a
  // window and moved the table (`w` may dangle).
  svector<int>& a = rt.one_sided().windows()[static_cast<std::size_t>(win)].accessed[me];
  for (int t : targets) a.erase(std::remove(a.begin(), a.end(), t), a.end());
}

std::vector<int> accessed_targets(Window& w, std::uint32_t me) {
  std::vector<int> t;
  for (int x : w.accessed[me]) t.push_back(x);
  for (const Outstanding& o : w.outstanding[me])
    if (std::find(t.begin(), t.end(), o.target) == t.end()) t.push_back(o.target);
  return t;
}

void barrier(Runtime& rt, MPI_Comm comm, const char* call) {
  std::uint32_t request;
  Collective& col = rt.start_collective(comm, taskgraph::CollectiveOp::Barrier, 0, 0, call, true, request);
  if (request != kNoRequest) {
    rt.wait_for({&request, 1}, call);
    rt.free_request(request);
  }
  rt.collectives().finish(rt.comms().at(comm), col);
}

// The collective part of creating a window: every rank's (base, size, unit)
// in the record of the first rank to enter. Returns the window's handle.
MPI_Win create_window(Runtime& rt, const char* call, MPI_Comm comm, int flavor, std::uintptr_t base, MPI_Aint size,
                      int disp_unit, bool shared) {
  const Comm& c = check_comm(rt, call, comm);
  if (size < 0) rt.fail(call, "size " + std::to_string(size) + " is negative (MPI_ERR_SIZE)");
  if (disp_unit <= 0)
    rt.fail(call, "displacement unit " + std::to_string(disp_unit) + " is not positive (MPI_ERR_ARG)");
  const int me = Communicators::rank(c, rt.current().world);
  std::uint32_t request;
  Collective& col = rt.start_collective(comm, taskgraph::CollectiveOp::Allgather, 24, 0, call, true, request);
  if (col.created.empty()) {
    auto& ws = rt.one_sided().windows();
    std::size_t id = 0;
    while (id < ws.size() && ws[id].used) ++id;
    if (id == ws.size()) ws.emplace_back();
    Window& w = ws[id];
    w = Window{};
    w.used = true;
    w.comm = comm;
    w.flavor = flavor;
    w.ranks.resize(static_cast<std::size_t>(c.size()));
    w.locks.resize(static_cast<std::size_t>(c.size()));
    col.created[0] = static_cast<MPI_Comm>(id);
  }
  const MPI_Win win = col.created[0];
  WindowRank& mine = rt.one_sided().windows()[static_cast<std::size_t>(win)].ranks[static_cast<std::size_t>(me)];
  mine.base = base;
  mine.size = size;
  mine.disp_unit = disp_unit;
  mine.world = rt.current().world;
  mine.shared = shared;
  if (request != kNoRequest) {
    rt.wait_for({&request, 1}, call);
    rt.free_request(request);
  }
  rt.collectives().finish(rt.comms().at(comm), col);
  return win;
}

}  // namespace

std::uint32_t OneSided::send(Runtime& rt, const RmaMessage& m, std::uint32_t target_world, std::uint64_t bytes,
                             bool reply, const char* call) {
  Rank& k = rt.current();
  rt.issue_compute();
  RmaMessage msg = m;
  msg.tag = static_cast<int>(k.rma_tags++ & 0x3fffffff);
  msg.bytes = bytes;
  const std::uint32_t companion = rt.programs() + target_world;
  const std::uint32_t comm = kRmaComm | m.window;
  Operation send;
  send.kind = OpKind::Send;
  send.peer = static_cast<std::int32_t>(companion);
  send.tag = msg.tag;
  send.comm = comm;
  send.bytes = bytes;
  const std::uint32_t node = rt.node_of(call);
  const std::uint64_t idx = rt.issue(send, k.after, node);
  k.after.assign(1, Dependency{idx, true});
  messages_[op_key(k.world, idx)] = msg;
  if (!reply) return kNoRequest;
  Operation recv;
  recv.kind = OpKind::Recv;
  recv.peer = static_cast<std::int32_t>(companion);
  recv.tag = msg.tag;
  recv.comm = comm;
  recv.bytes = msg.reply_bytes;
  const std::uint64_t r = rt.issue(recv, k.after, node);
  k.after.assign(1, Dependency{r, true});
  const std::uint32_t id = rt.new_request(Request::Kind::Rma, "");
  rt.expect(id, r);
  return id;
}

bool OneSided::serve(Runtime& rt, Rank& c, std::uint32_t sender, std::uint64_t send_op) {
  auto it = messages_.find(op_key(sender, send_op));
  if (it == messages_.end()) return false;
  const RmaMessage m = it->second;
  messages_.erase(it);
  const std::uint32_t comm = kRmaComm | m.window;
  const std::uint32_t node = rt.node_of("one-sided service");
  Operation recv;
  recv.kind = OpKind::Recv;
  recv.peer = static_cast<std::int32_t>(sender);
  recv.tag = m.tag;
  recv.comm = comm;
  recv.bytes = m.bytes;
  const std::uint64_t r = rt.issue_on(c, recv, {}, node);
  auto answer = [&](std::uint32_t to, int tag, std::uint64_t bytes, std::uint64_t after) {
    Operation send;
    send.kind = OpKind::Send;
    send.peer = static_cast<std::int32_t>(to);
    send.tag = tag;
    send.comm = comm;
    send.bytes = bytes;
    const Dependency dep{after, false};
    rt.issue_on(c, send, {&dep, 1}, node);
  };
  Window& w = windows_[m.window];
  TargetLock& lock = w.locks[static_cast<std::size_t>(m.target)];
  switch (m.kind) {
    case RmaMessage::Data: break;
    case RmaMessage::Fetch:
    case RmaMessage::Flush: answer(sender, m.tag, m.reply_bytes, r); break;
    case RmaMessage::Lock: {
      const bool free = m.lock_type == MPI_LOCK_EXCLUSIVE ? lock.exclusive < 0 && lock.shared == 0 : lock.exclusive < 0;
      if (free && lock.waiting.empty()) {
        if (m.lock_type == MPI_LOCK_EXCLUSIVE)
          lock.exclusive = static_cast<int>(sender);
        else
          ++lock.shared;
        answer(sender, m.tag, 0, r);
      } else {
        lock.waiting.push_back(LockWaiter{sender, m.tag, m.lock_type});
      }
      break;
    }
    case RmaMessage::Unlock: {
      if (lock.exclusive == static_cast<int>(sender))
        lock.exclusive = -1;
      else if (lock.shared > 0)
        --lock.shared;
      answer(sender, m.tag, 0, r);
      // Grant the waiting locks that fit now, in the order they came.
      while (!lock.waiting.empty()) {
        const LockWaiter next = lock.waiting.front();
        const bool fits = next.type == MPI_LOCK_EXCLUSIVE ? lock.exclusive < 0 && lock.shared == 0 : lock.exclusive < 0;
        if (!fits) break;
        if (next.type == MPI_LOCK_EXCLUSIVE)
          lock.exclusive = static_cast<int>(next.origin);
        else
          ++lock.shared;
        answer(next.origin, next.tag, 0, r);
        lock.waiting.erase(lock.waiting.begin());
      }
      break;
    }
  }
  return true;
}

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

namespace {

// The origin and the target must hold the same number of bytes.
void check_same_bytes(Runtime& rt, const char* call, std::uint64_t obytes, std::uint64_t tbytes) {
  if (obytes != tbytes)
    rt.fail(call, "the origin has " + std::to_string(obytes) + " bytes, the target " + std::to_string(tbytes) +
                      " (MPI_ERR_ARG)");
}

// The request of a request-based operation (MPI_Rput, MPI_Rget, ...): it
// completes with the reply (`reply`, of a get) or is complete at once.
MPI_Request rma_request(Runtime& rt, const char* call, Window& w, std::uint32_t reply) {
  if (reply != kNoRequest) {
    svector<Outstanding>& out = w.outstanding[rt.current().world];
    out.erase(std::remove_if(out.begin(), out.end(), [&](const Outstanding& o) { return o.request == reply; }),
              out.end());
    rt.requests()[reply].call = call;
    return static_cast<MPI_Request>(reply);
  }
  const std::uint32_t id = rt.new_request(Request::Kind::Rma, call);
  rt.requests()[id].done = true;
  rt.requests()[id].op = kNoOp;
  return static_cast<MPI_Request>(id);
}

// Put (write) and get (read) with a predefined or derived target type.
int put_get(const char* call, bool put, void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
            MPI_Request* request) {
  return mpi_call(call, [&](Runtime& rt) {
    Window& w = check_win(rt, call, win);
    const std::uint64_t obytes = check_bytes(rt, call, origin_count, origin_datatype);
    const std::uint64_t tbytes = check_bytes(rt, call, target_count, target_datatype);
    check_same_bytes(rt, call, obytes, tbytes);
    std::uint32_t reply = kNoRequest;
    if (check_target(rt, call, w, target_rank) != MPI_PROC_NULL) {
      const TypeInfo ttype = *rt.objects().type(target_datatype);  // a copy: the table may move
      check_range(rt, call, w, target_rank, target_disp, target_count, ttype);
      const std::uintptr_t addr = target_address(w, target_rank, target_disp);
      if (put) {
        svector<std::byte> data = pack_data(rt, origin_addr, origin_count, origin_datatype);
        target_io(rt, call, w, target_rank, addr, target_count, ttype, data.data(), true);
        access_message(rt, win, w, target_rank, RmaMessage::Data, obytes, 0, call);
      } else {
        svector<std::byte> data(tbytes);
        target_io(rt, call, w, target_rank, addr, target_count, ttype, data.data(), false);
        unpack_into(rt, data.data(), tbytes, origin_addr, static_cast<std::uint64_t>(origin_count), origin_datatype);
        reply = access_message(rt, win, w, target_rank, RmaMessage::Fetch, 16, obytes, call);
      }
    }
    if (request) *request = rma_request(rt, call, w, reply);
    return MPI_SUCCESS;
  });
}

// Accumulate-style operations: the target's data become target op origin;
// with `result`, the old target data are returned first (get_accumulate).
int accumulate(const char* call, const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
               void* result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
               int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  return mpi_call(call, [&](Runtime& rt) {
    Window& w = check_win(rt, call, win);
    const std::uint64_t tbytes = check_bytes(rt, call, target_count, target_datatype);
    if (op != MPI_NO_OP) {
      const std::uint64_t obytes = check_bytes(rt, call, origin_count, origin_datatype);
      check_same_bytes(rt, call, obytes, tbytes);
      if (!predefined_op(op)) rt.fail(call, "one-sided accumulation takes predefined operators only (MPI_ERR_OP)");
      check_op(rt, call, op, target_datatype);
    }
    if (result_addr && check_bytes(rt, call, result_count, result_datatype) != tbytes)
      rt.fail(call, "the result buffer holds " + std::to_string(check_bytes(rt, call, result_count, result_datatype)) +
                        " bytes, the target " + std::to_string(tbytes) + " (MPI_ERR_ARG)");
    std::uint32_t reply = kNoRequest;
    if (check_target(rt, call, w, target_rank) != MPI_PROC_NULL) {
      const TypeInfo ttype = *rt.objects().type(target_datatype);
      check_range(rt, call, w, target_rank, target_disp, target_count, ttype);
      const std::uintptr_t addr = target_address(w, target_rank, target_disp);
      svector<std::byte> data(tbytes);
      target_io(rt, call, w, target_rank, addr, target_count, ttype, data.data(), false);
      if (result_addr)
        unpack_into(rt, data.data(), tbytes, result_addr, static_cast<std::uint64_t>(result_count), result_datatype);
      if (op != MPI_NO_OP) {
        svector<std::byte> in = pack_data(rt, origin_addr, origin_count, origin_datatype);
        if (op == MPI_REPLACE)
          data = std::move(in);
        else
          reduce_into(op, ttype.element, data.data(), in.data(),
                      static_cast<std::size_t>(target_count) * ttype.elements);
        target_io(rt, call, w, target_rank, addr, target_count, ttype, data.data(), true);
      }
      const std::uint64_t sent = op == MPI_NO_OP ? 16 : tbytes;
      reply = result_addr ? access_message(rt, win, w, target_rank, RmaMessage::Fetch, sent, tbytes, call)
                          : access_message(rt, win, w, target_rank, RmaMessage::Data, sent, 0, call);
    }
    if (request) *request = rma_request(rt, call, w, reply);
    return MPI_SUCCESS;
  });
}

}  // namespace

extern "C" {

// ---- windows ----------------------------------------------------------------------------------

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info, MPI_Comm comm, MPI_Win* win) {
  return mpi_call("MPI_Win_create", [&](Runtime& rt) {
    *win = create_window(rt, "MPI_Win_create", comm, MPI_WIN_FLAVOR_CREATE, reinterpret_cast<std::uintptr_t>(base),
                         size, disp_unit, false);
    return MPI_SUCCESS;
  });
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return mpi_call("MPI_Win_allocate", [&](Runtime& rt) {
    if (size < 0) rt.fail("MPI_Win_allocate", "size " + std::to_string(size) + " is negative (MPI_ERR_SIZE)");
    // In the shared region: every rank reaches it directly.
    void* p = SharedAlloc<std::byte>().allocate(static_cast<std::size_t>(size == 0 ? 1 : size));
    std::memcpy(baseptr, &p, sizeof p);
    *win = create_window(rt, "MPI_Win_allocate", comm, MPI_WIN_FLAVOR_ALLOCATE, reinterpret_cast<std::uintptr_t>(p),
                         size, disp_unit, true);
    return MPI_SUCCESS;
  });
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return mpi_call("MPI_Win_allocate_shared", [&](Runtime& rt) {
    const char* call = "MPI_Win_allocate_shared";
    *win = create_window(rt, call, comm, MPI_WIN_FLAVOR_SHARED, 0, size, disp_unit, true);
    // One block for all ranks, contiguous in rank order, made by the first rank past the creation.
    Window& w = rt.one_sided().windows()[static_cast<std::size_t>(*win)];
    if (w.shared_block == 0) {
      std::size_t total = 0;
      for (const WindowRank& r : w.ranks) total += static_cast<std::size_t>(r.size);
      auto* block = SharedAlloc<std::byte>().allocate(std::max<std::size_t>(total, 1));
      std::memset(block, 0, std::max<std::size_t>(total, 1));
      w.shared_block = reinterpret_cast<std::uintptr_t>(block);
      std::uintptr_t at = w.shared_block;
      for (WindowRank& r : w.ranks) {
        r.base = at;
        at += static_cast<std::uintptr_t>(r.size);
      }
    }
    void* mine = reinterpret_cast<void*>(w.ranks[static_cast<std::size_t>(win_rank(rt, w))].base);
    std::memcpy(baseptr, &mine, sizeof mine);
    return MPI_SUCCESS;
  });
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  return mpi_call("MPI_Win_shared_query", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_shared_query", win);
    if (w.flavor != MPI_WIN_FLAVOR_SHARED)
      rt.fail("MPI_Win_shared_query", "the window was not made by MPI_Win_allocate_shared (MPI_ERR_RMA_FLAVOR)");
    int r = rank;
    if (r == MPI_PROC_NULL) {  // the first rank with memory
      r = 0;
      while (static_cast<std::size_t>(r) + 1 < w.ranks.size() && w.ranks[static_cast<std::size_t>(r)].size == 0) ++r;
    }
    check_target(rt, "MPI_Win_shared_query", w, r);
    const WindowRank& wr = w.ranks[static_cast<std::size_t>(r)];
    *size = wr.size;
    *disp_unit = wr.disp_unit;
    void* p = reinterpret_cast<void*>(wr.base);
    std::memcpy(baseptr, &p, sizeof p);
    return MPI_SUCCESS;
  });
}

int MPI_Win_create_dynamic(MPI_Info, MPI_Comm comm, MPI_Win* win) {
  return mpi_call("MPI_Win_create_dynamic", [&](Runtime& rt) {
    *win = create_window(rt, "MPI_Win_create_dynamic", comm, MPI_WIN_FLAVOR_DYNAMIC, 0, 0, 1, false);
    return MPI_SUCCESS;
  });
}

int MPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  return mpi_call("MPI_Win_attach", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_attach", win);
    w.attached.emplace_back(reinterpret_cast<std::uintptr_t>(base), size);
    return MPI_SUCCESS;
  });
}

int MPI_Win_detach(MPI_Win win, const void* base) {
  return mpi_call("MPI_Win_detach", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_detach", win);
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    for (auto it = w.attached.begin(); it != w.attached.end(); ++it)
      if (it->first == b) {
        w.attached.erase(it);
        break;
      }
    return MPI_SUCCESS;
  });
}

int MPI_Win_free(MPI_Win* win) {
  return mpi_call("MPI_Win_free", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_free", *win);
    const MPI_Comm comm = w.comm;
    const std::uint32_t me = rt.current().world;
    const std::vector<int> pending = accessed_targets(w, me);
    if (!pending.empty()) round_trips(rt, *win, w, pending, RmaMessage::Flush, "MPI_Win_free");
    barrier(rt, comm, "MPI_Win_free");
    delete_attributes(rt, ObjectTables::kWinAttr, *win);
    Window& after = rt.one_sided().windows()[static_cast<std::size_t>(*win)];
    const WindowRank& mine = after.ranks[static_cast<std::size_t>(win_rank(rt, after))];
    if (after.flavor == MPI_WIN_FLAVOR_ALLOCATE && mine.base != 0)
      SharedAlloc<std::byte>().deallocate(reinterpret_cast<std::byte*>(mine.base), 0);
    if (++after.freed == after.ranks.size()) {
      if (after.shared_block != 0)
        SharedAlloc<std::byte>().deallocate(reinterpret_cast<std::byte*>(after.shared_block), 0);
      after = Window{};
    }
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
  });
}

int MPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  MPI_Comm comm = MPI_COMM_NULL;
  mpi_call("MPI_Win_get_group", [&](Runtime& rt) {
    comm = check_win(rt, "MPI_Win_get_group", win).comm;
    return MPI_SUCCESS;
  });
  return MPI_Comm_group(comm, group);
}

int MPI_Win_get_attr(MPI_Win win, int keyval, void* attribute_val, int* flag) {
  return mpi_call("MPI_Win_get_attr", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_get_attr", win);
    WindowRank& mine = w.ranks[static_cast<std::size_t>(win_rank(rt, w))];
    static int model = MPI_WIN_UNIFIED;
    void* value = nullptr;
    *flag = 1;
    switch (keyval) {
      case MPI_WIN_BASE: value = reinterpret_cast<void*>(mine.base); break;
      case MPI_WIN_SIZE: value = &mine.size; break;
      case MPI_WIN_DISP_UNIT: value = &mine.disp_unit; break;
      case MPI_WIN_CREATE_FLAVOR: value = &w.flavor; break;
      case MPI_WIN_MODEL: value = &model; break;
      default: {
        std::uintptr_t v = 0;
        *flag = get_attribute(rt, ObjectTables::kWinAttr, win, keyval, v) ? 1 : 0;
        value = reinterpret_cast<void*>(v);
      }
    }
    if (*flag) std::memcpy(attribute_val, &value, sizeof value);
    return MPI_SUCCESS;
  });
}

int MPI_Win_set_name(MPI_Win win, const char* name) {
  return mpi_call("MPI_Win_set_name", [&](Runtime& rt) {
    check_win(rt, "MPI_Win_set_name", win).name = sstring(name).substr(0, MPI_MAX_OBJECT_NAME - 1);
    return MPI_SUCCESS;
  });
}

int MPI_Win_get_name(MPI_Win win, char* name, int* resultlen) {
  return mpi_call("MPI_Win_get_name", [&](Runtime& rt) {
    *resultlen = std::snprintf(name, MPI_MAX_OBJECT_NAME, "%s", check_win(rt, "MPI_Win_get_name", win).name.c_str());
    return MPI_SUCCESS;
  });
}

int MPI_Win_set_info(MPI_Win win, MPI_Info) {
  return mpi_call("MPI_Win_set_info", [&](Runtime& rt) {
    check_win(rt, "MPI_Win_set_info", win);
    return MPI_SUCCESS;
  });
}

int MPI_Win_get_info(MPI_Win win, MPI_Info* info) {
  const int rc = mpi_call("MPI_Win_get_info", [&](Runtime& rt) {
    check_win(rt, "MPI_Win_get_info", win);
    return MPI_SUCCESS;
  });
  return rc == MPI_SUCCESS ? MPI_Info_create(info) : rc;
}

// ---- data -------------------------------------------------------------------------------------

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return put_get("MPI_Put", true, const_cast<void*>(origin_addr), origin_count, origin_datatype, target_rank,
                 target_disp, target_count, target_datatype, win, nullptr);
}
int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return put_get("MPI_Rput", true, const_cast<void*>(origin_addr), origin_count, origin_datatype, target_rank,
                 target_disp, target_count, target_datatype, win, request);
}
int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return put_get("MPI_Get", false, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                 target_datatype, win, nullptr);
}
int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return put_get("MPI_Rget", false, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                 target_datatype, win, request);
}
int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return accumulate("MPI_Accumulate", origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                    target_rank, target_disp, target_count, target_datatype, op, win, nullptr);
}
int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request* request) {
  return accumulate("MPI_Raccumulate", origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                    target_rank, target_disp, target_count, target_datatype, op, win, request);
}
int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return accumulate("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype, result_addr, result_count,
                    result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, nullptr);
}
int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  return accumulate("MPI_Rget_accumulate", origin_addr, origin_count, origin_datatype, result_addr, result_count,
                    result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request);
}
int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  return accumulate("MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
                    datatype, op, win, nullptr);
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win) {
  return mpi_call("MPI_Compare_and_swap", [&](Runtime& rt) {
    const char* call = "MPI_Compare_and_swap";
    Window& w = check_win(rt, call, win);
    const std::uint64_t bytes = check_bytes(rt, call, 1, datatype);
    if (!is_predefined(datatype)) rt.fail(call, "the datatype must be predefined (MPI_ERR_TYPE)");
    if (check_target(rt, call, w, target_rank) == MPI_PROC_NULL) return MPI_SUCCESS;
    const TypeInfo t = *rt.objects().type(datatype);
    check_range(rt, call, w, target_rank, target_disp, 1, t);
    const std::uintptr_t addr = target_address(w, target_rank, target_disp);
    svector<std::byte> old(bytes);
    target_io(rt, call, w, target_rank, addr, 1, t, old.data(), false);
    std::memcpy(result_addr, old.data(), bytes);
    if (std::memcmp(old.data(), compare_addr, bytes) == 0) {
      svector<std::byte> in(static_cast<const std::byte*>(origin_addr),
                            static_cast<const std::byte*>(origin_addr) + bytes);
      target_io(rt, call, w, target_rank, addr, 1, t, in.data(), true);
    }
    access_message(rt, win, w, target_rank, RmaMessage::Fetch, 2 * bytes, bytes, call);
    return MPI_SUCCESS;
  });
}

// ---- synchronization -------------------------------------------------------------------------

int MPI_Win_fence(int assert_flags, MPI_Win win) {
  return mpi_call("MPI_Win_fence", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_fence", win);
    const MPI_Comm comm = w.comm;
    const std::vector<int> pending = accessed_targets(w, rt.current().world);
    if (!pending.empty()) round_trips(rt, win, w, pending, RmaMessage::Flush, "MPI_Win_fence");
    (void)assert_flags;  // the barrier also orders the ranks' accesses in the host: kept whatever the assertions
    barrier(rt, comm, "MPI_Win_fence");
    return MPI_SUCCESS;
  });
}

int MPI_Win_lock(int lock_type, int rank, int assert_flags, MPI_Win win) {
  return mpi_call("MPI_Win_lock", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_lock", win);
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
      rt.fail("MPI_Win_lock", "lock type " + std::to_string(lock_type) + " is not a lock type (MPI_ERR_LOCKTYPE)");
    if (check_target(rt, "MPI_Win_lock", w, rank) == MPI_PROC_NULL || (assert_flags & MPI_MODE_NOCHECK))
      return MPI_SUCCESS;
    RmaMessage m;
    m.kind = RmaMessage::Lock;
    m.window = static_cast<std::uint32_t>(win);
    m.origin = rt.current().world;
    m.target = rank;
    m.lock_type = lock_type;
    const std::uint32_t id =
        rt.one_sided().send(rt, m, w.ranks[static_cast<std::size_t>(rank)].world, 0, true, "MPI_Win_lock");
    rt.issue_compute();
    rt.current().after.push_back(Dependency{rt.requests()[id].op, false});
    rt.wait_for({&id, 1}, "MPI_Win_lock");  // until the target's companion grants it
    rt.free_request(id);
    return MPI_SUCCESS;
  });
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  return mpi_call("MPI_Win_unlock", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_unlock", win);
    if (check_target(rt, "MPI_Win_unlock", w, rank) == MPI_PROC_NULL) return MPI_SUCCESS;
    round_trips(rt, win, w, {rank}, RmaMessage::Unlock, "MPI_Win_unlock");
    return MPI_SUCCESS;
  });
}

// Shared locks on every target: nothing to wait for until an access (a
// lock-all epoch cannot conflict with another lock-all).
int MPI_Win_lock_all(int, MPI_Win win) {
  return mpi_call("MPI_Win_lock_all", [&](Runtime& rt) {
    check_win(rt, "MPI_Win_lock_all", win);
    return MPI_SUCCESS;
  });
}

int MPI_Win_unlock_all(MPI_Win win) {
  return mpi_call("MPI_Win_unlock_all", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_unlock_all", win);
    const std::vector<int> pending = accessed_targets(w, rt.current().world);
    if (!pending.empty()) round_trips(rt, win, w, pending, RmaMessage::Flush, "MPI_Win_unlock_all");
    return MPI_SUCCESS;
  });
}

int MPI_Win_flush(int rank, MPI_Win win) {
  return mpi_call("MPI_Win_flush", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_flush", win);
    if (check_target(rt, "MPI_Win_flush", w, rank) == MPI_PROC_NULL) return MPI_SUCCESS;
    round_trips(rt, win, w, {rank}, RmaMessage::Flush, "MPI_Win_flush");
    return MPI_SUCCESS;
  });
}

int MPI_Win_flush_all(MPI_Win win) {
  return mpi_call("MPI_Win_flush_all", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_flush_all", win);
    const std::vector<int> pending = accessed_targets(w, rt.current().world);
    if (!pending.empty()) round_trips(rt, win, w, pending, RmaMessage::Flush, "MPI_Win_flush_all");
    return MPI_SUCCESS;
  });
}

// Local completion: the origin's buffers may be reused (gets have their data).
namespace {
int flush_local(const char* call, MPI_Win win, int rank) {
  return mpi_call(call, [&](Runtime& rt) {
    Window& w = check_win(rt, call, win);
    std::vector<std::uint32_t> ids;
    wait_outstanding(rt, call, w.outstanding[rt.current().world], ids,
                     [&](int target) { return rank < 0 || target == rank; });
    return MPI_SUCCESS;
  });
}
}  // namespace

int MPI_Win_flush_local(int rank, MPI_Win win) { return flush_local("MPI_Win_flush_local", win, rank); }
int MPI_Win_flush_local_all(MPI_Win win) { return flush_local("MPI_Win_flush_local_all", win, -1); }

int MPI_Win_sync(MPI_Win win) {
  return mpi_call("MPI_Win_sync", [&](Runtime& rt) {
    check_win(rt, "MPI_Win_sync", win);
    return MPI_SUCCESS;
  });
}

// ---- generalized active target (post, start, complete, wait) --------------------------------

namespace {
std::vector<int> group_ranks(Runtime& rt, const char* call, const Window& w, MPI_Group group) {
  const Group& g = check_group(rt, call, group);
  std::vector<int> out;
  const Comm& c = rt.comms().at(w.comm);
  for (std::uint32_t world : g.members) {
    const int r = Communicators::rank(c, world);
    if (r < 0) rt.fail(call, "the group holds a rank outside the window's (MPI_ERR_GROUP)");
    out.push_back(r);
  }
  return out;
}

// Zero-byte notifications between the programs (post -> origins, complete -> targets).
void notify(Runtime& rt, const Window& w, const std::vector<int>& to, int tag, const char* call) {
  for (int r : to)
    rt.post_send(svector<std::byte>(), w.ranks[static_cast<std::size_t>(r)].world, tag, w.comm, false, 0,
                 rt.node_of(call), call);
}

void await(Runtime& rt, const Window& w, const std::vector<int>& from, int tag, const char* call) {
  std::vector<std::uint32_t> ids;
  for (int r : from) {
    RecvTarget t;
    t.type = MPI_BYTE;
    ids.push_back(rt.post_recv(std::move(t), static_cast<std::int32_t>(w.ranks[static_cast<std::size_t>(r)].world), tag,
                               w.comm, rt.node_of(call), call));
    rt.requests()[ids.back()].engine_only = true;  // the origins' puts land when the engine serves them
  }
  rt.issue_compute();
  for (std::uint32_t id : ids) rt.current().after.push_back(Dependency{rt.requests()[id].op, false});
  rt.wait_for(ids, call);
  for (std::uint32_t id : ids) {
    rt.complete_request(id);
    rt.free_request(id);
  }
}
}  // namespace

int MPI_Win_post(MPI_Group group, int, MPI_Win win) {
  return mpi_call("MPI_Win_post", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_post", win);
    const std::vector<int> origins = group_ranks(rt, "MPI_Win_post", w, group);
    w.post_group[rt.current().world].assign(origins.begin(), origins.end());
    notify(rt, w, origins, kPostTag, "MPI_Win_post");
    return MPI_SUCCESS;
  });
}

int MPI_Win_start(MPI_Group group, int, MPI_Win win) {
  return mpi_call("MPI_Win_start", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_start", win);
    const std::vector<int> targets = group_ranks(rt, "MPI_Win_start", w, group);
    w.start_group[rt.current().world].assign(targets.begin(), targets.end());
    await(rt, w, targets, kPostTag, "MPI_Win_start");
    return MPI_SUCCESS;
  });
}

int MPI_Win_complete(MPI_Win win) {
  return mpi_call("MPI_Win_complete", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_complete", win);
    const std::uint32_t me = rt.current().world;
    const std::vector<int> targets(w.start_group[me].begin(), w.start_group[me].end());
    const std::vector<int> pending = accessed_targets(w, me);
    if (!pending.empty()) round_trips(rt, win, w, pending, RmaMessage::Flush, "MPI_Win_complete");
    Window& again = rt.one_sided().windows()[static_cast<std::size_t>(win)];
    notify(rt, again, targets, kCompleteTag, "MPI_Win_complete");
    again.start_group.erase(me);
    return MPI_SUCCESS;
  });
}

int MPI_Win_wait(MPI_Win win) {
  return mpi_call("MPI_Win_wait", [&](Runtime& rt) {
    Window& w = check_win(rt, "MPI_Win_wait", win);
    const std::uint32_t me = rt.current().world;
    const std::vector<int> origins(w.post_group[me].begin(), w.post_group[me].end());
    await(rt, w, origins, kCompleteTag, "MPI_Win_wait");
    rt.one_sided().windows()[static_cast<std::size_t>(win)].post_group.erase(me);
    return MPI_SUCCESS;
  });
}

int MPI_Win_test(MPI_Win win, int* flag) {
  const int rc = MPI_Win_wait(win);  // completes the exposure epoch (a test that waits)
  *flag = 1;
  return rc;
}

}  // extern "C"
