// OpenCL behind gpu.hpp: finds and opens devices, builds the embedded GEMM kernel once per
// (device, precision, layout, parameters), and runs one GPU share with zero-copy or staged
// operands. Every OpenCL status is checked (opencl.hpp throws cl::Error) and turned into a
// tandem::Error naming the call. No callbacks are registered; completion is awaited on events.
#include "gpu.hpp"

#include <CL/opencl.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <type_traits>
#include <unordered_map>

#include "tandem_kernels.hpp"
#include "tasks.hpp"
#include "topology.hpp"

namespace tandem::detail::gpu {
namespace {

const char* status_name(cl_int code) {
  switch (code) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_MAP_FAILURE: return "CL_MAP_FAILURE";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
      return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_HOST_PTR: return "CL_INVALID_HOST_PTR";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
    case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL error";
  }
}

Error opencl_error(const std::string& call, cl_int code, const std::string& detail = {}) {
  std::ostringstream msg;
  msg << call << " failed: " << status_name(code) << " (" << code << ")";
  if (!detail.empty()) msg << ": " << detail;
  return Error(Error::Kind::OpenCL, msg.str(), 0, call, code);
}

Error translate(const cl::Error& e, const std::string& context = {}) {
  return opencl_error(e.what() != nullptr ? e.what() : "OpenCL", e.err(), context);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
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
      found.push_back({info, d});
    }
  }
  return found;
}

// Default kernel parameters by kind of device, until a tuned profile supplies better ones.
// Discrete and integrated GPUs get a 64x64 tile of 16x16 work-items; a CPU device (PoCL), whose
// work-groups become vectorised loops, a 4x8 group with a 16x8 register tile (a hand sweep on
// PoCL 3.1, 2-core EPYC, sgemm 512: 20.5 GFLOPS against 4.2 for a 32x32 tile on 8x8).
// INDEX_LONG = 1 forces 64-bit index arithmetic; 0 leaves it to the operands' extents.
// A_T and B_T choose the layout the kernel reads each operand in (RaijinCL's NN, NT and TN
// codelets): 0 as op(X) itself, 1 transposed, -1 whatever the caller stored.
const Params& defaults_for(const DeviceInfo& info) {
  static const Params gpu{{"MWG", 64},   {"NWG", 64},     {"KWG", 16}, {"MDIMC", 16},
                          {"NDIMC", 16}, {"KUNROLL", 4},  {"VW", 4},   {"SA", 1},
                          {"SB", 1},     {"STRIDED", 1},  {"INDEX_LONG", 0},
                          {"A_T", -1},   {"B_T", -1},     {"KERNEL", 0}, {"VWM", 1},
                          {"VWN", 1},    {"DB", 0},       {"NV_MAXRREG", 0}, {"AK", 0},
                          {"CHUNK_FILL", 1}, {"QUEUES", 1}};
  static const Params cpu{{"MWG", 64},   {"NWG", 64},     {"KWG", 16}, {"MDIMC", 4},
                          {"NDIMC", 8},  {"KUNROLL", 4},  {"VW", 4},   {"SA", 1},
                          {"SB", 1},     {"STRIDED", 1},  {"INDEX_LONG", 0},
                          {"A_T", -1},   {"B_T", -1},     {"KERNEL", 0}, {"VWM", 1},
                          {"VWN", 1},    {"DB", 0},       {"NV_MAXRREG", 0}, {"AK", 0},
                          {"CHUNK_FILL", 1}, {"QUEUES", 1}};
  return info.is_gpu ? gpu : cpu;
}

// The kernel source's #defines for one precision, read layout and parameter set.
std::string defines_for(bool fp64, bool trans_a, bool trans_b, bool long_index, const Params& params) {
  std::string defines;
  if (fp64) defines += "#define USE_DOUBLE 1\n";
  if (long_index) defines += "#define INDEX_LONG 1\n";
  defines += "#define TRANS_A " + std::to_string(trans_a ? 1 : 0) + "\n";
  defines += "#define TRANS_B " + std::to_string(trans_b ? 1 : 0) + "\n";
  // The kernel's own macros; the host decides index width and read layouts above, NV_MAXRREG
  // is a compiler option (build_options), CHUNK_FILL and QUEUES the host's chunking (chunk_rows,
  // launch).
  for (const auto& [name, value] : params)
    if (name != "INDEX_LONG" && name != "A_T" && name != "B_T" && name != "NV_MAXRREG" && name != "CHUNK_FILL" &&
        name != "QUEUES")
      defines += "#define " + name + " " + std::to_string(value) + "\n";
  return defines;
}

// Options for clBuildProgram. NVIDIA's register cap is a tuning parameter; other devices ignore it.
// With driver 580 on the H100 the driver accepts "-cl-nv-maxrregcount=N" but its own build log
// shows no cap (a 64x128 kernel used 242 registers under =128), and it rejects the spaced form
// "-cl-nv-maxrregcount N" (docs/PERFORMANCE.md, fourth session).
std::string build_options(const DeviceInfo& info, const Params& params) {
  std::string options = "-cl-std=CL1.2";
  auto it = params.find("NV_MAXRREG");
  if (info.nv_compiler_options && it != params.end() && it->second > 0)
    options += " -cl-nv-maxrregcount=" + std::to_string(it->second);
  return options;
}

// The layout the kernel reads an operand in: the parameter's, or the caller's when it is -1.
bool read_transposed(const Params& params, const char* name, bool caller) {
  const int v = params.at(name);
  return v < 0 ? caller : v == 1;
}

std::atomic<bool> g_assume_discrete{false};
// Copies smaller than this (A, B and C together) run as one chunk: overlapping them would not pay.
std::atomic<size_t> g_overlap_from{size_t{16} << 20};
// tandem_malloc pins blocks of at least this many bytes on a discrete device.
std::atomic<size_t> g_pinned_from{size_t{1} << 20};

struct Program {
  std::once_flag built;
  cl::Program program;
  std::string error;  // non-empty: the build failed, and this says why
};

}  // namespace

std::string DeviceInfo::describe() const { return platform + " / " + name; }

// Staging for a discrete device: a pinned host buffer, mapped once for its lifetime, and a
// device buffer of the same size.
struct Staging {
  cl::Buffer pinned, device;
  void* mapped = nullptr;
  size_t bytes = 0;
  bool host = true;  // false: a device buffer alone, for operands copied from pinned memory
};

class Device {
 public:
  explicit Device(const Found& found)
      : info_(found.info), device_(found.device), context_(found.device) {}

  const DeviceInfo& info() const { return info_; }
  const cl::Context& context() const { return context_; }
  const cl::Device& device() const { return device_; }

  // PoCL 3.1 can abort in its kernel-library cache ("pocl_release_dlhandle_cache: Assertion
  // `found->ref_count > 0' failed") when kernel commands run from several threads at once:
  // reproduced here with eight threads calling hybrid GEMMs, 1 run in ~50 under load. On PoCL a
  // GPU share therefore holds this lock from enqueue until its queue has drained; its shares run
  // on the same CPU cores anyway. Real GPUs run shares concurrently.
  std::unique_lock<std::mutex> exclusive_if_needed() {
    if (info_.platform.find("Portable Computing Language") == std::string::npos) return {};
    return std::unique_lock<std::mutex>(run_mutex_);
  }

  // Staging of at least `bytes`, reused across calls: allocating and pinning it anew each call
  // cost more than the kernel on the H100 host (docs/PERFORMANCE.md). The smallest idle one that
  // fits, else a new one.
  std::unique_ptr<Staging> take_staging(size_t bytes, bool with_host = true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto best = idle_.end();
      for (auto it = idle_.begin(); it != idle_.end(); ++it)
        if ((*it)->host == with_host && (*it)->bytes >= bytes &&
            (best == idle_.end() || (*it)->bytes < (*best)->bytes))
          best = it;
      // A buffer more than twice the need would tie up memory another call could use.
      if (best != idle_.end() && (*best)->bytes <= 2 * bytes + (1u << 20)) {
        auto st = std::move(*best);
        idle_.erase(best);
        idle_bytes_ -= st->bytes;
        return st;
      }
    }
    auto st = std::make_unique<Staging>();
    st->bytes = (bytes + (1u << 20) - 1) / (1u << 20) * (1u << 20);  // whole MiB, to reuse well
    st->host = with_host;
    st->device = cl::Buffer(context_, CL_MEM_READ_WRITE, st->bytes);
    if (with_host) {
      st->pinned = cl::Buffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, st->bytes);
      cl::CommandQueue q(context_, device_);
      st->mapped = q.enqueueMapBuffer(st->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, st->bytes);
    }
    return st;
  }

  // Returns staging no command uses any more. Idle staging beyond a quarter of the device's
  // memory is released, largest first.
  void give_staging(std::unique_ptr<Staging> st) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_bytes_ += st->bytes;
    idle_.push_back(std::move(st));
    const uint64_t cap = info_.global_mem_bytes / 4;
    while (idle_bytes_ > cap && !idle_.empty()) {
      auto largest = std::max_element(idle_.begin(), idle_.end(),
                                      [](const auto& x, const auto& y) { return x->bytes < y->bytes; });
      idle_bytes_ -= (*largest)->bytes;
      idle_.erase(largest);  // the mapped pinned buffer is released with it
    }
  }

  // A fresh, uncached build of `defines` for inspection: the source, the options, the compiler's
  // log and the device binary (PTX on NVIDIA). Throws cl::Error only if no program can be made;
  // a failed build is reported in the log.
  BuildReport inspect(const std::string& defines, const std::string& options) {
    BuildReport r;
    r.source = defines + kernels::gemm;
    r.options = options;
    cl::Program program(context_, r.source);
    try {
      program.build({device_}, options.c_str());
      r.built = true;
    } catch (const cl::Error&) {
      r.built = false;
    }
    try {
      r.log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
    } catch (const cl::Error&) {
    }
    if (r.built) {
      const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      if (!binaries.empty()) r.binary.assign(binaries.front().begin(), binaries.front().end());
    }
    return r;
  }

  // The compiled program for `defines`, built once; a failed build is remembered too. Builds of
  // different programs run concurrently (the tuner compiles candidates ahead of measuring them).
  const cl::Program& program(const std::string& defines, const std::string& options) {
    std::shared_ptr<Program> entry;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& slot = programs_[options + "\n" + defines];
      if (!slot) slot = std::make_shared<Program>();
      entry = slot;
    }
    std::call_once(entry->built, [&] { build(defines, options, *entry); });
    if (!entry->error.empty())
      throw opencl_error("clBuildProgram", CL_BUILD_PROGRAM_FAILURE, entry->error);
    return entry->program;
  }

 private:
  void build(const std::string& defines, const std::string& options, Program& result) {
    const std::string source = defines + kernels::gemm;
    try {
      result.program = cl::Program(context_, source);
      result.program.build({device_}, options.c_str());
    } catch (const cl::Error& e) {
      std::string log;
      try {
        log = result.program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
      } catch (const cl::Error&) {
      }
      // Keep the first lines of the compiler's log: enough to name the cause.
      if (log.size() > 2000) log.resize(2000);
      result.error = std::string(e.what()) + " for [" + options + " " + defines + "]" +
                     (log.empty() ? "" : ": " + log);
      std::replace(result.error.begin(), result.error.end(), '\n', ' ');
    }
  }

  DeviceInfo info_;
  cl::Device device_;
  cl::Context context_;
  std::mutex mutex_;
  std::mutex run_mutex_;  // see exclusive_if_needed()
  std::unordered_map<std::string, std::shared_ptr<Program>> programs_;
  std::vector<std::unique_ptr<Staging>> idle_;
  uint64_t idle_bytes_ = 0;
};

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
        auto gpu = std::find_if(found.begin(), found.end(), [](const Found& f) { return f.info.is_gpu; });
        chosen = gpu != found.end() ? &*gpu : &found.front();
      } else if (std::all_of(selector.begin(), selector.end(),
                             [](unsigned char ch) { return std::isdigit(ch) != 0; })) {
        const size_t index = std::stoul(selector);
        if (index < found.size()) chosen = &found[index];
      } else {
        const std::string needle = lower(selector);
        for (const auto& f : found)
          if (lower(f.info.describe()).find(needle) != std::string::npos) {
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
                    "device selector '" + selector + "' matches no OpenCL device (available: " +
                        available + ")");
      }
      entry.device = std::make_shared<Device>(*chosen);
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

void set_assume_discrete(bool on) { g_assume_discrete.store(on); }

void set_overlap_from(size_t bytes) { g_overlap_from.store(bytes); }
size_t pinned_from() { return g_pinned_from.load(); }
void set_pinned_from(size_t bytes) { g_pinned_from.store(bytes); }

bool is_discrete(const Device& device) {
  return !device.info().unified_memory || g_assume_discrete.load();
}

namespace {

// Pinned allocations handed out by pinned_alloc, by the address the caller got.
struct PinnedBlock {
  uintptr_t end = 0;
  std::shared_ptr<Device> device;
  cl::Buffer buffer;
  void* mapped = nullptr;
};

std::mutex& pinned_mutex() {
  static std::mutex& m = *new std::mutex;  // never destroyed, like the device cache
  return m;
}

std::map<uintptr_t, PinnedBlock>& pinned_blocks() {
  static auto& blocks = *new std::map<uintptr_t, PinnedBlock>;
  return blocks;
}

// Whether [p, p + bytes) lies inside one pinned block of `device`.
bool in_pinned_block(const Device& device, const void* p, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(pinned_mutex());
  auto& blocks = pinned_blocks();
  auto it = blocks.upper_bound(begin);
  if (it == blocks.begin()) return false;
  --it;
  return it->second.device.get() == &device && begin + bytes <= it->second.end;
}

}  // namespace

void* pinned_alloc(const std::shared_ptr<Device>& device, size_t bytes) {
  constexpr size_t kPage = 4096;
  if (bytes == 0 || bytes > SIZE_MAX - 2 * kPage) return nullptr;
  try {
    PinnedBlock block;
    block.device = device;
    const size_t size = (bytes + kPage - 1) / kPage * kPage + kPage;  // room to page-align
    block.buffer = cl::Buffer(device->context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size);
    cl::CommandQueue q(device->context(), device->device());
    block.mapped = q.enqueueMapBuffer(block.buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size);
    const uintptr_t base = reinterpret_cast<uintptr_t>(block.mapped);
    const uintptr_t aligned = (base + kPage - 1) / kPage * kPage;
    block.end = aligned + bytes;
    std::lock_guard<std::mutex> lock(pinned_mutex());
    pinned_blocks().emplace(aligned, std::move(block));
    return reinterpret_cast<void*>(aligned);
  } catch (const cl::Error&) {
    return nullptr;  // the caller falls back to ordinary memory
  }
}

bool pinned_free(void* p) {
  PinnedBlock block;
  {
    std::lock_guard<std::mutex> lock(pinned_mutex());
    auto it = pinned_blocks().find(reinterpret_cast<uintptr_t>(p));
    if (it == pinned_blocks().end()) return false;
    block = std::move(it->second);
    pinned_blocks().erase(it);
  }
  try {
    cl::CommandQueue q(block.device->context(), block.device->device());
    q.enqueueUnmapMemObject(block.buffer, block.mapped);
    q.finish();
  } catch (const cl::Error&) {
    // Released with the buffer below either way.
  }
  return true;
}

uint64_t local_bytes(const Params& p, uint64_t elem) {
  const auto at = [&](const char* name) { return static_cast<uint64_t>(p.at(name)); };
  if (p.count("KERNEL") && p.at("KERNEL") == 1)
    return elem * at("KWG") * (at("MWG") + at("NWG")) * (p.at("DB") ? 2 : 1);
  return elem * at("KWG") * ((at("SA") ? at("MWG") + 1 : 0) + (at("SB") ? at("NWG") + 1 : 0));
}

Params resolve_params(const Device& device, bool fp64, const std::map<std::string, int>& overrides) {
  const DeviceInfo& di = device.info();
  Params p = defaults_for(di);
  for (const auto& [name, value] : overrides) {
    if (p.find(name) == p.end())
      throw Error(Error::Kind::InvalidArgument, "unknown kernel parameter '" + name + "'");
    p[name] = value;
  }
  for (const char* layout : {"A_T", "B_T"})
    if (p[layout] < -1 || p[layout] > 1)
      throw Error(Error::Kind::Runtime, std::string("kernel parameter ") + layout + " must be -1, 0 or 1");
  for (const char* positive : {"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "KUNROLL", "VW"})
    if (p[positive] <= 0)
      throw Error(Error::Kind::Runtime,
                  std::string("kernel parameter ") + positive + " must be positive");
  const uint64_t group = static_cast<uint64_t>(p["MDIMC"]) * static_cast<uint64_t>(p["NDIMC"]);
  if (group > di.max_work_group)
    throw Error(Error::Kind::Runtime, "work-group of " + std::to_string(group) +
                                          " work-items exceeds the device's limit of " +
                                          std::to_string(di.max_work_group));
  if (p["KERNEL"] != 0 && p["KERNEL"] != 1)
    throw Error(Error::Kind::Runtime, "kernel parameter KERNEL must be 0 or 1");
  for (const char* width : {"VWM", "VWN"})
    if (p[width] != 1 && p[width] != 2 && p[width] != 4 && p[width] != 8)
      throw Error(Error::Kind::Runtime, std::string("kernel parameter ") + width + " must be 1, 2, 4 or 8");
  if (p["CHUNK_FILL"] < 1 || p["CHUNK_FILL"] > 64)
    throw Error(Error::Kind::Runtime, "kernel parameter CHUNK_FILL must be 1 to 64");
  if (p["QUEUES"] < 1 || p["QUEUES"] > 2)
    throw Error(Error::Kind::Runtime, "kernel parameter QUEUES must be 1 or 2");
  if (p["NV_MAXRREG"] < 0 || p["NV_MAXRREG"] > 255)
    throw Error(Error::Kind::Runtime, "kernel parameter NV_MAXRREG must be 0 (none) to 255");
  if (p["KERNEL"] == 1) {
    const int64_t wgs = static_cast<int64_t>(group) * p["VW"];
    if (p["MWG"] % (p["MDIMC"] * p["VWM"]) != 0 || p["NWG"] % (p["NDIMC"] * p["VWN"]) != 0 ||
        (int64_t{p["MWG"]} * p["KWG"]) % wgs != 0 || (int64_t{p["NWG"]} * p["KWG"]) % wgs != 0 ||
        p["KWG"] % p["VW"] != 0 || p["MWG"] % p["VW"] != 0 || p["NWG"] % p["VW"] != 0)
      throw Error(Error::Kind::Runtime,
                  "kernel parameters do not fit KERNEL 1's tiling: " + describe(p));
  }
  const uint64_t elem = fp64 ? 8 : 4;
  const uint64_t local = local_bytes(p, elem);
  if (local > di.local_mem_bytes)
    throw Error(Error::Kind::Runtime, "kernel needs " + std::to_string(local) +
                                          " bytes of local memory; the device has " +
                                          std::to_string(di.local_mem_bytes));
  return p;
}

std::string describe(const Params& params) {
  std::string s;
  for (const auto& [name, value] : params) s += (s.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return s;
}

int64_t row_tile(const Params& params) {
  auto it = params.find("MWG");
  return it != params.end() && it->second > 0 ? it->second : 1;
}

namespace {

// Sets argument `arg` (then the next) to an index, 32- or 64-bit as the program was built.
void set_index(cl::Kernel& kernel, int& arg, bool long_index, int64_t v) {
  if (long_index)
    kernel.setArg(arg++, static_cast<cl_long>(v));
  else
    kernel.setArg(arg++, static_cast<cl_int>(v));
}

// One operand as the kernel sees it: buffer, element offset and leading dimension.
struct KernelOperand {
  const cl::Buffer* buffer;
  int64_t offset, ld;
};

// Sets the gemm kernel's arguments, indices 32- or 64-bit as the program was built.
template <class T>
void set_gemm_args(cl::Kernel& kernel, bool long_index, int64_t m, int64_t n, int64_t k, T alpha,
                   const KernelOperand& a, const KernelOperand& b, T beta, const KernelOperand& c) {
  int arg = 0;
  auto index = [&](int64_t v) { set_index(kernel, arg, long_index, v); };
  index(m);
  index(n);
  index(k);
  kernel.setArg(arg++, alpha);
  for (const KernelOperand* op : {&a, &b, &c}) {
    if (op == &c) kernel.setArg(arg++, beta);
    kernel.setArg(arg++, *op->buffer);
    index(op->offset);
    index(op->ld);
  }
}

// The transpose kernel's arguments: dst (cols x rows) = src (rows x cols)^T, both tight at `offset`
// elements of their buffers.
void set_transpose_args(cl::Kernel& kernel, bool long_index, int64_t rows, int64_t cols,
                        const cl::Buffer& src, int64_t src_offset, const cl::Buffer& dst, int64_t dst_offset) {
  int arg = 0;
  auto index = [&](int64_t v) { set_index(kernel, arg, long_index, v); };
  index(rows);
  index(cols);
  kernel.setArg(arg++, src);
  index(src_offset);
  index(cols);
  kernel.setArg(arg++, dst);
  index(dst_offset);
  index(rows);
}

// The bytes a stored block occupies, for overlap tests.
struct Range {
  uintptr_t begin = 0, end = 0;
  bool overlaps(const Range& o) const { return begin < o.end && o.begin < end; }
};

// Elements spanned by a rows x cols row-major block with leading dimension ld.
int64_t span(int64_t rows, int64_t cols, int64_t ld) { return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols; }

template <class T>
Range range_of(const T* p, int64_t rows, int64_t cols, int64_t ld) {
  const auto b = reinterpret_cast<uintptr_t>(p);
  return {b, b + static_cast<uintptr_t>(span(rows, cols, ld)) * sizeof(T)};
}

// Runs f(r0, r1) over [0, rows) in blocks: on `threads` threads when the copy is large enough to
// pay for it (packing stands between the call and the GPU's start).
void over_rows(int64_t rows, size_t bytes, int threads, const std::function<void(int64_t, int64_t)>& f) {
  constexpr size_t kParallelFrom = size_t{8} << 20;
  if (bytes < kParallelFrom || threads < 2 || rows < 2) {
    f(0, rows);
    return;
  }
  const int64_t blocks = std::min<int64_t>(rows, 4 * threads);
  tasks::in_arena(threads, [&] {
    tasks::parallel_for(blocks, [&](int64_t i) { f(rows * i / blocks, rows * (i + 1) / blocks); });
  });
}

// dst (leading dimension dst_ld) = the rows x cols block at src (leading dimension src_ld), on
// `threads` threads for large blocks; one memcpy per block of rows when both sides are tight.
template <class T>
void copy_rows(const T* src, int64_t src_ld, int64_t rows, int64_t cols, T* dst, int64_t dst_ld, int threads) {
  over_rows(rows, static_cast<size_t>(rows * cols) * sizeof(T), threads, [&](int64_t r0, int64_t r1) {
    if (src_ld == cols && dst_ld == cols) {
      std::memcpy(dst + r0 * cols, src + r0 * cols, static_cast<size_t>((r1 - r0) * cols) * sizeof(T));
      return;
    }
    for (int64_t r = r0; r < r1; ++r)
      std::memcpy(dst + r * dst_ld, src + r * src_ld, static_cast<size_t>(cols) * sizeof(T));
  });
}

// Packs a rows x cols block (leading dimension ld) tight into dst.
template <class T>
void pack(const T* src, int64_t rows, int64_t cols, int64_t ld, T* dst, int threads) {
  copy_rows(src, ld, rows, cols, dst, cols, threads);
}

// dst (cols x rows, tight) = the transpose of src (rows x cols, leading dimension ld), in blocks
// so both sides stay in cache; columns of src (rows of dst) are shared among the threads.
template <class T>
void pack_transposed(const T* src, int64_t rows, int64_t cols, int64_t ld, T* dst, int threads) {
  constexpr int64_t kBlock = 32;
  over_rows(cols, static_cast<size_t>(rows * cols) * sizeof(T), threads, [&](int64_t c_begin, int64_t c_end) {
    for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
      for (int64_t c0 = c_begin; c0 < c_end; c0 += kBlock)
        for (int64_t r = r0; r < std::min(rows, r0 + kBlock); ++r)
          for (int64_t c = c0; c < std::min(c_end, c0 + kBlock); ++c) dst[c * rows + r] = src[r * ld + c];
  });
}

// Unpacks a tight rows x cols block into dst (leading dimension ld).
template <class T>
void unpack(const T* src, int64_t rows, int64_t cols, T* dst, int64_t ld, int threads) {
  copy_rows(src, cols, rows, cols, dst, ld, threads);
}

// One operand on the device: either the caller's memory in place (zero-copy), or a packed copy
// in a pinned host buffer (CL_MEM_ALLOC_HOST_PTR) that the kernel reads directly on a
// unified-memory device, or that is copied into a device buffer on a discrete one.
template <class T>
struct Operand {
  Report::Buffer path = Report::Buffer::None;
  cl::Buffer in_place;  // zero-copy
  cl::Buffer pinned;    // staged on a unified device: host-visible, read by the kernel
  T* mapped = nullptr;  // staged: pinned's host pointer while mapped
  cl::Buffer device;    // staged, discrete devices: the kernel's copy
  std::unique_ptr<Staging> pooled;  // discrete devices: pinned + device buffers from the pool
  int64_t ld = 0;       // leading dimension the kernel sees

  const cl::Buffer& kernel_buffer() const {
    if (path == Report::Buffer::ZeroCopy) return in_place;
    return device() != nullptr ? device : pinned;
  }
};

template <class T>
class InFlightImpl final : public InFlight {
 public:
  InFlightImpl(Device& dev, const Share<T>& s)
      : dev_(dev), s_(s), unified_(dev.info().unified_memory && !g_assume_discrete.load()) {}

  // Whatever happened, nothing may still read or write host memory (the caller's, or pinned
  // buffers about to be released) once this object is gone.
  ~InFlightImpl() override {
    // Staging goes back to the pool only once nothing uses it (a failed drain keeps it out).
    // The device's exclusive lock, if held, is released after the drain, as a member.
    if (!drain()) return;
    for (Operand<T>* op : {&a_, &b_, &c_})
      if (op->pooled) dev_.give_staging(std::move(op->pooled));
    for (auto* raw : {&a_raw_, &b_raw_})
      if (*raw) dev_.give_staging(std::move(*raw));
  }
  InFlightImpl(const InFlightImpl&) = delete;
  InFlightImpl& operator=(const InFlightImpl&) = delete;

  // Enqueues everything; on a throw, kernel_enqueued() says whether the kernel may still run.
  void start(const Params& params) {
    exclusive_ = dev_.exclusive_if_needed();
    Device& dev = dev_;
    const Share<T>& s = s_;
    const DeviceInfo& di = dev.info();
    queue_ = cl::CommandQueue(dev.context(), dev.device(), CL_QUEUE_PROFILING_ENABLE);
    zero_copy_align_ = static_cast<uintptr_t>(std::max(64, di.base_addr_align_bytes));
    // Intel's integrated GPUs share host memory only from page-aligned pointers.
    if (lower(di.vendor).find("intel") != std::string::npos) zero_copy_align_ = 4096;

    // The caller's stored operands, and the layouts the kernel reads them in.
    const int64_t a_rows = s.trans_a ? s.k : s.m, a_cols = s.trans_a ? s.m : s.k;
    const int64_t b_rows = s.trans_b ? s.n : s.k, b_cols = s.trans_b ? s.k : s.n;
    const bool ka = read_transposed(params, "A_T", s.trans_a);
    const bool kb = read_transposed(params, "B_T", s.trans_b);
    if (!unified_) {
      start_discrete(params, ka, kb);
      return;
    }
    // OpenCL leaves commands on USE_HOST_PTR buffers with overlapping host regions undefined
    // (A @ A, or blocks of one array), so an operand overlapping one already in place is copied.
    // C is in place only when its rows leave no gaps (ldc == n): a runtime that shadows host
    // memory copies the whole span back, gaps included, which may belong to another thread.
    const Range rc = range_of(s.c, s.m, s.n, s.ldc);
    const Range ra = range_of(s.a, a_rows, a_cols, s.lda);
    const Range rb = range_of(s.b, b_rows, b_cols, s.ldb);
    const bool c_in_place = in_place_ok(s.c) && (s.ldc == s.n || s.m == 1);
    const bool a_in_place = ka == s.trans_a && in_place_ok(s.a) && !(c_in_place && ra.overlaps(rc));
    const bool b_in_place = kb == s.trans_b && in_place_ok(s.b) &&
                            !(c_in_place && rb.overlaps(rc)) && !(a_in_place && rb.overlaps(ra));
    input(a_, s.a, a_rows, a_cols, s.lda, ka != s.trans_a, a_in_place);
    input(b_, s.b, b_rows, b_cols, s.ldb, kb != s.trans_b, b_in_place);
    output(c_, s.c, s.m, s.n, s.ldc, s.beta != T(0), c_in_place);
    a_path = a_.path;
    b_path = b_.path;
    c_path = c_.path;

    const int64_t ka_rows = ka ? s.k : s.m, ka_cols = ka ? s.m : s.k;
    const int64_t kb_rows = kb ? s.n : s.k, kb_cols = kb ? s.k : s.n;
    const bool long_index = params.at("INDEX_LONG") != 0 ||
                            std::max({span(ka_rows, ka_cols, a_.ld), span(kb_rows, kb_cols, b_.ld),
                                      span(s.m, s.n, c_.ld)}) +
                                static_cast<int64_t>(params.at("MWG") + params.at("NWG") +
                                                     params.at("KWG")) *
                                    std::max({a_.ld, b_.ld, c_.ld, int64_t{1}}) >=
                            (int64_t{1} << 31) - 1;
    const std::string defines = defines_for(std::is_same_v<T, double>, ka, kb, long_index, params);
    cl::Kernel kernel(dev.program(defines, build_options(di, params)), "gemm");

    set_gemm_args(kernel, long_index, s.m, s.n, s.k, s.alpha, {&a_.kernel_buffer(), 0, a_.ld},
                  {&b_.kernel_buffer(), 0, b_.ld}, s.beta, {&c_.kernel_buffer(), 0, c_.ld});

    const auto groups = [](int64_t extent, int tile) { return (extent + tile - 1) / tile; };
    const size_t gx = static_cast<size_t>(groups(s.n, params.at("NWG")) * params.at("NDIMC"));
    const size_t gy = static_cast<size_t>(groups(s.m, params.at("MWG")) * params.at("MDIMC"));
    queue_.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(gx, gy),
                                cl::NDRange(static_cast<size_t>(params.at("NDIMC")),
                                            static_cast<size_t>(params.at("MDIMC"))),
                                nullptr, &kernel_event_);
    kernel_enqueued_ = true;
    if (c_.path == Report::Buffer::ZeroCopy) c_written_ = true;

    // The last command makes C visible to the host: a map of the caller's own memory, or a
    // read-back (discrete) / map (unified) of the staged copy.
    const size_t c_bytes = static_cast<size_t>(span(s.m, s.n, c_.ld)) * sizeof(T);
    if (c_.path == Report::Buffer::ZeroCopy) {
      // Read-only: the host only reads C here, so nothing is written back at unmap.
      c_map_ = queue_.enqueueMapBuffer(c_.in_place, CL_FALSE, CL_MAP_READ, 0, c_bytes, nullptr,
                                       &last_event_);
    } else if (c_.device() != nullptr) {
      queue_.enqueueReadBuffer(c_.device, CL_FALSE, 0, c_bytes, c_.mapped, nullptr, &last_event_);
    } else {
      c_.mapped = static_cast<T*>(queue_.enqueueMapBuffer(c_.pinned, CL_FALSE, CL_MAP_READ, 0,
                                                          c_bytes, nullptr, &last_event_));
    }
  }

  bool kernel_enqueued() const { return kernel_enqueued_; }

  // After a failure once the kernel was enqueued: let the device finish before C is reused.
  bool drain() noexcept {
    try {
      for (cl::CommandQueue* q : {&in_q_, &queue_, &queue2_, &out_q_})
        if ((*q)() != nullptr) q->finish();
      return true;
    } catch (...) {
      return false;
    }
  }

  // Whether the caller's C may have been written (in place by the kernel, or by unpacking).
  bool c_written() const { return c_written_; }

  void flush() override {
    for (cl::CommandQueue* q : {&in_q_, &queue_, &queue2_, &out_q_})
      if ((*q)() != nullptr) q->flush();
  }

  bool submitted() override {
    return kernel_event_.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() <= CL_SUBMITTED;
  }

  void wait() override {
    if (!unified_) {
      wait_discrete();
      return;
    }
    cl::WaitForEvents({last_event_});
    const cl_ulong start = kernel_event_.getProfilingInfo<CL_PROFILING_COMMAND_START>();
    const cl_ulong end = kernel_event_.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    kernel_seconds = static_cast<double>(end - start) * 1e-9;

    std::vector<cl::Event> unmaps;
    auto unmap = [&](const cl::Buffer& buffer, void* ptr) {
      cl::Event e;
      queue_.enqueueUnmapMemObject(buffer, ptr, nullptr, &e);
      unmaps.push_back(e);
    };
    if (c_.path == Report::Buffer::ZeroCopy) {
      unmap(c_.in_place, c_map_);
    } else {
      c_written_ = true;
      unpack(c_.mapped, s_.m, s_.n, s_.c, s_.ldc, host_threads_);
      if (!c_.pooled) unmap(c_.pinned, c_.mapped);  // pooled staging stays mapped
    }
    for (Operand<T>* op : {&a_, &b_})
      if (op->mapped != nullptr && !op->pooled) unmap(op->pinned, op->mapped);
    if (!unmaps.empty()) cl::WaitForEvents(unmaps);
  }

 private:
  // ---- discrete devices: C's rows in chunks, copies overlapped with the kernel -----------------
  //
  // B goes first (in pieces, so its copy overlaps its packing); then, chunk by chunk, the rows of
  // A (and of C when beta != 0) that the chunk needs go in on one queue, the chunk's kernel runs
  // on a second once its inputs are there, and its rows of C come back on a third. Queues are
  // linked by events, not callbacks, and flushed as they fill, so the device copies and computes
  // while the host packs the next chunk. Each chunk is a GEMM of its own on tight panels in the
  // device buffers. An operand in the caller's pinned memory (tandem_malloc) is copied straight
  // from (and C straight into) the caller's arrays, with no packing.
  struct Chunk {
    int64_t r0 = 0, r1 = 0;
    cl::Event kernel, read;
    std::vector<cl::Event> slabs;  // the first chunk: its kernels on the earlier slabs of K
  };

  // Rows of C per chunk: enough work-groups per chunk to give every compute unit CHUNK_FILL of
  // them (a trade between the kernel's occupancy and the overlap of copies with it), at most
  // kMaxChunks chunks, and one chunk when the copies are too small to be worth overlapping.
  static int64_t chunk_rows(const Share<T>& s, const Params& params, const DeviceInfo& di) {
    constexpr int64_t kMaxChunks = 8;
    const int64_t mwg = params.at("MWG"), nwg = params.at("NWG");
    const size_t bytes = static_cast<size_t>(s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(T);
    if (bytes < g_overlap_from.load()) return s.m;
    const int64_t groups_n = (s.n + nwg - 1) / nwg;
    const int64_t fill = int64_t{std::max(1, di.compute_units)} * std::max(1, params.at("CHUNK_FILL"));
    const int64_t min_rows = (fill + groups_n - 1) / groups_n * mwg;
    int64_t rows = std::max(min_rows, (s.m + kMaxChunks - 1) / kMaxChunks);
    rows = (rows + mwg - 1) / mwg * mwg;
    return std::min(rows, s.m);
  }

  // A rows x cols block at host (leading dimension host_ld) into `buffer` at byte `offset`, tight
  // (leading dimension cols); a rectangle copy unless the host block is tight too.
  void write_block(const cl::Buffer& buffer, size_t offset, const T* host, int64_t rows, int64_t cols,
                   int64_t host_ld, const std::vector<cl::Event>* waits, cl::Event* done) {
    const size_t row = static_cast<size_t>(cols) * sizeof(T);
    if (host_ld == cols || rows == 1) {
      in_q_.enqueueWriteBuffer(buffer, CL_FALSE, offset, row * static_cast<size_t>(rows), host, waits, done);
      return;
    }
    in_q_.enqueueWriteBufferRect(buffer, CL_FALSE, {offset, 0, 0}, {0, 0, 0},
                                 {row, static_cast<size_t>(rows), 1}, row, 0,
                                 static_cast<size_t>(host_ld) * sizeof(T), 0, host, waits, done);
  }

  void start_discrete(const Params& params, bool ka, bool kb) {
    const Share<T>& s = s_;
    const DeviceInfo& di = dev_.info();
    in_q_ = cl::CommandQueue(dev_.context(), dev_.device());
    out_q_ = cl::CommandQueue(dev_.context(), dev_.device());
    if (params.at("QUEUES") > 1) queue2_ = cl::CommandQueue(dev_.context(), dev_.device(), CL_QUEUE_PROFILING_ENABLE);
    constexpr size_t e = sizeof(T);
    Feed& f = feed_;
    f.ka = ka;
    f.kb = kb;
    f.mwg = params.at("MWG");
    f.nwg = params.at("NWG");
    f.mdimc = params.at("MDIMC");
    f.ndimc = params.at("NDIMC");

    // The caller's stored operands; "direct" ones are pinned and need no change of layout.
    const int64_t a_rows = s.trans_a ? s.k : s.m, a_cols = s.trans_a ? s.m : s.k;
    const int64_t b_rows = s.trans_b ? s.n : s.k, b_cols = s.trans_b ? s.k : s.n;
    // An operand the kernel reads in the other layout goes to the device as stored, into
    // scratch, and the device transposes it (a host-side transposing pack cost more than the
    // copy on the H100 host).
    f.a_direct = in_pinned_block(dev_, s.a, static_cast<size_t>(span(a_rows, a_cols, s.lda)) * e);
    const bool b_direct = in_pinned_block(dev_, s.b, static_cast<size_t>(span(b_rows, b_cols, s.ldb)) * e);
    c_direct_ = in_pinned_block(dev_, s.c, static_cast<size_t>(span(s.m, s.n, s.ldc)) * e);
    a_path = a_.path = f.a_direct ? Report::Buffer::Pinned : Report::Buffer::Copy;
    b_path = b_.path = b_direct ? Report::Buffer::Pinned : Report::Buffer::Copy;
    c_path = c_.path = c_direct_ ? Report::Buffer::Pinned : Report::Buffer::Copy;
    const auto take = [&](Operand<T>& op, int64_t elements, bool direct) {
      op.pooled = dev_.take_staging(std::max<size_t>(static_cast<size_t>(elements) * e, e), !direct);
      op.device = op.pooled->device;
      op.mapped = static_cast<T*>(op.pooled->mapped);
    };
    take(a_, s.m * s.k, f.a_direct);
    take(b_, s.k * s.n, b_direct);
    take(c_, s.m * s.n, c_direct_);
    b_.ld = kb ? s.k : s.n;
    c_.ld = s.n;

    const int64_t step = chunk_rows(s, params, di);
    for (int64_t r0 = 0; r0 < s.m; r0 += step) chunks_.push_back({r0, std::min(s.m, r0 + step), {}, {}, {}});

    const int64_t tiles = params.at("MWG") + params.at("NWG") + params.at("KWG");
    f.long_index =
        params.at("INDEX_LONG") != 0 ||
        std::max({s.m * s.k, s.k * s.n, s.m * s.n}) + tiles * std::max({s.m, s.n, s.k, int64_t{1}}) >=
            (int64_t{1} << 31) - 1;
    const std::string defines = defines_for(std::is_same_v<T, double>, ka, kb, f.long_index, params);
    const cl::Program& program = dev_.program(defines, build_options(di, params));
    f.kernel = cl::Kernel(program, "gemm");
    f.transpose = cl::Kernel(program, "transpose");
    if (ka != s.trans_a) a_raw_ = dev_.take_staging(std::max<size_t>(static_cast<size_t>(s.m * s.k) * e, e), false);
    if (kb != s.trans_b) b_raw_ = dev_.take_staging(std::max<size_t>(static_cast<size_t>(s.k * s.n) * e, e), false);

    // B, whole: the caller's pinned array, or packed in pieces each copied as soon as it is ready;
    // transposed on the device if the kernel reads it the other way.
    const cl::Buffer& b_target = b_raw_ ? b_raw_->device : b_.device;
    const auto copy_b = [&](const T* host, int64_t rows, int64_t cols, int64_t ld, size_t offset) {
      f.b_ready.emplace_back();
      write_block(b_target, offset, host, rows, cols, ld, nullptr, &f.b_ready.back());
      in_q_.flush();
    };
    // In pieces of its stored rows (packed, unless pinned), each copied as soon as it is ready.
    // B's pieces are slabs of K when the kernel reads B as stored and untransposed (k x n): then
    // the first chunk's rows of A go right after B's first piece and the chunk runs slab by slab,
    // each kernel waiting only for its piece, so the device computes while the rest of B arrives.
    const int64_t pieces = std::min<int64_t>(4, static_cast<int64_t>(chunks_.size()));
    f.k_slabs = !kb && !s.trans_b && !b_raw_ && pieces > 1 && b_rows >= pieces;
    std::optional<std::vector<cl::Event>> first_inputs;
    for (int64_t i = 0; i < pieces; ++i) {
      const int64_t q0 = b_rows * i / pieces, q1 = b_rows * (i + 1) / pieces;
      if (q1 == q0) continue;
      f.b_rows.push_back(q1);
      if (b_direct) {
        copy_b(s.b + q0 * s.ldb, q1 - q0, b_cols, s.ldb, static_cast<size_t>(q0 * b_cols) * e);
      } else {
        pack(s.b + q0 * s.ldb, q1 - q0, b_cols, s.ldb, b_.mapped + q0 * b_cols, host_threads_);
        copy_b(b_.mapped + q0 * b_cols, q1 - q0, b_cols, b_cols, static_cast<size_t>(q0 * b_cols) * e);
      }
      if (f.k_slabs && i == 0) first_inputs = send_inputs(chunks_.front());
    }
    if (b_raw_) {
      cl::Event done;
      transpose_on_device(b_raw_->device, b_.device, 0, b_rows, b_cols, f.b_ready, &done);
      f.b_ready = {done};
    }
    // The first chunk, so the device has work before the host turns to anything else; feed()
    // enqueues the rest.
    if (!first_inputs) first_inputs = send_inputs(chunks_.front());
    launch(chunks_.front(), *first_inputs);
    f.next = 1;
    kernel_event_ = chunks_.front().kernel;
  }

  // dst (cols x rows) = src (rows x cols)^T on the device, after `waits`; both tight at `offset`.
  void transpose_on_device(const cl::Buffer& src, const cl::Buffer& dst, int64_t offset, int64_t rows,
                           int64_t cols, std::vector<cl::Event>& waits, cl::Event* done) {
    set_transpose_args(feed_.transpose, feed_.long_index, rows, cols, src, offset, dst, offset);
    constexpr size_t kTile = 16;
    const auto up = [](int64_t x) { return static_cast<size_t>((x + kTile - 1) / kTile * kTile); };
    transposes_.emplace_back();
    queue_.enqueueNDRangeKernel(feed_.transpose, cl::NullRange, cl::NDRange(up(cols), up(rows)),
                                cl::NDRange(kTile, kTile), &waits, &transposes_.back());
    *done = transposes_.back();
    queue_.flush();
  }

  // One chunk: its rows of op(A) (and of C when beta != 0) in, its kernel, its rows of C out.
  void enqueue_chunk(Chunk& ch) { launch(ch, send_inputs(ch)); }

  // The chunk's rows of op(A) (and of C when beta != 0) to the device; the events they complete.
  std::vector<cl::Event> send_inputs(const Chunk& ch) {
    const Share<T>& s = s_;
    const Feed& f = feed_;
    constexpr size_t e = sizeof(T);
    const int64_t rows = ch.r1 - ch.r0;
    std::vector<cl::Event> ready;
    // The chunk's panel of op(A), tight at element r0 * k: rows x k (ka = 0) or k x rows (1).
    const size_t a_offset = static_cast<size_t>(ch.r0 * s.k);
    const T* a_block = s.trans_a ? s.a + ch.r0 : s.a + ch.r0 * s.lda;  // its stored block
    const int64_t block_rows = s.trans_a ? s.k : rows, block_cols = s.trans_a ? rows : s.k;
    // As stored, into the kernel's buffer or, to be transposed there, into scratch.
    const cl::Buffer& a_target = a_raw_ ? a_raw_->device : a_.device;
    std::vector<cl::Event> a_in(1);
    if (f.a_direct) {
      write_block(a_target, a_offset * e, a_block, block_rows, block_cols, s.lda, nullptr, &a_in[0]);
    } else {
      T* panel = a_.mapped + a_offset;
      pack(a_block, block_rows, block_cols, s.lda, panel, host_threads_);
      in_q_.enqueueWriteBuffer(a_target, CL_FALSE, a_offset * e, static_cast<size_t>(rows * s.k) * e, panel,
                               nullptr, &a_in[0]);
    }
    ready.emplace_back();
    if (a_raw_) {
      in_q_.flush();
      transpose_on_device(a_raw_->device, a_.device, static_cast<int64_t>(a_offset), block_rows, block_cols,
                          a_in, &ready.back());
    } else {
      ready.back() = a_in[0];
    }
    // Its rows of C, when beta makes the kernel read them.
    const size_t c_offset = static_cast<size_t>(ch.r0 * s.n);
    if (s.beta != T(0)) {
      ready.emplace_back();
      if (c_direct_) {
        write_block(c_.device, c_offset * e, s.c + ch.r0 * s.ldc, rows, s.n, s.ldc, nullptr, &ready.back());
      } else {
        pack(static_cast<const T*>(s.c + ch.r0 * s.ldc), rows, s.n, s.ldc, c_.mapped + c_offset, host_threads_);
        in_q_.enqueueWriteBuffer(c_.device, CL_FALSE, c_offset * e, static_cast<size_t>(rows * s.n) * e,
                                 c_.mapped + c_offset, nullptr, &ready.back());
      }
    }
    in_q_.flush();
    return ready;
  }

  // The chunk's kernel (after B and `own`, its inputs) and the copy of its rows of C back.
  void launch(Chunk& ch, const std::vector<cl::Event>& own) {
    const Share<T>& s = s_;
    const Feed& f = feed_;
    constexpr size_t e = sizeof(T);
    const int64_t rows = ch.r1 - ch.r0;
    const size_t a_offset = static_cast<size_t>(ch.r0 * s.k), c_offset = static_cast<size_t>(ch.r0 * s.n);
    std::vector<cl::Event> ready = f.b_ready;
    ready.insert(ready.end(), own.begin(), own.end());
    cl::Kernel& kernel = feed_.kernel;
    // Chunks take turns on two in-order queues when there are two: their kernels depend on
    // nothing but their events, so the device may start one chunk's work-groups while the last
    // of the one before still run, instead of idling through each chunk's tail.
    const size_t index = static_cast<size_t>(&ch - chunks_.data());
    cl::CommandQueue& kq = queue2_() != nullptr && index % 2 == 1 ? queue2_ : queue_;
    const auto groups = [](int64_t extent, int64_t tile) { return (extent + tile - 1) / tile; };
    const size_t gx = static_cast<size_t>(groups(s.n, f.nwg) * f.ndimc);
    const size_t gy = static_cast<size_t>(groups(rows, f.mwg) * f.mdimc);
    const int64_t lda = f.ka ? rows : s.k;
    // C's rows += alpha op(A)[rows, p0:p1] op(B)[p0:p1, :] (the first slab with the caller's beta).
    const auto run = [&](int64_t p0, int64_t p1, T beta, std::vector<cl::Event>* waits, cl::Event* done) {
      const int64_t a_at = static_cast<int64_t>(a_offset) + (f.ka ? p0 * rows : p0);
      set_gemm_args(kernel, f.long_index, rows, s.n, p1 - p0, s.alpha, {&a_.device, a_at, lda},
                    {&b_.device, p0 * b_.ld, b_.ld}, beta, {&c_.device, static_cast<int64_t>(c_offset), s.n});
      kq.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(gx, gy),
                              cl::NDRange(static_cast<size_t>(f.ndimc), static_cast<size_t>(f.mdimc)), waits, done);
      kernel_enqueued_ = true;
      kq.flush();
    };
    if (&ch == &chunks_.front() && f.k_slabs) {
      // Slab q waits for B's piece q (and the chunk's own inputs); the in-order queue keeps the
      // slabs in sequence, each adding to what the one before wrote.
      int64_t p0 = 0;
      for (size_t q = 0; q < f.b_ready.size(); ++q) {
        std::vector<cl::Event> waits = own;
        waits.push_back(f.b_ready[q]);
        const int64_t p1 = f.b_rows[q];
        const bool last = q + 1 == f.b_ready.size();
        if (!last) ch.slabs.emplace_back();
        run(p0, p1, q == 0 ? s.beta : T(1), &waits, last ? &ch.kernel : &ch.slabs.back());
        p0 = p1;
      }
    } else {
      run(0, s.k, s.beta, &ready, &ch.kernel);
    }

    const std::vector<cl::Event> computed{ch.kernel};
    if (c_direct_) {
      // Straight into the caller's C: from here on its old values may be gone.
      c_written_ = true;
      const size_t row = static_cast<size_t>(s.n) * e;
      if (s.ldc == s.n || rows == 1)
        out_q_.enqueueReadBuffer(c_.device, CL_FALSE, c_offset * e, row * static_cast<size_t>(rows),
                                 s.c + ch.r0 * s.ldc, &computed, &ch.read);
      else
        out_q_.enqueueReadBufferRect(c_.device, CL_FALSE, {c_offset * e, 0, 0}, {0, 0, 0},
                                     {row, static_cast<size_t>(rows), 1}, row, 0, static_cast<size_t>(s.ldc) * e,
                                     0, s.c + ch.r0 * s.ldc, &computed, &ch.read);
    } else {
      out_q_.enqueueReadBuffer(c_.device, CL_FALSE, c_offset * e, static_cast<size_t>(rows * s.n) * e,
                               c_.mapped + c_offset, &computed, &ch.read);
    }
    out_q_.flush();
  }

 public:
  bool feeds() const override { return !unified_; }

  void feed(int host_threads) override {
    host_threads_ = std::max(1, host_threads);
    if (unified_) return;
    for (; feed_.next < chunks_.size(); ++feed_.next) enqueue_chunk(chunks_[feed_.next]);
    last_event_ = chunks_.back().read;
  }

 private:
  // Chunk by chunk, as each arrives: its rows of C into the caller's array.
  void wait_discrete() {
    if (feed_.next < chunks_.size()) feed(host_threads_);
    std::vector<std::pair<cl_ulong, cl_ulong>> ran;  // each kernel's start and end on the device
    const auto add = [&ran](const cl::Event& ev) {
      ran.emplace_back(ev.getProfilingInfo<CL_PROFILING_COMMAND_START>(), ev.getProfilingInfo<CL_PROFILING_COMMAND_END>());
    };
    for (const Chunk& ch : chunks_) {
      cl::WaitForEvents({ch.read});
      add(ch.kernel);
      for (const cl::Event& slab : ch.slabs) add(slab);
      if (!c_direct_) {
        c_written_ = true;
        unpack(c_.mapped + ch.r0 * s_.n, ch.r1 - ch.r0, s_.n, s_.c + ch.r0 * s_.ldc, s_.ldc, host_threads_);
      }
    }
    // Transposes ran on the first kernel queue before the kernels that wait for them: done too.
    for (const cl::Event& t : transposes_) add(t);
    kernel_seconds = busy_seconds(std::move(ran));
  }

  // How long the device ran at least one of these commands: kernels on two queues may overlap.
  static double busy_seconds(std::vector<std::pair<cl_ulong, cl_ulong>> ran) {
    std::sort(ran.begin(), ran.end());
    cl_ulong busy = 0, from = 0, to = 0;
    bool open = false;
    for (const auto& [start, end] : ran) {
      if (open && start <= to) {
        to = std::max(to, end);
        continue;
      }
      if (open) busy += to - from;
      from = start;
      to = std::max(start, end);
      open = true;
    }
    if (open) busy += to - from;
    return static_cast<double>(busy) * 1e-9;
  }

  bool in_place_ok(const void* p) const {
    return unified_ && reinterpret_cast<uintptr_t>(p) % zero_copy_align_ == 0;
  }

  // Stages one stored rows x cols operand; `transpose` packs it as cols x rows for a kernel that
  // reads the other layout (only a copy can change the layout).
  void input(Operand<T>& op, const T* host, int64_t rows, int64_t cols, int64_t ld, bool transpose,
             bool in_place) {
    const size_t bytes = static_cast<size_t>(span(rows, cols, ld)) * sizeof(T);
    if (in_place) {
      op.path = Report::Buffer::ZeroCopy;
      op.ld = ld;
      op.in_place = cl::Buffer(dev_.context(), CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes,
                               const_cast<T*>(host));
      return;
    }
    op.path = Report::Buffer::Copy;
    op.ld = transpose ? rows : cols;
    const size_t packed = static_cast<size_t>(rows * cols) * sizeof(T);
    stage(op, packed, /*write_only=*/true);
    if (transpose)
      pack_transposed(host, rows, cols, ld, op.mapped, host_threads_);
    else
      pack(host, rows, cols, ld, op.mapped, host_threads_);
    if (unified_) {
      // The kernel reads the pinned buffer itself; it must be unmapped first.
      queue_.enqueueUnmapMemObject(op.pinned, op.mapped);
      op.mapped = nullptr;
    } else {
      queue_.enqueueWriteBuffer(op.device, CL_FALSE, 0, packed, op.mapped);
    }
  }

  // Host-visible staging for `bytes`: on a unified device a pinned buffer the kernel reads
  // itself, mapped for now; on a discrete one pooled pinned and device buffers.
  void stage(Operand<T>& op, size_t bytes, bool write_only) {
    if (unified_) {
      op.pinned = cl::Buffer(dev_.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
      op.mapped = static_cast<T*>(queue_.enqueueMapBuffer(
          op.pinned, CL_TRUE, write_only ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_WRITE, 0, bytes));
      return;
    }
    op.pooled = dev_.take_staging(bytes);
    op.device = op.pooled->device;
    op.mapped = static_cast<T*>(op.pooled->mapped);
  }

  void output(Operand<T>& op, T* host, int64_t rows, int64_t cols, int64_t ld, bool read_c,
              bool in_place) {
    const size_t bytes = static_cast<size_t>(span(rows, cols, ld)) * sizeof(T);
    if (in_place) {
      op.path = Report::Buffer::ZeroCopy;
      op.ld = ld;
      op.in_place = cl::Buffer(dev_.context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host);
      return;
    }
    op.path = Report::Buffer::Copy;
    op.ld = cols;
    const size_t packed = static_cast<size_t>(rows * cols) * sizeof(T);
    stage(op, packed, /*write_only=*/!read_c);
    if (read_c) pack(static_cast<const T*>(host), rows, cols, ld, op.mapped, host_threads_);
    if (unified_) {
      queue_.enqueueUnmapMemObject(op.pinned, op.mapped);
      op.mapped = nullptr;
    } else if (read_c) {
      queue_.enqueueWriteBuffer(op.device, CL_FALSE, 0, packed, op.mapped);
    }
  }

  Device& dev_;
  std::unique_lock<std::mutex> exclusive_;  // declared first: released last, after the queue
  Share<T> s_;
  bool unified_;
  uintptr_t zero_copy_align_ = 64;
  cl::CommandQueue queue_;         // kernels (and, on unified devices, everything)
  cl::CommandQueue queue2_;        // discrete devices with QUEUES=2: every other chunk's kernel
  cl::CommandQueue in_q_, out_q_;  // discrete devices: copies in, copies out
  std::vector<Chunk> chunks_;      // discrete devices
  // Discrete devices: what enqueue_chunk needs, kept from start_discrete for feed().
  struct Feed {
    cl::Kernel kernel, transpose;
    std::vector<cl::Event> b_ready;  // B is on the device, in the kernel's layout
    std::vector<int64_t> b_rows;     // the stored row at which each of B's pieces ends
    bool k_slabs = false;            // the first chunk runs slab by slab of K (see start_discrete)
    bool ka = false, kb = false, a_direct = false, long_index = false;
    int64_t mwg = 1, nwg = 1, mdimc = 1, ndimc = 1;
    size_t next = 0;  // the first chunk not yet enqueued
  } feed_;
  int host_threads_ = topology::physical_cores();  // threads for packing and unpacking
  std::vector<cl::Event> transposes_;         // discrete devices: operands transposed there
  std::unique_ptr<Staging> a_raw_, b_raw_;    // their scratch: as stored, before transposition
  bool c_direct_ = false;          // C is copied straight into the caller's pinned memory
  Operand<T> a_, b_, c_;
  void* c_map_ = nullptr;
  cl::Event kernel_event_, last_event_;
  bool kernel_enqueued_ = false;
  bool c_written_ = false;
};

// Runs `f`, turning OpenCL failures into Failure. `touched` says whether C may have been written
// in place by then.
template <class F>
auto guarded(F&& f, bool touched) -> decltype(f()) {
  try {
    return f();
  } catch (const cl::Error& e) {
    throw Failure(translate(e), touched);
  } catch (const Failure&) {
    throw;
  } catch (const Error& e) {
    throw Failure(e, touched);
  }
}

template <class T>
class Guarded final : public InFlight {
 public:
  explicit Guarded(std::unique_ptr<InFlightImpl<T>> impl) : impl_(std::move(impl)) {
    a_path = impl_->a_path;
    b_path = impl_->b_path;
    c_path = impl_->c_path;
  }
  void flush() override {
    guarded([&] { impl_->flush(); }, touched());
    flushed_at_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count();
  }
  bool submitted() override { return guarded([&] { return impl_->submitted(); }, touched()); }
  void feed(int host_threads) override { guarded([&] { impl_->feed(host_threads); }, touched()); }
  bool feeds() const override { return impl_->feeds(); }
  void wait() override {
    guarded([&] { impl_->wait(); }, touched());
    kernel_seconds = impl_->kernel_seconds;
  }

 private:
  bool touched() const { return impl_->c_written(); }
  std::unique_ptr<InFlightImpl<T>> impl_;
};

}  // namespace

void prebuild(Device& device, bool fp64, bool trans_a, bool trans_b, const Params& params) {
  const bool ka = read_transposed(params, "A_T", trans_a), kb = read_transposed(params, "B_T", trans_b);
  try {
    device.program(defines_for(fp64, ka, kb, params.at("INDEX_LONG") != 0, params),
                   build_options(device.info(), params));
  } catch (const cl::Error& e) {
    throw translate(e);
  }
}

BuildReport inspect(Device& device, bool fp64, bool trans_a, bool trans_b, const Params& params) {
  const bool ka = read_transposed(params, "A_T", trans_a), kb = read_transposed(params, "B_T", trans_b);
  std::string options = build_options(device.info(), params);
  if (device.info().nv_compiler_options) options += " -cl-nv-verbose";  // registers and spills
  try {
    return device.inspect(defines_for(fp64, ka, kb, params.at("INDEX_LONG") != 0, params), options);
  } catch (const cl::Error& e) {
    throw translate(e);
  }
}

template <class T>
bool operands_pinned(const Device& device, const Share<T>& s) {
  const auto bytes = [](int64_t rows, int64_t cols, int64_t ld) {
    return static_cast<size_t>(span(rows, cols, ld)) * sizeof(T);
  };
  return in_pinned_block(device, s.a, bytes(s.trans_a ? s.k : s.m, s.trans_a ? s.m : s.k, s.lda)) &&
         in_pinned_block(device, s.b, bytes(s.trans_b ? s.n : s.k, s.trans_b ? s.k : s.n, s.ldb)) &&
         in_pinned_block(device, s.c, bytes(s.m, s.n, s.ldc));
}
template bool operands_pinned<float>(const Device&, const Share<float>&);
template bool operands_pinned<double>(const Device&, const Share<double>&);

template <class T>
std::unique_ptr<InFlight> enqueue(Device& device, const Params& params, const Share<T>& share) {
  auto impl = std::make_unique<InFlightImpl<T>>(device, share);
  try {
    impl->start(params);
  } catch (const cl::Error& e) {
    impl->drain();
    throw Failure(translate(e), impl->c_written());
  } catch (const Error& e) {
    impl->drain();
    throw Failure(e, impl->c_written());
  }
  return std::make_unique<Guarded<T>>(std::move(impl));
}

template std::unique_ptr<InFlight> enqueue<float>(Device&, const Params&, const Share<float>&);
template std::unique_ptr<InFlight> enqueue<double>(Device&, const Params&, const Share<double>&);

}  // namespace tandem::detail::gpu
