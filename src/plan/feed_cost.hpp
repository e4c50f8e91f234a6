// Auto's rule for a discrete device that would have to be fed: it takes a call only where feeding
// it (gpu/feed.hpp, measured on the device) and its kernel's work beat the CPU doing the whole
// call, so a call that is small or thin (a blocked level-3 routine's deeper products) stays on
// the CPU.
#pragma once

#include <cstdint>
#include <memory>

#include "base/problem.hpp"
#include "gpu/device.hpp"
#include "gpu/feed.hpp"

namespace tandem::detail {

using gpu::FeedCost;

// The CPU BLAS's rate on this call from `square_gflops`, its rate on a square call of `size`: C's
// narrower side d runs at d / (d + half) of it, relative to `size` (OpenBLAS splits C between
// its threads, and a narrow C leaves them little to share; a short k costs it far less). The
// square rate itself where C is no narrower than `size`, or where size is 0.
template <class T>
double cpu_gflops_for(const Problem<T>& p, double square_gflops, int64_t size, double half);

// Whether a discrete device cannot beat the CPU on this call: feeding it (`feed`) plus its work
// at the feed's kernel rate take at least as long as the CPU doing the whole call at
// `cpu_gflops` (cpu_gflops_for this call). False when the feed or the CPU's rate is unknown.
template <class T>
bool device_loses_to_cpu(const Problem<T>& p, const FeedCost& feed, double cpu_gflops);

// The feed from the caller's ordinary memory to this discrete device (gpu/feed.hpp), calibrated by
// the device the first time a plan asks, with the kernel the plan gives the device alone at each
// size and every core the plan divides feeding it.
template <class T>
FeedCost ordinary_feed(const std::shared_ptr<gpu::Device>& device);

}  // namespace tandem::detail
