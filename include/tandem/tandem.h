/* tandem: one GEMM computed on the CPU BLAS and an OpenCL GPU at the same time.
 *
 * C interface, usable from C99. Layout and transpose values are CBLAS's. Nothing here throws. */
#ifndef TANDEM_TANDEM_H
#define TANDEM_TANDEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values of `layout`, `trans_a` and `trans_b` (the same as CBLAS's enums). */
enum {
  TANDEM_ROW_MAJOR = 101,
  TANDEM_COL_MAJOR = 102,
  TANDEM_NO_TRANS = 111,
  TANDEM_TRANS = 112,
  TANDEM_CONJ_TRANS = 113 /* for real data, the same as TANDEM_TRANS */
};

/* Runtime failures (negative return values). */
enum {
  TANDEM_ERROR_RUNTIME = -1,  /* the GPU failed under strategy gpu, or an internal error */
  TANDEM_ERROR_TOO_LARGE = -2 /* a size or leading dimension exceeds the CPU BLAS's 32-bit range */
};

/* C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n and C m x n.
 *
 * Returns 0 on success. On an invalid argument, returns its 1-based position in this signature
 * (as BLAS's info does) and leaves C untouched. Returns a negative value on a runtime failure.
 * tandem_last_error() describes the calling thread's last failure.
 *
 * alpha == 0 (or k == 0) reads neither A nor B; beta == 0 does not read C. The strategy (cpu, gpu,
 * hybrid, auto), GPU fraction and device come from the TANDEM_* environment variables; the C++
 * interface takes them as options. */
int tandem_sgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                 int64_t ldc);
int tandem_dgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                 double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                 double beta, double *c, int64_t ldc);

/* The calling thread's last failure, as readable text ("" if none). Valid until the thread's
 * next tandem call. */
const char *tandem_last_error(void);

/* Memory aligned to 4096 bytes and padded to a multiple of 64 bytes: operands that live in it can
 * be used by a unified-memory GPU in place (zero-copy). When the device tandem uses (TANDEM_DEVICE,
 * else the first GPU) is a discrete GPU, blocks of 1 MiB and more are pinned (page-locked) host
 * memory from that device instead, which it copies at the bus's full speed with no packing; the
 * first such call opens the device. NULL on failure or when bytes == 0. Free with tandem_free
 * (NULL is accepted). */
void *tandem_malloc(size_t bytes);
void tandem_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_TANDEM_H */
