// An opened OpenCL device as the OpenCL files use it: its context (its platform's, shared with
// the platform's other devices), its compiled programs and its staging pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "gpu/cl.hpp"
#include "gpu/device.hpp"
#include "gpu/engine.hpp"
#include "gpu/programs_cl.hpp"
#include "gpu/staging_pool.hpp"

namespace tandem::detail::gpu {

class Device {
 public:
  Device(const DeviceInfo& info, const cl::Device& device, const cl::Context& context);

  const DeviceInfo& info() const { return info_; }
  const std::string& description() const { return description_; }
  const cl::Context& context() const { return context_; }
  const cl::Device& device() const { return device_; }
  ProgramCache& programs() { return programs_; }
  StagingPool& staging() { return staging_; }
  // An in-order queue, with profiling (kernels) or without (copies), reused across calls: a
  // small call is mostly fixed costs, and making a queue is one of them (about 60 us on the H100
  // host, where a pipeline of chunks needs three). Throws cl::Error.
  enum class Queue { Profiled, Plain };
  cl::CommandQueue take_queue(Queue kind = Queue::Profiled);
  // Gives back a queue a share took, of the kind it took, once nothing is left in it (it drained).
  void give_queue(cl::CommandQueue queue, Queue kind = Queue::Profiled);
  // The bus rate, measured once (bus.cpp).
  std::once_flag& bus_once() { return bus_once_; }
  double bus_rate() const { return bus_rate_; }
  void set_bus_rate(double bytes_per_second) { bus_rate_ = bytes_per_second; }
  // The matrix engine's probe, run once (engine.cpp), whoever asks, const or not: it changes
  // nothing a call uses but the verdict it leaves.
  std::once_flag& engine_once() const { return engine_once_; }
  const EngineVerdict& engine() const { return engine_; }
  void set_engine(EngineVerdict verdict) const { engine_ = std::move(verdict); }
  // Keeps for good what a share whose queues could not be drained gave the device (its buffers
  // and queue), reachable and never released or reused: the device may still use them. The
  // device is out of use then (retire), so this holds one call's worth.
  void keep(cl::Memory memory) {
    std::lock_guard<std::mutex> lock(kept_mutex_);
    kept_memory_.push_back(std::move(memory));
  }
  void keep(cl::CommandQueue queue) {
    std::lock_guard<std::mutex> lock(kept_mutex_);
    kept_queues_.push_back(std::move(queue));
  }
  // Device memory that resident operands' copies hold (gpu::KeptOperand::count_as_resident).
  std::atomic<int64_t>& resident_bytes() { return resident_bytes_; }
  // gpu::retire: the seams' generation (plus 1) in which it was taken out of use, 0 never.
  std::atomic<uint64_t>& retired_in() { return retired_in_; }
  const std::atomic<uint64_t>& retired_in() const { return retired_in_; }

 private:
  DeviceInfo info_;
  std::string description_;  // info_.describe()
  cl::Device device_;
  cl::Context context_;
  ProgramCache programs_;
  StagingPool staging_;
  std::mutex queues_mutex_;
  std::vector<cl::CommandQueue> idle_queues_[2];  // by Queue
  std::once_flag bus_once_;
  double bus_rate_ = 0;
  mutable std::once_flag engine_once_;
  mutable EngineVerdict engine_;
  std::atomic<uint64_t> retired_in_{0};
  std::atomic<int64_t> resident_bytes_{0};
  std::mutex kept_mutex_;
  std::vector<cl::Memory> kept_memory_;
  std::vector<cl::CommandQueue> kept_queues_;
};

}  // namespace tandem::detail::gpu
