#include "threads.h"

#include "virtual_clock.h"
#include "virtual_time.h"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define POEMS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POEMS_ASAN 1
#endif
#endif

#ifdef POEMS_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace poems::direct::detail {

namespace {

constexpr std::uint64_t kCanary = 0x706f656d73737461ull;  // "poemssta"

#ifdef POEMS_ASAN
void start_switch(void** fake_stack_save, const void* bottom, std::size_t size) {
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, size);
}
void finish_switch(void* fake_stack_save, const void** bottom_old, std::size_t* size_old) {
  __sanitizer_finish_switch_fiber(fake_stack_save, bottom_old, size_old);
}
#else
void start_switch(void**, const void*, std::size_t) {}
void finish_switch(void*, const void**, std::size_t*) {}
#endif

// Guard pages split the mapping: two map entries per rank. Keep well below
// the kernel's limit (vm.max_map_count, 65530 by default).
bool guards_fit(std::size_t count) {
  std::size_t limit = 65530;
  std::ifstream in("/proc/sys/vm/max_map_count");
  if (in) in >> limit;
  return 2 * count + 8192 < limit;
}

}  // namespace

StackRegion::StackRegion(std::size_t count, std::size_t bytes) : count_(count) {
  page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  bytes_ = (bytes + page_ - 1) / page_ * page_;
  if (bytes_ < 4 * page_) bytes_ = 4 * page_;
  guards_ = guards_fit(count);
  stride_ = bytes_ + (guards_ ? page_ : 0);
  mapped_ = stride_ * count;
  if (mapped_ == 0) return;
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error("cannot reserve " + std::to_string(mapped_ >> 20) + " MiB of address space for " +
                             std::to_string(count) + " rank stacks (lower the stack size)");
  base_ = static_cast<char*>(p);
  // Guard pages, or (beyond the map count) a canary in each stack's last page.
  for (std::size_t i = 0; i < count; ++i) {
    if (guards_)
      ::mprotect(base_ + i * stride_, page_, PROT_NONE);
    else
      std::memcpy(bottom(i), &kCanary, sizeof kCanary);
  }
}

StackRegion::~StackRegion() {
  if (base_) ::munmap(base_, mapped_);
}

boost::context::stack_context StackRegion::stack(std::size_t i) {
  boost::context::stack_context sc;
  sc.size = bytes_;
  sc.sp = bottom(i) + bytes_;
#ifdef POEMS_ASAN
  // The region may reuse addresses of an earlier run's stacks: no stale poison.
  __asan_unpoison_memory_region(bottom(i), bytes_);
#endif
  return sc;
}

void StackRegion::release(std::size_t i) {
  // Keep the canary's page: it is checked once more after the switch back.
  ::madvise(bottom(i) + page_, bytes_ - page_, MADV_DONTNEED);
}

bool StackRegion::canary_intact(std::size_t i) const {
  std::uint64_t v;
  std::memcpy(&v, bottom(i), sizeof v);
  return v == kCanary;
}

void RankThread::start(StackRegion& stacks, std::size_t index, std::function<void()> body) {
  body_ = std::move(body);
  boost::context::stack_context sc = stacks.stack(index);
  stack_bottom_ = static_cast<char*>(sc.sp) - sc.size;
  stack_size_ = sc.size;
  self_ = boost::context::detail::make_fcontext(sc.sp, sc.size, &RankThread::entry);
}

void RankThread::entry(boost::context::detail::transfer_t from) {
  auto* self = static_cast<RankThread*>(from.data);
  finish_switch(nullptr, &self->scheduler_bottom_, &self->scheduler_size_);
  self->scheduler_ = from.fctx;
  self->body_();
  self->finished_ = true;
  start_switch(nullptr, self->scheduler_bottom_, self->scheduler_size_);  // for good: drop the fake stack
  boost::context::detail::jump_fcontext(self->scheduler_, nullptr);
  __builtin_unreachable();  // a finished thread is never resumed
}

void RankThread::resume() {
  void* scheduler_fake = nullptr;
  start_switch(&scheduler_fake, stack_bottom_, stack_size_);
  boost::context::detail::transfer_t t = boost::context::detail::jump_fcontext(self_, this);
  finish_switch(scheduler_fake, nullptr, nullptr);
  self_ = t.fctx;
}

void RankThread::suspend() {
  start_switch(&fake_stack_, scheduler_bottom_, scheduler_size_);
  boost::context::detail::transfer_t t = boost::context::detail::jump_fcontext(scheduler_, nullptr);
  finish_switch(fake_stack_, &scheduler_bottom_, &scheduler_size_);
  scheduler_ = t.fctx;
}

namespace {
std::uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  real_clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}
}  // namespace

std::uint64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

std::uint64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }

namespace {
// This host thread's last exact CPU reading and the wall clock right after it.
thread_local std::uint64_t t_cpu_synced = 0, t_wall_synced = 0;
thread_local bool t_synced = false;
}  // namespace

CpuMark cpu_clock_ns() {
  const std::uint64_t wall = monotonic_ns();
  if (t_synced && wall - t_wall_synced < kCpuWindowNs) return {t_cpu_synced + (wall - t_wall_synced), false};
  t_cpu_synced = thread_cpu_ns();
  t_wall_synced = monotonic_ns();
  t_synced = true;
  return {t_cpu_synced, true};
}

void forget_cpu_estimate() { t_synced = false; }

}  // namespace poems::direct::detail
