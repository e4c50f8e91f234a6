// Side-by-side GEMM: tandem against CLBlast and OpenBLAS on one OpenCL device (cuBLAS, the
// ceiling, comes from bench/cublas.py; bench/vs_clblast.sh runs both on the GPU host and merges
// them with bench/vs_clblast_table.py).
//
//   vs_clblast [--cases s:4096:4096:4096,z:4097:4097:4097,...] [--reps 7] [--warmup 2]
//              [--only openblas,clblast_device,...] [--device SELECTOR] [--json FILE] [--tol 16]
//              [--kernel NAME=VALUE,...]   (every tandem GPU column runs these parameters)
//
// Row-major C = A B (NN, alpha 1, beta 0), inputs uniform in [-1, 1] (both parts of a complex
// one) from a fixed seed, in any precision s, d, c, z. Per case, each column runs its warm-up
// calls and then its timed ones, one column after another in a fixed order; the figure is the
// median (min and max in the JSON) in GFLOPS = 2MNK / s / 1e9, 8MNK for c and z.
//
//   openblas              tandem::gemm, Strategy::Cpu: one OpenBLAS call on all cores
//   clblast_device        clblast::Gemm on device buffers; wall time of the call + clFinish
//   clblast_pageable      write A and B (non-blocking), Gemm, read C (blocking), from std::vector
//   clblast_pinned        the same from pinned host memory (CL_MEM_ALLOC_HOST_PTR buffers, mapped)
//   tandem_kernel         Strategy::Gpu on tandem_malloc memory, the profile's GPU-only kernel as
//                         one launch (CHUNK_FILL=64) after the copies; Report::gpu_kernel_seconds
//   tandem_gpu_pageable   Strategy::Gpu from std::vector memory; wall time of the call
//   tandem_gpu_pinned     Strategy::Gpu from tandem_malloc memory; wall time
//   tandem_auto           Strategy::Auto (the tuned profile's split) from std::vector memory
//   tandem_hybrid_pinned  Strategy::Auto from tandem_malloc memory
//   tandem_direct_pinned  Strategy::Gpu with Options::direct: the profile's direct kernel
//                         (kernels/gemm_direct.cl; else the default one), operands copied as
//                         stored, from tandem_malloc memory; wall time (issue 17's target: at
//                         least clblast_pinned)
//   tandem_direct_pageable  the same from std::vector memory
// The tandem_gpu, tandem_auto, tandem_hybrid and tandem_direct columns time calls that pass no
// Report, as a program calling BLAS does; their report is the last warm-up call's.
//
// --direct runs issue 17's check of the direct path: the cases 256^3, 512^3, 1024^3, 1000^3,
// 1023^3 and 4097^3 (sgemm) and the columns openblas, clblast_pinned, tandem_direct_pinned,
// tandem_gpu_pinned, tandem_direct_pageable and tandem_auto, unless --cases or --only say
// otherwise, and a table of the two ratios the issue sets: the direct path against CLBlast from
// pinned memory, and auto from ordinary memory against OpenBLAS.
//
// Checks: an untimed Strategy::Cpu call gives the reference C_ref, itself checked on sampled rows
// against a double-precision sum. Every column's last timed call runs on a C filled with NaN
// (beta = 0 must overwrite it), and its result must satisfy
//   max |C - C_ref| / (K * max|A| * max|B| * eps) < tol.
// A failed check prints FAILED in the cell and makes the exit status 1; a column that threw
// prints "error: ..." and makes it 2 (when nothing failed). 0 when everything passed.
#include <clblast.h>

#include <CL/opencl.hpp>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "base/clock.hpp"
#include "base/precision.hpp"
#include "base/text.hpp"
#include "gemm_measure.hpp"
#include "gpu/device.hpp"
#include "plan/device_profile.hpp"
#include "profile/store.hpp"
#include "tandem/tandem.hpp"

namespace {

using json = nlohmann::json;
using tandem::detail::clock::Stopwatch;
namespace text = tandem::detail::text;

struct Column {
  const char* id;
  const char* label;
};

// The fixed order the columns run and print in.
const std::vector<Column> kColumns = {
    {"openblas", "OpenBLAS (tandem cpu)"},
    {"clblast_device", "CLBlast, on device"},
    {"clblast_pageable", "CLBlast, pageable host"},
    {"clblast_pinned", "CLBlast, pinned host"},
    {"tandem_kernel", "tandem kernel, on device"},
    {"tandem_gpu_pageable", "tandem gpu, std::vector"},
    {"tandem_gpu_pinned", "tandem gpu, tandem_malloc"},
    {"tandem_auto", "tandem auto, std::vector"},
    {"tandem_hybrid_pinned", "tandem auto, tandem_malloc"},
    {"tandem_direct_pinned", "tandem direct, tandem_malloc"},
    {"tandem_direct_pageable", "tandem direct, std::vector"},
};

struct Case {
  tandem::detail::Precision precision;
  int64_t m, n, k;
  std::string name() const {
    return std::string(1, tandem::detail::letter(precision)) + " " + std::to_string(m) + "x" +
           std::to_string(n) + "x" + std::to_string(k);
  }
  double gflop() const { return tandem::bench::gflop(precision, m, n, k); }
};

const char* kDefaultCases =
    "s:4096:4096:4096,s:8192:8192:8192,d:4096:4096:4096,s:4097:4097:4097,s:8192:8192:256,"
    "s:256:8192:8192,s:100:8192:8192,d:4097:4097:4097";
// --direct: issue 17's sizes and the columns its targets compare.
const char* kDirectCases =
    "s:256:256:256,s:512:512:512,s:1024:1024:1024,s:1000:1000:1000,s:1023:1023:1023,"
    "s:4097:4097:4097";
const char* kDirectColumns =
    "openblas,clblast_pinned,tandem_direct_pinned,tandem_gpu_pinned,tandem_direct_pageable,"
    "tandem_auto";

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) {
    item.erase(std::remove_if(item.begin(), item.end(),
                              [](unsigned char ch) { return std::isspace(ch) != 0; }),
               item.end());
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<Case> parse_cases(const std::string& text) {
  std::vector<Case> cases;
  for (const auto& item : split(text, ',')) {
    const auto f = split(item, ':');
    if (f.size() != 4 || f[0].size() != 1 || std::string("sdcz").find(f[0]) == std::string::npos)
      throw std::invalid_argument("case '" + item + "': expected s|d|c|z:M:N:K");
    Case c{tandem::detail::parse_precision(f[0]), 0, 0, 0};
    int64_t* dims[] = {&c.m, &c.n, &c.k};
    for (int i = 0; i < 3; ++i) {
      const std::string& v = f[static_cast<size_t>(i) + 1];
      if (v.empty() ||
          !std::all_of(v.begin(), v.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; }))
        throw std::invalid_argument("case '" + item + "': dimensions must be positive integers");
      *dims[i] = std::stoll(v);
      if (*dims[i] <= 0)
        throw std::invalid_argument("case '" + item + "': dimensions must be positive");
    }
    cases.push_back(c);
  }
  if (cases.empty()) throw std::invalid_argument("no cases");
  return cases;
}

// ---------------------------------------------------------------------------------------------
// OpenCL device for CLBlast, chosen by tandem's rule: all devices of all platforms in platform
// order; a decimal index into that list, or a case-insensitive substring of "platform / device";
// empty: the first GPU, else the first device.

struct ClDevice {
  int index = -1;
  std::string platform, name, driver, version;
  cl::Device device;
  std::string describe() const { return platform + " / " + name; }
};

ClDevice pick_device(const std::string& selector) {
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  std::vector<ClDevice> all;
  std::vector<bool> is_gpu;
  for (const auto& p : platforms) {
    std::vector<cl::Device> devices;
    try {
      p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error& e) {
      if (e.err() == CL_DEVICE_NOT_FOUND) continue;
      throw;
    }
    for (const auto& d : devices) {
      ClDevice c;
      c.index = static_cast<int>(all.size());
      c.platform = p.getInfo<CL_PLATFORM_NAME>();
      c.name = d.getInfo<CL_DEVICE_NAME>();
      c.driver = d.getInfo<CL_DRIVER_VERSION>();
      c.version = d.getInfo<CL_DEVICE_VERSION>();
      c.device = d;
      all.push_back(c);
      is_gpu.push_back((d.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_GPU) != 0);
    }
  }
  if (all.empty()) throw std::runtime_error("OpenCL reports no device");
  if (selector.empty()) {
    for (size_t i = 0; i < all.size(); ++i)
      if (is_gpu[i]) return all[i];
    return all.front();
  }
  if (std::all_of(selector.begin(), selector.end(),
                  [](unsigned char ch) { return std::isdigit(ch) != 0; })) {
    const size_t index = std::stoul(selector);
    if (index < all.size()) return all[index];
  } else {
    for (const auto& c : all)
      if (text::lower(c.describe()).find(text::lower(selector)) != std::string::npos) return c;
  }
  std::string available;
  for (const auto& c : all)
    available += (available.empty() ? "" : "; ") + std::to_string(c.index) + ": " + c.describe();
  throw std::runtime_error("device selector '" + selector +
                           "' matches no OpenCL device (available: " + available + ")");
}

struct ClState {
  ClDevice dev;
  cl::Context context;
  cl::CommandQueue queue;  // in order, with profiling (for CLBlast's last-kernel event time)
};

std::string cl_error_text(const cl::Error& e) {
  return std::string(e.what() != nullptr ? e.what() : "OpenCL") + " failed (" +
         std::to_string(e.err()) + ")";
}

void check_clblast(clblast::StatusCode status) {
  if (status != clblast::StatusCode::kSuccess)
    throw std::runtime_error("clblast::Gemm returned status " +
                             std::to_string(static_cast<int>(status)));
}

// ---------------------------------------------------------------------------------------------
// One measured cell.

struct Result {
  bool ran = false;
  std::vector<double> seconds;  // the figure's time per timed call
  std::string error;            // what a throwing column said
  double check = NAN;           // normalised error of the checked call
  bool check_ok = false;
  json extra = json::object();

  bool usable() const { return ran && error.empty() && check_ok && !seconds.empty(); }
};

using tandem::bench::median;

struct Config {
  int reps = 7, warmup = 2;
  double tol = 16;
  uint64_t seed = 20261121;
  std::string device;  // selector for both tandem and CLBlast; empty: tandem's default
  std::vector<std::string> only;
  // --kernel: parameters every tandem GPU column runs (tandem_kernel's with CHUNK_FILL 64), in
  // place of the profile's; empty: the profile's.
  std::map<std::string, int> kernel;
  bool wants(const std::string& id) const {
    return only.empty() || std::find(only.begin(), only.end(), id) != only.end();
  }
};

// Warm-up calls, then the timed ones; the last timed call runs after `poison` (untimed) and is the
// one checked. `once(timed)` does one call and returns the seconds it counts.
std::vector<double> measure(const Config& cfg, const std::function<double(bool)>& once,
                            const std::function<void()>& poison) {
  for (int i = 0; i < cfg.warmup; ++i) once(false);
  std::vector<double> t;
  for (int i = 0; i < cfg.reps; ++i) {
    if (i == cfg.reps - 1) poison();
    t.push_back(once(true));
  }
  return t;
}

template <class T>
using PinnedVec = std::vector<T, tandem::Allocator<T>>;

// An element as complex<double> (a real one with no imaginary part), and the other helpers the
// checks need in every precision.
template <class T>
std::complex<double> wide(T x) {
  return std::complex<double>(x);
}
template <class T>
using RealOf = tandem::detail::real_type_t<T>;
template <class T>
constexpr bool kComplex = tandem::detail::is_complex(tandem::detail::precision_of<T>());
template <class T>
T random_element(std::uniform_real_distribution<double>& dist, std::mt19937_64& rng) {
  using R = RealOf<T>;
  if constexpr (kComplex<T>) {
    const R re = static_cast<R>(dist(rng));
    return T(re, static_cast<R>(dist(rng)));
  } else {
    return static_cast<T>(dist(rng));
  }
}
// A NaN in every part.
template <class T>
T nan_element() {
  using R = RealOf<T>;
  const R nan = std::numeric_limits<R>::quiet_NaN();
  if constexpr (kComplex<T>)
    return T(nan, nan);
  else
    return nan;
}

template <class T>
struct CaseData {
  const Case& c;
  size_t size_a, size_b, size_c;
  std::vector<T> a, b, ref, out;           // ordinary (pageable) host memory
  std::optional<PinnedVec<T>> pa, pb, pc;  // tandem_malloc copies, made on first use
  double scale;                            // K * max|A| * max|B| * eps

  explicit CaseData(const Case& cs, uint64_t seed)
      : c(cs),
        size_a(static_cast<size_t>(cs.m * cs.k)),
        size_b(static_cast<size_t>(cs.k * cs.n)),
        size_c(static_cast<size_t>(cs.m * cs.n)),
        a(size_a),
        b(size_b),
        ref(size_c),
        out(size_c) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (auto& x : a) x = random_element<T>(dist, rng);
    for (auto& x : b) x = random_element<T>(dist, rng);
    double max_a = 0, max_b = 0;
    for (T x : a) max_a = std::max(max_a, std::abs(wide(x)));
    for (T x : b) max_b = std::max(max_b, std::abs(wide(x)));
    scale = static_cast<double>(cs.k) * max_a * max_b *
            static_cast<double>(std::numeric_limits<RealOf<T>>::epsilon());
  }

  void make_pinned() {
    if (pa) return;
    pa.emplace(a.begin(), a.end());
    pb.emplace(b.begin(), b.end());
    pc.emplace(size_c, T(0));
  }

  // max |C - C_ref| / scale; infinity when C holds a NaN (or C_ref does).
  double error_of(const T* cm) const {
    double err = 0;
    for (size_t i = 0; i < size_c; ++i) {
      const double d = std::abs(wide(cm[i]) - wide(ref[i]));
      if (!(d <= err)) {
        if (std::isnan(d)) return INFINITY;
        err = d;
      }
    }
    return err / scale;
  }

  // C_ref against a sum in double on `rows` sampled rows (always the first and the last).
  double check_reference(int rows, uint64_t seed) const {
    std::vector<int64_t> picked{0, c.m - 1};
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int64_t> dist(0, c.m - 1);
    while (static_cast<int>(picked.size()) < rows && static_cast<int64_t>(picked.size()) < c.m)
      picked.push_back(dist(rng));
    std::vector<std::complex<double>> acc(static_cast<size_t>(c.n));
    double err = 0;
    for (int64_t i : picked) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t p = 0; p < c.k; ++p) {
        const std::complex<double> aip = wide(a[static_cast<size_t>(i * c.k + p)]);
        const T* brow = b.data() + p * c.n;
        for (int64_t j = 0; j < c.n; ++j) acc[static_cast<size_t>(j)] += aip * wide(brow[j]);
      }
      for (int64_t j = 0; j < c.n; ++j) {
        const double d =
            std::abs(acc[static_cast<size_t>(j)] - wide(ref[static_cast<size_t>(i * c.n + j)]));
        if (std::isnan(d)) return INFINITY;
        err = std::max(err, d);
      }
    }
    return err / scale;
  }
};

template <class T>
void fill_nan(T* p, size_t count) {
  std::fill(p, p + count, nan_element<T>());
}

// Report::kernel ("NAME=v NAME=v ...") back into kernel parameters.
std::map<std::string, int> parse_kernel(const std::string& description) {
  std::map<std::string, int> params;
  try {
    params = text::parse_params(description);
  } catch (const std::invalid_argument&) {
    throw std::runtime_error("unreadable kernel description: " + description);
  }
  if (params.empty()) throw std::runtime_error("tandem reported no kernel");
  return params;
}

// The active profile's fastest GPU-only kernel for this precision (the co-tuner ranks those as
// one launch on a discrete GPU); empty if there is no profile or it names none.
std::map<std::string, int> tuned_kernel(tandem::detail::Precision precision,
                                        const std::optional<std::string>& device) {
  namespace prof = tandem::detail::profile;
  const auto dev = tandem::detail::gpu::open_device(device.value_or(""));
  const auto p = prof::active(prof::identity_for(tandem::detail::gpu::info(*dev)));
  if (!p) return {};
  const auto it = p->precisions.find(precision);
  return it == p->precisions.end() ? std::map<std::string, int>{} : it->second.gpu_kernel;
}

template <class T>
void tandem_call(CaseData<T>& d, const T* a, const T* b, T* c, const tandem::Options& o,
                 tandem::Report* r) {
  tandem::gemm<T>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, d.c.m, d.c.n,
                  d.c.k, T(1), a, d.c.k, b, d.c.n, T(0), c, d.c.n, o, r);
}

json report_json(const tandem::Report& r) {
  return json{{"strategy", tandem::to_string(r.strategy)},
              {"fell_back", r.fell_back},
              {"fallback_reason", r.fallback_reason},
              {"gpu_rows", r.gpu_rows},
              {"cpu_rows", r.cpu_rows},
              {"cpu_threads", r.cpu_threads},
              {"buffers", std::string(tandem::to_string(r.a)) + "/" + tandem::to_string(r.b) + "/" +
                              tandem::to_string(r.c)},
              {"device", r.device},
              {"kernel", r.kernel},
              {"profile", r.profile},
              {"profile_bucket", r.profile_bucket}};
}

// CLBlast GEMM on device buffers already holding A and B; the event is that of CLBlast's last
// kernel (the call may run more than one: padding/transposing helpers on the indirect path).
// `temp`: the scratch buffer of the indirect path, allocated once by the caller (else CLBlast
// allocates one in every call), or null.
template <class T>
void clblast_gemm(ClState& cl, const Case& c, const cl::Buffer& da, const cl::Buffer& db,
                  cl::Buffer& dc, cl_mem temp, double* event_seconds) {
  cl_command_queue q = cl.queue();
  cl_event ev = nullptr;
  check_clblast(clblast::Gemm<T>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                 clblast::Transpose::kNo, static_cast<size_t>(c.m),
                                 static_cast<size_t>(c.n), static_cast<size_t>(c.k), T(1), da(), 0,
                                 static_cast<size_t>(c.k), db(), 0, static_cast<size_t>(c.n), T(0),
                                 dc(), 0, static_cast<size_t>(c.n), &q, &ev, temp));
  if (ev != nullptr) {
    cl::Event event(ev);  // takes over CLBlast's reference
    if (event_seconds != nullptr) {
      event.wait();
      *event_seconds = static_cast<double>(event.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                           event.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
                       1e-9;
    }
  }
}

// Runs one column of one case.
template <class T>
Result run_column(const std::string& id, CaseData<T>& d, const Config& cfg, ClState* cl,
                  const std::string& cl_error) {
  Result res;
  res.ran = true;
  const Case& c = d.c;
  const size_t bytes_a = d.size_a * sizeof(T), bytes_b = d.size_b * sizeof(T),
               bytes_c = d.size_c * sizeof(T);
  const T nan = nan_element<T>();
  tandem::Options gpu, autom, cpu;
  cpu.strategy = tandem::Strategy::Cpu;
  gpu.strategy = tandem::Strategy::Gpu;
  autom.strategy = tandem::Strategy::Auto;
  if (!cfg.device.empty()) gpu.device = autom.device = cfg.device;
  gpu.kernel_params = cfg.kernel;

  try {
    if (id == "openblas") {
      tandem::Report r;
      res.seconds = measure(
          cfg,
          [&](bool) {
            const Stopwatch call;
            tandem_call(d, d.a.data(), d.b.data(), d.out.data(), cpu, &r);
            return call.seconds();
          },
          [&] { fill_nan(d.out.data(), d.size_c); });
      res.check = d.error_of(d.out.data());
      res.extra = report_json(r);
    } else if (id.rfind("clblast_", 0) == 0) {
      if (cl == nullptr) throw std::runtime_error(cl_error);
      cl::Buffer da(cl->context, CL_MEM_READ_ONLY, bytes_a),
          db(cl->context, CL_MEM_READ_ONLY, bytes_b), dc(cl->context, CL_MEM_READ_WRITE, bytes_c);
      // The indirect path's scratch buffer, once, outside the timing (as a user who cares would).
      size_t temp_bytes = 0;
      {
        cl_command_queue q = cl->queue();
        const size_t m = static_cast<size_t>(c.m), n = static_cast<size_t>(c.n),
                     k = static_cast<size_t>(c.k);
        check_clblast(clblast::GemmTempBufferSize<T>(
            clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, m, n, k,
            0, k, 0, n, 0, n, &q, temp_bytes));
      }
      std::optional<cl::Buffer> temp_buffer;
      if (temp_bytes > 0) temp_buffer.emplace(cl->context, CL_MEM_READ_WRITE, temp_bytes);
      const cl_mem temp = temp_buffer ? (*temp_buffer)() : nullptr;
      res.extra["temp_buffer_bytes"] = temp_bytes;
      auto poison_device = [&] {
        cl->queue.enqueueFillBuffer(dc, nan, 0, bytes_c);
        cl->queue.finish();
      };
      if (id == "clblast_device") {
        cl->queue.enqueueWriteBuffer(da, CL_TRUE, 0, bytes_a, d.a.data());
        cl->queue.enqueueWriteBuffer(db, CL_TRUE, 0, bytes_b, d.b.data());
        res.seconds = measure(
            cfg,
            [&](bool) {
              const Stopwatch call;
              clblast_gemm<T>(*cl, c, da, db, dc, temp, nullptr);
              cl->queue.finish();
              return call.seconds();
            },
            poison_device);
        cl->queue.enqueueReadBuffer(dc, CL_TRUE, 0, bytes_c, d.out.data());
        res.check = d.error_of(d.out.data());
        // One more call, untimed, for the profiling time of CLBlast's last kernel.
        double ev = 0;
        clblast_gemm<T>(*cl, c, da, db, dc, temp, &ev);
        cl->queue.finish();
        res.extra["last_kernel_event_seconds"] = ev;
      } else if (id == "clblast_pageable") {
        res.seconds = measure(
            cfg,
            [&](bool) {
              const Stopwatch call;
              cl->queue.enqueueWriteBuffer(da, CL_FALSE, 0, bytes_a, d.a.data());
              cl->queue.enqueueWriteBuffer(db, CL_FALSE, 0, bytes_b, d.b.data());
              clblast_gemm<T>(*cl, c, da, db, dc, temp, nullptr);
              cl->queue.enqueueReadBuffer(dc, CL_TRUE, 0, bytes_c, d.out.data());
              return call.seconds();
            },
            [&] {
              fill_nan(d.out.data(), d.size_c);
              poison_device();
            });
        res.check = d.error_of(d.out.data());
      } else if (id == "clblast_pinned") {
        // NVIDIA's pinned-memory recipe: CL_MEM_ALLOC_HOST_PTR buffers, mapped once; the mapped
        // pointers are the host side of ordinary writes and reads to the device buffers.
        cl::Buffer pa(cl->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes_a),
            pb(cl->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes_b),
            pc(cl->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes_c);
        struct Mapped {
          cl::CommandQueue& q;
          cl::Buffer& buf;
          T* p;
          Mapped(cl::CommandQueue& queue, cl::Buffer& b, size_t bytes)
              : q(queue),
                buf(b),
                p(static_cast<T*>(
                    queue.enqueueMapBuffer(b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes))) {}
          ~Mapped() {
            try {
              q.enqueueUnmapMemObject(buf, p);
              q.finish();
            } catch (...) {
            }
          }
          Mapped(const Mapped&) = delete;
          Mapped& operator=(const Mapped&) = delete;
        };
        Mapped ha(cl->queue, pa, bytes_a), hb(cl->queue, pb, bytes_b), hc(cl->queue, pc, bytes_c);
        std::copy(d.a.begin(), d.a.end(), ha.p);
        std::copy(d.b.begin(), d.b.end(), hb.p);
        res.seconds = measure(
            cfg,
            [&](bool) {
              const Stopwatch call;
              cl->queue.enqueueWriteBuffer(da, CL_FALSE, 0, bytes_a, ha.p);
              cl->queue.enqueueWriteBuffer(db, CL_FALSE, 0, bytes_b, hb.p);
              clblast_gemm<T>(*cl, c, da, db, dc, temp, nullptr);
              cl->queue.enqueueReadBuffer(dc, CL_TRUE, 0, bytes_c, hc.p);
              return call.seconds();
            },
            [&] {
              fill_nan(hc.p, d.size_c);
              poison_device();
            });
        res.check = d.error_of(hc.p);
      } else {
        throw std::logic_error("unknown column " + id);
      }
    } else if (id == "tandem_kernel") {
      d.make_pinned();
      tandem::Report r;
      // The tuned profile's GPU-only kernel (else the kernel a call picks) as one launch over
      // operands already on the device, as CLBlast's column runs: CHUNK_FILL=64 makes the first
      // chunk (at least 64 work-groups per compute unit) the whole of C at these sizes with the
      // H100 profile's tiles (a small tile at a much larger size would still give two chunks),
      // so every copy in is done before the kernel starts. The calls of the other tandem columns
      // run their bucket's kernel in overlapped chunks instead.
      tandem::Options whole = gpu;  // --kernel's parameters where given
      if (whole.kernel_params.empty())
        whole.kernel_params = tuned_kernel(tandem::detail::precision_of<T>(), gpu.device);
      if (whole.kernel_params.empty()) {
        tandem_call(d, d.pa->data(), d.pb->data(), d.pc->data(), gpu, &r);
        whole.kernel_params = parse_kernel(r.kernel);
      }
      whole.kernel_params["CHUNK_FILL"] = 64;
      std::vector<double> walls;
      res.seconds = measure(
          cfg,
          [&](bool timed) {
            const Stopwatch call;
            tandem_call(d, d.pa->data(), d.pb->data(), d.pc->data(), whole, &r);
            const double wall = call.seconds();
            if (timed) walls.push_back(wall);
            if (!(r.gpu_kernel_seconds > 0))
              throw std::runtime_error("tandem reported no kernel time");
            return r.gpu_kernel_seconds;
          },
          [&] { fill_nan(d.pc->data(), d.size_c); });
      res.check = d.error_of(d.pc->data());
      res.extra = report_json(r);
      res.extra["kernel_launch"] = "one launch: " + text::describe(whole.kernel_params);
      res.extra["wall_seconds"] = walls;
      res.extra["wall_median"] = median(walls);
    } else if (id.rfind("tandem_", 0) == 0) {
      const bool pinned =
          id == "tandem_gpu_pinned" || id == "tandem_hybrid_pinned" || id == "tandem_direct_pinned";
      const bool is_auto = id == "tandem_auto" || id == "tandem_hybrid_pinned";
      const bool direct = id.rfind("tandem_direct_", 0) == 0;
      if (!pinned && id != "tandem_gpu_pageable" && id != "tandem_auto" &&
          id != "tandem_direct_pageable")
        throw std::logic_error("unknown column " + id);
      tandem::Options direct_gpu = gpu;
      direct_gpu.direct = true;
      if (pinned) d.make_pinned();
      const T* a = pinned ? d.pa->data() : d.a.data();
      const T* b = pinned ? d.pb->data() : d.b.data();
      T* cm = pinned ? d.pc->data() : d.out.data();
      // The timed calls pass no Report, as a program calling BLAS does (a call then skips
      // reading the device's times); the report is the last warm-up call's.
      tandem::Report r;
      res.seconds = measure(
          cfg,
          [&](bool timed) {
            const Stopwatch call;
            tandem_call(d, a, b, cm,
                        is_auto  ? autom
                        : direct ? direct_gpu
                                 : gpu,
                        timed ? nullptr : &r);
            return call.seconds();
          },
          [&] { fill_nan(cm, d.size_c); });
      res.check = d.error_of(cm);
      res.extra = report_json(r);
      res.extra["gpu_kernel_seconds"] = r.gpu_kernel_seconds;
      res.extra["gpu_fraction"] = r.gpu_fraction;
    } else {
      throw std::logic_error("unknown column " + id);
    }
  } catch (const cl::Error& e) {
    res.error = cl_error_text(e);
  } catch (const std::exception& e) {
    res.error = e.what();
  }
  if (!res.error.empty() && cl != nullptr) {
    try {
      cl->queue.finish();
    } catch (...) {
    }
  }
  res.check_ok = res.error.empty() && res.check < cfg.tol;  // false for NaN and infinity
  return res;
}

json result_json(const Result& r, double gflop) {
  json j{{"ran", r.ran}};
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.seconds.empty()) {
    const double med = median(r.seconds);
    const double lo = *std::min_element(r.seconds.begin(), r.seconds.end());
    const double hi = *std::max_element(r.seconds.begin(), r.seconds.end());
    j["seconds"] = r.seconds;
    j["median"] = med;
    j["min"] = lo;
    j["max"] = hi;
    j["gflops"] = gflop / med;
    j["gflops_best"] = gflop / lo;
    j["gflops_worst"] = gflop / hi;
  }
  if (r.error.empty()) {
    j["check_error"] = std::isfinite(r.check) ? json(r.check) : json("inf");
    j["check_ok"] = r.check_ok;
  }
  j["extra"] = r.extra;
  return j;
}

std::string cell_text(const Result& r, double gflop) {
  char buf[96];
  if (!r.ran) return "-";
  if (!r.error.empty()) {
    std::string e = r.error;
    for (char& ch : e)
      if (ch == '|' || ch == '\n' || ch == '\r') ch = ' ';
    if (e.size() > 60) e = e.substr(0, 57) + "...";
    return "error: " + e;
  }
  if (!r.check_ok) {
    std::snprintf(buf, sizeof buf, "FAILED (err %.3g)", r.check);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.1f", gflop / median(r.seconds));
  return buf;
}

struct CaseOutcome {
  Case c;
  double reference_check = NAN;
  bool reference_ok = false;
  std::string reference_error;
  std::map<std::string, Result> results;
};

template <class T>
CaseOutcome run_case(const Case& c, const Config& cfg, ClState* cl, const std::string& cl_error) {
  CaseOutcome out{c, NAN, false, {}, {}};
  std::fprintf(stderr, "%s: preparing\n", c.name().c_str());
  CaseData<T> d(c, cfg.seed);
  try {
    tandem::Options cpu;
    cpu.strategy = tandem::Strategy::Cpu;
    tandem_call(d, d.a.data(), d.b.data(), d.ref.data(), cpu, nullptr);
    out.reference_check = d.check_reference(16, cfg.seed + 7);
    out.reference_ok = out.reference_check < cfg.tol;
  } catch (const std::exception& e) {
    out.reference_error = e.what();
  }
  std::fprintf(stderr, "%s: reference vs double on sampled rows: %.3g%s\n", c.name().c_str(),
               out.reference_check, out.reference_ok ? "" : "  (REFERENCE FAILED)");
  for (const auto& col : kColumns) {
    if (!cfg.wants(col.id)) continue;
    Result r = run_column<T>(col.id, d, cfg, cl, cl_error);
    if (!out.reference_ok && r.error.empty()) r.check_ok = false;  // nothing to trust
    std::fprintf(stderr, "%s: %-22s %s  (check %.3g)\n", c.name().c_str(), col.id,
                 cell_text(r, c.gflop()).c_str(), r.check);
    out.results.emplace(col.id, std::move(r));
  }
  return out;
}

double gflops_of(const CaseOutcome& o, const std::string& id) {
  auto it = o.results.find(id);
  if (it == o.results.end() || !it->second.usable()) return NAN;
  return o.c.gflop() / median(it->second.seconds);
}

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string check_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return "inf";
  return fmt("%.3g", v);
}

// Issue 17's targets: the direct path at least CLBlast's host-to-host rate from pinned memory
// (both copy A and B in and C out in every call), and auto from ordinary memory never below
// OpenBLAS.
void print_direct_ratios(const std::vector<CaseOutcome>& outcomes) {
  std::printf(
      "\n## The direct path (issue 17)\n\n| case | direct / CLBlast, pinned (>= 1) | direct / "
      "tandem gpu, pinned | direct, std::vector / OpenBLAS | auto, std::vector / OpenBLAS (>= 1) "
      "| auto's kernel |\n| --- | ---: | ---: | ---: | ---: | --- |\n");
  for (const auto& o : outcomes) {
    const double cpu = gflops_of(o, "openblas"), direct = gflops_of(o, "tandem_direct_pinned");
    const auto it = o.results.find("tandem_auto");
    std::string kernel = "-";
    if (it != o.results.end() && it->second.extra.contains("kernel"))
      kernel = it->second.extra.value("gpu_rows", int64_t{0}) > 0
                   ? it->second.extra["kernel"].get<std::string>()
                   : "(CPU)";
    std::printf("| %s | %s | %s | %s | %s | %s |\n", o.c.name().c_str(),
                fmt("%.2f", direct / gflops_of(o, "clblast_pinned")).c_str(),
                fmt("%.2f", direct / gflops_of(o, "tandem_gpu_pinned")).c_str(),
                fmt("%.2f", gflops_of(o, "tandem_direct_pageable") / cpu).c_str(),
                fmt("%.2f", gflops_of(o, "tandem_auto") / cpu).c_str(), kernel.c_str());
  }
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    const bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](unsigned char ch) {
      return std::isalnum(ch) != 0 ||
             std::string("-_./:,=+@%").find(static_cast<char>(ch)) != std::string::npos;
    });
    if (!s.empty()) s += ' ';
    s += plain ? a : "'" + a + "'";
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tandem against CLBlast and OpenBLAS, side by side (cuBLAS: bench/cublas.py)"};
  Config cfg;
  std::string cases_text = kDefaultCases, only_text, json_path;
  bool direct_target = false;
  auto* cases_option =
      app.add_option("--cases", cases_text, "comma-separated s|d|c|z:M:N:K")->capture_default_str();
  app.add_flag("--direct", direct_target,
               "issue 17's check of the direct path: its sizes and columns (unless --cases or "
               "--only), and its ratios");
  app.add_option("--reps", cfg.reps, "timed calls per cell (median)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", cfg.warmup, "untimed calls before them")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  auto* only_option =
      app.add_option("--only", only_text, "comma-separated columns to run (default: all)");
  app.add_option("--device", cfg.device,
                 "OpenCL device for tandem and CLBlast: index or substring of 'platform / device' "
                 "(default: TANDEM_DEVICE, else the first GPU, else the first device)");
  app.add_option("--json", json_path, "write every sample to this file");
  app.add_option("--tol", cfg.tol, "check tolerance, in units of K*max|A|*max|B|*eps")
      ->capture_default_str();
  app.add_option("--seed", cfg.seed, "seed of the random inputs")->capture_default_str();
  std::string kernel_text;
  app.add_option("--kernel", kernel_text,
                 "kernel parameters NAME=VALUE,... every tandem GPU column runs instead of the "
                 "profile's (KERNEL=3: the matrix-engine codelet)");
  CLI11_PARSE(app, argc, argv);
  if (direct_target && cases_option->count() == 0) cases_text = kDirectCases;
  if (direct_target && only_option->count() == 0) only_text = kDirectColumns;

  std::vector<Case> cases;
  try {
    cases = parse_cases(cases_text);
    cfg.only = split(only_text, ',');
    if (!kernel_text.empty()) cfg.kernel = parse_kernel(kernel_text);
    for (const auto& id : cfg.only)
      if (std::none_of(kColumns.begin(), kColumns.end(),
                       [&](const Column& c) { return id == c.id; })) {
        std::string names;
        for (const auto& c : kColumns) names += std::string(names.empty() ? "" : ",") + c.id;
        throw std::invalid_argument("unknown column '" + id + "' (columns: " + names + ")");
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vs_clblast: %s\n", e.what());
    return 64;
  }
  if (cfg.device.empty()) {
    const char* env = std::getenv("TANDEM_DEVICE");
    if (env != nullptr) cfg.device = env;
  }

  // The OpenCL device for CLBlast (also printed as the device of the whole run).
  std::optional<ClState> cl;
  std::string cl_error;
  try {
    ClState s;
    s.dev = pick_device(cfg.device);
    s.context = cl::Context(s.dev.device);
    s.queue = cl::CommandQueue(s.context, s.dev.device, CL_QUEUE_PROFILING_ENABLE);
    cl = std::move(s);
  } catch (const cl::Error& e) {
    cl_error = "OpenCL: " + cl_error_text(e);
  } catch (const std::exception& e) {
    cl_error = e.what();
  }

  // Which device tandem opens, from a tiny GPU call.
  std::string tandem_device;
  try {
    tandem::Options o;
    o.strategy = tandem::Strategy::Gpu;
    if (!cfg.device.empty()) o.device = cfg.device;
    std::vector<float> x(64, 1.0f), y(64, 0.0f);
    tandem::Report r;
    tandem::gemm<float>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, 8, 8, 8,
                        1.0f, x.data(), 8, x.data(), 8, 0.0f, y.data(), 8, o, &r);
    tandem_device = r.device;
  } catch (const std::exception& e) {
    tandem_device = std::string("(tandem cannot use the GPU: ") + e.what() + ")";
  }

  const std::string date = utc_now(), cmd = command_line(argc, argv);
  std::printf("# tandem vs CLBlast vs OpenBLAS\n\n");
  std::printf("- date: %s\n", date.c_str());
  std::printf("- command: `%s`\n", cmd.c_str());
  if (cl) {
    std::printf("- OpenCL device (CLBlast): [%d] %s; driver %s; %s\n", cl->dev.index,
                cl->dev.describe().c_str(), cl->dev.driver.c_str(), cl->dev.version.c_str());
  } else {
    std::printf("- OpenCL device (CLBlast): none: %s\n", cl_error.c_str());
  }
  std::printf("- tandem device: %s\n", tandem_device.c_str());
  if (cl && tandem_device.find(cl->dev.describe()) == std::string::npos &&
      !cl->dev.describe().empty())
    std::printf("- WARNING: tandem and CLBlast may be on different devices\n");
  std::printf(
      "- reps %d after %d warm-up calls; GFLOPS of the median; check tolerance %g (units of "
      "K*max|A|*max|B|*eps)\n\n",
      cfg.reps, cfg.warmup, cfg.tol);
  std::fflush(stdout);

  std::vector<CaseOutcome> outcomes;
  for (const Case& c : cases) {
    outcomes.push_back(tandem::detail::with_element_type(c.precision, [&](auto zero) {
      return run_case<decltype(zero)>(c, cfg, cl ? &*cl : nullptr, cl_error);
    }));
  }

  std::vector<const Column*> shown;
  for (const auto& col : kColumns)
    if (cfg.wants(col.id)) shown.push_back(&col);

  // Table 1: GFLOPS.
  std::printf("## GFLOPS (median of %d)\n\n| case |", cfg.reps);
  for (const Column* col : shown) std::printf(" %s |", col->label);
  std::printf("\n| --- |");
  for (size_t i = 0; i < shown.size(); ++i) std::printf(" ---: |");
  std::printf("\n");
  for (const auto& o : outcomes) {
    std::printf("| %s |", o.c.name().c_str());
    for (const Column* col : shown)
      std::printf(" %s |", cell_text(o.results.at(col->id), o.c.gflop()).c_str());
    std::printf("\n");
  }

  // Table 2: ratios.
  std::printf(
      "\n## Ratios\n\n| case | tandem kernel / CLBlast device | tandem gpu / CLBlast, pageable "
      "| tandem gpu / CLBlast, pinned | auto / max(cpu, gpu) | hybrid gain "
      "| auto / max(cpu, gpu), tandem_malloc | hybrid gain, tandem_malloc |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& o : outcomes) {
    const double cpu = gflops_of(o, "openblas");
    // auto against the better single strategy on the same memory, and the gain over it as a
    // fraction of the slower one's rate (NaN if a rate is missing).
    const auto against = [&](const char* gpu_id, const char* auto_id) {
      const double gpu = gflops_of(o, gpu_id), au = gflops_of(o, auto_id);
      const bool ok = !std::isnan(cpu) && !std::isnan(gpu);
      const double best = std::max(cpu, gpu), worst = std::min(cpu, gpu);
      return fmt("%.2f", ok ? au / best : NAN) + " | " +
             fmt("%+.3f", ok ? (au - best) / worst : NAN);
    };
    std::printf(
        "| %s | %s | %s | %s | %s | %s |\n", o.c.name().c_str(),
        fmt("%.2f", gflops_of(o, "tandem_kernel") / gflops_of(o, "clblast_device")).c_str(),
        fmt("%.2f", gflops_of(o, "tandem_gpu_pageable") / gflops_of(o, "clblast_pageable")).c_str(),
        fmt("%.2f", gflops_of(o, "tandem_gpu_pinned") / gflops_of(o, "clblast_pinned")).c_str(),
        against("tandem_gpu_pageable", "tandem_auto").c_str(),
        against("tandem_gpu_pinned", "tandem_hybrid_pinned").c_str());
  }
  std::printf(
      "\nhybrid gain: (auto - max(cpu, gpu)) / min(cpu, gpu), the gain as a fraction of the "
      "slower strategy's rate; cpu = OpenBLAS, gpu = tandem gpu from std::vector, or from "
      "tandem_malloc memory in the last two columns.\n");

  if (direct_target) print_direct_ratios(outcomes);

  // Table 3: check errors.
  std::printf(
      "\n## Check errors (max |C - C_ref| / (K max|A| max|B| eps), must be < %g)\n\n| case | "
      "reference vs double (16 rows) |",
      cfg.tol);
  for (const Column* col : shown) std::printf(" %s |", col->id);
  std::printf("\n| --- | ---: |");
  for (size_t i = 0; i < shown.size(); ++i) std::printf(" ---: |");
  std::printf("\n");
  int failed = 0, errors = 0;
  for (const auto& o : outcomes) {
    if (!o.reference_ok) ++failed;
    std::printf("| %s | %s |", o.c.name().c_str(),
                o.reference_error.empty() ? check_text(o.reference_check).c_str()
                                          : ("error: " + o.reference_error).c_str());
    for (const Column* col : shown) {
      const Result& r = o.results.at(col->id);
      if (!r.error.empty())
        ++errors;
      else if (!r.check_ok)
        ++failed;
      std::printf(" %s%s |",
                  !r.ran             ? "-"
                  : !r.error.empty() ? "error"
                                     : check_text(r.check).c_str(),
                  r.error.empty() && !r.check_ok ? " FAILED" : "");
    }
    std::printf("\n");
  }
  std::printf("\n%d failed check(s), %d error(s)\n", failed, errors);

  if (!json_path.empty()) {
    json j;
    j["program"] = "vs_clblast";
    j["date_utc"] = date;
    j["command_line"] = cmd;
    j["reps"] = cfg.reps;
    j["warmup"] = cfg.warmup;
    j["tolerance"] = cfg.tol;
    j["seed"] = cfg.seed;
    j["opencl_device"] = cl ? json{{"index", cl->dev.index},
                                   {"platform", cl->dev.platform},
                                   {"name", cl->dev.name},
                                   {"driver", cl->dev.driver},
                                   {"version", cl->dev.version}}
                            : json{{"error", cl_error}};
    j["tandem_device"] = tandem_device;
    j["columns"] = json::array();
    for (const Column* col : shown)
      j["columns"].push_back({{"id", col->id}, {"label", col->label}});
    j["cases"] = json::array();
    for (const auto& o : outcomes) {
      json jc{{"name", o.c.name()},
              {"precision", std::string(1, tandem::detail::letter(o.c.precision))},
              {"m", o.c.m},
              {"n", o.c.n},
              {"k", o.c.k},
              {"gflop", o.c.gflop()},
              {"reference_check",
               std::isfinite(o.reference_check) ? json(o.reference_check) : json("inf")},
              {"reference_ok", o.reference_ok}};
      if (!o.reference_error.empty()) jc["reference_error"] = o.reference_error;
      jc["results"] = json::object();
      for (const auto& [id, r] : o.results) jc["results"][id] = result_json(r, o.c.gflop());
      j["cases"].push_back(jc);
    }
    std::ofstream f(json_path);
    f << j.dump(1) << "\n";
    if (!f) {
      std::fprintf(stderr, "vs_clblast: cannot write %s\n", json_path.c_str());
      return 2;
    }
  }
  return failed > 0 ? 1 : errors > 0 ? 2 : 0;
}
