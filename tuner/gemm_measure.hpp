// The measuring code `tandem compare`, the benchmarks and the demo share: operands in
// tandem_malloc memory (resident) or ordinary host memory, one timed call (of one product or of a
// strided batch), and the error against a CPU reference computed in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "base/clock.hpp"
#include "base/precision.hpp"
#include "tandem/tandem.hpp"

namespace tandem::bench {

// T's double-precision counterpart, in which references are computed.
template <class T>
using wide_t =
    std::conditional_t<detail::is_complex(detail::precision_of<T>()), std::complex<double>, double>;

// Host memory chosen at run time: ordinary (pageable) by default, tandem_malloc's when
// `resident` (pinned on a discrete GPU, zero-copy-ready on a unified one).
template <class T>
struct HostAllocator {
  using value_type = T;
  bool resident = false;
  HostAllocator() noexcept = default;
  explicit HostAllocator(bool r) noexcept : resident(r) {}
  template <class U>
  HostAllocator(const HostAllocator<U>& o) noexcept : resident(o.resident) {}
  T* allocate(std::size_t count) {
    return resident ? Allocator<T>().allocate(count) : std::allocator<T>().allocate(count);
  }
  void deallocate(T* p, std::size_t count) noexcept {
    if (resident)
      Allocator<T>().deallocate(p, count);
    else
      std::allocator<T>().deallocate(p, count);
  }
  template <class U>
  bool operator==(const HostAllocator<U>& o) const noexcept {
    return resident == o.resident;
  }
  template <class U>
  bool operator!=(const HostAllocator<U>& o) const noexcept {
    return resident != o.resident;
  }
};

template <class T>
using Buffer = std::vector<T, HostAllocator<T>>;

// A random element: both parts drawn for a complex one.
template <class T>
T random_element(std::uniform_real_distribution<double>& d, std::mt19937_64& rng) {
  if constexpr (detail::is_complex(detail::precision_of<T>())) {
    const double re = d(rng);
    return T(static_cast<detail::real_type_t<T>>(re), static_cast<detail::real_type_t<T>>(d(rng)));
  } else {
    return static_cast<T>(d(rng));
  }
}

template <class T>
Buffer<T> random_buffer(size_t count, uint64_t seed, bool resident) {
  Buffer<T> v(count, T(0), HostAllocator<T>(resident));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (auto& x : v) x = random_element<T>(dist, rng);
  return v;
}

// The work of an m x n x k product in GFLOP: 2 flops a real multiply-add, 8 a complex one.
inline double gflop(detail::Precision precision, int64_t m, int64_t n, int64_t k) {
  return detail::flops_per_multiply_add(precision) * static_cast<double>(m) *
         static_cast<double>(n) * static_cast<double>(k) * 1e-9;
}
template <class T>
double gflop(int64_t m, int64_t n, int64_t k) {
  return gflop(detail::precision_of<T>(), m, n, k);
}

// `count` row-major m x n x k problems with operands allocated once, each operand's matrices one
// after another in one allocation. `resident` puts them in tandem_malloc memory (page-aligned: a
// unified-memory device uses them in place, a discrete one copies them without packing);
// otherwise they are in ordinary memory, one element past its start, as malloc'd arrays often
// are, and are packed and copied.
template <class T>
struct Operands {
  int64_t m, n, k, count;
  Buffer<T> storage_a, storage_b, storage_c;
  T *a, *b, *c;
  Operands(int64_t m_, int64_t n_, int64_t k_, int64_t count_, uint64_t seed, bool resident)
      : m(m_),
        n(n_),
        k(k_),
        count(count_),
        storage_a(random_buffer<T>(static_cast<size_t>(m * k * count + 1), seed, resident)),
        storage_b(random_buffer<T>(static_cast<size_t>(k * n * count + 1), seed + 1, resident)),
        storage_c(static_cast<size_t>(m * n * count + 1), T(0), HostAllocator<T>(resident)),
        a(storage_a.data() + (resident ? 0 : 1)),
        b(storage_b.data() + (resident ? 0 : 1)),
        c(storage_c.data() + (resident ? 0 : 1)) {}

  size_t c_elements() const { return static_cast<size_t>(m * n * count); }

  // Every product in double precision on the CPU BLAS, one single call each (not the batch code a
  // batch's rows measure): the reference for the error.
  std::vector<wide_t<T>> reference() const {
    using W = wide_t<T>;
    std::vector<W> ad(a, a + m * k * count), bd(b, b + k * n * count), cd(c_elements(), W(0));
    Options o;
    o.strategy = Strategy::Cpu;
    for (int64_t i = 0; i < count; ++i)
      gemm<W>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, W(1), ad.data() + i * m * k, k,
              bd.data() + i * k * n, n, W(0), cd.data() + i * m * n, n, o);
    return cd;
  }

  // max |C - ref| / max |ref| over every product, infinity if C holds a NaN.
  double max_relative_error(const std::vector<wide_t<T>>& ref) const {
    double err = 0, scale = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double d = std::abs(wide_t<T>(c[i]) - ref[i]);
      if (std::isnan(d)) return INFINITY;
      err = std::max(err, d);
      scale = std::max(scale, std::abs(ref[i]));
    }
    return scale > 0 ? err / scale : err;
  }
};

// One product, one tandem::gemm call a run.
template <class T>
struct Problem : Operands<T> {
  using report_type = Report;
  Problem(int64_t m_, int64_t n_, int64_t k_, uint64_t seed, bool resident = true)
      : Operands<T>(m_, n_, k_, 1, seed, resident) {}

  // One call of C = A B; returns its wall time in seconds.
  double run(const Options& o, Report* r = nullptr) {
    const detail::clock::Stopwatch call;
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, this->m, this->n, this->k, T(1), this->a,
            this->k, this->b, this->n, T(0), this->c, this->n, o, r);
    return call.seconds();
  }
};

// A strided batch of `count` products, one gemm_batch_strided call a run.
template <class T>
struct BatchProblem : Operands<T> {
  using report_type = BatchReport;
  BatchProblem(int64_t m_, int64_t n_, int64_t k_, int64_t count_, uint64_t seed,
               bool resident = true)
      : Operands<T>(m_, n_, k_, count_, seed, resident) {}

  // One batch call of C_i = A_i B_i; returns its wall time in seconds.
  double run(const Options& o, BatchReport* r = nullptr) {
    const detail::clock::Stopwatch call;
    const Operands<T>& x = *this;
    gemm_batch_strided<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, x.m, x.n, x.k, T(1), x.a, x.k,
                          x.m * x.k, x.b, x.n, x.k * x.n, T(0), x.c, x.n, x.m * x.n, x.count, o, r);
    return call.seconds();
  }
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace tandem::bench
