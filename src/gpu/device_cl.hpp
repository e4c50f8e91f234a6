// An opened OpenCL device as the OpenCL files use it: its context (its platform's, shared with
// the platform's other devices), its compiled programs and its staging pool.
#pragma once

#include "cl.hpp"
#include "device.hpp"
#include "programs_cl.hpp"
#include "staging_pool.hpp"

namespace tandem::detail::gpu {

class Device {
 public:
  Device(const DeviceInfo& info, const cl::Device& device, const cl::Context& context);

  const DeviceInfo& info() const { return info_; }
  const cl::Context& context() const { return context_; }
  const cl::Device& device() const { return device_; }
  ProgramCache& programs() { return programs_; }
  StagingPool& staging() { return staging_; }

 private:
  DeviceInfo info_;
  cl::Device device_;
  cl::Context context_;
  ProgramCache programs_;
  StagingPool staging_;
};

}  // namespace tandem::detail::gpu
