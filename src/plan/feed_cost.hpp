// What a call costs a discrete device besides its kernel: a fixed cost per call and a rate per
// byte of operands moved. From pinned memory (tandem_malloc) that is the bus alone; from the
// caller's ordinary memory it is also the staging, packing and unpacking on the host's feeder
// threads: on the H100 host, 4.5-5.3 GB/s for a call of one chunk, whose steps run one after
// another, and 25-27 GB/s for a pipelined one (docs/PERFORMANCE.md, "Issue 14: level 3 at n =
// 1024 and 2048"; measured while copies under 8 MiB were packed on one thread, so the one-chunk
// rate is higher now). It is measured on each host, not taken from these figures. Auto weighs it,
// with the kernel's work, against the CPU doing the whole call, so a call that is small or thin (a
// blocked level-3 routine's deeper products) stays on the CPU.
#pragma once

#include <cstdint>

#include "base/problem.hpp"

namespace tandem::detail {

namespace gpu {
class Device;
}

// A discrete share runs as one chunk below seams::overlap_from() bytes of operands (gemm_params'
// chunk_rows), its packing, copies, kernel and unpacking one after another, and as a pipeline of
// chunks above it, which overlaps them: the two move bytes at different rates.
struct FeedCost {
  double seconds = 0;                     // per call
  double bytes_per_second = 0;            // 0: unknown; a call of one chunk
  double pipelined_bytes_per_second = 0;  // a call of several chunks (0: as one chunk)
  double kernel_gflops = 0;               // the device's work (0: left out)
  bool adds_c = false;  // from ordinary memory: beta C is added on the host, C never goes in
  bool known() const { return bytes_per_second > 0; }
};

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

// The feed from the caller's ordinary memory to this discrete device, measured the first time it
// is asked for this device and precision: real calls on the device alone, operands in ordinary
// memory, square n x n x n with beta = 1 (A and B in, C out and added to), each call's time less
// its kernel's, the fastest of three after one not counted. n = 256 and the largest n whose call is
// one chunk give the fixed cost and the one-chunk rate; 1.5 times that n, the pipelined rate and
// the kernel's rate. Planning a call under auto can so run these calls once (uses_devices too). (A
// probe that moved C alone, over k = 64, found a fifth of the fixed cost that real products pay:
// packing A and B is part of it; and one line through a one-chunk call and a pipelined one made
// small calls look twice as fast to feed as they are.) Unknown, and not measured again, when the
// device fails there.
template <class T>
FeedCost ordinary_feed(gpu::Device& device);

}  // namespace tandem::detail
