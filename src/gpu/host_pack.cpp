// Host-side packing: row copies, C's update by a device's product and a cache-blocked transpose,
// shared among oneTBB threads when the block is large enough to pay for them.
#include "gpu/host_pack.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "base/precision.hpp"
#include "cpu/tasks.hpp"
#include "profile/defaults.hpp"

namespace tandem::detail::gpu {
namespace {

// Runs f(r0, r1) over [0, rows) in blocks: on `threads` threads when the copy is large enough to
// pay for it (packing stands between the call and the GPU's start).
void over_rows(int64_t rows, size_t bytes, int threads,
               const std::function<void(int64_t, int64_t)>& f) {
  if (bytes < profile::host_pack_parallel_from() || threads < 2 || rows < 2) {
    f(0, rows);
    return;
  }
  const int64_t blocks = std::min<int64_t>(rows, 4 * threads);
  tasks::in_arena(threads, [&] {
    tasks::parallel_for(blocks, [&](int64_t i) { f(rows * i / blocks, rows * (i + 1) / blocks); });
  });
}

}  // namespace

template <class T>
void copy_rows(const T* src, int64_t src_ld, int64_t rows, int64_t cols, T* dst, int64_t dst_ld,
               int threads) {
  over_rows(
      rows, static_cast<size_t>(rows * cols) * sizeof(T), threads, [&](int64_t r0, int64_t r1) {
        if (src_ld == cols && dst_ld == cols) {
          std::memcpy(dst + r0 * cols, src + r0 * cols,
                      static_cast<size_t>((r1 - r0) * cols) * sizeof(T));
          return;
        }
        for (int64_t r = r0; r < r1; ++r)
          std::memcpy(dst + r * dst_ld, src + r * src_ld, static_cast<size_t>(cols) * sizeof(T));
      });
}

template <class T>
void unpack_adding(const T* src, int64_t rows, int64_t cols, T beta, T* dst, int64_t ld,
                   int threads) {
  // It reads C as well as the product: half a copy more per byte than unpack().
  over_rows(rows, static_cast<size_t>(rows * cols) * sizeof(T) * 3 / 2, threads,
            [&](int64_t r0, int64_t r1) {
              for (int64_t r = r0; r < r1; ++r) {
                const T* __restrict from = src + r * cols;
                T* __restrict to = dst + r * ld;
                if (beta == T(1)) {
                  for (int64_t c = 0; c < cols; ++c) to[c] += from[c];
                } else {
                  for (int64_t c = 0; c < cols; ++c) to[c] = beta * to[c] + from[c];
                }
              }
            });
}

// In blocks so both sides stay in cache; columns of src (rows of dst) are shared among threads.
template <class T>
void pack_transposed(const T* src, int64_t rows, int64_t cols, int64_t ld, T* dst, int threads) {
  constexpr int64_t kBlock = 32;
  over_rows(cols, static_cast<size_t>(rows * cols) * sizeof(T), threads,
            [&](int64_t c_begin, int64_t c_end) {
              for (int64_t r0 = 0; r0 < rows; r0 += kBlock)
                for (int64_t c0 = c_begin; c0 < c_end; c0 += kBlock)
                  for (int64_t r = r0; r < std::min(rows, r0 + kBlock); ++r)
                    for (int64_t c = c0; c < std::min(c_end, c0 + kBlock); ++c)
                      dst[c * rows + r] = src[r * ld + c];
            });
}

#define INSTANTIATE(T)                                                               \
  template void copy_rows<T>(const T*, int64_t, int64_t, int64_t, T*, int64_t, int); \
  template void unpack_adding<T>(const T*, int64_t, int64_t, T, T*, int64_t, int);   \
  template void pack_transposed<T>(const T*, int64_t, int64_t, int64_t, T*, int);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::gpu
