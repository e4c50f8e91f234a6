/* One GEMM for tests/route_test.sh, through the C API or the drop-in, checked; then whether the
 * process started OpenCL: whether any driver that an OpenCL vendor file names is mapped.
 *
 *   route_calls api|dropin N     prints "opencl started" or "opencl not started"
 * Exit 0 when the result is right. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tandem/tandem.h"

void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *);

/* Whether /proc/self/maps holds a library that a file of /etc/OpenCL/vendors names. */
static int opencl_started(void) {
  const char *dir_name = getenv("OCL_ICD_VENDORS");
  DIR *dir = opendir(dir_name != NULL ? dir_name : "/etc/OpenCL/vendors");
  if (dir == NULL) return 0;
  char drivers[16][256];
  int count = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL && count < 16;) {
    if (strstr(e->d_name, ".icd") == NULL) continue;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir_name != NULL ? dir_name : "/etc/OpenCL/vendors",
             e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    if (fgets(drivers[count], sizeof drivers[count], f) != NULL) {
      drivers[count][strcspn(drivers[count], "\r\n")] = '\0';
      const char *base = strrchr(drivers[count], '/');
      if (base != NULL) memmove(drivers[count], base + 1, strlen(base));
      if (drivers[count][0] != '\0') ++count;
    }
    fclose(f);
  }
  closedir(dir);
  FILE *maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return 0;
  char line[1024];
  int found = 0;
  while (!found && fgets(line, sizeof line, maps) != NULL)
    for (int i = 0; i < count && !found; ++i) found = strstr(line, drivers[i]) != NULL;
  fclose(maps);
  return found;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const int n = atoi(argv[2]);
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
  double *c = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; ++i) a[i] = (i % 7) - 3, b[i] = (i % 5) * 0.5, c[i] = 1;
  const double one = 1, beta = 2;
  if (strcmp(argv[1], "api") == 0) {
    if (tandem_dgemm(TANDEM_COL_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, n, n, n, one, a, n, b, n,
                     beta, c, n) != 0) {
      printf("tandem_dgemm failed: %s\n", tandem_last_error());
      return 1;
    }
  } else {
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &beta, c, &n);
  }
  int wrong = 0;
  for (int j = 0; j < n && !wrong; j += 7)
    for (int i = 0; i < n && !wrong; i += 5) {
      double want = 2.0;
      for (int p = 0; p < n; ++p) want += a[i + p * n] * b[p + j * n];
      wrong = c[i + j * n] != want;
    }
  printf("%s\n", opencl_started() ? "opencl started" : "opencl not started");
  if (wrong) printf("WRONG C\n");
  return wrong;
}
