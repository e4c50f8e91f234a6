// The PTX paths: whether a device runs the matrix-engine codelet (kernels/gemm_engine.cl, KERNEL
// 3) and KERNEL 1's asynchronous copies (kernels/gemm.cl, CA), decided by a probe, never assumed.
// At the first use of either on a device the probe builds the kernels' own source and runs a
// one-warp kernel for each instruction shape the device's architecture may have, and one for the
// copy; each counts only if the build succeeded and every element of the result is exact. The
// verdict is remembered with the device's programs.
#pragma once

#include <map>
#include <string>

#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"

namespace tandem::detail::gpu {

struct EngineVerdict {
  int shapes = 0;   // Limits::engine bits of what proved: engine_shape's, kAsyncCopy
  std::string why;  // what the probe found: the shapes, or why none
};

// The device's verdict, probed once (under the seam emulate_engine: everything, emulated, with
// no probe). Only NVIDIA's sm_80 and later are probed (m8n8k4 and cp.async; sm_90 also m16n8k4),
// unless the seam probe_any says every device. Never throws: a failed build or run is a verdict of
// none. With TANDEM_VERBOSE=1 the verdict is logged once per device.
const EngineVerdict& engine_verdict(const Device& device);

// The limits to check `params` against on this device: limits_of(info(device)), with the probe's
// verdict where `params` name the codelet or CA (only then is the probe run).
Limits limits_for(const Device& device, const std::map<std::string, int>& params);

}  // namespace tandem::detail::gpu
