// The cores' small kernel (src/cpu/small_kernel.hpp).
//
// op(A) is packed as m x k planes and op(B) as k x w planes (w: n rounded up to a block of
// columns, the padding zero), real and imaginary parts apart, conjugates applied: the loop then
// reads only unit-stride rows whatever the problem's transposes. The loop keeps a block of two
// rows of C by kBlockBytes of columns in registers over all of k (a complex multiply-add is two
// real ones into each of the real and imaginary sums), and writes C once at the end with alpha and
// beta. On x86-64 the loop is also built for AVX2 with FMA and runs so where the processor has
// both (the processor's own answer, asked once); elsewhere, or without them, the baseline build
// (also where a test's seam asks for it).
#include "cpu/small_kernel.hpp"

#include <algorithm>
#include <complex>
#include <type_traits>
#include <vector>

#include "base/precision.hpp"
#include "base/seams.hpp"

namespace tandem::detail {
namespace {

// A block's columns span 64 bytes of one plane: two AVX2 registers, so that two rows' sums (four
// planes' worth, eight registers) and the B rows they read stay in AVX2's sixteen.
constexpr int64_t kBlockBytes = 64;
constexpr int64_t kRowsPerBlock = 2;
// A block's columns for parts of type R: 16 floats, 8 doubles.
template <class R>
constexpr int kWidth = static_cast<int>(kBlockBytes / static_cast<int64_t>(sizeof(R)));

// The packed operands of one product, R the parts' type. b_re and b_im are k rows of `width`.
template <class R>
struct Planes {
  const R* a_re;
  const R* a_im;  // null for a real type
  const R* b_re;
  const R* b_im;
  int64_t k, width;
};

// Sums of `Rows` rows of C from row i, columns [j, j + kWidth<R>), over all of k, into re and im.
// The sums are vectors of the compiler's (GCC's vector extension, which clang has too): each a
// 32-byte register under AVX2, two 16-byte ones in the baseline build.
template <class R, int Rows, bool Complex>
[[gnu::always_inline]] inline void block(const Planes<R>& p, int64_t i, int64_t j,
                                         R (*re)[kWidth<R>], R (*im)[kWidth<R>]) {
  typedef R Vector __attribute__((vector_size(32)));
  constexpr int kLanes = 32 / static_cast<int>(sizeof(R));
  constexpr int kVectors = kWidth<R> / kLanes;
  Vector sr[Rows][kVectors] = {}, si[Rows][kVectors] = {};
  for (int64_t l = 0; l < p.k; ++l) {
    Vector br[kVectors], bi[kVectors];
    for (int v = 0; v < kVectors; ++v) {
      __builtin_memcpy(&br[v], p.b_re + l * p.width + j + v * kLanes, sizeof(Vector));
      if constexpr (Complex)
        __builtin_memcpy(&bi[v], p.b_im + l * p.width + j + v * kLanes, sizeof(Vector));
    }
    for (int r = 0; r < Rows; ++r) {
      const Vector ar = Vector{} + p.a_re[(i + r) * p.k + l];
      for (int v = 0; v < kVectors; ++v) sr[r][v] += ar * br[v];
      if constexpr (Complex) {
        const Vector ai = Vector{} + p.a_im[(i + r) * p.k + l];
        for (int v = 0; v < kVectors; ++v) {
          sr[r][v] -= ai * bi[v];
          si[r][v] += ar * bi[v];
          si[r][v] += ai * br[v];
        }
      }
    }
  }
  for (int r = 0; r < Rows; ++r)
    for (int v = 0; v < kVectors; ++v) {
      __builtin_memcpy(&re[r][v * kLanes], &sr[r][v], sizeof(Vector));
      if constexpr (Complex) __builtin_memcpy(&im[r][v * kLanes], &si[r][v], sizeof(Vector));
    }
}

// C's rows [i, i + Rows) from their sums: alpha times the sums, plus beta C unless beta is 0.
template <class T, class R, int Rows>
[[gnu::always_inline]] inline void write(const Problem<T>& p, int64_t i, int64_t j, int64_t cols,
                                         R (*re)[kWidth<R>], R (*im)[kWidth<R>]) {
  for (int r = 0; r < Rows; ++r) {
    T* c = p.c + (i + r) * p.ldc + j;
    for (int64_t w = 0; w < cols; ++w) {
      T sum;
      if constexpr (std::is_floating_point_v<T>)
        sum = re[r][w];
      else
        sum = T(re[r][w], im[r][w]);
      c[w] = p.beta == T(0) ? p.alpha * sum : p.alpha * sum + p.beta * c[w];
    }
  }
}

template <class T, class R>
[[gnu::always_inline]] inline void loop(const Problem<T>& p, const Planes<R>& planes) {
  constexpr bool Complex = !std::is_floating_point_v<T>;
  constexpr int W = kWidth<R>;
  R re[kRowsPerBlock][kWidth<R>], im[kRowsPerBlock][kWidth<R>];
  for (int64_t j = 0; j < p.n; j += W) {
    const int64_t cols = std::min<int64_t>(W, p.n - j);
    int64_t i = 0;
    for (; i + kRowsPerBlock <= p.m; i += kRowsPerBlock) {
      block<R, kRowsPerBlock, Complex>(planes, i, j, re, im);
      write<T, R, kRowsPerBlock>(p, i, j, cols, re, im);
    }
    for (; i < p.m; ++i) {
      block<R, 1, Complex>(planes, i, j, re, im);
      write<T, R, 1>(p, i, j, cols, re, im);
    }
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <class T, class R>
[[gnu::target("avx2,fma")]] void loop_avx2(const Problem<T>& p, const Planes<R>& planes) {
  loop(p, planes);
}

bool has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

// op(X)'s element (row, col) of a stored row-major X, as the problem's flags say.
template <class T>
T element(const T* x, int64_t ld, bool trans, bool conj, int64_t row, int64_t col) {
  const T v = trans ? x[col * ld + row] : x[row * ld + col];
  if constexpr (std::is_floating_point_v<T>)
    return v;
  else
    return conj ? std::conj(v) : v;
}

// rows x cols of op(X) into planes of `width` columns (the rest zero).
template <class T, class R>
void pack(const T* x, int64_t ld, bool trans, bool conj, int64_t rows, int64_t cols, int64_t width,
          R* re, R* im) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const T v = element(x, ld, trans, conj, r, c);
      if constexpr (std::is_floating_point_v<T>) {
        re[r * width + c] = v;
      } else {
        re[r * width + c] = v.real();
        im[r * width + c] = v.imag();
      }
    }
    for (int64_t c = cols; c < width; ++c) {
      re[r * width + c] = R(0);
      if (im != nullptr) im[r * width + c] = R(0);
    }
  }
}

}  // namespace

template <class T>
void small_product(const Problem<T>& p) {
  using R = real_type_t<T>;
  constexpr bool Complex = !std::is_floating_point_v<T>;
  constexpr int64_t W = kWidth<R>;
  const int64_t width = (p.n + W - 1) / W * W;
  const int64_t parts = Complex ? 2 : 1;
  // Each thread's planes: grown once to the largest product it packed, then reused.
  thread_local std::vector<R> buffer;
  const auto need = static_cast<size_t>(parts * (p.m * p.k + p.k * width));
  if (buffer.size() < need) buffer.resize(need);
  R* const a_re = buffer.data();
  R* const a_im = Complex ? a_re + p.m * p.k : nullptr;
  R* const b_re = a_re + parts * p.m * p.k;
  R* const b_im = Complex ? b_re + p.k * width : nullptr;
  pack(p.a, p.lda, p.trans_a, p.conj_a, p.m, p.k, p.k, a_re, a_im);
  pack(p.b, p.ldb, p.trans_b, p.conj_b, p.k, p.n, width, b_re, b_im);
  const Planes<R> planes{a_re, a_im, b_re, b_im, p.k, width};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (has_avx2_fma() && !seams::small_kernel_baseline()) {
    loop_avx2(p, planes);
    return;
  }
#endif
  loop(p, planes);
}

#define INSTANTIATE(T) template void small_product<T>(const Problem<T>&);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
