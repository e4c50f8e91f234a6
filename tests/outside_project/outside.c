/* An outside program on tandem's C API: one small sgemm, checked against products worked out by
 * hand. Exit 0 when right. */
#include <stdio.h>
#include <string.h>
#include <tandem/tandem.h>

int main(void) {
  /* The installed header and library are one version. */
  if (strcmp(tandem_version(), TANDEM_VERSION_STRING) != 0) {
    fprintf(stderr, "outside C: library %s, header %s\n", tandem_version(), TANDEM_VERSION_STRING);
    return 1;
  }
  /* A is 2x3 and B is 3x2, row-major; C = A B. */
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const float b[6] = {7, 8, 9, 10, 11, 12};
  const float want[4] = {58, 64, 139, 154};
  float c[4] = {0, 0, 0, 0};
  int info = tandem_sgemm(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, 2, 2, 3, 1.0f, a, 3,
                          b, 2, 0.0f, c, 2);
  if (info != 0) {
    fprintf(stderr, "outside C: tandem_sgemm returned %d: %s\n", info, tandem_last_error());
    return 1;
  }
  for (int i = 0; i < 4; ++i)
    if (c[i] != want[i]) {
      fprintf(stderr, "outside C: c[%d] = %g, not %g\n", i, c[i], want[i]);
      return 1;
    }
  printf("outside C: tandem %s (%d.%d.%d): tandem_sgemm ok\n", tandem_version(),
         TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR, TANDEM_VERSION_PATCH);
  return 0;
}
