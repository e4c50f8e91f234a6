// The batch benches' element types (bench/batch_bench, bench/clblast_batch): s, d, c and z as
// float, double, std::complex<float> and std::complex<double>, with OpenBLAS's product of one
// row-major n^3 problem as the reference.
#pragma once

#include <cblas.h>

#include <complex>
#include <cstdint>
#include <random>

// What a case needs of its element type T: its letter, its real type, the flops of one
// multiply-add, and a random element (each part uniform in [-1, 1], drawn real part first).
template <class T>
struct Element {
  using Real = T;
  static constexpr char letter = sizeof(T) == 4 ? 's' : 'd';
  static constexpr double flops = 2;
  static T random(std::uniform_real_distribution<double>& dist, std::mt19937& rng) {
    return static_cast<T>(dist(rng));
  }
};
template <class R>
struct Element<std::complex<R>> {
  using Real = R;
  static constexpr char letter = sizeof(R) == 4 ? 'c' : 'z';
  static constexpr double flops = 8;  // 4 real multiplies and 4 adds
  static std::complex<R> random(std::uniform_real_distribution<double>& dist, std::mt19937& rng) {
    const auto re = static_cast<R>(dist(rng));
    return {re, static_cast<R>(dist(rng))};
  }
};

// C = alpha A B + beta C, row-major n x n, no transposes, through OpenBLAS.
inline void openblas_gemm(int64_t n, float alpha, const float* a, const float* b, float beta,
                          float* c) {
  const auto x = static_cast<blasint>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x, x, x, alpha, a, x, b, x, beta, c, x);
}
inline void openblas_gemm(int64_t n, double alpha, const double* a, const double* b, double beta,
                          double* c) {
  const auto x = static_cast<blasint>(n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x, x, x, alpha, a, x, b, x, beta, c, x);
}
inline void openblas_gemm(int64_t n, std::complex<float> alpha, const std::complex<float>* a,
                          const std::complex<float>* b, std::complex<float> beta,
                          std::complex<float>* c) {
  const auto x = static_cast<blasint>(n);
  cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x, x, x, &alpha, a, x, b, x, &beta, c, x);
}
inline void openblas_gemm(int64_t n, std::complex<double> alpha, const std::complex<double>* a,
                          const std::complex<double>* b, std::complex<double> beta,
                          std::complex<double>* c) {
  const auto x = static_cast<blasint>(n);
  cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x, x, x, &alpha, a, x, b, x, &beta, c, x);
}
