// Packing, unpacking and transposing blocks of a matrix on host threads, between the caller's
// arrays (any leading dimension) and tight staging: what stands between a call and a discrete
// GPU's start. No OpenCL.
#pragma once

#include <cstdint>

namespace tandem::detail::gpu {

// dst (leading dimension dst_ld) = the rows x cols block at src (leading dimension src_ld), on
// `threads` threads for large blocks; one memcpy per block of rows when both sides are tight.
template <class T>
void copy_rows(const T* src, int64_t src_ld, int64_t rows, int64_t cols, T* dst, int64_t dst_ld,
               int threads);

// Packs a rows x cols block (leading dimension ld) tight into dst.
template <class T>
void pack(const T* src, int64_t rows, int64_t cols, int64_t ld, T* dst, int threads) {
  copy_rows(src, ld, rows, cols, dst, cols, threads);
}

// Unpacks a tight rows x cols block into dst (leading dimension ld).
template <class T>
void unpack(const T* src, int64_t rows, int64_t cols, T* dst, int64_t ld, int threads) {
  copy_rows(src, cols, rows, cols, dst, ld, threads);
}

// dst (leading dimension ld) = beta * dst + src, a tight rows x cols block: a discrete device's
// product alpha op(A) op(B) added on the host to C's old values, which then never cross the bus.
template <class T>
void unpack_adding(const T* src, int64_t rows, int64_t cols, T beta, T* dst, int64_t ld,
                   int threads);

// dst (cols x rows, tight) = the transpose of src (rows x cols, leading dimension ld).
template <class T>
void pack_transposed(const T* src, int64_t rows, int64_t cols, int64_t ld, T* dst, int threads);

}  // namespace tandem::detail::gpu
