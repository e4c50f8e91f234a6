// The PTX paths' probe: kernels/gemm_engine.cl's engine_probe, one warp, one instruction on small
// integers, compared element by element with the product the fragment layout says; and
// kernels/gemm.cl's copy_probe, one warp's asynchronous copies, compared word by word.
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

// "" once `program` is built for the device, else why not (the start of its build log).
std::string built(cl::Program& program, const Device& device) {
  try {
    program.build({device.device()}, "-cl-std=CL1.2");
    return "";
  } catch (const cl::Error&) {
    std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device.device());
    if (log.size() > 300) log.resize(300);
    for (char& ch : log)
      if (ch == '\n') ch = ' ';
    return "the build failed: " + log;
  }
}

// One shape: built with the codelet's own source and defaults, run, compared. "" if exact.
std::string probe(const Device& device, int rows) {
  // The codelet's defaults but for the shape; under the test seams emulate_engine and probe_any,
  // the probe of the emulation (which checks this file's idea of the layout on any device).
  const std::string defines = "#define PRECISION 64\n#define MMA_M " + std::to_string(rows) + "\n" +
                              (seams::emulate_engine() ? "#define ENGINE_EMULATE 1\n" : "");
  try {
    cl::Program program(device.context(), defines + kernels::element + kernels::gemm_engine);
    if (std::string failure = built(program, device); !failure.empty()) return failure;
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

// The asynchronous copy: kernels/gemm.cl's copy_probe, built as KERNEL 1 with CA and float4
// vectors (the 16-byte copy the kernel makes), run on one warp. "" if every vector landed where
// it was sent.
std::string probe_copy(const Device& device) {
  const std::string defines =
      "#define PRECISION 32\n#define KERNEL 1\n#define CA 2\n#define VW 4\n#define TRANS_A 1\n"
      "#define TRANS_B 0\n" +
      std::string(seams::emulate_engine() ? "#define ASYNC_EMULATE 1\n" : "");
  try {
    cl::Program program(device.context(), defines + kernels::element + kernels::gemm);
    if (std::string failure = built(program, device); !failure.empty()) return failure;
    cl::Kernel kernel(program, "copy_probe");
    std::vector<float> in(32 * 4), got(in.size());
    for (size_t i = 0; i < in.size(); ++i) in[i] = float(3 * i + 1);
    cl::Buffer src(device.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in.size() * 4,
                   in.data());
    cl::Buffer out(device.context(), CL_MEM_WRITE_ONLY, got.size() * 4);
    kernel.setArg(0, src);
    kernel.setArg(1, out);
    cl::CommandQueue queue(device.context(), device.device());
    queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(32), cl::NDRange(32));
    queue.enqueueReadBuffer(out, CL_TRUE, 0, got.size() * 4, got.data());
    for (size_t i = 0; i < got.size(); ++i) {
      const size_t from = (31 - i / 4) * 4 + i % 4;
      if (got[i] != in[from])
        return "word " + std::to_string(i) + " was " + std::to_string(got[i]) + ", not " +
               std::to_string(in[from]);
    }
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
        "no matrix engine or asynchronous copy tandem drives on this architecture (" +
        (device.info().architecture.empty() ? std::string("unknown") : device.info().architecture) +
        ")";
    return v;
  }
  const auto found = [&v](const std::string& name, const std::string& failure, int bit) {
    if (failure.empty()) v.shapes |= bit;
    v.why += (v.why.empty() ? "" : "; ") + name + (failure.empty() ? " exact" : ": " + failure);
  };
  for (int r : rows) found(r == 16 ? "m16n8k4" : "m8n8k4", probe(device, r), engine_shape(r));
  found("cp.async", probe_copy(device), kAsyncCopy);
  return v;
}

}  // namespace

const EngineVerdict& engine_verdict(const Device& device) {
  static const EngineVerdict emulated{
      engine_shape(8) | engine_shape(16) | kEngineEmulated | kAsyncCopy,
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
  if (is_engine(params) || uses_async_copy(params)) limits.engine = engine_verdict(device).shapes;
  return limits;
}

}  // namespace tandem::detail::gpu
