// Finding OpenCL devices, opening one by a selector, and what each driver needs beyond the spec.
#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include "base/after_fork.hpp"
#include "base/seams.hpp"
#include "base/text.hpp"
#include "gpu/architecture_cl.hpp"
#include "gpu/device_cl.hpp"
#include "gpu/errors.hpp"

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
    // reproduced with eight threads calling hybrid GEMMs, 1 run in ~50 under load. Its calls
    // take turns (exclusive_for); they run on the same CPU cores anyway.
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
  after_fork::opencl_used();
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
      const std::string extensions = d.getInfo<CL_DEVICE_EXTENSIONS>();
      info.nv_compiler_options = extensions.find("cl_nv_compiler_options") != std::string::npos;
      info.architecture = architecture_of(d, extensions);
      info.integrated = info.is_gpu && info.unified_memory;
      info.quirks = quirks_for(info);
      found.push_back({info, d});
    }
  }
  return found;
}

// The selector's devices among those found, as positions: each once, in the selector's order.
std::vector<size_t> select(const std::vector<Found>& found, const std::string& selector) {
  std::vector<size_t> chosen;
  const auto add = [&chosen](size_t i) {
    if (std::find(chosen.begin(), chosen.end(), i) == chosen.end()) chosen.push_back(i);
  };
  const auto any_gpu =
      std::any_of(found.begin(), found.end(), [](const Found& f) { return f.info.is_gpu; });
  // "" and "all" prefer GPUs: a CPU device (PoCL) beside them would compete with the CPU share.
  if (selector.empty() || text::lower(selector) == "all") {
    for (size_t i = 0; i < found.size(); ++i)
      if (found[i].info.is_gpu || !any_gpu) add(i);
    if (selector.empty()) chosen.resize(1);
    return chosen;
  }
  for (size_t at = 0; at <= selector.size();) {
    const size_t end = std::min(selector.find(',', at), selector.size());
    const std::string item = selector.substr(at, end - at);
    at = end + 1;
    const bool digits =
        !item.empty() && std::all_of(item.begin(), item.end(),
                                     [](unsigned char ch) { return std::isdigit(ch) != 0; });
    size_t hit = found.size();
    if (digits) {
      // Parsed by hand: an index longer than size_t is simply no device, not an exception.
      size_t index = 0;
      for (char ch : item) index = index > found.size() ? index : index * 10 + size_t(ch - '0');
      if (index < found.size()) hit = index;
    } else if (!item.empty()) {
      const std::string needle = text::lower(item);
      for (size_t i = 0; i < found.size() && hit == found.size(); ++i)
        if (text::lower(found[i].info.describe()).find(needle) != std::string::npos) hit = i;
    }
    if (hit == found.size()) {
      std::string available;
      for (const auto& f : found)
        available += (available.empty() ? "" : "; ") + std::to_string(f.info.index) + ": " +
                     f.info.describe();
      throw Error(Error::Kind::Runtime, "device selector '" + selector + "': '" + item +
                                            "' matches no OpenCL device (available: " + available +
                                            ")");
    }
    add(hit);
  }
  return chosen;
}

// One context per platform, holding all its devices, so tandem_malloc's pinned memory is pinned
// for every device of the platform (two GPUs of one host copy from the same blocks).
cl::Context context_for(const std::vector<Found>& found, const Found& device) {
  std::vector<cl::Device> members;
  for (const auto& f : found)
    if (f.info.platform == device.info.platform) members.push_back(f.device);
  return cl::Context(members);
}

}  // namespace

std::string DeviceInfo::describe() const { return platform + " / " + name; }

Device::Device(const DeviceInfo& info, const cl::Device& device, const cl::Context& context)
    : info_(info),
      description_(info.describe()),
      device_(device),
      context_(context),
      programs_(context_, device_),
      // Idle staging beyond a quarter of the device's memory is released.
      staging_(context_, device_, info.global_mem_bytes / 4) {}

cl::CommandQueue Device::take_queue(Queue kind) {
  std::vector<cl::CommandQueue>& idle = idle_queues_[static_cast<int>(kind)];
  {
    std::lock_guard<std::mutex> lock(queues_mutex_);
    if (!idle.empty()) {
      cl::CommandQueue q = std::move(idle.back());
      idle.pop_back();
      return q;
    }
  }
  return cl::CommandQueue(context_, device_,
                          kind == Queue::Profiled ? CL_QUEUE_PROFILING_ENABLE : 0);
}

void Device::give_queue(cl::CommandQueue queue, Queue kind) {
  // As many as calls have run at once, within reason; the rest are released.
  constexpr size_t kIdle = 8;
  std::vector<cl::CommandQueue>& idle = idle_queues_[static_cast<int>(kind)];
  std::lock_guard<std::mutex> lock(queues_mutex_);
  if (queue() != nullptr && idle.size() < kIdle) idle.push_back(std::move(queue));
}

namespace {

// A child forked after OpenCL was used has none (after_fork.hpp).
void check_not_forked() {
  if (after_fork::opencl_lost())
    throw Error(Error::Kind::Runtime,
                "this process was forked after its parent used OpenCL, which a forked child "
                "cannot use: it computes on the CPU");
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  check_not_forked();
  try {
    std::vector<DeviceInfo> out;
    for (const auto& f : enumerate()) out.push_back(f.info);
    return out;
  } catch (const cl::Error& e) {
    throw translate(e);
  }
}

std::vector<std::shared_ptr<Device>> open_devices(const std::string& selector) {
  // Selections are cached per selector, failures included, so a missing device costs one
  // discovery; devices and contexts are opened once, whichever selectors name them. Deliberately
  // never destroyed: releasing OpenCL objects from static destructors, after the driver may have
  // shut down, can crash or hang at exit.
  struct Selection {
    std::vector<std::shared_ptr<Device>> devices;
    std::unique_ptr<Error> error;
  };
  check_not_forked();
  static std::mutex& mutex = []() -> std::mutex& {
    auto* m = new std::mutex;
    after_fork::hold(*m, after_fork::Rank::Devices);
    return *m;
  }();
  static auto& selections = *new std::map<std::string, Selection>;
  static auto& opened = *new std::map<int, std::shared_ptr<Device>>;
  static auto& contexts = *new std::map<std::string, cl::Context>;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = selections.find(selector);
  if (it == selections.end()) {
    Selection selection;
    try {
      const auto found = enumerate();
      if (found.empty()) throw Error(Error::Kind::Runtime, "OpenCL reports no device");
      for (size_t i : select(found, selector)) {
        const Found& f = found[i];
        auto& device = opened[f.info.index];
        if (!device) {
          auto context = contexts.find(f.info.platform);
          if (context == contexts.end())
            context = contexts.emplace(f.info.platform, context_for(found, f)).first;
          device = std::make_shared<Device>(f.info, f.device, context->second);
        }
        selection.devices.push_back(device);
      }
    } catch (const cl::Error& e) {
      selection.error = std::make_unique<Error>(translate(e));
    } catch (const Error& e) {
      selection.error = std::make_unique<Error>(e);
    }
    it = selections.emplace(selector, std::move(selection)).first;
  }
  if (it->second.error) throw *it->second.error;
  std::vector<std::shared_ptr<Device>> devices;
  std::string out_of_use;
  for (const auto& device : it->second.devices)
    if (!retired(*device))
      devices.push_back(device);
    else
      out_of_use += (out_of_use.empty() ? "" : ", ") + device->description();
  if (devices.empty())
    throw Error(Error::Kind::Runtime,
                "device " + out_of_use + " was taken out of use: its queues could not be drained");
  return devices;
}

std::shared_ptr<Device> open_device(const std::string& selector) {
  auto devices = open_devices(selector);
  if (devices.size() != 1)
    throw Error(Error::Kind::InvalidArgument, "device selector '" + selector + "' names " +
                                                  std::to_string(devices.size()) +
                                                  " devices; this needs one");
  return devices.front();
}

std::unique_lock<std::mutex> exclusive_for(const std::vector<std::shared_ptr<Device>>& devices) {
  static std::mutex& serialized = *new std::mutex;
  for (const auto& d : devices)
    if (d->info().quirks.serialize_shares) return std::unique_lock<std::mutex>(serialized);
  return {};
}

const DeviceInfo& info(const Device& device) { return device.info(); }

const std::string& description(const Device& device) { return device.description(); }

bool is_discrete(const Device& device) {
  if (seams::assume_discrete()) return true;
  return !device.info().unified_memory && !seams::assume_unified();
}

void retire(Device& device) { device.retired_in().store(seams::generation() + 1); }

bool retired(const Device& device) { return device.retired_in().load() == seams::generation() + 1; }

int64_t resident_bytes(Device& device) { return device.resident_bytes().load(); }

bool counts_as_gpu(const DeviceInfo& device) { return device.is_gpu || seams::assume_gpus(); }

const std::vector<DeviceInfo>& found_devices() {
  static const std::vector<DeviceInfo> found = list_devices();  // never changes once found
  return found;
}

}  // namespace tandem::detail::gpu
