// The GEMM kernel family of kernels/gemm.cl as a tuner::Space: parameters with their values and
// the constraints that prune a point before anything is compiled (validity as the library's
// gpu::check decides it, duplicates, an estimate of registers per work-item).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/precision.hpp"
#include "search.hpp"

namespace tandem::tuner {

struct DeviceLimits {
  uint64_t max_work_group = 256;
  uint64_t local_mem_bytes = 32768;
  bool is_gpu = true;
  bool nv_compiler_options = false;  // NVIDIA: the register cap NV_MAXRREG is searched too
  int engine = 0;  // the PTX paths the device's probe proved (gpu::Limits::engine)
};

// The full family: tile and work-group shapes (group 0), and K step, unroll, vector width, local
// memory for A and B, element assignment and operand layout, RaijinCL's NN/NT/TN codelets, and
// asynchronous copies (CA) where limits.engine has gpu::kAsyncCopy (group 1). `start` (kernel
// parameters) becomes the space's start point when it fits.
Space gemm_space(const DeviceLimits& limits, detail::Precision precision,
                 const std::map<std::string, int>& start = {});

// The direct kernel's space (kernels/gemm_direct.cl, KERNEL 2): tiles and work-group (group 0);
// K step, unroll, the vector widths of A's and B's loads and the local tiles' padding (group 1).
// No layouts: the kernel reads operands as stored. `start` as for gemm_space.
Space direct_space(const DeviceLimits& limits, detail::Precision precision,
                   const std::map<std::string, int>& start = {});

// The matrix-engine codelet's space (kernels/gemm_engine.cl, KERNEL 3), for a device whose probe
// proved at least one instruction shape (limits.engine): tiles, work-group and warps (group 0);
// the shape among those proved, K step, vector width, paddings, double buffering and pairs of k
// (group 1). Operands read as stored. Points whose registers would not fit the register file
// (64K 32-bit registers a compute unit, at most 255 a work-item: every NVIDIA architecture the
// codelet runs on) are pruned. `start` as for gemm_space.
Space engine_space(const DeviceLimits& limits, detail::Precision precision,
                   const std::map<std::string, int>& start = {});

// A space small enough to search exhaustively (for comparing strategies), on the same rules.
Space small_gemm_space(const DeviceLimits& limits, detail::Precision precision);

// The tiled kernel (KERNEL 1) for calls too small to fill a GPU with the kernel size's tiles:
// tiles of 16 to 64 rows and columns and the work-groups over them (group 0); K step, unroll,
// vector widths, double buffering and A's load order (group 1). A and B are read as stored, so
// no call pays a transpose launch. `start` as for gemm_space.
Space small_tile_space(const DeviceLimits& limits, detail::Precision precision,
                       const std::map<std::string, int>& start = {});

// The kernel parameters (tandem::Options::kernel_params) of a point of either space: LAYOUT
// becomes A_T and B_T.
std::map<std::string, int> kernel_params(const Space& space, const Point& p);

// Registers per work-item the estimate gives (32-bit registers): accumulators plus one column of
// A and one row of B (and KERNEL 1's prefetched tile elements), each element as many registers as
// its precision's words (two for a double). RaijinCL pruned above 128; NVIDIA allows 255, which
// large fp64 tiles need.
int estimated_registers(const std::map<std::string, int>& values, detail::Precision precision);

}  // namespace tandem::tuner
