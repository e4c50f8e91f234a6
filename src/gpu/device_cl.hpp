// An opened OpenCL device as the OpenCL files use it: its context, its compiled programs, its
// staging pool, and the lock a driver that cannot run shares concurrently needs.
#pragma once

#include <mutex>

#include "cl.hpp"
#include "device.hpp"
#include "programs_cl.hpp"
#include "staging_pool.hpp"

namespace tandem::detail::gpu {

class Device {
 public:
  Device(const DeviceInfo& info, const cl::Device& device);

  const DeviceInfo& info() const { return info_; }
  const cl::Context& context() const { return context_; }
  const cl::Device& device() const { return device_; }
  ProgramCache& programs() { return programs_; }
  StagingPool& staging() { return staging_; }

  // Held by a share from enqueue until its queues have drained, on a device whose quirks say
  // shares must not overlap; an empty lock elsewhere.
  std::unique_lock<std::mutex> exclusive_if_needed();

 private:
  DeviceInfo info_;
  cl::Device device_;
  cl::Context context_;
  std::mutex run_mutex_;
  ProgramCache programs_;
  StagingPool staging_;
};

}  // namespace tandem::detail::gpu
