// The measuring code `tandem compare`, the benchmarks and the demo share: operands in
// tandem_malloc memory (resident) or ordinary host memory, one timed call, and the error
// against a CPU reference computed in double.
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

// A row-major problem with operands allocated once. `resident` puts them in tandem_malloc
// memory (page-aligned: a unified-memory device uses them in place); otherwise they sit one
// element past such an address, as ordinary malloc'd memory usually does, and are copied.
template <class T>
struct Problem {
  int64_t m, n, k;
  Buffer<T> storage_a, storage_b, storage_c;
  T *a, *b, *c;
  Problem(int64_t m_, int64_t n_, int64_t k_, uint64_t seed, bool resident = true)
      : m(m_), n(n_), k(k_),
        storage_a(random_buffer<T>(static_cast<size_t>(m * k + 1), seed)),
        storage_b(random_buffer<T>(static_cast<size_t>(k * n + 1), seed + 1)),
        storage_c(static_cast<size_t>(m * n + 1), T(0)),
        a(storage_a.data() + (resident ? 0 : 1)),
        b(storage_b.data() + (resident ? 0 : 1)),
        c(storage_c.data() + (resident ? 0 : 1)) {}

  // One call of C = A B; returns its wall time in seconds.
  double run(const Options& o, Report* r = nullptr) {
    const auto t0 = std::chrono::steady_clock::now();
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(1), a, k, b, n, T(0), c, n, o, r);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // The same product in double on the CPU BLAS: the reference for the error.
  std::vector<double> reference() const {
    std::vector<double> ad(a, a + m * k), bd(b, b + k * n), cd(static_cast<size_t>(m * n), 0.0);
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
