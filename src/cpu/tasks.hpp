// Parallel work through oneTBB (tasks.cpp is the only file that includes it): a task arena of a
// given size, and a parallel loop inside it.
#pragma once

#include <cstdint>
#include <functional>

namespace tandem::detail::tasks {

// Runs f inside a task arena of `threads` threads (the calling thread joins it).
void in_arena(int threads, const std::function<void()>& f);

// Calls f(i) for i in [0, n), in parallel, one task per index, in the current arena.
void parallel_for(int64_t n, const std::function<void(int64_t)>& f);

}  // namespace tandem::detail::tasks
