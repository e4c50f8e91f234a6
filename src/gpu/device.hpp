// OpenCL devices as the rest of tandem sees them, with no OpenCL types: what a device is
// (DeviceInfo), the list of all of them, and opening one by a selector.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tandem::detail::gpu {

// What a driver needs that the OpenCL specification does not say. Filled from device.cpp's
// table, by platform and vendor, so a new quirk is a row there and not a branch in the code.
struct Quirks {
  // Only one share at a time may run kernels on the device (see device.cpp's table for why).
  bool serialize_shares = false;
  // Zero-copy needs pointers aligned to this many bytes (0: the device's base-address alignment).
  int zero_copy_align = 0;
};

struct DeviceInfo {
  int index = -1;  // position in list_devices()
  std::string platform, name, vendor, driver, version;
  bool is_gpu = false;
  bool unified_memory = false;  // CL_DEVICE_HOST_UNIFIED_MEMORY
  bool fp64 = false;
  int compute_units = 0;
  uint64_t max_work_group = 0, local_mem_bytes = 0, global_mem_bytes = 0, max_alloc_bytes = 0;
  int base_addr_align_bytes = 0;
  bool nv_compiler_options = false;  // cl_nv_compiler_options (-cl-nv-maxrregcount and others)
  Quirks quirks;
  std::string describe() const;  // "platform / device"
};

// Every OpenCL device of every platform, in a stable order. Throws Error if OpenCL has no
// platform or fails.
std::vector<DeviceInfo> list_devices();

class Device;

// The device `selector` names (decimal index into list_devices(), or a case-insensitive
// substring of "platform / device"); empty selects the first GPU, else the first device. Opened
// once per selector and kept for the process. Throws Error naming the cause.
std::shared_ptr<Device> open_device(const std::string& selector);
const DeviceInfo& info(const Device& device);

// Whether operands are staged and copied for this device: it has no memory shared with the
// host, or the seam assume_discrete (tests) says to treat it so.
bool is_discrete(const Device& device);

}  // namespace tandem::detail::gpu
