// Where a batch's time goes on a discrete GPU (issue 43: ten s 512^3 products from tandem_malloc
// memory ran at 0.83-0.88x cuBLAS host to host while the bus alone allows more). One strided batch
// of row-major N^3 products (beta 0, C packed tight: the unstaged path) from tandem_malloc memory
// under strategy gpu, REPS times after WARMUP calls; every call's C is checked against OpenBLAS's
// loop on the same inputs (a difference past rounding fails the run).
//
//   [CL_TRACE_TIMELINE=4096 CL_TRACE_PROFILE=1 LD_PRELOAD=libcl_trace.so]
//   batch_timeline CASES REPS [WARMUP]          e.g. batch_timeline s:512:10 20 3
//
// Prints one JSON line per timed call: the call's entry and return on the steady clock
// ("call_enter_ns", "call_return_ns", CLOCK_MONOTONIC on Linux), the report's t_start and t_end,
// stages' counts from the report, "worst" (the largest difference from OpenBLAS's C; -1 for NaN or
// infinity); and, under bench/cl_trace.c (found with dlsym), that call's
// OpenCL commands right after it (the timeline, emptied after each call; its
// host_enter_monotonic_ns is on the same clock), so that bench/batch_timeline.py can set the
// host's steps beside the device's. Without cl_trace: the call times only.
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "batch_cases.hpp"
#include "tandem/tandem.h"
#include "tandem/tandem.hpp"

namespace {

using Timeline = void (*)(FILE*);

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void reference(int64_t n, const float* a, const float* b, float* c) {
  const auto x = static_cast<blasint>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x, x, x, 1.0f, a, x, b, x, 0.0f, c, x);
}
void reference(int64_t n, const double* a, const double* b, double* c) {
  const auto x = static_cast<blasint>(n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x, x, x, 1.0, a, x, b, x, 0.0, c, x);
}

template <class T>
T* pinned(size_t elements) {
  auto* p = static_cast<T*>(tandem_malloc(elements * sizeof(T)));
  if (p == nullptr) {
    std::fprintf(stderr, "tandem_malloc(%zu) failed\n", elements * sizeof(T));
    std::exit(1);
  }
  return p;
}

template <class T>
bool run_case(char precision, int64_t n, int64_t count, int reps, int warmup, Timeline timeline,
              FILE* discard) {
  const auto per = static_cast<size_t>(n * n), elements = per * static_cast<size_t>(count);
  T *a = pinned<T>(elements), *b = pinned<T>(elements), *c = pinned<T>(elements);
  std::vector<T> want(elements);
  for (size_t i = 0; i < elements; ++i) {
    a[i] = static_cast<T>(static_cast<double>((i * 7 + 3) % 19) / 19.0 - 0.5);
    b[i] = static_cast<T>(static_cast<double>((i * 5 + 1) % 23) / 23.0 - 0.5);
  }
  for (int64_t p = 0; p < count; ++p) reference(n, a + p * per, b + p * per, want.data() + p * per);
  const double tolerance = (sizeof(T) == 4 ? 1e-4 : 1e-12) * static_cast<double>(n);
  bool ok = true;
  std::vector<double> seconds;
  for (int call = -warmup; call < reps; ++call) {
    std::fill(c, c + elements, std::numeric_limits<T>::quiet_NaN());
    tandem::Options o;
    o.strategy = tandem::Strategy::Gpu;
    tandem::BatchReport report;
    const int64_t enter = now_ns();
    tandem::gemm_batch_strided<T>(tandem::Layout::RowMajor, tandem::Op::NoTrans,
                                  tandem::Op::NoTrans, n, n, n, T(1), a, n, n * n, b, n, n * n,
                                  T(0), c, n, n * n, count, o, &report);
    const int64_t back = now_ns();
    double worst = 0;
    for (size_t i = 0; i < elements; ++i) {
      const double d = std::fabs(static_cast<double>(c[i]) - static_cast<double>(want[i]));
      worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
    if (!(worst <= tolerance)) {
      std::fprintf(stderr, "%c %lld^3 x %lld call %d: C differs from OpenBLAS's by %g\n", precision,
                   static_cast<long long>(n), static_cast<long long>(count), call, worst);
      ok = false;
    }
    int64_t launches = 0, chunks = 0, bytes_in = 0, bytes_out = 0, bytes_staged = 0;
    for (const auto& d : report.devices) {
      launches += d.launches;
      chunks += d.chunks;
      bytes_in += d.bytes_in;
      bytes_out += d.bytes_out;
      bytes_staged += d.bytes_staged;
    }
    if (call >= 0) {
      seconds.push_back(static_cast<double>(back - enter) * 1e-9);
      std::printf(
          "{\"case\": \"%c:%lld:%lld\", \"call\": %d, \"call_enter_ns\": %lld, "
          "\"call_return_ns\": %lld, \"report_start_ns\": %lld, \"report_end_ns\": %lld, "
          "\"strategy\": \"%s\", \"device_problems\": %lld, \"chunks\": %lld, \"launches\": %lld, "
          "\"bytes_in\": %lld, \"bytes_out\": %lld, \"bytes_staged\": %lld, \"worst\": %.6g}\n",
          precision, static_cast<long long>(n), static_cast<long long>(count), call,
          static_cast<long long>(enter), static_cast<long long>(back),
          static_cast<long long>(report.t_start), static_cast<long long>(report.t_end),
          tandem::to_string(report.strategy), static_cast<long long>(report.device_problems),
          static_cast<long long>(chunks), static_cast<long long>(launches),
          static_cast<long long>(bytes_in), static_cast<long long>(bytes_out),
          static_cast<long long>(bytes_staged), std::isfinite(worst) ? worst : -1.0);
    }
    if (timeline != nullptr) {
      std::fflush(stdout);
      timeline(call >= 0 ? stdout : discard);  // a warm-up call's commands: printed nowhere
      std::fflush(stdout);
    }
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds.empty() ? 0 : seconds[seconds.size() / 2];
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) *
                       static_cast<double>(n) * static_cast<double>(count);
  std::printf("{\"case\": \"%c:%lld:%lld\", \"median_s\": %.9f, \"gflops\": %.1f, \"ok\": %s}\n",
              precision, static_cast<long long>(n), static_cast<long long>(count), median,
              median > 0 ? flops / median * 1e-9 : 0.0, ok ? "true" : "false");
  tandem_free(a);
  tandem_free(b);
  tandem_free(c);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: batch_timeline CASES REPS [WARMUP]\n");
    return 2;
  }
  const std::vector<BatchCase> cases = parse_batch_cases(argv[1]);
  const int reps = std::max(1, std::atoi(argv[2]));
  const int warmup = argc > 3 ? std::max(0, std::atoi(argv[3])) : 3;
  const auto timeline = reinterpret_cast<Timeline>(dlsym(RTLD_DEFAULT, "cl_trace_timeline"));
  FILE* const discard = std::fopen("/dev/null", "w");
  if (discard == nullptr) return 1;
  bool ok = true;
  for (const BatchCase& k : cases)
    ok = (k.precision == 's'
              ? run_case<float>(k.precision, k.n, k.count, reps, warmup, timeline, discard)
              : run_case<double>(k.precision, k.n, k.count, reps, warmup, timeline, discard)) &&
         ok;
  std::fclose(discard);
  return ok ? 0 : 1;
}
