/* One program's whole cost for bench/process_cost.py: N dgemm_ calls of n^3 (column-major,
 * checked), linked against the system's BLAS alone, so that it runs with OpenBLAS as it is or
 * with libtandem_blas.so preloaded. Prints the first element of C.
 *
 *   one_call N [CALLS] */
#include <stdio.h>
#include <stdlib.h>

void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *);

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 300, calls = argc > 2 ? atoi(argv[2]) : 1;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
  double *c = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; ++i) a[i] = 1, b[i] = 2, c[i] = 0;
  const double one = 1, zero = 0;
  for (int r = 0; r < calls; ++r) dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
  printf("%g\n", c[0]);
  return c[0] == 2.0 * n && c[n * n - 1] == 2.0 * n ? 0 : 1;
}
