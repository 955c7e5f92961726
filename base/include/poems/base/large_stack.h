// Work that recurses along its input's nesting (parsing, expression walks)
// runs on a private stack far larger than a thread's default 8 MiB, so that
// the documented depth limits, not the stack, decide what is refused.
#pragma once

#include <cstddef>
#include <functional>

namespace poems::base {

// 256 MiB of address space; pages are used only as deep as the work goes.
inline constexpr std::size_t kLargeStackBytes = std::size_t{256} << 20;

// Runs `work` on a new thread with a stack of `bytes` and waits for it; an
// exception it throws is rethrown here. Without a thread to be had, it runs
// on the caller's stack.
void run_on_large_stack(const std::function<void()>& work, std::size_t bytes = kLargeStackBytes);

}  // namespace poems::base
