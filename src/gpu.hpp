// The OpenCL side of tandem: device discovery and selection, the GEMM kernel's parameters and
// compiled-program cache, and one GPU share of a GEMM in flight. gpu.cpp is the only file that
// includes OpenCL headers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "problem.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail::gpu {

struct DeviceInfo {
  int index = -1;  // position in list_devices()
  std::string platform, name, vendor, driver, version;
  bool is_gpu = false;
  bool unified_memory = false;  // CL_DEVICE_HOST_UNIFIED_MEMORY
  bool fp64 = false;
  int compute_units = 0;
  uint64_t max_work_group = 0, local_mem_bytes = 0, global_mem_bytes = 0, max_alloc_bytes = 0;
  int base_addr_align_bytes = 0;
  bool nv_compiler_options = false;  // cl_nv_compiler_options (-cl-nv-maxrregcount and others)
  std::string describe() const;  // "platform / device"
};

// Every OpenCL device of every platform, in a stable order. Throws Error if OpenCL has no
// platform or fails.
std::vector<DeviceInfo> list_devices();

class Device;

// The device `selector` names (decimal index into list_devices(), or a case-insensitive
// substring of "platform / device"); empty selects the first GPU, else the first device. Opened
// once per selector and kept for the process. Throws Error naming the cause.
std::shared_ptr<Device> open_device(const std::string& selector);
const DeviceInfo& info(const Device& device);

// Treat every device as discrete: no zero-copy, operands staged in pinned memory and copied to
// device buffers. Lets the discrete path be tested on a unified-memory device such as PoCL.
void set_assume_discrete(bool on);
// For tests: copies (A, B and C together) of at least `bytes` are split into overlapped chunks
// (default 16 MiB); 0 chunks every share.
void set_overlap_from(size_t bytes);
// tandem_malloc pins blocks of at least pinned_from() bytes on a discrete device (default 1 MiB;
// settable for tests).
size_t pinned_from();
void set_pinned_from(size_t bytes);

// Whether operands are staged and copied for this device (not unified, or set_assume_discrete).
bool is_discrete(const Device& device);

// Pinned (page-locked) host memory from `device`'s context, page-aligned and mapped for its
// lifetime: the device copies it at the bus's full speed, straight from and into the caller's
// arrays with no packing. nullptr if the device cannot give it. tandem_malloc's memory on a
// discrete device.
void* pinned_alloc(const std::shared_ptr<Device>& device, size_t bytes);
// Whether a share's A, B and C all lie in `device`'s pinned memory (pinned_alloc): such a share
// is copied with no packing, and auto uses the split tuned for it.
template <class T>
bool operands_pinned(const Device& device, const Problem<T>& share);

// Releases memory from pinned_alloc, after the device is done with it; false if `p` is not such
// memory (then nothing happens).
bool pinned_free(void* p);

// Kernel parameters, name -> value: kernels/gemm.cl's macros, plus INDEX_LONG (1 forces 64-bit
// indexing) and A_T, B_T (the layout the kernel reads each operand in: 0 op(X), 1 op(X)^T,
// -1 the caller's; a layout other than the caller's costs a transposing copy).
using Params = std::map<std::string, int>;

// The device's default parameters overlaid with `overrides`. Throws Error (InvalidArgument) for an
// unknown name, and Error (Runtime) when the set cannot run on the device (work-group size or
// local memory over its limits).
Params resolve_params(const Device& device, bool fp64, const std::map<std::string, int>& overrides);
std::string describe(const Params& params);
// Bytes of local memory a parameter set's kernel uses, for elements of `elem` bytes.
uint64_t local_bytes(const Params& params, uint64_t elem);
// Rows of C one work-group computes: the GPU's share is best a multiple of it.
int64_t row_tile(const Params& params);

// One GPU share of a row-major GEMM: the rows [0, m) of C it computes.
template <class T>
using Share = Problem<T>;

// A share whose commands are all enqueued. flush() submits them to the device without waiting;
// wait() blocks on the last event (clWaitForEvents), after which C holds the result. No OpenCL
// callbacks are used.
class InFlight {
 public:
  virtual ~InFlight() = default;
  virtual void flush() = 0;
  virtual void wait() = 0;
  // Discrete devices: enqueue() sent B and the first chunk of C's rows; feed() packs and enqueues
  // the rest on `host_threads` threads, which wait() then uses to unpack C. Meant for the thread
  // that called enqueue(), while the CPU share runs on others. Unified devices: everything was
  // enqueued already, and this only sets the thread count for wait().
  virtual void feed(int host_threads) = 0;
  // Whether feed() and wait() do host work (packing, unpacking) worth overlapping with the CPU
  // share: true on a discrete device.
  virtual bool feeds() const = 0;
  // Whether the kernel has been submitted to the device (or runs, or is done).
  virtual bool submitted() = 0;
  Report::Buffer a_path = Report::Buffer::None, b_path = Report::Buffer::None,
                 c_path = Report::Buffer::None;
  double kernel_seconds = 0;  // from the kernel's profiling event, after wait()
  int64_t flushed_at_ns = 0;  // steady clock when clFlush returned (0: never flushed)
};

// Builds (and caches) the program a share with these read layouts and parameters will use,
// without running it: the tuner compiles upcoming candidates while it measures another. Throws
// Error if the build fails. Safe to call from several threads.
void prebuild(Device& device, bool fp64, bool trans_a, bool trans_b, const Params& params);

// One build of the kernel, for people tuning it: what was compiled, how, and what came out.
struct BuildReport {
  std::string source, options, log;  // log: the compiler's (NVIDIA: registers, spills with -cl-nv-verbose)
  std::string binary;                // the device binary: PTX text on NVIDIA, empty if the build failed
  bool built = false;
};
// Builds the program a share with these read layouts and parameters would use, uncached, with
// the compiler's verbose report where the device offers one (cl_nv_compiler_options). A failed
// build is reported, not thrown.
BuildReport inspect(Device& device, bool fp64, bool trans_a, bool trans_b, const Params& params);

// A GPU failure. c_touched says whether the kernel may have written the caller's C in place
// (zero-copy), in which case C can no longer be recomputed from its old values.
class Failure : public Error {
 public:
  Failure(const Error& e, bool c_touched) : Error(e), c_touched_(c_touched) {}
  bool c_touched() const noexcept { return c_touched_; }

 private:
  bool c_touched_;
};

// Enqueues transfers (if any), the kernel and the read-back of C. Throws Failure (flush and wait
// too) on any OpenCL failure.
template <class T>
std::unique_ptr<InFlight> enqueue(Device& device, const Params& params, const Share<T>& share);

}  // namespace tandem::detail::gpu
