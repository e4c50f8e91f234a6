// A batch's problems on one OpenCL device, with no OpenCL types: the coalesced kernel
// (kernels/gemm_direct.cl's gemm_batch) computes a whole run of problems of one shape in one
// launch. The device takes chunks of the batch from whoever deals them (src/run/batch.cpp); each
// chunk's operands are packed into pinned staging on the host, or sent as stored where a run's
// operand lies at one stride (a strided batch, a shared B), straight from tandem_malloc memory;
// one copy per operand crosses the bus. C comes back through staging, where the host unpacks it
// and adds beta C, or, where a run's C lies packed tight in tandem_malloc memory and beta is 0,
// unstaged, into the caller's C (old values the product does not need): a failure leaves every
// other C it had not finished as the caller gave it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/problem.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail::gpu {

// Problems [first, first + count) of a batch; count 0: nothing.
struct ProblemRange {
  int64_t first = 0, count = 0;
};

// What one device did of a batch.
struct BatchStats {
  int64_t problems = 0;  // whose C it finished
  int64_t chunks = 0;    // taken and finished (each one stage or more of the pipeline)
  int64_t launches = 0;  // kernel launches
  int64_t bytes_in = 0, bytes_out = 0;  // copied to and from the device
  int64_t bytes_staged = 0;  // of those, through pinned staging (packed or unpacked on the host)
};

// How a device's part of a batch goes in stages (plan/batch.cpp's rule): a stage holds at least
// `products` of the batch's largest products where they need more than batch.stage_bytes, and
// `in_flight` stages are in flight at once, each on a queue of its own. With `tail` > 0, a stage
// also takes at most 1/tail of what is left of its chunk, a cap that never drops below
// `tail_bytes` of staging or `products` of the largest products: the stages shrink towards the
// chunk's end, so that the last stage's kernel and copy back, which nothing overlaps, are short.
struct Stages {
  int64_t products = 1;
  int in_flight = 2;
  int tail = 0;
  int64_t tail_bytes = 0;
};

// Whether a batch whose first problems are `first` and `next` (nullptr: none) needs no host work
// on `device` (unstaged): a discrete device, A, B and C in tandem_malloc blocks of its context,
// beta 0, C's rows packed tight (ldc = n) and the next problem's C right after the first's, so
// that a strided batch's operands go straight from the caller's memory and its C back unstaged.
// Judged on those two, for the plan (a grouped batch's later groups may differ: their stages then
// pack and unpack on the device's thread alone); each stage lays out its own.
template <class T>
bool unstaged(const Device& device, const Problem<T>& first, const Problem<T>* next);

// The device failed partway: `unfinished` are the problems it had taken and not finished;
// `stats` what it finished before. Their C is as the caller gave it unless `c_written`: a copy
// into the caller's C (unstaged, beta 0) had been enqueued for one of them, so some C may hold
// the device's values, or part of them, which the CPU's recomputing overwrites.
class BatchFailure : public Error {
 public:
  BatchFailure(const Error& e, std::vector<ProblemRange> unfinished, BatchStats stats,
               bool c_written)
      : Error(e), unfinished_(std::move(unfinished)), stats_(stats), c_written_(c_written) {}
  const std::vector<ProblemRange>& unfinished() const noexcept { return unfinished_; }
  const BatchStats& stats() const noexcept { return stats_; }
  bool c_written() const noexcept { return c_written_; }

 private:
  std::vector<ProblemRange> unfinished_;
  BatchStats stats_;
  bool c_written_;
};

// What a device's part of a batch asks of whoever deals it, on the device's thread.
struct BatchHooks {
  // The next chunk of problems for this device: count 0 when none is left for it. `ahead`: the
  // device asks while a chunk of its own is still in flight (dealer.hpp's take).
  std::function<ProblemRange(bool ahead)> take;
  // Called once: when the first stage has been flushed to the device, or as soon as it is known
  // there will be none (nothing dealt, a failure).
  std::function<void()> flushed;
  // Called as each stage's C has been unpacked, with the problems it finished.
  std::function<void(int64_t problems)> finished;
};

// Computes the problems `hooks.take` deals this device, on the calling thread, until it deals
// none: `stages.in_flight` stages in flight on as many queues, so one's copies overlap the
// others' kernels, packing and unpacking on `host_threads` threads. `params` must be the direct
// kernel's (KERNEL 2). Every problem must have a product (has_product()). Throws BatchFailure on
// any failure of the device.
template <class T>
BatchStats run_batch(Device& device, const SharedParams& params, Problems<T> problems,
                     const BatchHooks& hooks, int host_threads, const Stages& stages);

}  // namespace tandem::detail::gpu
