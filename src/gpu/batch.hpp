// A batch's problems on one OpenCL device, with no OpenCL types: the coalesced kernel
// (kernels/gemm_direct.cl's gemm_batch) computes a whole run of problems of one shape in one
// launch. The device takes chunks of the batch from whoever deals them (src/run/batch.cpp); each
// chunk's operands are packed into pinned staging on the host, or sent as stored where a run's
// operand lies at one stride (a strided batch, a shared B), straight from tandem_malloc memory;
// one copy per operand crosses the bus, and C comes back through staging: the device never writes
// the caller's memory, so a failure leaves every C it had not finished as the caller gave it.
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
};

// The device failed partway: `unfinished` are the problems it had taken and not finished, whose
// C is as the caller gave it (C comes back only through staging, and only from a chunk that
// completed); `stats` what it finished before.
class BatchFailure : public Error {
 public:
  BatchFailure(const Error& e, std::vector<ProblemRange> unfinished, BatchStats stats)
      : Error(e), unfinished_(std::move(unfinished)), stats_(stats) {}
  const std::vector<ProblemRange>& unfinished() const noexcept { return unfinished_; }
  const BatchStats& stats() const noexcept { return stats_; }

 private:
  std::vector<ProblemRange> unfinished_;
  BatchStats stats_;
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
// none: two stages in flight on two queues, so one's copies overlap the other's kernels, packing
// and unpacking on `host_threads` threads. A stage holds at least `stage_products` of the
// batch's largest products where they need more than batch.stage_bytes. `params` must be the
// direct kernel's (KERNEL 2). Every problem must have a product (has_product()). Throws
// BatchFailure on any failure of the device.
template <class T>
BatchStats run_batch(Device& device, const SharedParams& params, Problems<T> problems,
                     const BatchHooks& hooks, int host_threads, int64_t stage_products);

}  // namespace tandem::detail::gpu
