// Building the GEMM kernels: the source (its #defines, kernels/element.cl, then kernels/gemm.cl,
// or kernels/gemm_direct.cl for KERNEL 2), the build options for a parameter set, the per-device
// cache of compiled programs, and the tuner's prebuild and inspect.
#include <algorithm>

#include "base/memo.hpp"
#include "base/seams.hpp"
#include "gpu/device_cl.hpp"
#include "gpu/errors.hpp"
#include "gpu/programs_cl.hpp"
#include "tandem_kernels.hpp"

namespace tandem::detail::gpu {
namespace {

// The kernels' PRECISION for a precision, numbered as CLBlast numbers its own: the bits of the
// real type, written twice for a complex one (32, 64, 3232, 6464).
int kernel_precision(Precision precision) {
  const int bits = static_cast<int>(8 * element_bytes(real_of(precision)));
  return is_complex(precision) ? bits * 100 + bits : bits;
}

// The kernel source's #defines for one precision, read layout and parameter set.
std::string defines_for(const ProgramKey& key) {
  std::string defines;
  if (key.failing) defines += "#error \"a test seam makes this build fail\"\n";
  if (key.emulate && is_engine(key.params)) defines += "#define ENGINE_EMULATE 1\n";
  if (key.emulate && uses_async_copy(key.params)) defines += "#define ASYNC_EMULATE 1\n";
  defines += "#define PRECISION " + std::to_string(kernel_precision(key.precision)) + "\n";
  if (key.long_index) defines += "#define INDEX_LONG 1\n";
  defines += "#define TRANS_A " + std::to_string(key.trans_a ? 1 : 0) + "\n";
  defines += "#define TRANS_B " + std::to_string(key.trans_b ? 1 : 0) + "\n";
  if (key.conj_a) defines += "#define CONJ_A 1\n";
  if (key.conj_b) defines += "#define CONJ_B 1\n";
  // The kernel's own macros; the host decides index width and read layouts above.
  for (const auto& [name, value] : key.params)
    if (!host_only(name)) defines += "#define " + name + " " + std::to_string(value) + "\n";
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

// The kernel file a parameter set is built from.
const char* source_for(const Params& params) {
  return is_direct(params)   ? kernels::gemm_direct
         : is_engine(params) ? kernels::gemm_engine
                             : kernels::gemm;
}

}  // namespace

ProgramCache::ProgramCache(cl::Context context, cl::Device device)
    : context_(std::move(context)), device_(std::move(device)) {}

const cl::Program& ProgramCache::get(const ProgramKey& key, const DeviceInfo& info) {
  return built(key, info)->program;
}

const cl::Program& ProgramCache::get(const ProgramKey& key, const SharedParams& shared,
                                     const DeviceInfo& info) {
  // Built, or its failure thrown (and not remembered: asked again, it throws again).
  return by_address_
      .get(ByAddress<SharedParams>{shared, key.flags()}, [&] { return built(key, info); })
      ->program;
}

std::shared_ptr<ProgramCache::Entry> ProgramCache::built(const ProgramKey& key,
                                                         const DeviceInfo& info) {
  const int flags = key.flags();
  const uint64_t hash = hash_value(flags, hash_map(key.params));
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto [from, to] = entries_.equal_range(hash);
    for (auto it = from; it != to && !entry; ++it)
      if (it->second.flags == flags && it->second.params == key.params) entry = it->second.entry;
    if (!entry) {
      entry = std::make_shared<Entry>();
      entries_.emplace(hash, Known{flags, key.params, entry});
    }
  }
  // The #defines are written out once, for the build.
  std::call_once(entry->built, [&] {
    build(source_for(key.params), defines_for(key), build_options(info, key.params), *entry);
  });
  if (!entry->error.empty())
    throw opencl_error("clBuildProgram", CL_BUILD_PROGRAM_FAILURE, entry->error);
  return entry;
}

void ProgramCache::build(const char* source, const std::string& defines, const std::string& options,
                         Entry& result) {
  try {
    result.program = cl::Program(context_, defines + kernels::element + source);
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

cl::Kernel ProgramCache::take_kernel(const cl::Program& program, const char* name) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = idle_kernels_.find({program(), name});
    if (it != idle_kernels_.end() && !it->second.empty()) {
      cl::Kernel kernel = std::move(it->second.back());
      it->second.pop_back();
      return kernel;
    }
  }
  return cl::Kernel(program, name);
}

void ProgramCache::give_kernel(const cl::Program& program, const char* name, cl::Kernel kernel) {
  // As many as calls have run at once with this program, within reason; the rest are released.
  constexpr size_t kIdle = 8;
  if (kernel() == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto& idle = idle_kernels_[{program(), name}];
  if (idle.size() < kIdle) idle.push_back(std::move(kernel));
}

BuildReport ProgramCache::inspect(const char* source, const std::string& defines,
                                  const std::string& options) {
  BuildReport r;
  r.source = defines + kernels::element + source;
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

const cl::Program& gemm_program(Device& device, Precision precision, bool read_a_transposed,
                                bool read_b_transposed, bool long_index, const Params& params,
                                Conjugate conj) {
  return device.programs().get(
      ProgramKey{precision, read_a_transposed, read_b_transposed, long_index, seams::fail_builds(),
                 params, conj.a, conj.b, seams::emulate_engine()},
      device.info());
}

const cl::Program& gemm_program(Device& device, Precision precision, bool read_a_transposed,
                                bool read_b_transposed, bool long_index, const SharedParams& params,
                                Conjugate conj) {
  return device.programs().get(
      ProgramKey{precision, read_a_transposed, read_b_transposed, long_index, seams::fail_builds(),
                 *params, conj.a, conj.b, seams::emulate_engine()},
      params, device.info());
}

void prebuild(Device& device, Precision precision, bool trans_a, bool trans_b,
              const Params& params) {
  const bool ka = read_transposed(params, "A_T", trans_a),
             kb = read_transposed(params, "B_T", trans_b);
  try {
    gemm_program(device, precision, ka, kb, params.at("INDEX_LONG") != 0, params);
  } catch (const cl::Error& e) {
    throw translate(e);
  }
}

BuildReport inspect(Device& device, Precision precision, bool trans_a, bool trans_b,
                    const Params& params) {
  const bool ka = read_transposed(params, "A_T", trans_a),
             kb = read_transposed(params, "B_T", trans_b);
  std::string options = build_options(device.info(), params);
  if (device.info().nv_compiler_options) options += " -cl-nv-verbose";  // registers and spills
  try {
    return device.programs().inspect(
        source_for(params),
        defines_for(ProgramKey{precision, ka, kb, params.at("INDEX_LONG") != 0,
                               seams::fail_builds(), params, false, false,
                               seams::emulate_engine()}),
        options);
  } catch (const cl::Error& e) {
    throw translate(e);
  }
}

}  // namespace tandem::detail::gpu
