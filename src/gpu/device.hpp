// OpenCL devices as the rest of tandem sees them, with no OpenCL types: what a device is
// (DeviceInfo), the list of all of them, and opening one by a selector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tandem::detail::gpu {

// What a driver needs that the OpenCL specification does not say. Filled from device.cpp's
// table, by platform and vendor, so a new quirk is a row there and not a branch in the code.
struct Quirks {
  // Only one call at a time may run kernels on such devices (see device.cpp's table for why).
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
  // Its architecture from the vendor's attribute query ("nvidia-sm:9.0"; architecture.hpp), ""
  // where the driver does not say; and whether it is a GPU sharing the host's memory (an APU's
  // or a laptop's integrated GPU).
  std::string architecture;
  bool integrated = false;
  Quirks quirks;
  std::string describe() const;  // "platform / device"
};

// Every OpenCL device of every platform, in a stable order. Throws Error if OpenCL has no
// platform or fails.
std::vector<DeviceInfo> list_devices();

class Device;

// The devices `selector` names, each once, in its order: a comma-separated list of indices into
// list_devices() and case-insensitive substrings of "platform / device" (the first device each
// matches); "all", every GPU (every device where there is no GPU); empty, the first GPU (else the
// first device). Each device is opened once for the process, whichever selectors name it, in one
// context per platform; a device taken out of use (retire) is left out. Throws Error naming the
// cause.
std::vector<std::shared_ptr<Device>> open_devices(const std::string& selector);
// The one device `selector` names; Error (InvalidArgument) if it names several.
std::shared_ptr<Device> open_device(const std::string& selector);
const DeviceInfo& info(const Device& device);
// info(device).describe(), made once: every call's report names its devices.
const std::string& description(const Device& device);

// Held for the whole of a call whose shares run on these devices: the lock that makes calls take
// turns where a driver cannot run them concurrently (quirk serialize_shares); empty otherwise.
std::unique_lock<std::mutex> exclusive_for(const std::vector<std::shared_ptr<Device>>& devices);

// A device whose queues could not be drained after a failure may still read or write memory a
// share gave it, and would likely fail again: it is taken out of use for the rest of the process
// (for a test, the rest of its seams' scope: seams::generation), so no later call gives it work
// or memory.
void retire(Device& device);
bool retired(const Device& device);

// The device memory resident operands' copies hold on `device` (gpu::KeptOn), in bytes.
int64_t resident_bytes(Device& device);

// Whether operands are staged and copied for this device: it has no memory shared with the
// host, or the seam assume_discrete (tests) says to treat it so; assume_unified says not to.
bool is_discrete(const Device& device);

// Whether the device is a GPU, or the seam assume_gpus (tests) says to count it as one.
bool counts_as_gpu(const DeviceInfo& device);

// Every OpenCL device, as list_devices() numbers them, found once for the process and opening
// none: what auto weighs, for a call that names no device, before it opens any but the first.
// Throws Error as list_devices() does (until a search succeeds).
const std::vector<DeviceInfo>& found_devices();

// The size of the pinned staging buffer a discrete share gets for `bytes` (staging_pool.cpp).
size_t staging_size(size_t bytes);

// Bytes per second the bus moves from pinned host memory to this device at best, measured the
// first time it is asked (bus.cpp); 0 if it could not be measured.
double bus_bytes_per_second(Device& device);

// What the co-tuner's cost model measures of how the host feeds a device (bus.cpp): seconds to
// move `bytes` from pinned staging to the device and back (the best of three; 0 on a device that
// shares the host's memory), and to pack `pack_bytes` of ordinary memory into pinned staging on
// each of the given thread counts. Throws Error.
struct FeedTimes {
  double bytes = 0, pack_bytes = 0, in_seconds = 0, out_seconds = 0;
  std::vector<std::pair<int, double>> pack_seconds;  // (threads, seconds)
};
FeedTimes time_feed(Device& device, const std::vector<int>& pack_threads);

}  // namespace tandem::detail::gpu
