// tandem's C++ interface: tandem::gemm<T> for float, double, std::complex<float> and
// std::complex<double>, its options, the per-call
// report, an aligned allocator for zero-copy operands, and tandem::Error.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tandem/tandem.h"

namespace tandem {

enum class Layout { RowMajor = TANDEM_ROW_MAJOR, ColMajor = TANDEM_COL_MAJOR };
enum class Op { NoTrans = TANDEM_NO_TRANS, Trans = TANDEM_TRANS, ConjTrans = TANDEM_CONJ_TRANS };

// auto: the split stored for the device (see docs/DESIGN.md for the rule used without a profile);
// cpu: the CPU BLAS alone; gpu: the OpenCL device alone; hybrid: the GPU takes a fraction of C's
// rows, the CPU the rest, at the same time.
enum class Strategy { Auto, Cpu, Gpu, Hybrid };

const char* to_string(Strategy s);

// How the rows of C are shared out when several sides (the CPU and OpenCL devices) compute them.
// static: each side's rows are fixed when the call starts (the profile's or the request's split);
// dynamic: the rows go out in chunks to whichever side is free, each side's first chunk being
// most of its static share; for machines whose speeds drift (an APU's shared power budget,
// thermal throttling, a CPU that other programs are using). On a discrete GPU every chunk copies
// all of B again.
enum class Balance { Static, Dynamic };

const char* to_string(Balance b);

// Explicit options override the TANDEM_* environment, which overrides the defaults.
struct Options {
  std::optional<Strategy> strategy;
  std::optional<double> gpu_fraction;  // share of C's rows on the GPU under hybrid, in [0, 1]
  // The OpenCL devices: an index (as `tandem devices` lists them) or a case-insensitive substring
  // of "platform / device", or a comma-separated list of them ("1,2"), or "all" (every GPU).
  std::optional<std::string> device;
  // CPU BLAS threads; default from the core count, less the threads that feed discrete GPUs (the
  // CPU share yields cores to them, so an explicit count above what is left is lowered).
  std::optional<int> cpu_threads;
  // Host threads that pack and unpack for each discrete GPU while the CPU share runs beside it;
  // default: half the cores, shared among the discrete GPUs, and one for a GPU whose operands
  // are all in tandem_malloc memory (copied with no packing).
  std::optional<int> feeder_threads;
  // Beside a GPU that shares memory with the host (nothing to pack), one core is left to the
  // thread that waits on it, unless this is false.
  bool reserve_feeder_core = true;
  // Static or dynamic sharing of the rows; default TANDEM_BALANCE, else the profile's choice
  // under auto, else static.
  std::optional<Balance> balance;
  // Kernel parameters (name -> value, as kernels/gemm.cl's macros: MWG, NWG, KWG, MDIMC, NDIMC,
  // KUNROLL, VW, SA, SB, STRIDED, KERNEL, and KERNEL 1's VWM, VWN, DB, AK; and A_T, B_T, the
  // layout the kernel reads each operand in, 0 op(X), 1 op(X) transposed, -1 as stored;
  // INDEX_LONG=1 forces 64-bit indexing; NV_MAXRREG, NVIDIA's register cap; on a discrete GPU
  // CHUNK_FILL, the work-groups per compute unit in each chunk, and QUEUES, 1 or 2 in-order
  // queues the chunks' kernels take turns on). KERNEL=2 is the direct kernel
  // (kernels/gemm_direct.cl: MWG, NWG, KWG, MDIMC, NDIMC, KUNROLL, VWA, VWB, PADA, PADB, from its
  // own defaults). Empty: the tuned profile's, else the device's defaults.
  std::map<std::string, int> kernel_params;
  // The direct kernel, which reads A, B and C as they are stored (no packing, padding or
  // transposes; on a discrete GPU each operand is copied straight from the caller's memory):
  // true runs the profile's (else the default) direct kernel on every call, false never; unset,
  // calls below the profile's direct_below (else the default's) run it. kernel_params, when
  // given, name the kernel instead.
  std::optional<bool> direct;
};

// What happened in one call. Times are steady-clock nanoseconds since an arbitrary epoch; 0 means
// the step did not happen.
struct Report {
  // How an operand reached the GPU: in place (zero-copy), packed into staging and copied, copied
  // straight from the caller's pinned memory (tandem_malloc on a discrete GPU), or already there:
  // a tandem::Resident operand's copy, kept on the device between a plan's runs.
  enum class Buffer { None, ZeroCopy, Copy, Pinned, Resident };
  // One OpenCL device's part of the call.
  struct Device {
    int index = -1;      // as `tandem devices` numbers it
    std::string name;    // "platform / device"
    std::string kernel;  // its kernel parameters, "NAME=v ..."
    // Its rows of C (row-major view), before any fallback. Under dynamic balance: where its
    // first chunk began, and the rows of all its chunks.
    int64_t row0 = 0, rows = 0;
    int chunks = 0;    // the parts of C it computed, one at a time (1 under static balance)
    int launches = 0;  // kernel launches (each bounded in duration: LAUNCH_ROWS)
    Buffer a = Buffer::None, b = Buffer::None, c = Buffer::None;
    int feeder_threads = 0;     // host threads that packed and unpacked for it (discrete GPUs)
    double kernel_seconds = 0;  // from OpenCL profiling events
    // Bytes copied to and from the device over the bus (0 on a device that shares the host's
    // memory): a discrete device's operands in, its rows of C out.
    int64_t bytes_in = 0, bytes_out = 0;
    // Bytes the host packed and unpacked for it, between the caller's ordinary memory and pinned
    // staging (a discrete device's operands outside tandem_malloc memory), up to its failure if
    // it failed. Devices of one platform share B's packing: the first to start packs it, the
    // others of that platform copy from there.
    int64_t bytes_packed = 0;
    int64_t t_done = 0;   // when its last event completed
    bool failed = false;  // it failed, and the CPU computed the rows it had not finished
    std::string failure;
    int64_t finished_rows = 0;  // of a device that failed: its rows that had reached C
  };
  Strategy strategy = Strategy::Auto;  // the strategy that ran (never Auto)
  bool fell_back = false;              // the GPU failed and the CPU computed its rows
  std::string fallback_reason;
  double gpu_fraction = 0;             // requested fraction
  Balance balance = Balance::Static;   // how the rows were shared out
  int cpu_chunks = 0;                  // the CPU's parts of C (under dynamic balance)
  int64_t m = 0, n = 0, k = 0;         // as the caller gave them
  int64_t gpu_rows = 0, cpu_rows = 0;  // rows of C (row-major view) on the GPUs and the CPU
  int cpu_threads = 0;
  int feeder_threads = 0;       // host threads feeding discrete GPUs beside the CPU share, in all
  std::vector<Device> devices;  // each OpenCL device's part, in row order
  // The first device's part, as a call on one device reports it.
  Buffer a = Buffer::None, b = Buffer::None, c = Buffer::None;
  std::string device;             // the OpenCL devices used, if any ("; " between them)
  std::string kernel;             // the first device's kernel parameters, "NAME=v ..."
  std::string profile;            // the device profile applied ("" if none), by origin
  int64_t profile_bucket = 0;     // the profile's tuned size whose split was used
  bool profile_resident = false;  // and its split for operands in tandem_malloc memory
  // The rows and threads came from the profile's cost model, for a shape no bucket measured (or
  // several devices), and the model's prediction of the call's seconds.
  bool profile_model = false;
  double predicted_seconds = 0;
  int64_t t_start = 0, t_gpu_enqueued = 0, t_flush = 0, t_cpu_start = 0, t_cpu_end = 0,
          t_gpu_done = 0, t_end = 0;
  double gpu_kernel_seconds = 0;  // from OpenCL profiling events (the longest device's)
  // Whether the GPU's kernel had left the host's queue (submitted, running or done) when the CPU
  // share started: what the explicit flush is for.
  bool gpu_submitted_at_cpu_start = false;
  double cpu_seconds() const { return static_cast<double>(t_cpu_end - t_cpu_start) * 1e-9; }
  double gpu_seconds() const {
    return t_gpu_done > 0 ? static_cast<double>(t_gpu_done - t_start) * 1e-9 : 0.0;
  }
  double seconds() const { return static_cast<double>(t_end - t_start) * 1e-9; }
};

const char* to_string(Report::Buffer b);

// A tandem failure. For an invalid argument, argument() is its 1-based position in the C
// signature; for an OpenCL failure, cl_call() names the call and cl_code() is its status.
// What C holds after a failure: a device that fails mid-call puts back what it had not finished
// and the CPU computes it, so the call returns with C right (Report::fell_back), under every
// strategy once any row of C was written. An exception leaves C exactly as the caller gave it
// (an invalid argument; under strategy gpu, a device that failed before any row reached C), but
// for OutputLost: a GPU failed and could not be stopped (its queue could not be drained) after it
// may have written part of C in place with beta != 0, so C's old values cannot be trusted. A
// device whose queue could not be drained is not used again in the process (one warning).
class Error : public std::runtime_error {
 public:
  enum class Kind { InvalidArgument, OpenCL, TooLarge, Runtime, OutputLost };
  Error(Kind kind, const std::string& what, int argument = 0, std::string cl_call = {},
        int cl_code = 0)
      : std::runtime_error(what),
        kind_(kind),
        argument_(argument),
        cl_call_(std::move(cl_call)),
        cl_code_(cl_code) {}
  Kind kind() const noexcept { return kind_; }
  int argument() const noexcept { return argument_; }
  const std::string& cl_call() const noexcept { return cl_call_; }
  int cl_code() const noexcept { return cl_code_; }

 private:
  Kind kind_;
  int argument_;
  std::string cl_call_;
  int cl_code_;
};

// C = alpha * op(A) * op(B) + beta * C, T being float, double, std::complex<float> or
// std::complex<double>; Op::ConjTrans takes the conjugate transpose of a complex operand (for a
// real one, the transpose). Throws tandem::Error; C is untouched on an invalid argument. If
// `report` is given, it is filled in.
template <class T>
void gemm(Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc,
          const Options& options = {}, Report* report = nullptr);

extern template void gemm<float>(Layout, Op, Op, int64_t, int64_t, int64_t, float, const float*,
                                 int64_t, const float*, int64_t, float, float*, int64_t,
                                 const Options&, Report*);
extern template void gemm<double>(Layout, Op, Op, int64_t, int64_t, int64_t, double, const double*,
                                  int64_t, const double*, int64_t, double, double*, int64_t,
                                  const Options&, Report*);
extern template void gemm<std::complex<float>>(Layout, Op, Op, int64_t, int64_t, int64_t,
                                               std::complex<float>, const std::complex<float>*,
                                               int64_t, const std::complex<float>*, int64_t,
                                               std::complex<float>, std::complex<float>*, int64_t,
                                               const Options&, Report*);
extern template void gemm<std::complex<double>>(Layout, Op, Op, int64_t, int64_t, int64_t,
                                                std::complex<double>, const std::complex<double>*,
                                                int64_t, const std::complex<double>*, int64_t,
                                                std::complex<double>, std::complex<double>*,
                                                int64_t, const Options&, Report*);

// Batches of products (tandem.h says what they compute, and their rules; the C++ forms throw
// tandem::Error, whose argument() is the position in the C signature, and touch no C on an
// invalid argument). cpu runs each problem whole on one core, the problems dealt over the cores
// (options.cpu_threads of them, else the host's); a batch of one is one call on every core, and
// fewer problems than cores are each cut into bands of rows, a band to a core. gpu and hybrid deal
// the problems in chunks to the devices' coalesced kernel (many problems a launch) and, under
// hybrid, to the cores, each side taking more as it finishes; a device that fails leaves its
// unfinished problems to the cores, with one warning (under gpu, a failure before any C is written
// is the call's error, every C untouched). auto keeps products too small for a device to pay on the
// cores, deals the others as hybrid does where a single call of their total work would use a
// device, and runs a batch of one product as that single call. Under gpu, hybrid and auto the
// problems without a product (C = beta C) are computed last.

// One group of a grouped batch: `size` products of one shape and one pair of scalars, problem i
// reading a[i] and b[i] and updating c[i] (arrays of `size` pointers).
template <class T>
struct GemmGroup {
  Op op_a = Op::NoTrans, op_b = Op::NoTrans;
  int64_t m = 0, n = 0, k = 0;
  T alpha = T(1);
  const T* const* a = nullptr;
  int64_t lda = 0;
  const T* const* b = nullptr;
  int64_t ldb = 0;
  T beta = T(0);
  T* const* c = nullptr;
  int64_t ldc = 0;
  int64_t size = 0;
};

// What one batch did.
struct BatchReport {
  // What ran (never Auto): cpu (every problem on the cores), gpu (every problem on devices), hybrid
  // (some of each).
  Strategy strategy = Strategy::Auto;
  int64_t problems = 0;      // in all groups
  int64_t products = 0;      // problems with a product (others: C = beta * C, or none)
  int cpu_threads = 0;       // threads the CPU dealt its problems over
  int64_t cpu_problems = 0;  // products the CPU computed, a failed device's included
  // Products run as single calls that could use devices (auto: a shape a single call would put
  // on a device), plus those the devices' coalesced kernel computed.
  int64_t device_problems = 0;
  // Each device that took part in the batch's coalesced kernel (gpu and hybrid).
  struct Device {
    int index = -1;                       // as `tandem devices` numbers it
    std::string name;                     // "platform / device"
    int64_t problems = 0;                 // whose C it finished
    int64_t chunks = 0;                   // chunks of problems dealt to it
    int64_t launches = 0;                 // kernel launches
    int64_t bytes_in = 0, bytes_out = 0;  // copied to and from it
    // Of those, the bytes that went through pinned staging, packed or unpacked on the host; the
    // rest went straight from and into the caller's tandem_malloc memory.
    int64_t bytes_staged = 0;
    int feeder_threads = 0;  // host threads that packed and unpacked for it
    std::string kernel;      // the coalesced kernel's parameters, "NAME=v ..."
    bool failed = false;     // it failed; the CPU computed the problems it had not finished
    std::string failure;
  };
  std::vector<Device> devices;
  int64_t t_start = 0, t_end = 0;  // steady-clock nanoseconds
  double seconds() const { return static_cast<double>(t_end - t_start) * 1e-9; }
};

template <class T>
void gemm_batch(Layout layout, const GemmGroup<T>* groups, int64_t group_count,
                const Options& options = {}, BatchReport* report = nullptr);

template <class T>
void gemm_batch_strided(Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, T alpha,
                        const T* a, int64_t lda, int64_t stride_a, const T* b, int64_t ldb,
                        int64_t stride_b, T beta, T* c, int64_t ldc, int64_t stride_c,
                        int64_t count, const Options& options = {}, BatchReport* report = nullptr);

#define TANDEM_BATCH_EXTERN(T)                                                                     \
  extern template void gemm_batch<T>(Layout, const GemmGroup<T>*, int64_t, const Options&,         \
                                     BatchReport*);                                                \
  extern template void gemm_batch_strided<T>(                                                      \
      Layout, Op, Op, int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, int64_t, \
      int64_t, T, T*, int64_t, int64_t, int64_t, const Options&, BatchReport*);
TANDEM_BATCH_EXTERN(float)
TANDEM_BATCH_EXTERN(double)
TANDEM_BATCH_EXTERN(std::complex<float>)
TANDEM_BATCH_EXTERN(std::complex<double>)
#undef TANDEM_BATCH_EXTERN

// std::vector<T, tandem::Allocator<T>> holds zero-copy-ready memory (see tandem_malloc).
template <class T>
struct Allocator {
  using value_type = T;
  Allocator() noexcept = default;
  template <class U>
  Allocator(const Allocator<U>&) noexcept {}
  T* allocate(std::size_t count) {
    if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
      throw std::bad_array_new_length();
    void* p = tandem_malloc(count > 0 ? count * sizeof(T) : 1);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) noexcept { tandem_free(p); }
  template <class U>
  bool operator==(const Allocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const Allocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace tandem
