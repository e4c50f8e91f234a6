// Batches (issue 43): a strided batch of `count` n^3 products (row-major, no transposes, operands
// packed one after another) several ways, in turn, each round in a drawn order. Medians of REPS
// after one warm-up round; every side's C compared with OpenBLAS's loop (a difference past
// rounding fails the run). Prints one JSON line per case, then a table.
//
//   batch_bench CASES REPS [cpu|gpu|devices]   e.g. batch_bench s:64:20000,z:256:2000 7 devices
//
// CASES: PRECISION:N:COUNT, comma-separated; PRECISION s, d, c or z (float, double,
// std::complex<float>, std::complex<double>). Complex operands have both parts uniform in [-1, 1];
// a complex product counts 8 n^3 flops (a complex multiply-add is 4 real multiplies and 4 adds), a
// real one 2 n^3.
// cpu (the default): tandem::gemm_batch_strided under auto, a loop of OpenBLAS's own cblas_?gemm
//   calls (the program's thread count, as a program would call it) and a loop of tandem::gemm
//   single calls (auto), from ordinary memory; BENCH_STRATEGY=cpu runs the batch under cpu.
// gpu: the OpenBLAS loop, then tandem's batch under gpu from ordinary and from tandem_malloc
//   memory only.
// devices: the OpenBLAS loop, then tandem's batch under cpu, gpu, hybrid and auto from the
//   caller's ordinary memory, and under gpu and hybrid from tandem_malloc memory (the device
//   TANDEM_DEVICE names, else the first GPU). Its table gives hybrid and auto against the better
//   of cpu and gpu (both tandem's, ordinary memory). BENCH_RESIDENT_AUTO=1 adds cpu and auto from
//   tandem_malloc memory, and auto's ratio there against the better of cpu and gpu from it.
//   BENCH_FEEDERS=N sets the batches' Options::feeder_threads (host threads packing for each
//   device).
// BENCH_CPU_THREADS=N sets the batches' Options::cpu_threads (the threads the cores' share runs
//   on), in every mode.
// BENCH_SETTLE=SECONDS: a pause before each side's call, for the threads of the side before it
//   to go idle (OpenBLAS's and PoCL's spin a while after a call), as the tune's rounds pause
//   (database/defaults.json's confirm.settle_seconds); none by default.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "batch_cases.hpp"
#include "batch_element.hpp"
#include "tandem/tandem.h"
#include "tandem/tandem.hpp"

namespace {

using Clock = std::chrono::steady_clock;
bool g_mismatch = false;  // a side's C differed from OpenBLAS's

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// BENCH_RESIDENT_AUTO=1: devices mode also runs cpu and auto from tandem_malloc memory.
bool resident_auto() {
  const char* v = std::getenv("BENCH_RESIDENT_AUTO");
  return v != nullptr && std::string(v) == "1";
}

// Memory for one array: ordinary (std::vector) or tandem_malloc's.
template <class T>
class Array {
 public:
  Array(size_t n, bool pinned) : n_(n), pinned_(pinned) {
    if (pinned)
      p_ = static_cast<T*>(tandem_malloc(n * sizeof(T)));
    else
      v_.assign(n, T(0));
    if (pinned && p_ == nullptr) {
      std::fprintf(stderr, "tandem_malloc(%zu) failed\n", n * sizeof(T));
      std::exit(2);
    }
    if (pinned) std::fill(p_, p_ + n, T(0));
  }
  ~Array() {
    if (pinned_) tandem_free(p_);
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  T* data() { return pinned_ ? p_ : v_.data(); }
  size_t size() const { return n_; }

 private:
  size_t n_;
  bool pinned_;
  T* p_ = nullptr;
  std::vector<T> v_;
};

// One way of computing the batch: a name and what runs it into `out`.
template <class T>
struct Side {
  std::string name;
  bool pinned = false;  // reads and writes tandem_malloc memory
  std::function<void(T* out)> run;
  tandem::BatchReport report;
};

template <class T>
std::string run_case(int64_t n, int64_t count, int reps, bool devices, bool gpu_only,
                     std::string& row) {
  const int64_t size = n * n;
  const auto elements = static_cast<size_t>(size * count);
  Array<T> a(elements, false), b(elements, false);
  std::mt19937 rng(static_cast<unsigned>(n * 7 + count));
  std::uniform_real_distribution<double> dist(-1, 1);
  for (size_t i = 0; i < elements; ++i)
    a.data()[i] = Element<T>::random(dist, rng), b.data()[i] = Element<T>::random(dist, rng);
  // The same operands in tandem_malloc memory, for the sides that read it.
  std::unique_ptr<Array<T>> pa, pb;
  if (devices) {
    pa = std::make_unique<Array<T>>(elements, true);
    pb = std::make_unique<Array<T>>(elements, true);
    std::copy(a.data(), a.data() + elements, pa->data());
    std::copy(b.data(), b.data() + elements, pb->data());
  }
  const tandem::Layout row_major = tandem::Layout::RowMajor;
  const tandem::Op no = tandem::Op::NoTrans;
  std::vector<Side<T>> sides;
  sides.push_back({"openblas_loop",
                   false,
                   [&](T* out) {
                     for (int64_t i = 0; i < count; ++i)
                       openblas_gemm(n, T(1), a.data() + i * size, b.data() + i * size, T(0),
                                     out + i * size);
                   },
                   {}});
  const auto batch = [&](const char* name, std::optional<tandem::Strategy> strategy, bool pinned) {
    sides.push_back({name, pinned, nullptr, {}});
    Side<T>& s = sides.back();
    const size_t at = sides.size() - 1;
    s.run = [&, strategy, pinned, at](T* out) {
      tandem::Options o;
      o.strategy = strategy;
      if (const char* f = std::getenv("BENCH_FEEDERS")) o.feeder_threads = std::atoi(f);
      if (const char* t = std::getenv("BENCH_CPU_THREADS")) o.cpu_threads = std::atoi(t);
      const T* x = pinned ? pa->data() : a.data();
      const T* y = pinned ? pb->data() : b.data();
      tandem::gemm_batch_strided<T>(row_major, no, no, n, n, n, T(1), x, n, size, y, n, size, T(0),
                                    out, n, size, count, o, &sides[at].report);
    };
  };
  if (gpu_only) {
    batch("gpu", tandem::Strategy::Gpu, false);
    batch("gpu_malloc", tandem::Strategy::Gpu, true);
  } else if (devices) {
    batch("cpu", tandem::Strategy::Cpu, false);
    batch("gpu", tandem::Strategy::Gpu, false);
    batch("hybrid", tandem::Strategy::Hybrid, false);
    batch("auto", std::nullopt, false);
    batch("gpu_malloc", tandem::Strategy::Gpu, true);
    batch("hybrid_malloc", tandem::Strategy::Hybrid, true);
    if (resident_auto()) {
      batch("cpu_malloc", tandem::Strategy::Cpu, true);
      batch("auto_malloc", std::nullopt, true);
    }
  } else {
    // BENCH_STRATEGY=cpu: the batch under strategy cpu instead of auto.
    const char* strategy = std::getenv("BENCH_STRATEGY");
    batch("batch",
          strategy != nullptr && std::string(strategy) == "cpu"
              ? std::optional<tandem::Strategy>(tandem::Strategy::Cpu)
              : std::nullopt,
          false);
    sides.push_back({"tandem_loop",
                     false,
                     [&](T* out) {
                       for (int64_t i = 0; i < count; ++i)
                         tandem::gemm<T>(row_major, no, no, n, n, n, T(1), a.data() + i * size, n,
                                         b.data() + i * size, n, T(0), out + i * size, n);
                     },
                     {}});
  }
  const size_t k = sides.size();
  std::vector<std::unique_ptr<Array<T>>> c;
  for (const Side<T>& s : sides) c.push_back(std::make_unique<Array<T>>(elements, s.pinned));
  std::vector<std::vector<double>> t(k);
  // Each round in an order of its own, drawn (seeded): in a fixed rotation every side followed
  // the same other side, and on the H100 host auto, always after hybrid, inherited its spinning
  // threads (0.69x strategy cpu on the same work).
  std::vector<size_t> order(k);
  for (size_t i = 0; i < k; ++i) order[i] = i;
  std::mt19937 shuffle(12345);
  const char* settle_env = std::getenv("BENCH_SETTLE");
  const double settle = settle_env != nullptr ? std::atof(settle_env) : 0.0;
  for (int r = -1; r < reps; ++r) {
    std::shuffle(order.begin(), order.end(), shuffle);
    for (const size_t side : order) {
      if (settle > 0) std::this_thread::sleep_for(std::chrono::duration<double>(settle));
      const auto t0 = Clock::now();
      sides[side].run(c[side]->data());
      if (r >= 0) t[side].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }
  double worst = 0, scale = 0;
  const T* ref = c[0]->data();
  // A NaN, in the reference or in a side, stays in scale or worst and fails the check below.
  const auto keep_larger = [](double& into, double v) {
    if (!std::isnan(into) && !(v <= into)) into = v;
  };
  for (size_t i = 0; i < elements; ++i) {
    keep_larger(scale, static_cast<double>(std::abs(ref[i])));
    for (size_t s = 1; s < k; ++s)
      keep_larger(worst, static_cast<double>(std::abs(c[s]->data()[i] - ref[i])));
  }
  const double gflop =
      Element<T>::flops * static_cast<double>(n * n * n) * static_cast<double>(count) * 1e-9;
  const char p = Element<T>::letter;
  std::vector<double> sec(k);
  for (size_t s = 0; s < k; ++s) sec[s] = median(t[s]);
  std::ostringstream json;
  json << "{\"precision\": \"" << p << "\", \"n\": " << n << ", \"count\": " << count
       << ", \"reps\": " << reps << ", \"max_abs_diff\": " << worst << ", \"max_abs\": " << scale;
  for (size_t s = 0; s < k; ++s) {
    json << ", \"" << sides[s].name << "_s\": " << sec[s];
    if (s > 0) {
      const tandem::BatchReport& rep = sides[s].report;
      json << ", \"" << sides[s].name << "_strategy\": \"" << tandem::to_string(rep.strategy)
           << "\", \"" << sides[s].name << "_cpu_problems\": " << rep.cpu_problems << ", \""
           << sides[s].name << "_device_problems\": " << rep.device_problems;
    }
  }
  json << "}";
  std::ostringstream line;
  char cell[64];
  line << "| " << p << " | " << n << "³ × " << count << " |";
  for (size_t s = 0; s < k; ++s) {
    std::snprintf(cell, sizeof cell, " %.0f |", gflop / sec[s]);
    line << cell;
  }
  if (gpu_only) {
    std::snprintf(cell, sizeof cell, "%s", "");
  } else if (devices) {
    // hybrid and auto against the better of tandem's cpu and gpu (sides 1 and 2).
    const double best = std::min(sec[1], sec[2]);
    std::snprintf(cell, sizeof cell, " %.2f | %.2f |", best / sec[3], best / sec[4]);
    if (resident_auto()) {  // auto from tandem_malloc memory against cpu and gpu from it
      line << cell;
      std::snprintf(cell, sizeof cell, " %.2f |", std::min(sec[7], sec[5]) / sec[8]);
    }
  } else {
    std::snprintf(cell, sizeof cell, " %.2f | %.2f |", sec[0] / sec[1], sec[2] / sec[1]);
  }
  line << cell;
  row = line.str();
  // A side that differs from OpenBLAS's loop by more than rounding fails the run (main's status):
  // 64 of the real type's epsilon per unit of n max|C|, the magnitude of a complex difference.
  const double tolerance =
      64 * static_cast<double>(std::numeric_limits<typename Element<T>::Real>::epsilon()) *
      static_cast<double>(n) * scale;
  if (!(worst <= tolerance)) {
    std::fprintf(stderr, "MISMATCH %c n %lld count %lld: max |difference| %g (tolerance %g)\n", p,
                 static_cast<long long>(n), static_cast<long long>(count), worst, tolerance);
    g_mismatch = true;
  }
  return json.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cases = argc > 1 ? argv[1] : "s:64:2000,d:64:2000";
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string mode = argc > 3 ? argv[3] : "cpu";
  if (mode != "cpu" && mode != "devices" && mode != "gpu") {
    std::fprintf(stderr, "bad mode %s (cpu, devices or gpu)\n", mode.c_str());
    return 2;
  }
  const bool gpu_only = mode == "gpu";
  const bool devices = mode == "devices" || gpu_only;
  std::vector<std::string> rows;
  for (const auto& [p, n, count] : parse_batch_cases(cases, "sdcz")) {
    std::string row;
    std::string json;
    if (p == 's')
      json = run_case<float>(n, count, reps, devices, gpu_only, row);
    else if (p == 'd')
      json = run_case<double>(n, count, reps, devices, gpu_only, row);
    else if (p == 'c')
      json = run_case<std::complex<float>>(n, count, reps, devices, gpu_only, row);
    else
      json = run_case<std::complex<double>>(n, count, reps, devices, gpu_only, row);
    std::printf("%s\n", json.c_str());
    std::fflush(stdout);
    rows.push_back(row);
  }
  if (gpu_only)
    std::printf(
        "\n| precision | batch | OpenBLAS loop | gpu | gpu, tandem_malloc |\n| --- | --- | ---: | "
        "---: | ---: |\n");
  else if (devices)
    std::printf(
        "\n| precision | batch | OpenBLAS loop | cpu | gpu | hybrid | auto | gpu, tandem_malloc | "
        "hybrid, tandem_malloc | %shybrid / best of cpu, gpu | auto / best of cpu, gpu |%s\n"
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |%s\n",
        resident_auto() ? "cpu, tandem_malloc | auto, tandem_malloc | " : "",
        resident_auto() ? " auto, tandem_malloc / best of cpu, gpu from it |" : "",
        resident_auto() ? " ---: | ---: | ---: |" : "");
  else
    std::printf(
        "\n| precision | batch | OpenBLAS loop | tandem batch GFLOPS | tandem loop | batch / "
        "OpenBLAS loop | batch / tandem loop |\n| --- | --- | ---: | ---: | ---: | ---: | ---: "
        "|\n");
  for (const std::string& r : rows) std::printf("%s\n", r.c_str());
  return g_mismatch ? 1 : 0;
}
