// The co-tuner's checks of a candidate's result: a cheap one after every timed call, on inputs
// whose product is known exactly, and a full one against the CPU BLAS for every new best.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
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

// A small integer element, `re` + `im` i for a complex type (`re` alone for a real one): their
// products and sums stay exact integers, so a result can be checked with ==.
template <class T>
T small_integer(int64_t re, int64_t im) {
  using R = detail::real_type_t<T>;
  if constexpr (detail::is_complex(detail::precision_of<T>()))
    return T(static_cast<R>(re), static_cast<R>(im));
  else
    return (void)im, static_cast<T>(re);
}

// Square problems in ordinary host memory, or in tandem_malloc memory (`resident`), with inputs
// whose product is known exactly (small integers, in both parts of a complex element: every
// partial sum is an integer that float represents exactly) for the cheap check.
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
        a[i * n + p] = small_integer<T>((i * 7 + p * 3) % 5 - 2, (i * 3 + p * 5) % 3 - 1);
        b[i * n + p] = small_integer<T>((i * 5 + p * 11) % 7 - 3, (i * 11 + p * 7) % 5 - 2);
      }
  }
  bench::wide_t<T> exact(int64_t i, int64_t j) const {
    using W = bench::wide_t<T>;
    W s = 0;
    for (int64_t p = 0; p < n; ++p) s += W(a[i * n + p]) * W(b[p * n + j]);
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
      const bench::wide_t<T> want = exact(i, j), got(c[i * n + j]);
      if (got != want) {
        std::ostringstream msg;
        msg << "cheap check: C(" << i << "," << j << ") = " << got << ", expected " << want;
        return msg.str();
      }
    }
    return "";
  }
};

// A strided batch of `count` square products of size n, one after another in ordinary host
// memory or in tandem_malloc memory (`resident`), with small-integer inputs that differ from
// product to product (a product read at another's place shows) for the cheap check.
template <class T>
struct BatchWorkspace {
  int64_t n = 0, count = 0;
  bool resident = false;
  std::vector<T, bench::HostAllocator<T>> a, b, c;
  BatchWorkspace(int64_t size, int64_t products, bool in_tandem_memory)
      : n(size),
        count(products),
        resident(in_tandem_memory),
        a(size * size * products, T(0), bench::HostAllocator<T>(in_tandem_memory)),
        b(size * size * products, T(0), bench::HostAllocator<T>(in_tandem_memory)),
        c(size * size * products, T(0), bench::HostAllocator<T>(in_tandem_memory)) {
    for (int64_t q = 0; q < count; ++q)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < n; ++p) {
          a[(q * n + i) * n + p] =
              small_integer<T>((i * 7 + p * 3 + q) % 5 - 2, (i * 3 + p * 5 + q) % 3 - 1);
          b[(q * n + i) * n + p] =
              small_integer<T>((i * 5 + p * 11 + 2 * q) % 7 - 3, (i * 11 + p * 7 + q) % 5 - 2);
        }
  }
  int64_t elements() const { return n * n * count; }
  bench::wide_t<T> exact(int64_t q, int64_t i, int64_t j) const {
    using W = bench::wide_t<T>;
    W s = 0;
    for (int64_t p = 0; p < n; ++p) s += W(a[(q * n + i) * n + p]) * W(b[(q * n + p) * n + j]);
    return s;
  }
  // The first, middle and last products' corners and a seeded sample of every product's elements.
  std::string cheap_check() const {
    std::vector<std::array<int64_t, 3>> at;
    for (int64_t q : {int64_t{0}, count / 2, count - 1})
      for (auto [i, j] :
           {std::pair{int64_t{0}, int64_t{0}}, {0, n - 1}, {n - 1, 0}, {n - 1, n - 1}})
        at.push_back({q, i, j});
    std::mt19937_64 rng(static_cast<uint64_t>(n * 131 + count));
    for (int s = 0; s < 64; ++s)
      at.push_back({std::uniform_int_distribution<int64_t>(0, count - 1)(rng),
                    std::uniform_int_distribution<int64_t>(0, n - 1)(rng),
                    std::uniform_int_distribution<int64_t>(0, n - 1)(rng)});
    for (auto [q, i, j] : at) {
      const bench::wide_t<T> want = exact(q, i, j), got(c[(q * n + i) * n + j]);
      if (got != want) {
        std::ostringstream msg;
        msg << "cheap check: product " << q << "'s C(" << i << "," << j << ") = " << got
            << ", expected " << want;
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
  std::vector<T> a(n * n), b(n * n), c(n * n, detail::quiet_nan<T>());
  for (auto& x : a) x = bench::random_element<T>(d, rng);
  for (auto& x : b) x = bench::random_element<T>(d, rng);
  Report r;
  try {
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, T(1), a.data(), n, b.data(), n,
            T(0), c.data(), n, o, &r);
  } catch (const Error& e) {
    return std::string("full check: ") + e.what();
  }
  if (r.fell_back) return "full check: GPU failed: " + r.fallback_reason;
  if (tamper && r.gpu_rows > 0) tamper(c.data(), n * n, detail::precision_of<T>(), r.cpu_rows > 0);
  using W = bench::wide_t<T>;
  std::vector<W> ad(a.begin(), a.end()), bd(b.begin(), b.end()), ref(n * n);
  Options cpu;
  cpu.strategy = Strategy::Cpu;
  gemm<W>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, W(1), ad.data(), n, bd.data(), n,
          W(0), ref.data(), n, cpu);
  // |a|, |b| <= 1 in each part: every element's rounding error is below k * eps (with room for the
  // order), twice that for a complex one (two products summed in each part, each of magnitude
  // up to 2).
  const double parts = detail::is_complex(detail::precision_of<T>()) ? 2.0 : 1.0;
  const double tol =
      4.0 * parts * double(n + 2) * std::numeric_limits<detail::real_type_t<T>>::epsilon();
  for (int64_t i = 0; i < n * n; ++i) {
    const double err = std::abs(W(c[i]) - ref[i]);
    if (!(err <= tol * std::max(1.0, std::sqrt(double(n))))) {
      std::ostringstream msg;
      msg << "full check: C(" << i / n << "," << i % n << ") = " << c[i] << ", expected " << ref[i];
      return msg.str();
    }
  }
  return "";
}

// A batch of products of an awkward shape (m, n, k several tiles of any size the tune tries and
// not a multiple of one, alpha 0.75), once with A transposed and once with B, from random inputs
// under `o`, each product against a CPU reference in double: what a coalesced kernel must pass
// before a bucket keeps it (the tune times it only at n^3 on integer inputs). "" or why it
// failed. `tamper` (tests) may change what a device computed.
template <class T>
std::string batch_full_check(
    const Options& o, uint64_t seed,
    const std::function<void(void*, int64_t, detail::Precision, bool)>& tamper = nullptr) {
  constexpr int64_t count = 3, m = 300, n = 270, k = 70;
  const T alpha = T(0.75);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> a(k * m * count), b(k * n * count);
  for (auto& x : a) x = bench::random_element<T>(d, rng);
  for (auto& x : b) x = bench::random_element<T>(d, rng);
  using W = bench::wide_t<T>;
  const double parts = detail::is_complex(detail::precision_of<T>()) ? 2.0 : 1.0;
  const double tol = 4.0 * parts * double(k + 2) *
                     std::numeric_limits<detail::real_type_t<T>>::epsilon() * std::sqrt(double(k));
  for (const bool a_trans : {true, false}) {
    // A: k x m stored (op(A) = A^T) or m x k; B: k x n or n x k (op(B) = B^T).
    const int64_t lda = a_trans ? m : k, ldb = a_trans ? n : k;
    std::vector<T> c(m * n * count, detail::quiet_nan<T>());
    BatchReport r;
    try {
      gemm_batch_strided<T>(Layout::RowMajor, a_trans ? Op::Trans : Op::NoTrans,
                            a_trans ? Op::NoTrans : Op::Trans, m, n, k, alpha, a.data(), lda, k * m,
                            b.data(), ldb, k * n, T(0), c.data(), n, m * n, count, o, &r);
    } catch (const Error& e) {
      return std::string("batch check: ") + e.what();
    }
    for (const BatchReport::Device& dev : r.devices)
      if (dev.failed) return "batch check: device failed: " + dev.failure;
    if (tamper && r.device_problems > 0)
      tamper(c.data(), m * n * count, detail::precision_of<T>(), r.cpu_problems > 0);
    for (int64_t q = 0; q < count; ++q)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          W ref = 0;
          for (int64_t p = 0; p < k; ++p) {
            const W x = a_trans ? W(a[q * k * m + p * m + i]) : W(a[q * k * m + i * k + p]);
            const W y = a_trans ? W(b[q * k * n + p * n + j]) : W(b[q * k * n + j * k + p]);
            ref += x * y;
          }
          ref *= W(alpha);
          const T got = c[q * m * n + i * n + j];
          if (!(std::abs(W(got) - ref) <= tol)) {
            std::ostringstream msg;
            msg << "batch check (" << (a_trans ? "A" : "B") << " transposed): product " << q
                << " C(" << i << "," << j << ") = " << got << ", expected " << ref;
            return msg.str();
          }
        }
  }
  return "";
}

}  // namespace tandem::tuner
