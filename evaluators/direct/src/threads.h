// User-level threads for the simulated ranks: Boost.Context's fcontext
// switches (make_fcontext / jump_fcontext: every switch is ours, creation
// included) on stacks carved from one reserved region, with AddressSanitizer
// told about each one (__sanitizer_start/finish_switch_fiber), so the ASan
// build checks rank code honestly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <boost/context/detail/fcontext.hpp>
#include <boost/context/stack_context.hpp>

namespace poems::direct::detail {

// Stacks of `count` ranks, `bytes` each (rounded up to pages), reserved in
// one mapping without committing memory: a rank's pages become resident when
// it touches them. Below each stack lies a guard page (when the kernel's map
// count allows one per rank) and a canary word that switches check.
class StackRegion {
 public:
  StackRegion(std::size_t count, std::size_t bytes);
  ~StackRegion();
  StackRegion(const StackRegion&) = delete;
  StackRegion& operator=(const StackRegion&) = delete;

  boost::context::stack_context stack(std::size_t i);
  // Gives a finished rank's pages back to the system.
  void release(std::size_t i);
  bool canary_intact(std::size_t i) const;
  std::size_t stack_bytes() const { return bytes_; }
  bool guarded() const { return guards_; }

 private:
  char* bottom(std::size_t i) const { return base_ + i * stride_ + (guards_ ? page_ : 0); }
  char* base_ = nullptr;
  std::size_t count_ = 0, bytes_ = 0, page_ = 0, stride_ = 0, mapped_ = 0;
  bool guards_ = false;
};

// One rank's thread. resume() runs it (from the scheduler) until it calls
// suspend() or its function returns; suspend() (from inside) goes back.
class RankThread {
 public:
  RankThread() = default;
  // `body` must not throw (it runs at the bottom of the thread's stack).
  void start(StackRegion& stacks, std::size_t index, std::function<void()> body);
  void resume();   // scheduler side
  void suspend();  // thread side
  bool started() const { return self_ != nullptr; }
  bool finished() const { return finished_; }

 private:
  static void entry(boost::context::detail::transfer_t from);
  boost::context::detail::fcontext_t self_ = nullptr;       // the suspended thread
  boost::context::detail::fcontext_t scheduler_ = nullptr;  // while running: the way back
  std::function<void()> body_;
  const void* stack_bottom_ = nullptr;
  std::size_t stack_size_ = 0;
  void* fake_stack_ = nullptr;              // ASan: the thread's fake stack while it is switched out
  const void* scheduler_bottom_ = nullptr;  // ASan: the scheduler's stack, learned at each switch in
  std::size_t scheduler_size_ = 0;
  bool finished_ = false;
};

// The ranks' threads and their stacks (Isolation::Threads).
class RankThreads {
 public:
  RankThreads(std::size_t count, std::size_t stack_bytes) : stacks(count, stack_bytes), threads(count) {}
  StackRegion stacks;
  std::vector<RankThread> threads;
};

// Host CPU time of the calling OS thread in ns (threads: all ranks share one
// thread, so deltas between switches belong to the rank that ran; processes:
// the rank's own).
std::uint64_t thread_cpu_ns();
// The host's monotonic clock (the vDSO: no system call).
std::uint64_t monotonic_ns();

}  // namespace poems::direct::detail
