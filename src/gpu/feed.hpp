// What a call costs a discrete device besides its kernel, measured on the device the first time a
// plan asks: a fixed cost per call and a rate per byte of operands moved. From pinned memory
// (tandem_malloc) that is the bus alone (bus.cpp); from the caller's ordinary memory it is also
// the staging, packing and unpacking on the host's feeder threads: on the H100 host, 4.5-5.3 GB/s
// for a call of one chunk, whose steps run one after another, and 25-27 GB/s for a pipelined one
// (docs/journal/2026-11-performance.md, "Issue 14: level 3 at n = 1024 and 2048"; measured while
// copies under 8 MiB were packed on one thread, so the one-chunk rate is higher now). It is
// measured on each host, not taken from these figures. The plan weighs it (plan/feed_cost.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"

namespace tandem::detail::gpu {

// A discrete share runs as one chunk below seams::overlap_from() bytes of operands
// (model/chunks.hpp), its packing, copies, kernel and unpacking one after another, and as a
// pipeline of chunks above it, which overlaps them: the two move bytes at different rates.
struct FeedCost {
  double seconds = 0;                     // per call
  double bytes_per_second = 0;            // 0: unknown; a call of one chunk
  double pipelined_bytes_per_second = 0;  // a call of several chunks (0: as one chunk)
  double kernel_gflops = 0;               // the device's work (0: left out)
  bool adds_c = false;  // from ordinary memory: beta C is added on the host, C never goes in
  bool known() const { return bytes_per_second > 0; }
};

// Bytes a call moves between the host and a discrete device: A and B in, C out, and where C's old
// values count (reads_c), C in as well, or (adds_c, from ordinary memory) half as much again for
// the host adding them as it unpacks (discrete_operands.cpp).
double moved_bytes(double m, double n, double k, bool reads_c, bool adds_c, size_t element);

// The kernel a device runs alone on an n x n x n call: what the plan gives it (its profile's
// GPU-only kernel for that size, or the direct kernel below its threshold).
using KernelFor = std::function<SharedParams(int64_t n)>;

// The feed from the caller's ordinary memory to this discrete device, calibrated the first time
// it is asked for this device and precision: real shares on the device alone, operands in
// ordinary memory, square n x n x n with beta = 1 (A and B in, C out and added to), each share's
// time less its kernel's, the fastest of three after one not counted, with `feeder_threads`
// packing. n = 256 and the largest n whose share is one chunk give the fixed cost and the
// one-chunk rate; 1.5 times that n, the pipelined rate and the kernel's rate. (A probe that moved
// C alone, over k = 64, found a fifth of the fixed cost that real products pay: packing A and B
// is part of it; and one line through a one-chunk call and a pipelined one made small calls look
// twice as fast to feed as they are.) A larger call's feed timed no slower than the small one's
// (a busy host) is timed again, twice at most. Unknown, and not measured again, when the device
// fails there or the timings never order. The seams feed_seconds and feed_rate stand in for it.
template <class T>
FeedCost ordinary_feed(const std::shared_ptr<Device>& device, const KernelFor& kernel_for,
                       int feeder_threads);

}  // namespace tandem::detail::gpu
