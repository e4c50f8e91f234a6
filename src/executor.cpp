// Hybrid execution of one normalised GEMM.
#include "executor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "config.hpp"
#include "cpu_blas.hpp"
#include "gpu.hpp"
#include "log.hpp"
#include "profile.hpp"
#include "tasks.hpp"
#include "topology.hpp"

namespace tandem::detail {
namespace {

// Measured on a 2-core machine (docs/PERFORMANCE.md): one OpenBLAS call with all the arena's
// threads beats row panels of single-threaded calls, whose narrow panels repack B per panel.
std::atomic<CpuMode> g_cpu_mode{CpuMode::SingleCall};

// hybrid without a fraction from options, environment or profile splits the rows evenly.
constexpr double kHybridDefaultFraction = 0.5;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A hybrid's CPU share with fewer rows than this per thread is cut into column panels: OpenBLAS
// 0.3.21 gives each of its threads a band of rows (32 or more), so a share of 256 rows used 8 of
// 15 threads and ran at half the CPU's rate beside the H100 (docs/PERFORMANCE.md).
constexpr int64_t kRowsPerThread = 64;
constexpr int64_t kPanelColumns = 64;  // panel widths are multiples of this

// Rows [row0, row0 + rows) of C on the CPU BLAS. `beside_gpu`: the rest of C is the GPU's.
template <class T>
void cpu_share(const Problem<T>& p, int64_t row0, int64_t rows, int threads, bool beside_gpu) {
  if (rows <= 0) return;
  auto run_rows = [&p](int64_t r0, int64_t count) {
    const T* a = p.trans_a ? p.a + r0 : p.a + r0 * p.lda;
    cpu_blas::gemm(p.trans_a, p.trans_b, count, p.n, p.k, p.alpha, a, p.lda, p.b, p.ldb, p.beta,
                   p.c + r0 * p.ldc, p.ldc);
  };
  const int64_t column_panels = std::min<int64_t>(threads, p.n / kPanelColumns);
  if (beside_gpu && cpu_mode() == CpuMode::SingleCall && rows < kRowsPerThread * threads && column_panels > 1) {
    // One single-threaded call per panel of columns, each on all the share's rows.
    const T* a = p.trans_a ? p.a + row0 : p.a + row0 * p.lda;
    const int64_t units = p.n / kPanelColumns;  // whole panels of kPanelColumns; the last takes the rest
    cpu_blas::Threads scope(1);
    tasks::in_arena(threads, [&] {
      tasks::parallel_for(column_panels, [&](int64_t i) {
        const int64_t j0 = units * i / column_panels * kPanelColumns;
        const int64_t j1 = i + 1 == column_panels ? p.n : units * (i + 1) / column_panels * kPanelColumns;
        const T* b = p.trans_b ? p.b + j0 * p.ldb : p.b + j0;
        cpu_blas::gemm(p.trans_a, p.trans_b, rows, j1 - j0, p.k, p.alpha, a, p.lda, b, p.ldb, p.beta,
                       p.c + row0 * p.ldc + j0, p.ldc);
      });
    });
    return;
  }
  if (cpu_mode() == CpuMode::SingleCall || threads == 1) {
    cpu_blas::Threads scope(threads);
    tasks::in_arena(threads, [&] { run_rows(row0, rows); });
    return;
  }
  cpu_blas::Threads scope(1);
  const int64_t panels = std::min<int64_t>(threads, rows);
  tasks::in_arena(threads, [&] {
    tasks::parallel_for(panels, [&](int64_t i) {
      const int64_t begin = row0 + rows * i / panels, end = row0 + rows * (i + 1) / panels;
      run_rows(begin, end - begin);
    });
  });
}

struct Plan {
  Strategy requested = Strategy::Auto;
  std::optional<double> fraction;  // from the options or the environment (hybrid only)
};

Plan plan(const Options& o) {
  const EnvConfig& env = env_config();
  Plan plan;
  plan.requested = o.strategy.value_or(env.strategy.value_or(Strategy::Auto));
  if (o.gpu_fraction && !(*o.gpu_fraction >= 0.0 && *o.gpu_fraction <= 1.0))
    throw Error(Error::Kind::InvalidArgument,
                "options.gpu_fraction = " + std::to_string(*o.gpu_fraction) +
                    " is outside [0, 1]");
  if (o.cpu_threads && *o.cpu_threads < 1)
    throw Error(Error::Kind::InvalidArgument,
                "options.cpu_threads = " + std::to_string(*o.cpu_threads) + " must be at least 1");
  if (plan.requested == Strategy::Hybrid) {
    if (o.gpu_fraction)
      plan.fraction = o.gpu_fraction;
    else if (env.gpu_fraction)
      plan.fraction = env.gpu_fraction;
  }
  return plan;
}

// The GPU could not do its part. Under strategy gpu that is the caller's error; otherwise the
// CPU takes over, with one warning per process.
void gpu_unavailable(const Plan& plan, const Error& e, Report& r) {
  if (plan.requested == Strategy::Gpu) throw e;
  r.fell_back = true;
  r.fallback_reason = e.what();
  warn_once("gpu-fallback", std::string("GPU path unavailable, computing on the CPU: ") + e.what());
}

Error output_lost(const Error& e) {
  return Error(Error::Kind::OutputLost,
               std::string("the GPU failed after writing C in place and beta != 0, so C's old "
                           "values are lost: ") + e.what());
}

}  // namespace

CpuMode cpu_mode() { return g_cpu_mode.load(); }
void set_cpu_mode(CpuMode mode) { g_cpu_mode.store(mode); }

int64_t gpu_rows(double fraction, int64_t m, int64_t tile) {
  if (fraction <= 0.0 || m <= 0) return 0;
  if (fraction >= 1.0) return m;
  const int64_t rows = std::llround(fraction * static_cast<double>(m));
  if (tile > 1) {
    const int64_t rounded = std::llround(static_cast<double>(rows) / static_cast<double>(tile)) * tile;
    if (rounded > 0 && rounded < m) return rounded;
  }
  return std::clamp<int64_t>(rows, 0, m);
}

namespace {

// The profile that applies to a device, looked up once per device (and again after
// profile::forget()): a call pays one locked map read for it.
std::shared_ptr<const profile::Profile> profile_for(const gpu::DeviceInfo& di) {
  struct Cached {
    uint64_t generation = 0;
    std::shared_ptr<const profile::Profile> profile;
  };
  static std::mutex& mutex = *new std::mutex;
  static auto& cache = *new std::map<int, Cached>;
  const uint64_t gen = profile::generation();
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(di.index);
    if (it != cache.end() && it->second.generation == gen) return it->second.profile;
  }
  Cached c;
  c.generation = gen;
  c.profile = profile::active(profile::identity_for(di));
  std::lock_guard<std::mutex> lock(mutex);
  cache[di.index] = c;
  return c.profile;
}

}  // namespace

template <class T>
void execute(const Problem<T>& p, const Options& o, Report& r) {
  r.t_start = now_ns();
  const Plan pl = plan(o);
  constexpr bool fp64 = std::is_same_v<T, double>;

  std::unique_ptr<gpu::InFlight> inflight;
  int64_t mg = 0;
  int profile_threads = 0;
  if (pl.requested != Strategy::Cpu) {
    try {
      const std::string selector = o.device.value_or(env_config().device.value_or(""));
      auto device = gpu::open_device(selector);
      const gpu::DeviceInfo& di = gpu::info(*device);
      r.device = di.describe();
      // The device's profile: auto's split, and the kernel parameters when none are given.
      profile::Choice choice;
      if (auto prof = profile_for(di)) {
        // Operands a discrete device copies without packing leave the host's cores to the CPU
        // share: the profile may hold a split for them.
        const bool resident = gpu::is_discrete(*device) && gpu::operands_pinned(*device, p);
        choice = profile::choose(*prof, fp64, p.m, p.n, p.k, resident);
        // A split of C's rows saves the GPU only its rows' work; on a discrete device each
        // share still copies all of B. Where B outweighs A and C together (few rows over a long
        // K), the split measured on square problems costs more than it saves (100x8192x8192
        // sgemm on the H100 host: 0.58 of the GPU alone), so auto keeps the GPU alone.
        if (pl.requested == Strategy::Auto && gpu::is_discrete(*device) && choice.fraction > 0 &&
            choice.fraction < 1 &&
            static_cast<double>(p.k) * static_cast<double>(p.n) >
                static_cast<double>(p.m) * static_cast<double>(p.k + p.n)) {
          choice.fraction = 1.0;
          choice.kernel = choice.gpu_kernel;
          choice.cpu_threads = 0;
        }
        r.profile = prof->origin;
        r.profile_bucket = choice.bucket;
        r.profile_resident = choice.resident;
      }
      double fraction = 1.0;
      if (pl.requested == Strategy::Auto) fraction = choice.fraction;
      if (pl.requested == Strategy::Hybrid)
        fraction = pl.fraction.value_or(choice.fraction > 0 ? choice.fraction : kHybridDefaultFraction);
      r.gpu_fraction = fraction;
      if (fraction > 0 && pl.requested != Strategy::Gpu) profile_threads = choice.cpu_threads;
      if (fraction > 0 && fp64 && !di.fp64)
        throw Error(Error::Kind::Runtime, "device " + di.describe() + " has no fp64 support");
      // Explicit parameters are the caller's to get right; a profile's that do not fit this
      // device (a platform-wide profile, a hand-edited file) give way to the defaults.
      gpu::Params params;
      if (fraction > 0) {
        const auto& profile_kernel = pl.requested == Strategy::Gpu ? choice.gpu_kernel : choice.kernel;
        if (!o.kernel_params.empty()) {
          params = gpu::resolve_params(*device, fp64, o.kernel_params);
        } else {
          try {
            params = gpu::resolve_params(*device, fp64, profile_kernel);
          } catch (const Error& e) {
            warn_once("profile-kernel:" + r.profile,
                      "the profile's kernel does not fit " + di.describe() + " (" + e.what() +
                          "); using the default kernel");
            params = gpu::resolve_params(*device, fp64, {});
          }
        }
        r.kernel = gpu::describe(params);
      }
      mg = fraction > 0 ? gpu_rows(fraction, p.m, gpu::row_tile(params)) : 0;
      if (mg > 0) {
        gpu::Share<T> s = p;  // the top mg rows of C
        s.m = mg;
        inflight = gpu::enqueue(*device, params, s);
        r.t_gpu_enqueued = now_ns();
        inflight->flush();
        r.t_flush = inflight->flushed_at_ns;  // set by the OpenCL layer when clFlush returned
        r.a = inflight->a_path;
        r.b = inflight->b_path;
        r.c = inflight->c_path;
      }
    } catch (const gpu::Failure& e) {
      if (e.c_touched() && p.beta != T(0)) throw output_lost(e);
      gpu_unavailable(pl, e, r);
      inflight.reset();
      mg = 0;
    } catch (const Error& e) {
      if (e.kind() == Error::Kind::InvalidArgument) throw;
      gpu_unavailable(pl, e, r);
      inflight.reset();
      mg = 0;
    }
  }

  // Physical cores, but never more than the program allows OpenBLAS (OPENBLAS_NUM_THREADS); in
  // hybrid mode one fewer, for the thread that feeds the GPU.
  const int cores = std::min(topology::physical_cores(), cpu_blas::current_threads());
  const int threads = o.cpu_threads.value_or(
      inflight && profile_threads > 0
          ? std::min(profile_threads, cores)
          : std::max(1, cores - (inflight && o.reserve_feeder_core && cores > 1 ? 1 : 0)));
  r.cpu_threads = mg < p.m ? threads : 0;
  if (inflight) {
    try {
      r.gpu_submitted_at_cpu_start = inflight->submitted();
    } catch (const Error&) {
      // A status that cannot be read now surfaces, with its cause, at the wait below.
    }
  }
  // On a discrete device the calling thread keeps feeding the GPU (packing the rest of its rows,
  // unpacking C as it lands) on the cores the CPU share leaves free, while the CPU share runs on
  // a thread of its own; otherwise the CPU share runs here and the GPU is waited for after it.
  const bool beside = inflight && mg < p.m && inflight->feeds();
  std::exception_ptr cpu_error;
  std::thread cpu_thread;
  const auto run_cpu = [&] {
    r.t_cpu_start = now_ns();
    try {
      cpu_share(p, mg, p.m - mg, threads, mg > 0);
    } catch (...) {
      cpu_error = std::current_exception();
    }
    r.t_cpu_end = now_ns();
  };
  if (beside) {
    try {
      cpu_thread = std::thread(run_cpu);
    } catch (const std::system_error&) {
      run_cpu();  // no thread to be had: the CPU share runs here, the feeding after it
    }
  } else {
    run_cpu();
  }
  // Joined on every way out: the CPU share reads the caller's arrays.
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{cpu_thread};

  if (inflight) {
    try {
      inflight->feed(beside ? std::max(1, cores - threads) : cores);
      inflight->wait();
      r.t_gpu_done = now_ns();
      r.gpu_kernel_seconds = inflight->kernel_seconds;
    } catch (const gpu::Failure& e) {
      if (cpu_thread.joinable()) cpu_thread.join();
      if (e.c_touched() && p.beta != T(0)) throw output_lost(e);
      gpu_unavailable(pl, e, r);
      inflight.reset();
      cpu_share(p, 0, mg, threads, false);
      mg = 0;
    }
  }
  if (cpu_thread.joinable()) cpu_thread.join();
  if (cpu_error) std::rethrow_exception(cpu_error);
  r.gpu_rows = mg;
  r.cpu_rows = p.m - mg;
  r.strategy = mg == 0 ? Strategy::Cpu : mg == p.m ? Strategy::Gpu : Strategy::Hybrid;
  r.t_end = now_ns();
}

template void execute<float>(const Problem<float>&, const Options&, Report&);
template void execute<double>(const Problem<double>&, const Options&, Report&);

}  // namespace tandem::detail
