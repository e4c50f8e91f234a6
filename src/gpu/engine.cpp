// The matrix engine's probe: kernels/gemm_engine.cl's engine_probe, one warp, one instruction on
// small integers, compared element by element with the product the fragment layout says.
#include "gpu/engine.hpp"

#include <mutex>
#include <vector>

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/seams.hpp"
#include "gpu/device_cl.hpp"
#include "profile/architecture.hpp"
#include "tandem_kernels.hpp"

namespace tandem::detail::gpu {
namespace {

// The shapes the device's architecture may have: mma.sync's f64 m8n8k4 from sm_80, m16n8k4 from
// sm_90 (PTX ISA). Another vendor's engine would be another family here and another instruction
// in the codelet (docs/DESIGN.md).
std::vector<int> candidate_rows(const DeviceInfo& info) {
  if (seams::probe_any()) return {8, 16};
  const auto arch = profile::parse_architecture(info.architecture);
  if (!arch || arch->family != "nvidia-sm" || arch->major < 8) return {};
  if (arch->major >= 9) return {8, 16};
  return {8};
}

// What the probe kernel must produce for MMA_M = rows: lane l holds a_i = l + 32 i - 20,
// b = 3 l - 50, c_e = 7 e - l (kernels/gemm_engine.cl), each in the fragment layout.
std::vector<double> expected(int rows) {
  const int cf = rows / 4;
  const auto a = [&](int row, int k) {  // A's (row, k): lane 4 (row % 8) + k, part row / 8
    const int lane = 4 * (row % 8) + k;
    return double(lane + 32 * (row / 8) - 20);
  };
  const auto b = [](int k, int col) { return double(3 * (4 * col + k) - 50); };
  std::vector<double> out(32 * cf);
  for (int lane = 0; lane < 32; ++lane)
    for (int e = 0; e < cf; ++e) {
      const int g = lane / 4, t = lane % 4, row = g + 8 * (e / 2), col = 2 * t + e % 2;
      double sum = 7.0 * e - lane;
      for (int k = 0; k < 4; ++k) sum += a(row, k) * b(k, col);
      out[lane * cf + e] = sum;
    }
  return out;
}

// One shape: built with the codelet's own source and defaults, run, compared. "" if exact.
std::string probe(const Device& device, int rows) {
  // The codelet's defaults but for the shape; under the test seams emulate_engine and probe_any,
  // the probe of the emulation (which checks this file's idea of the layout on any device).
  const std::string defines = "#define PRECISION 64\n#define MMA_M " + std::to_string(rows) + "\n" +
                              (seams::emulate_engine() ? "#define ENGINE_EMULATE 1\n" : "");
  try {
    cl::Program program(device.context(), defines + kernels::element + kernels::gemm_engine);
    try {
      program.build({device.device()}, "-cl-std=CL1.2");
    } catch (const cl::Error&) {
      std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device.device());
      if (log.size() > 300) log.resize(300);
      for (char& ch : log)
        if (ch == '\n') ch = ' ';
      return "the build failed: " + log;
    }
    cl::Kernel kernel(program, "engine_probe");
    const std::vector<double> want = expected(rows);
    cl::Buffer out(device.context(), CL_MEM_WRITE_ONLY, want.size() * sizeof(double));
    kernel.setArg(0, out);
    cl::CommandQueue queue(device.context(), device.device());
    queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(32), cl::NDRange(32));
    std::vector<double> got(want.size());
    queue.enqueueReadBuffer(out, CL_TRUE, 0, got.size() * sizeof(double), got.data());
    for (size_t i = 0; i < want.size(); ++i)
      if (got[i] != want[i])
        return "element " + std::to_string(i) + " was " + std::to_string(got[i]) + ", not " +
               std::to_string(want[i]);
    return "";
  } catch (const cl::Error& e) {
    return std::string("OpenCL failed: ") + e.what() + " (" + std::to_string(e.err()) + ")";
  }
}

EngineVerdict probed(const Device& device) {
  EngineVerdict v;
  const std::vector<int> rows = candidate_rows(device.info());
  if (rows.empty()) {
    v.why =
        "no matrix engine tandem drives on this architecture (" +
        (device.info().architecture.empty() ? std::string("unknown") : device.info().architecture) +
        ")";
    return v;
  }
  for (int r : rows) {
    const std::string failure = probe(device, r);
    const std::string name = r == 16 ? "m16n8k4" : "m8n8k4";
    if (failure.empty()) {
      v.shapes |= engine_shape(r);
      v.why += (v.why.empty() ? "" : "; ") + name + " exact";
    } else {
      v.why += (v.why.empty() ? "" : "; ") + name + ": " + failure;
    }
  }
  return v;
}

}  // namespace

const EngineVerdict& engine_verdict(const Device& device) {
  static const EngineVerdict emulated{engine_shape(8) | engine_shape(16) | kEngineEmulated,
                                      "emulated in local memory (test seam)"};
  if (seams::probe_any()) {  // a test's: probed again each time, not remembered
    static std::mutex mutex;
    static EngineVerdict again;
    std::lock_guard<std::mutex> lock(mutex);
    again = probed(device);
    return again;
  }
  if (seams::emulate_engine()) return emulated;
  std::call_once(device.engine_once(), [&] {
    device.set_engine(probed(device));
    if (env_config().verbose)
      log_line("matrix engine on " + device.description() + ": " + device.engine().why);
  });
  return device.engine();
}

Limits limits_for(const Device& device, const std::map<std::string, int>& params) {
  Limits limits = limits_of(device.info());
  const auto kernel = params.find("KERNEL");
  if (kernel != params.end() && kernel->second == kEngine)
    limits.engine = engine_verdict(device).shapes;
  return limits;
}

}  // namespace tandem::detail::gpu
