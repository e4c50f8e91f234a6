// Shared by the demo and the benchmarks: operands in tandem_malloc memory, one timed call, and
// the error against a CPU reference computed in double.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "tandem/tandem.hpp"

namespace tandem::bench {

template <class T>
using Buffer = std::vector<T, Allocator<T>>;

template <class T>
Buffer<T> random_buffer(size_t count, uint64_t seed) {
  Buffer<T> v(count);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

inline double gflop(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * 1e-9;
}

// Square-or-not row-major problem with operands allocated once.
template <class T>
struct Problem {
  int64_t m, n, k;
  Buffer<T> a, b, c;
  Problem(int64_t m_, int64_t n_, int64_t k_, uint64_t seed)
      : m(m_), n(n_), k(k_),
        a(random_buffer<T>(static_cast<size_t>(m * k), seed)),
        b(random_buffer<T>(static_cast<size_t>(k * n), seed + 1)),
        c(static_cast<size_t>(m * n), T(0)) {}

  // One call of C = A B; returns its wall time in seconds.
  double run(const Options& o, Report* r = nullptr) {
    const auto t0 = std::chrono::steady_clock::now();
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(1), a.data(), k, b.data(), n,
            T(0), c.data(), n, o, r);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // The same product in double on the CPU BLAS: the reference for the error.
  std::vector<double> reference() const {
    std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()), cd(c.size(), 0.0);
    Options o;
    o.strategy = Strategy::Cpu;
    gemm<double>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0, ad.data(), k,
                 bd.data(), n, 0.0, cd.data(), n, o);
    return cd;
  }

  // max |C - ref| / max |ref|, infinity if C holds a NaN.
  double max_relative_error(const std::vector<double>& ref) const {
    double err = 0, scale = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double d = std::fabs(static_cast<double>(c[i]) - ref[i]);
      if (std::isnan(d)) return INFINITY;
      err = std::max(err, d);
      scale = std::max(scale, std::fabs(ref[i]));
    }
    return scale > 0 ? err / scale : err;
  }
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace tandem::bench
