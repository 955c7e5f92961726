#include "thread_gate.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "runtime_impl.h"

namespace poems::direct::detail {

namespace {

// A thread blocked in a wait: what it waits for (`need` of `ids` done, or,
// in a probe, a message arrived since `seen`), and whether the gate has been
// handed to it.
struct Waiter {
  std::span<const std::uint32_t> ids;
  std::size_t need = 0;
  bool granted = false;
  const std::uint64_t* arrivals = nullptr;
  std::uint64_t seen = 0;
};

// The gate's state, private to the rank's process (never in the shared region).
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool owned = false;         // a thread owns the gate (is in an MPI call with the turn)
  bool turn = true;           // the rank has the engine's turn
  bool driving = false;       // a thread has handed the turn back and waits for it
  std::uint32_t wanting = 0;  // threads waiting in gate_enter
  std::vector<Waiter*> waiters;
};

bool g_multiple = false;
Gate* g_gate = nullptr;  // created at the grant; never freed (threads may still use it at exit)
thread_local std::uint32_t t_depth = 0;
thread_local CpuMark t_mark;
thread_local std::int32_t t_slot = -1;  // this thread's place in Rank::gate (-1: none yet or none left)
// What this thread's next operation depends on: each thread's calls follow
// its own earlier ones, not another thread's (a blocking receive of one
// thread must not hold back the send of another that it waits for).
thread_local std::vector<Dependency> t_after;

// Says whether this thread is inside the gate (in a call, or waiting in
// one): the controller does not wait for such a thread to call MPI
// (settle). A thread's first call takes it a place.
void mark_inside(Rank& k, bool inside) {
  GateThreads& threads = *k.gate;
  if (t_slot < 0) {
    const std::uint32_t slot = std::atomic_ref<std::uint32_t>(threads.count).load();
    if (slot >= GateThreads::kMax) return;
    threads.tid[slot] = static_cast<std::int32_t>(::gettid());
    std::atomic_ref<std::uint32_t>(threads.count).store(slot + 1);  // (under the gate's lock: one at a time)
    t_slot = static_cast<std::int32_t>(slot);
  }
  std::atomic_ref<std::uint8_t>(threads.inside[t_slot]).store(inside ? 1 : 0);
}

// The thread takes the gate: the rank's `after` becomes its own, and its
// next operation also starts after the start of the last one its rank
// issued. The rank's operations start in the order the threads issued them,
// which keeps what the threads ordered among themselves (a join, a lock)
// without waiting for each other's completions.
void take_after(Rank& k) {
  k.after.assign(t_after.begin(), t_after.end());
  if (k.next_op == 0) return;
  const Dependency last{k.next_op - 1, true};
  for (const Dependency& d : k.after)
    if (d.op == last.op) return;
  k.after.push_back(last);
}

void keep_after(const Rank& k) { t_after.assign(k.after.begin(), k.after.end()); }

bool satisfied(Runtime& rt, const Waiter& w) {
  if (w.arrivals) return *w.arrivals != w.seen;
  std::size_t done = 0;
  for (std::uint32_t id : w.ids)
    if (rt.requests()[id].done) ++done;
  return done >= w.need;
}

// The owner gave the gate up (the rank has the turn): to a waiting thread
// whose wait is satisfied, else to whoever wants to enter; with neither, a
// waiting thread wakes to hand the turn back (nobody else would).
void pass_on(Runtime& rt, Gate& g) {
  g.owned = false;
  for (Waiter* w : g.waiters)
    if (!w->granted && satisfied(rt, *w)) {
      w->granted = true;
      g.owned = true;
      g.cv.notify_all();
      return;
    }
  if (g.wanting > 0 || !g.waiters.empty()) g.cv.notify_all();
}

}  // namespace

bool multiple_threads() { return g_multiple; }

CpuMark& gate_cpu_mark() { return t_mark; }

void grant_multiple(Rank& k) {
  if (g_multiple) return;
  g_gate = new Gate;  // unowned, with the turn: the granting thread is between calls
  k.gate = shared_new<GateThreads>();
  t_mark = k.cpu_mark;
  keep_after(k);
  k.multiple = true;
  g_multiple = true;
}

void gate_enter(Runtime& rt, Rank& k) {
  if (t_depth++ > 0) return;
  // The gate's own CPU time (locking, waking, waiting) is the layer's, not
  // the program's computation: the thread's mark moves past it.
  const std::uint64_t start = cpu_clock_ns().ns;
  Gate& g = *g_gate;
  std::unique_lock lock(g.m);
  bool asked = false;
  ++g.wanting;
  while (g.owned || !g.turn) {
    // The rank waits without the turn and nobody owns the gate: only the
    // controller can give the turn back, when it knows this thread asks.
    if (!g.owned && !g.turn && !asked) {
      asked = true;
      rt.request_entry(k);
    }
    g.cv.wait(lock);
  }
  --g.wanting;
  if (asked) rt.entry_served(k);
  g.owned = true;
  mark_inside(k, true);  // (not before: a thread on its way to ask must look outside)
  take_after(k);
  lock.unlock();
  forget_cpu_estimate();  // it may have slept
  const std::uint64_t end = cpu_clock_ns().ns;
  if (end > start) t_mark.ns += end - start;
}

void gate_leave(Runtime& rt, Rank& k) {
  if (t_depth == 0 || --t_depth > 0) return;
  Gate& g = *g_gate;
  {
    std::lock_guard lock(g.m);
    keep_after(k);
    mark_inside(k, false);
    pass_on(rt, g);
  }
  t_mark = cpu_clock_ns();  // the computation starts after the gate's work
}

namespace {

// The calling (owning) thread waits as `w`, letting the rank's other threads in.
void wait_as(Runtime& rt, Rank& k, Waiter& w, const char* call) {
  Gate& g = *g_gate;
  std::unique_lock lock(g.m);
  g.waiters.push_back(&w);
  keep_after(k);
  pass_on(rt, g);
  while (!w.granted) {
    if (!g.owned && g.turn && g.wanting == 0 && !g.driving) {
      // Nobody can use the turn: hand it back until one of the rank's waits
      // completes or another thread asks to enter.
      g.driving = true;
      g.turn = false;
      k.state = Rank::State::Blocked;
      k.blocked_in = call;
      k.waiting = 1;  // any completion of a waited request wakes the rank
      lock.unlock();
      rt.yield_turn(k);
      lock.lock();
      g.driving = false;
      g.turn = true;
      k.waiting = 0;
      if (!g.owned) pass_on(rt, g);
      continue;
    }
    g.cv.wait(lock);
  }
  g.waiters.erase(std::find(g.waiters.begin(), g.waiters.end(), &w));
  take_after(k);
  forget_cpu_estimate();
}

}  // namespace

void gate_wait(Runtime& rt, Rank& k, std::span<const std::uint32_t> ids, std::size_t need, const char* call) {
  Waiter w{ids, need, false};
  wait_as(rt, k, w, call);
  for (std::uint32_t id : ids) rt.requests()[id].waited = false;
}

void gate_wait_arrival(Runtime& rt, Rank& k, const char* call) {
  Waiter w;
  w.arrivals = &k.arrivals;
  w.seen = k.arrivals;
  ++k.probing;
  wait_as(rt, k, w, call);
  --k.probing;
}

void gate_pause(Runtime& rt, Rank& k) {
  Gate& g = *g_gate;
  {
    std::lock_guard lock(g.m);
    g.turn = false;
  }
  rt.yield_turn(k);
  std::lock_guard lock(g.m);
  g.turn = true;
}

}  // namespace poems::direct::detail
