// The GEMM kernel's parameters, with no OpenCL: their defaults, which sets are valid (the one
// place that decides it, for the library and the tuner alike), and what follows from a set
// (local memory, the row tile, the layouts the kernel reads).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "device.hpp"

namespace tandem::detail::gpu {

// Kernel parameters, name -> value: kernels/gemm.cl's macros, plus host-side ones: INDEX_LONG
// (1 forces 64-bit indexing), A_T and B_T (the layout the kernel reads each operand in: 0 op(X),
// 1 op(X)^T, -1 the caller's; a layout other than the caller's costs a transposing copy),
// NV_MAXRREG (NVIDIA's register cap, a build option), CHUNK_FILL and QUEUES (a discrete share's
// chunking and kernel queues).
using Params = std::map<std::string, int>;

// What validity depends on, of the device.
struct Limits {
  uint64_t max_work_group = 256;
  uint64_t local_mem_bytes = 32768;
  bool is_gpu = true;
};
Limits limits_of(const DeviceInfo& info);

// Why a parameter set cannot run: the kernel's own #error checks would stop its build (Kernel),
// the device cannot launch it (Device), or a host-side parameter is out of its range (Host).
struct Violation {
  enum class Kind { Kernel, Device, Host } kind;
  std::string message;
};

// The first rule a complete parameter set breaks, or none. Layout-dependent kernel rules are
// checked for every layout the kernel may read in (both, where A_T or B_T is -1).
std::optional<Violation> check(const Params& params, const Limits& limits, bool fp64);

// The device's default parameters overlaid with `overrides`. Throws Error (InvalidArgument) for
// an unknown name, and Error (Runtime) naming the rule a set breaks (check()).
Params resolve_params(const Limits& limits, bool fp64, const std::map<std::string, int>& overrides);
Params resolve_params(const Device& device, bool fp64, const std::map<std::string, int>& overrides);

// Bytes of local memory a parameter set's kernel uses, for elements of `elem` bytes.
uint64_t local_bytes(const Params& params, uint64_t elem);
// Rows of C one work-group computes: the GPU's share is best a multiple of it.
int64_t row_tile(const Params& params);
// The layout the kernel reads an operand in (A_T or B_T): its own, or the caller's when it is -1.
bool read_transposed(const Params& params, const char* name, bool caller);

}  // namespace tandem::detail::gpu
