// Parallel work through oneTBB (tasks.cpp is the only file that includes it): a task arena of a
// given size, and a parallel loop inside it.
#pragma once

#include <cstdint>
#include <functional>

namespace tandem::detail::tasks {

// Runs f inside a task arena of `threads` threads (the calling thread joins it). Arenas are kept,
// one per size and `lane`: callers that run at the same time pass different lanes, or they share
// one arena's threads (a batch's CPU side and a device's feeders, 8 and 8 threads on the H100
// host's 16 cores, shared 8 between them and ran the batch at under half the speed of either).
void in_arena(int threads, const std::function<void()>& f, int lane = 0);

// Calls f(i) for i in [0, n), in parallel, one task per index, in the current arena.
void parallel_for(int64_t n, const std::function<void(int64_t)>& f);

}  // namespace tandem::detail::tasks
