/* Calls for tests/log_test.sh through the drop-in BLAS, each checked against a plain loop: a
 * Fortran dgemm_ (column-major), a CBLAS column-major dgemm and a CBLAS row-major sgemm, all
 * 100 x 60 x 30, then REPS small Fortran calls, so that several processes write many lines.
 *
 *   log_test [REPS]
 * Exit 0 when every result is right. */
#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* The Fortran entry as gfortran calls it: every argument by reference, then the hidden lengths
 * of the two character arguments. */
void dgemm_(const char *transa, const char *transb, const blasint *m, const blasint *n,
            const blasint *k, const double *alpha, const double *a, const blasint *lda,
            const double *b, const blasint *ldb, const double *beta, double *c, const blasint *ldc,
            size_t transa_len, size_t transb_len);

enum { M = 100, N = 60, K = 30 };

/* max |C - A B| for column-major A (m x k), B (k x n) and C (m x n). */
static double error_col(const double *a, const double *b, const double *c, int m, int n, int k) {
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double want = 0;
      for (int p = 0; p < k; ++p) want += a[i + p * m] * b[p + j * k];
      worst = fmax(worst, fabs(c[i + j * m] - want));
    }
  return worst;
}

int main(int argc, char **argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 0;
  static double a[M * K], b[K * N], c[M * N];
  static float as[M * K], bs[K * N], cs[M * N];
  for (int i = 0; i < M * K; ++i) as[i] = (float)(a[i] = (double)(i % 7) - 3.0);
  for (int i = 0; i < K * N; ++i) bs[i] = (float)(b[i] = (double)(i % 5) * 0.5);
  const blasint m = M, n = N, k = K;
  const double one = 1.0, zero = 0.0;
  int bad = 0;

  dgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m, 1, 1);
  if (error_col(a, b, c, M, N, K) > 1e-9) bad = printf("dgemm_: wrong result\n");
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, a, M, b, K, 0.0, c, M);
  if (error_col(a, b, c, M, N, K) > 1e-9) bad = printf("cblas_dgemm, column-major: wrong\n");
  /* Row-major A (m x k) holds the same numbers as column-major A^T: check C^T = B^T A^T. */
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, as, K, bs, N, 0.0f, cs, N);
  for (int i = 0; i < M && !bad; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int p = 0; p < K; ++p) want += (double)as[i * K + p] * bs[p * N + j];
      if (fabs(cs[i * N + j] - want) > 1e-3) {
        bad = printf("cblas_sgemm, row-major: wrong\n");
        break;
      }
    }

  const blasint s = 8;
  for (int r = 0; r < reps && !bad; ++r) {
    dgemm_("N", "N", &s, &s, &s, &one, a, &s, b, &s, &zero, c, &s, 1, 1);
    if (error_col(a, b, c, s, s, s) > 1e-9) bad = printf("small dgemm_ %d: wrong\n", r);
  }
  return bad ? 1 : 0;
}
