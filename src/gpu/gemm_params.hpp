// The GEMM kernel's parameters, with no OpenCL: their defaults (from the built-in database),
// which sets are valid (the one place that decides it, for the library and the tuner alike), and
// what follows from a set (local memory, the row tile, the layouts the kernel reads).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/precision.hpp"
#include "gpu/device.hpp"

namespace tandem::detail::gpu {

// Kernel parameters, name -> value: kernels/gemm.cl's macros (or, with KERNEL 2, those of
// kernels/gemm_direct.cl), plus the host-side ones (host_only) that database/defaults.json
// describes.
using Params = std::map<std::string, int>;

// KERNEL's value for the direct kernel (kernels/gemm_direct.cl): operands read in place as
// stored, edges handled inside, for small and odd calls (docs/DESIGN.md).
constexpr int kDirect = 2;
// Whether a parameter set is the direct kernel's.
bool is_direct(const Params& params);
// KERNEL's value for the matrix-engine codelet (kernels/gemm_engine.cl): dgemm and zgemm on the
// GPU's matrix instructions, valid only on a device whose probe proved them (gpu/engine.hpp).
constexpr int kEngine = 3;
bool is_engine(const Params& params);

// Whether a parameter is the host's alone, never a macro of the kernel: INDEX_LONG and the read
// layouts A_T, B_T (the host turns them into the kernel's INDEX_LONG, TRANS_A and TRANS_B),
// NV_MAXRREG (a build option), CHUNK_FILL and QUEUES (a discrete share's pipeline), LAUNCH_ROWS
// (the most rows of C one kernel launch computes; 0: no bound).
bool host_only(const std::string& name);

// What validity depends on, of the device.
struct Limits {
  uint64_t max_work_group = 256;
  uint64_t local_mem_bytes = 32768;
  bool is_gpu = true;
  // The PTX paths the device's probe proved: the matrix-engine instruction shapes (engine_shape
  // bits) and kAsyncCopy; 0: none, or not asked. limits_of(DeviceInfo) never probes:
  // gpu/engine.hpp's limits_for does, for a parameter set that names one of them.
  int engine = 0;
  bool operator==(const Limits& o) const {
    return max_work_group == o.max_work_group && local_mem_bytes == o.local_mem_bytes &&
           is_gpu == o.is_gpu && engine == o.engine;
  }
};
Limits limits_of(const DeviceInfo& info);
// `limits`, every field, mixed into the hash `h` (base/memo.hpp's hash_value): for the memos
// keyed by them, which compare them with ==.
uint64_t hash_limits(const Limits& limits, uint64_t h);
// Limits::engine's bit for the instruction of MMA_M rows (8: m8n8k4, 16: m16n8k4), 0 for another
// value; kEngineEmulated marks the test seam's emulation (its local scratch counts too).
int engine_shape(int mma_m);
constexpr int kEngineEmulated = 4;
// Limits::engine's bit for the asynchronous global-to-local copy (cp.async) that KERNEL 1 uses
// with CA; and whether a parameter set asks for it.
constexpr int kAsyncCopy = 8;
bool uses_async_copy(const Params& params);

// Why a parameter set cannot run: the kernel's own #error checks would stop its build (Kernel), the
// device cannot launch it (Device: a complex element is twice a real one's size, so its tiles
// need twice the local and private memory), or a host-side parameter is out of its range (Host).
struct Violation {
  enum class Kind { Kernel, Device, Host } kind;
  std::string message;
};

// The first rule a complete parameter set breaks in this precision, or none. Rules that depend on
// the layout the kernel reads an operand in are checked for every layout it may read (both, where
// A_T or B_T is -1, the caller's). kernels/gemm.cl keeps its #error checks as the last guard.
std::optional<Violation> check(const Params& params, const Limits& limits, Precision precision);

// The defaults for this kind of device overlaid with `overrides`, unchecked: the direct kernel's
// (direct_params) when `overrides` sets KERNEL 2, else kernels/gemm.cl's. Throws Error
// (InvalidArgument) for a name the kernel does not have.
Params with_defaults(const Limits& limits, const std::map<std::string, int>& overrides);
// The direct kernel's full parameter set for this kind of device: its own defaults
// (defaults.json's "direct") and the host-side parameters. Its names are all the direct kernel has.
Params direct_params(bool is_gpu);
// The matrix-engine codelet's full parameter set: defaults.json's "engine" and the host-side
// parameters.
Params engine_params(bool is_gpu);

// A resolved parameter set, shared and never changed: a plan's parts and the shares they start
// hold one instead of copies (a small call copied its maps several times over, issue 17).
using SharedParams = std::shared_ptr<const Params>;

// with_defaults, then check(): throws Error (Runtime) naming the rule a set breaks.
// resolved(): the same, remembered for these limits, precision and overrides.
SharedParams resolved(const Limits& limits, Precision precision,
                      const std::map<std::string, int>& overrides);
Params resolve_params(const Limits& limits, Precision precision,
                      const std::map<std::string, int>& overrides);
Params resolve_params(const Device& device, Precision precision,
                      const std::map<std::string, int>& overrides);

// Bytes of local memory a parameter set's kernel uses, for elements of `elem` bytes.
uint64_t local_bytes(const Params& params, uint64_t elem);
// Bytes of private memory one work-item of the kernel holds (its register tile, a column of A and
// a row of B, KERNEL 1's staged loads), for elements of `elem` bytes. KERNEL may be absent (0).
uint64_t private_bytes(const Params& params, uint64_t elem);
// Rows of C one work-group computes: the GPU's share is best a multiple of it.
int64_t row_tile(const Params& params);
// Columns of C one work-group computes.
int64_t col_tile(const Params& params);
// The layout the kernel reads an operand in (A_T or B_T): its own, or the caller's when it is -1.
bool read_transposed(const Params& params, const char* name, bool caller);
inline bool read_transposed(int layout, bool caller) { return layout < 0 ? caller : layout == 1; }

// What a share reads of its parameter set on every call, each looked up by name once. Throws
// std::out_of_range for a set without one of the names every resolved set has; VW, VWN and
// LAUNCH_ROWS read 0 where absent (no padding, no bound).
struct KernelFacts {
  int mwg = 0, nwg = 0, kwg = 0, mdimc = 0, ndimc = 0;  // tiles and work-group shape
  int vw = 0, vwn = 0;                                  // vector widths rows are padded to
  int a_t = -1, b_t = -1, index_long = 0;               // read layouts, 64-bit indices
  int chunk_fill = 0, queues = 0, launch_rows = 0;      // a discrete share's pipeline
  bool direct = false;                                  // KERNEL 2 (is_direct)
};
KernelFacts facts_of(const Params& params);
// The same for a shared set, remembered by its address (a small call looked names up some twenty
// times, issue 17).
KernelFacts facts_of(const SharedParams& params);

}  // namespace tandem::detail::gpu
