// B on a discrete device as a share left it for the shares after it in the same call (gpu::KeptB,
// share.hpp), and the pooled staging of one operand: discrete_share.cpp's own types, in a private
// header of their own.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "cl.hpp"
#include "device_cl.hpp"
#include "share.hpp"
#include "staging_pool.hpp"

namespace tandem::detail::gpu {

// Pooled staging for one operand: a device buffer, and (unless the operand is the caller's
// pinned memory) a mapped pinned buffer to pack it into.
template <class T>
struct Operand {
  std::unique_ptr<Staging> pooled;
  T* mapped = nullptr;
  const cl::Buffer& device() const { return pooled->device; }
};

// B on the device in the kernel's layout, with what is needed to know it again: one share's, or
// kept for the shares after it (KeptB). Its staging goes back to the pool with the last share
// holding it, unless a share could not drain its queues (then something may still use it). B
// packed on the host by another device's share (`packed_by`) is held until this one is gone.
template <class T>
struct DeviceB final : KeptB {
  DeviceB(Device& device, const Share<T>& s, bool kernel_kb, int64_t device_ld)
      : dev(device),
        host(s.b),
        ld(s.ldb),
        rows(s.b_rows()),
        cols(s.b_cols()),
        trans(s.trans_b),
        kb(kernel_kb),
        dev_ld(device_ld) {}
  ~DeviceB() override {
    if (lost) {  // a device may still copy from or into it: leaked, never freed or reused
      (void)b.pooled.release();
      (void)raw.release();
      return;
    }
    if (b.pooled) dev.staging().give(std::move(b.pooled));
    if (raw) dev.staging().give(std::move(raw));
  }
  DeviceB(const DeviceB&) = delete;
  DeviceB& operator=(const DeviceB&) = delete;

  // Whether this is share s's B, read by the kernel in layout kb with leading dimension
  // device_ld on the device.
  bool holds(const Share<T>& s, bool kernel_kb, int64_t device_ld) const {
    return same_host(s) && kb == kernel_kb && dev_ld == device_ld;
  }

  // Whether share s's B is this one's on the host (the packed copy is B as stored, tight,
  // whatever layout a kernel reads it in).
  bool same_host(const Share<T>& s) const {
    return host == s.b && ld == s.ldb && rows == s.b_rows() && cols == s.b_cols() &&
           trans == s.trans_b;
  }

  // Where B is packed on the host, tight, in full: its own staging, or another share's.
  const T* packed() const { return packed_by ? packed_by->b.mapped : b.mapped; }

  Device& dev;
  const T* host;
  int64_t ld, rows, cols;
  bool trans, kb;
  int64_t dev_ld;       // its leading dimension on the device (padded to the kernel's vectors)
  bool pinned = false;  // in the caller's pinned memory
  bool direct = false;  // copied straight from the caller's memory (pinned, or the direct kernel)
  Operand<T> b;
  std::unique_ptr<Staging> raw;        // B as stored, before the device transposed it
  std::vector<cl::Event> ready;        // B is on the device, in the kernel's layout
  std::vector<int64_t> piece_ends;     // the stored row at which each of B's pieces ends
  std::atomic<bool> lost{false};       // dynamic balance's sides may mark it from their threads
  std::shared_ptr<DeviceB> packed_by;  // the share, on another device, whose packed B this copies
};

}  // namespace tandem::detail::gpu
