// Finding OpenCL devices, opening one by a selector, and what each driver needs beyond the spec.
#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include "device_cl.hpp"
#include "errors.hpp"
#include "seams.hpp"
#include "text.hpp"

namespace tandem::detail::gpu {
namespace {

// Drivers' needs beyond the OpenCL spec, matched by case-insensitive substrings of the platform
// and vendor names (empty matches any). Every matching row applies.
struct QuirkRow {
  const char* platform;
  const char* vendor;
  Quirks quirks;
};
const QuirkRow kQuirks[] = {
    // PoCL 3.1 can abort in its kernel-library cache ("pocl_release_dlhandle_cache: Assertion
    // `found->ref_count > 0' failed") when kernel commands run from several threads at once:
    // reproduced with eight threads calling hybrid GEMMs, 1 run in ~50 under load. Its shares
    // run on the same CPU cores anyway.
    {"portable computing language", "", {/*serialize_shares=*/true, 0}},
    // Intel's integrated GPUs share host memory only from page-aligned pointers.
    {"", "intel", {false, /*zero_copy_align=*/4096}},
};

Quirks quirks_for(const DeviceInfo& info) {
  Quirks q;
  const std::string platform = text::lower(info.platform), vendor = text::lower(info.vendor);
  for (const QuirkRow& row : kQuirks) {
    if (platform.find(row.platform) == std::string::npos ||
        vendor.find(row.vendor) == std::string::npos)
      continue;
    q.serialize_shares = q.serialize_shares || row.quirks.serialize_shares;
    q.zero_copy_align = std::max(q.zero_copy_align, row.quirks.zero_copy_align);
  }
  return q;
}

struct Found {
  DeviceInfo info;
  cl::Device device;
};

std::vector<Found> enumerate() {
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    if (e.err() == -1001) throw Error(Error::Kind::Runtime, "no OpenCL platform is installed");
    throw translate(e);
  }
  std::vector<Found> found;
  for (const auto& platform : platforms) {
    std::vector<cl::Device> devices;
    try {
      platform.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error& e) {
      if (e.err() == CL_DEVICE_NOT_FOUND) continue;
      throw translate(e);
    }
    for (const auto& d : devices) {
      DeviceInfo info;
      info.index = static_cast<int>(found.size());
      info.platform = platform.getInfo<CL_PLATFORM_NAME>();
      info.name = d.getInfo<CL_DEVICE_NAME>();
      info.vendor = d.getInfo<CL_DEVICE_VENDOR>();
      info.driver = d.getInfo<CL_DRIVER_VERSION>();
      info.version = d.getInfo<CL_DEVICE_VERSION>();
      info.is_gpu = (d.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_GPU) != 0;
      info.unified_memory = d.getInfo<CL_DEVICE_HOST_UNIFIED_MEMORY>() != CL_FALSE;
      info.fp64 = d.getInfo<CL_DEVICE_DOUBLE_FP_CONFIG>() != 0;
      info.compute_units = static_cast<int>(d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
      info.max_work_group = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
      info.local_mem_bytes = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
      info.global_mem_bytes = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
      info.max_alloc_bytes = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
      info.base_addr_align_bytes = static_cast<int>(d.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8);
      info.nv_compiler_options =
          d.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_nv_compiler_options") != std::string::npos;
      info.quirks = quirks_for(info);
      found.push_back({info, d});
    }
  }
  return found;
}

}  // namespace

std::string DeviceInfo::describe() const { return platform + " / " + name; }

Device::Device(const DeviceInfo& info, const cl::Device& device)
    : info_(info),
      device_(device),
      context_(device),
      programs_(context_, device_),
      // Idle staging beyond a quarter of the device's memory is released.
      staging_(context_, device_, info.global_mem_bytes / 4) {}

std::unique_lock<std::mutex> Device::exclusive_if_needed() {
  if (!info_.quirks.serialize_shares) return {};
  return std::unique_lock<std::mutex>(run_mutex_);
}

std::vector<DeviceInfo> list_devices() {
  try {
    std::vector<DeviceInfo> out;
    for (const auto& f : enumerate()) out.push_back(f.info);
    return out;
  } catch (const cl::Error& e) {
    throw translate(e);
  }
}

std::shared_ptr<Device> open_device(const std::string& selector) {
  // Opening is cached per selector, failures included, so a missing device costs one discovery.
  struct Entry {
    std::shared_ptr<Device> device;
    std::unique_ptr<Error> error;
  };
  // Deliberately never destroyed: releasing OpenCL objects from static destructors, after the
  // driver may have shut down, can crash or hang at exit.
  static std::mutex& mutex = *new std::mutex;
  static std::map<std::string, Entry>& cache = *new std::map<std::string, Entry>;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(selector);
  if (it == cache.end()) {
    Entry entry;
    try {
      const auto found = enumerate();
      if (found.empty()) throw Error(Error::Kind::Runtime, "OpenCL reports no device");
      const Found* chosen = nullptr;
      if (selector.empty()) {
        auto gpu =
            std::find_if(found.begin(), found.end(), [](const Found& f) { return f.info.is_gpu; });
        chosen = gpu != found.end() ? &*gpu : &found.front();
      } else if (std::all_of(selector.begin(), selector.end(),
                             [](unsigned char ch) { return std::isdigit(ch) != 0; })) {
        const size_t index = std::stoul(selector);
        if (index < found.size()) chosen = &found[index];
      } else {
        const std::string needle = text::lower(selector);
        for (const auto& f : found)
          if (text::lower(f.info.describe()).find(needle) != std::string::npos) {
            chosen = &f;
            break;
          }
      }
      if (chosen == nullptr) {
        std::string available;
        for (const auto& f : found)
          available += (available.empty() ? "" : "; ") + std::to_string(f.info.index) + ": " +
                       f.info.describe();
        throw Error(Error::Kind::Runtime,
                    "device selector '" + selector +
                        "' matches no OpenCL device (available: " + available + ")");
      }
      entry.device = std::make_shared<Device>(chosen->info, chosen->device);
    } catch (const cl::Error& e) {
      entry.error = std::make_unique<Error>(translate(e));
    } catch (const Error& e) {
      entry.error = std::make_unique<Error>(e);
    }
    it = cache.emplace(selector, std::move(entry)).first;
  }
  if (it->second.error) throw *it->second.error;
  return it->second.device;
}

const DeviceInfo& info(const Device& device) { return device.info(); }

bool is_discrete(const Device& device) {
  return !device.info().unified_memory || seams::assume_discrete();
}

}  // namespace tandem::detail::gpu
