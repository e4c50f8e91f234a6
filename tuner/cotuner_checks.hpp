// The co-tuner's checks of a candidate's result: a cheap one after every timed call, on inputs
// whose product is known exactly, and a full one against the CPU BLAS for every new best.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/precision.hpp"
#include "gemm_measure.hpp"
#include "tandem/tandem.hpp"

namespace tandem::tuner {

// Square problems in ordinary host memory, or in tandem_malloc memory (`resident`), with inputs
// whose product is known exactly (small integers: every partial sum is an integer that float
// represents exactly) for the cheap check.
template <class T>
struct Workspace {
  int64_t n = 0;
  bool resident = false;
  std::vector<T, bench::HostAllocator<T>> a, b, c;
  explicit Workspace(int64_t size, bool in_tandem_memory = false)
      : n(size),
        resident(in_tandem_memory),
        a(size * size, T(0), bench::HostAllocator<T>(in_tandem_memory)),
        b(size * size, T(0), bench::HostAllocator<T>(in_tandem_memory)),
        c(size * size, T(0), bench::HostAllocator<T>(in_tandem_memory)) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < n; ++p) {
        a[i * n + p] = static_cast<T>((i * 7 + p * 3) % 5 - 2);
        b[i * n + p] = static_cast<T>((i * 5 + p * 11) % 7 - 3);
      }
  }
  double exact(int64_t i, int64_t j) const {
    double s = 0;
    for (int64_t p = 0; p < n; ++p) s += double(a[i * n + p]) * double(b[p * n + j]);
    return s;
  }
  // The corners, the middle and a seeded sample: a wrong tile, fringe or index shows here.
  std::string cheap_check() const {
    std::vector<std::pair<int64_t, int64_t>> at{
        {0, 0}, {0, n - 1}, {n - 1, 0}, {n - 1, n - 1}, {n / 2, n / 2}};
    std::mt19937_64 rng(static_cast<uint64_t>(n));
    for (int s = 0; s < 27; ++s)
      at.emplace_back(std::uniform_int_distribution<int64_t>(0, n - 1)(rng),
                      std::uniform_int_distribution<int64_t>(0, n - 1)(rng));
    for (auto [i, j] : at) {
      const double want = exact(i, j), got = double(c[i * n + j]);
      if (got != want) {
        std::ostringstream msg;
        msg << "cheap check: C(" << i << "," << j << ") = " << got << ", expected " << want;
        return msg.str();
      }
    }
    return "";
  }
};

// Random inputs, the whole of C against the CPU BLAS in double.
// A GPU that fails here, or falls back to the CPU (whose result would pass), fails the check.
template <class T>
std::string full_check(int64_t n, const Options& o, uint64_t seed,
                       const std::function<void(void*, int64_t, detail::Precision, bool)>& tamper) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> a(n * n), b(n * n), c(n * n, std::numeric_limits<T>::quiet_NaN());
  for (auto& x : a) x = static_cast<T>(d(rng));
  for (auto& x : b) x = static_cast<T>(d(rng));
  Report r;
  try {
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, T(1), a.data(), n, b.data(), n,
            T(0), c.data(), n, o, &r);
  } catch (const Error& e) {
    return std::string("full check: ") + e.what();
  }
  if (r.fell_back) return "full check: GPU failed: " + r.fallback_reason;
  if (tamper && r.gpu_rows > 0) tamper(c.data(), n * n, detail::precision_of<T>(), r.cpu_rows > 0);
  std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()), ref(n * n);
  Options cpu;
  cpu.strategy = Strategy::Cpu;
  gemm<double>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0, ad.data(), n, bd.data(), n,
               0.0, ref.data(), n, cpu);
  // |a|, |b| <= 1: every element's rounding error is below k * eps (with room for the order).
  const double tol = 4.0 * double(n + 2) * std::numeric_limits<T>::epsilon();
  for (int64_t i = 0; i < n * n; ++i) {
    const double err = std::fabs(double(c[i]) - ref[i]);
    if (!(err <= tol * std::max(1.0, std::sqrt(double(n))))) {
      std::ostringstream msg;
      msg << "full check: C(" << i / n << "," << i % n << ") = " << c[i] << ", expected " << ref[i];
      return msg.str();
    }
  }
  return "";
}

}  // namespace tandem::tuner
