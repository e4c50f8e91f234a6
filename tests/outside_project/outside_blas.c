/* An outside program on the drop-in BLAS: cblas_dgemm (tandem's) and cblas_ddot (OpenBLAS's,
 * which the drop-in leaves alone), both checked. Run with TANDEM_VERBOSE=1 and TANDEM_MIN_MNK=0,
 * stderr shows the dgemm going through tandem. Exit 0 when right. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>

enum { N = 40 };

int main(void) {
  static double a[N * N], b[N * N], c[N * N];
  for (int i = 0; i < N * N; ++i) {
    a[i] = (double)(i % 7) - 3.0;
    b[i] = (double)(i % 5) * 0.5;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 0.0, c, N);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int p = 0; p < N; ++p) want += a[i * N + p] * b[p * N + j];
      if (fabs(c[i * N + j] - want) > 1e-9) {
        fprintf(stderr, "outside BLAS: c[%d][%d] = %g, not %g\n", i, j, c[i * N + j], want);
        return 1;
      }
    }
  double want = 0;
  for (int p = 0; p < N; ++p) want += a[p] * b[p];
  if (fabs(cblas_ddot(N, a, 1, b, 1) - want) > 1e-9) {
    fprintf(stderr, "outside BLAS: cblas_ddot is wrong\n");
    return 1;
  }
  printf("outside BLAS: cblas_dgemm and cblas_ddot ok\n");
  return 0;
}
