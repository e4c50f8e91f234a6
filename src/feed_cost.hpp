// What a call costs a discrete device besides its kernel: a fixed cost per call and a rate per
// byte of operands moved. From pinned memory (tandem_malloc) that is the bus alone; from the
// caller's ordinary memory it is also the staging, packing and unpacking on the host's feeder
// threads, and their start and finish: on the H100 host about a millisecond per call whatever
// its size (docs/PERFORMANCE.md, "Issue 14: level 3 at n = 1024 and 2048"). Auto weighs it
// against the CPU doing the whole call, so a call that is small or thin (a blocked level-3
// routine's deeper products) stays on the CPU.
#pragma once

#include <cstdint>

#include "problem.hpp"

namespace tandem::detail {

namespace gpu {
class Device;
}

struct FeedCost {
  double seconds = 0;           // per call
  double bytes_per_second = 0;  // 0: unknown
  bool known() const { return bytes_per_second > 0; }
};

// Bytes a call moves between the host and a discrete device: A, B and C in (C only when beta is
// not 0), and C out.
template <class T>
double moved_bytes(const Problem<T>& p);

// The CPU BLAS's rate on this call from `square_gflops`, its rate on a square call of `size`: C's
// narrower side d runs at d / (d + half) of it, relative to `size` (OpenBLAS splits C between
// its threads, and a narrow C leaves them little to share; a short k costs it far less). The
// square rate itself where C is no narrower than `size`, or where size is 0.
template <class T>
double cpu_gflops_for(const Problem<T>& p, double square_gflops, int64_t size, double half);

// Whether a discrete device cannot beat the CPU on this call: feeding it (`feed`) plus its work
// at `device_gflops` (0: left out, the feed alone is weighed) takes at least as long as the CPU
// doing the whole call at `cpu_gflops` (cpu_gflops_for this call). False
// when the feed or the CPU's rate is unknown.
template <class T>
bool device_loses_to_cpu(const Problem<T>& p, const FeedCost& feed, double device_gflops,
                         double cpu_gflops);

// The feed from the caller's ordinary memory to this discrete device, measured the first time it
// is asked for this device and precision: real calls on the device alone, operands in ordinary
// memory, square n x n x n with beta = 1 (A, B and C in, C out), each call's time less its
// kernel's; the fastest of three at n = 256 and at n = 1024 (1 MB and 17 MB in single precision),
// after one of each that is not counted, give the fixed cost and the rate. (A probe that moved C
// alone, over k = 64, found a fifth of the fixed cost that real products pay: packing A and B
// is part of it.) Unknown, and not measured again, when the device fails there.
template <class T>
FeedCost ordinary_feed(gpu::Device& device);

}  // namespace tandem::detail
