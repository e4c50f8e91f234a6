// The soak (issue 16): many threads at once make mixed random sgemm and dgemm calls through the
// public C++ and C interfaces for a bounded time, over every strategy, both balances, both
// layouts, every transpose pair, awkward sizes, padded leading dimensions, alpha and beta of 0, 1
// and others, and operands in tandem_malloc memory and misaligned beside it. Every result is
// checked against a plain double-precision product, and A, B and the padding around C must be
// untouched.
// It prints what ran and what went wrong and exits 1 on any wrong result or exception: tandem's
// shared state (programs, staging, arenas, plans, profiles) under concurrent calls is what it
// exercises. Not a CI test (it runs for minutes); docs/PERFORMANCE.md records its runs.
//
//   soak [--seconds 600] [--threads 16] [--seed 1] [--max-size 320] [--device SEL]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tandem/tandem.hpp"

namespace {

using tandem::Layout;
using tandem::Op;

// How a call reaches the library: the C++ interface under one of its strategies, or the C
// interface, which takes the strategy from the environment (auto unless TANDEM_STRATEGY is set).
enum class Route { Cpu, Gpu, Hybrid, Auto, C };
constexpr std::array<const char*, 5> kRouteNames = {"cpu", "gpu", "hybrid", "auto", "C API"};

// Sizes that fill no tile and no vector evenly, and ones around the kernels' common tiles.
constexpr std::array<int64_t, 16> kAwkward = {1,  2,  3,  5,  7,   13,  17,  31,
                                              33, 63, 65, 97, 127, 129, 255, 257};

struct Call {
  bool fp64 = false;
  Route route = Route::Auto;
  tandem::Balance balance = tandem::Balance::Static;
  Layout layout = Layout::RowMajor;
  bool ta = false, tb = false;
  int64_t m = 1, n = 1, k = 1;
  int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // leading dimension beyond the extent
  bool misaligned = false;                  // operands one element past tandem_malloc's block
  double alpha = 1, beta = 0;
  double fraction = 0.5;  // under hybrid
  std::string device;     // a selector, or "" for the default device

  std::string describe() const {
    char text[320];
    std::snprintf(
        text, sizeof text,
        "%cgemm %s %s %s %c%c m=%lld n=%lld k=%lld pads=%lld,%lld,%lld%s alpha=%g beta=%g "
        "fraction=%.2f device='%s'",
        fp64 ? 'd' : 's', kRouteNames[static_cast<size_t>(route)],
        balance == tandem::Balance::Dynamic ? "dynamic" : "static",
        layout == Layout::RowMajor ? "row-major" : "col-major", ta ? 'T' : 'N', tb ? 'T' : 'N',
        static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
        static_cast<long long>(pad_a), static_cast<long long>(pad_b), static_cast<long long>(pad_c),
        misaligned ? " misaligned" : "", alpha, beta, fraction, device.c_str());
    return text;
  }
};

template <class T>
T pick(std::mt19937_64& rng, const std::vector<T>& from) {
  return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
}

int64_t random_size(std::mt19937_64& rng, int64_t max_size) {
  std::uniform_int_distribution<int> kind(0, 9);
  const int which = kind(rng);
  if (which < 5)
    return std::min(max_size, pick(rng, std::vector<int64_t>(kAwkward.begin(), kAwkward.end())));
  if (which < 9)
    return std::uniform_int_distribution<int64_t>(1, std::min<int64_t>(max_size, 96))(rng);
  return std::uniform_int_distribution<int64_t>(1, max_size)(rng);
}

Call random_call(std::mt19937_64& rng, int64_t max_size, const std::vector<std::string>& devices) {
  Call c;
  c.fp64 = rng() % 2 == 0;
  c.route = static_cast<Route>(rng() % kRouteNames.size());
  c.balance = rng() % 2 == 0 ? tandem::Balance::Static : tandem::Balance::Dynamic;
  c.layout = rng() % 2 == 0 ? Layout::RowMajor : Layout::ColMajor;
  c.ta = rng() % 2 == 0;
  c.tb = rng() % 2 == 0;
  c.m = random_size(rng, max_size);
  c.n = random_size(rng, max_size);
  c.k = random_size(rng, max_size);
  const std::vector<int64_t> pads = {0, 0, 1, 3, 16};
  c.pad_a = pick(rng, pads);
  c.pad_b = pick(rng, pads);
  c.pad_c = pick(rng, pads);
  c.misaligned = rng() % 4 == 0;
  c.alpha = pick(rng, std::vector<double>{1, 1, -0.5, 2, 0});
  c.beta = pick(rng, std::vector<double>{0, 0, 1, -1.5, 0.25});
  c.fraction = std::uniform_real_distribution<double>(0, 1)(rng);
  c.device = pick(rng, devices);
  return c;
}

// One stored operand, op(X) rows x cols, with NaN in its padding so that a read of it shows.
template <class T>
struct Operand {
  int64_t rows = 0, cols = 0, ld = 1, offset = 0;
  bool stored_transposed = false;  // X is stored as op(X)ᵀ
  bool row_major = true;
  std::vector<T, tandem::Allocator<T>> data;

  Operand(const Call& call, bool transposed, int64_t r, int64_t c, int64_t pad)
      : rows(r),
        cols(c),
        offset(call.misaligned ? 1 : 0),
        stored_transposed(transposed),
        row_major(call.layout == Layout::RowMajor) {
    const int64_t stored_rows = transposed ? c : r, stored_cols = transposed ? r : c;
    const int64_t inner = row_major ? stored_cols : stored_rows;
    const int64_t outer = row_major ? stored_rows : stored_cols;
    ld = std::max<int64_t>(1, inner + pad);
    data.assign(static_cast<size_t>(offset + std::max<int64_t>(1, outer * ld)),
                std::numeric_limits<T>::quiet_NaN());
  }
  size_t index(int64_t i, int64_t j) const {
    const int64_t r = stored_transposed ? j : i, c = stored_transposed ? i : j;
    return static_cast<size_t>(offset + (row_major ? r * ld + c : c * ld + r));
  }
  T& at(int64_t i, int64_t j) { return data[index(i, j)]; }
  T at(int64_t i, int64_t j) const { return data[index(i, j)]; }
  void fill(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> dist(-1, 1);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) at(i, j) = static_cast<T>(dist(rng));
  }
  T* ptr() { return data.data() + offset; }
};

// What one call did.
struct Outcome {
  int64_t wrong = 0;     // elements of C outside the tolerance, or NaN
  bool written = false;  // A, B or an element of C's padding changed
  std::string error;     // an exception or a C status, with its text
  tandem::Report report;
};

template <class T>
void call_library(const Call& call, Operand<T>& a, Operand<T>& b, Operand<T>& c, Outcome& out) {
  const Op op_a = call.ta ? Op::Trans : Op::NoTrans, op_b = call.tb ? Op::Trans : Op::NoTrans;
  const T alpha = static_cast<T>(call.alpha), beta = static_cast<T>(call.beta);
  if (call.route == Route::C) {
    const int layout = static_cast<int>(call.layout), ta = static_cast<int>(op_a),
              tb = static_cast<int>(op_b);
    int status = 0;
    if constexpr (sizeof(T) == 8)
      status = tandem_dgemm(layout, ta, tb, call.m, call.n, call.k, alpha, a.ptr(), a.ld, b.ptr(),
                            b.ld, beta, c.ptr(), c.ld);
    else
      status = tandem_sgemm(layout, ta, tb, call.m, call.n, call.k, alpha, a.ptr(), a.ld, b.ptr(),
                            b.ld, beta, c.ptr(), c.ld);
    if (status != 0) out.error = "status " + std::to_string(status) + ": " + tandem_last_error();
    return;
  }
  tandem::Options options;
  const std::array<tandem::Strategy, 4> strategies = {tandem::Strategy::Cpu, tandem::Strategy::Gpu,
                                                      tandem::Strategy::Hybrid,
                                                      tandem::Strategy::Auto};
  options.strategy = strategies[static_cast<size_t>(call.route)];
  options.balance = call.balance;
  if (call.route == Route::Hybrid) options.gpu_fraction = call.fraction;
  if (!call.device.empty()) options.device = call.device;
  try {
    tandem::gemm<T>(call.layout, op_a, op_b, call.m, call.n, call.k, alpha, a.ptr(), a.ld, b.ptr(),
                    b.ld, beta, c.ptr(), c.ld, options, &out.report);
  } catch (const std::exception& e) {
    out.error = std::string("exception: ") + e.what();
  }
}

// C against alpha * op(A) * op(B) + beta * C0 in double, element by element, within
// 2 (k + 2) eps of the sum of the magnitudes of its terms; C's padding against C0's.
template <class T>
void check(const Call& call, const Operand<T>& a, const Operand<T>& b, const Operand<T>& c0,
           const Operand<T>& c, Outcome& out) {
  const double eps = std::numeric_limits<T>::epsilon();
  for (int64_t i = 0; i < call.m; ++i)
    for (int64_t j = 0; j < call.n; ++j) {
      double sum = 0, bound = 0;
      if (call.alpha != 0)
        for (int64_t p = 0; p < call.k; ++p) {
          const double x = static_cast<double>(a.at(i, p)) * static_cast<double>(b.at(p, j));
          sum += x;
          bound += std::fabs(x);
        }
      double want = call.alpha * sum;
      bound *= std::fabs(call.alpha);
      if (call.beta != 0) {
        want += call.beta * static_cast<double>(c0.at(i, j));
        bound += std::fabs(call.beta * static_cast<double>(c0.at(i, j)));
      }
      const double tolerance =
          2.0 * static_cast<double>(call.k + 2) * eps * bound + std::numeric_limits<T>::min();
      if (!(std::fabs(static_cast<double>(c.at(i, j)) - want) <= tolerance)) ++out.wrong;
    }
  std::vector<bool> inside(c.data.size(), false);
  for (int64_t i = 0; i < call.m; ++i)
    for (int64_t j = 0; j < call.n; ++j) inside[c.index(i, j)] = true;
  for (size_t p = 0; p < c.data.size(); ++p)
    if (!inside[p] && !(std::isnan(c.data[p]) && std::isnan(c0.data[p])) && c.data[p] != c0.data[p])
      out.written = true;
}

// Bit for bit, NaN included.
template <class T>
bool same(const Operand<T>& x, const Operand<T>& y) {
  return std::memcmp(x.data.data(), y.data.data(), x.data.size() * sizeof(T)) == 0;
}

template <class T>
Outcome run(const Call& call, std::mt19937_64& rng) {
  Operand<T> a(call, call.ta, call.m, call.k, call.pad_a);
  Operand<T> b(call, call.tb, call.k, call.n, call.pad_b);
  Operand<T> c(call, false, call.m, call.n, call.pad_c);
  a.fill(rng);
  b.fill(rng);
  c.fill(rng);
  // beta == 0 must not read C: NaN there would show if it did.
  if (call.beta == 0)
    for (int64_t i = 0; i < call.m; ++i)
      for (int64_t j = 0; j < call.n; ++j) c.at(i, j) = std::numeric_limits<T>::quiet_NaN();
  const Operand<T> a0 = a, b0 = b, c0 = c;
  Outcome out;
  call_library(call, a, b, c, out);
  if (out.error.empty()) check(call, a, b, c0, c, out);
  out.written |= !same(a, a0) || !same(b, b0);
  return out;
}

// The counts the threads add to, and the first failures in full.
struct Tally {
  std::array<std::array<std::atomic<int64_t>, 2>, kRouteNames.size()> calls{};
  std::atomic<int64_t> flops{0}, checked_elements{0}, split{0}, dynamic{0}, two_devices{0},
      fell_back{0}, failed_devices{0}, wrong_calls{0}, written_calls{0}, error_calls{0};
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::string> fallback_reasons;

  void add(const Call& call, const Outcome& out) {
    calls[static_cast<size_t>(call.route)][call.fp64 ? 1 : 0]++;
    flops += 2 * call.m * call.n * call.k;
    checked_elements += call.m * call.n;
    const tandem::Report& r = out.report;
    if (r.gpu_rows > 0 && r.cpu_rows > 0) split++;
    if (r.balance == tandem::Balance::Dynamic && r.devices.size() + (r.cpu_rows > 0) > 1) dynamic++;
    if (r.devices.size() > 1) two_devices++;
    for (const auto& d : r.devices) failed_devices += d.failed ? 1 : 0;
    const bool bad = out.wrong > 0 || out.written || !out.error.empty();
    wrong_calls += out.wrong > 0;
    written_calls += out.written;
    error_calls += !out.error.empty();
    if (!r.fell_back && !bad) return;
    std::lock_guard<std::mutex> lock(mutex);
    if (r.fell_back) {
      fell_back++;
      if (fallback_reasons.size() < 5) fallback_reasons.push_back(r.fallback_reason);
    }
    if (bad && failures.size() < 20)
      failures.push_back(call.describe() + ": " + std::to_string(out.wrong) + " wrong elements" +
                         (out.written ? ", A, B or padding of C written" : "") +
                         (out.error.empty() ? "" : ", " + out.error));
  }
};

void soak_thread(int index, uint64_t seed, int64_t max_size,
                 const std::vector<std::string>& devices,
                 std::chrono::steady_clock::time_point until, Tally& tally) {
  std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(index));
  while (std::chrono::steady_clock::now() < until) {
    const Call call = random_call(rng, max_size, devices);
    tally.add(call, call.fp64 ? run<double>(call, rng) : run<float>(call, rng));
  }
}

void print(const Tally& t, double seconds, int threads) {
  int64_t total = 0;
  std::printf("| route | sgemm calls | dgemm calls |\n| --- | --- | --- |\n");
  for (size_t r = 0; r < kRouteNames.size(); ++r) {
    std::printf("| %s | %lld | %lld |\n", kRouteNames[r], static_cast<long long>(t.calls[r][0]),
                static_cast<long long>(t.calls[r][1]));
    total += t.calls[r][0] + t.calls[r][1];
  }
  std::printf("\n%lld calls from %d threads in %.0f s (%.1f calls/s, %.2f GFLOP in all)\n",
              static_cast<long long>(total), threads, seconds, static_cast<double>(total) / seconds,
              static_cast<double>(t.flops) * 1e-9);
  std::printf("%lld elements of C checked\n", static_cast<long long>(t.checked_elements.load()));
  std::printf(
      "split between the CPU and devices: %lld; on several devices: %lld; dynamic and shared: "
      "%lld\n",
      static_cast<long long>(t.split.load()), static_cast<long long>(t.two_devices.load()),
      static_cast<long long>(t.dynamic.load()));
  std::printf("fell back to the CPU: %lld (devices that failed: %lld)\n",
              static_cast<long long>(t.fell_back.load()),
              static_cast<long long>(t.failed_devices.load()));
  for (const auto& reason : t.fallback_reasons) std::printf("  fallback: %s\n", reason.c_str());
  std::printf("wrong results: %lld; A, B or padding of C written: %lld; errors: %lld\n",
              static_cast<long long>(t.wrong_calls.load()),
              static_cast<long long>(t.written_calls.load()),
              static_cast<long long>(t.error_calls.load()));
  for (const auto& f : t.failures) std::printf("  FAILED: %s\n", f.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"soak: threads of mixed random sgemm/dgemm calls, every result checked"};
  double seconds = 600;
  int threads = 16;
  uint64_t seed = 1;
  int64_t max_size = 320;
  std::vector<std::string> devices = {""};
  app.add_option("--seconds", seconds, "how long the threads make calls")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  app.add_option("--threads", threads, "threads making calls at once")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--seed", seed, "random seed (each thread's is derived from it)")
      ->capture_default_str();
  app.add_option("--max-size", max_size, "largest m, n or k")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--device", devices, "device selectors the calls choose from (\"\": the default)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::printf("soak: %d threads for %.0f s, seed %llu, sizes up to %lld, devices:", threads,
              seconds, static_cast<unsigned long long>(seed), static_cast<long long>(max_size));
  for (const auto& d : devices) std::printf(" '%s'", d.c_str());
  std::printf("\n\n");
  std::fflush(stdout);
  Tally tally;
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(seconds));
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back(soak_thread, i, seed, max_size, std::cref(devices), until, std::ref(tally));
  for (auto& t : pool) t.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print(tally, elapsed, threads);
  const bool ok = tally.wrong_calls == 0 && tally.written_calls == 0 && tally.error_calls == 0;
  std::printf("\n%s\n", ok ? "soak: every result right" : "soak: FAILED");
  return ok ? 0 : 1;
}
