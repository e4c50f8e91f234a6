/* tandem's plans from C (tandem/plan.h), compiled as C: a plan of each real type made and run,
 * synchronously and asynchronously, every C checked element by element; the errors a C caller
 * meets, each at its position with C untouched (a bad shape at creation, a NULL operand, a NULL
 * plan or run, a plan of another type, a complex run's NULL alpha); a plan destroyed while its
 * asynchronous runs are in flight; a resident operand's runs, update, errors, and its handle
 * destroyed while a run is in flight. The strategy comes from TANDEM_STRATEGY (ctest runs it under
 * each). Exit 0 when all holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tandem/plan.h"

enum { M = 70, N = 45, K = 33, RUNS = 4 };

static int failures = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    printf("FAILED: %s (last error: %s)\n", what, tandem_last_error());
    ++failures;
  }
}

/* C = alpha A B with A all 0.5 and B all 2: every element alpha K. */
static int all_equal_f(const float *c, float want) {
  for (int i = 0; i < M * N; ++i)
    if (c[i] != want) return 0;
  return 1;
}
static int all_equal_d(const double *c, double want) {
  for (int i = 0; i < M * N; ++i)
    if (c[i] != want) return 0;
  return 1;
}

int main(void) {
  static float a[M * K], b[K * N], c[RUNS][M * N];
  static double ad[M * K], bd[K * N], cd[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = 0.5f, ad[i] = 0.5;
  for (int i = 0; i < K * N; ++i) b[i] = 2.0f, bd[i] = 2.0;

  tandem_plan *plan = NULL;
  expect(tandem_splan_create(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, M, N, K, K, N, N,
                             &plan) == 0 &&
             plan != NULL,
         "splan_create");
  for (int r = 0; r < RUNS; ++r) {
    for (int i = 0; i < M * N; ++i) c[r][i] = -1.0f;
    expect(tandem_splan_run((float)(r + 1), a, b, 0.0f, c[r], plan) == 0, "splan_run");
    expect(all_equal_f(c[r], (float)(r + 1) * K), "splan_run's C");
  }

  /* Errors at their positions, C untouched. */
  for (int i = 0; i < M * N; ++i) c[0][i] = 7.0f;
  expect(tandem_splan_run(1.0f, NULL, b, 0.0f, c[0], plan) == 2, "NULL a at 2");
  expect(tandem_splan_run(1.0f, a, b, 0.0f, NULL, plan) == 5, "NULL c at 5");
  expect(tandem_splan_run(1.0f, a, b, 0.0f, c[0], NULL) == 6, "NULL plan at 6");
  expect(tandem_dplan_run(1.0, ad, bd, 0.0, cd, plan) == 6, "an s plan refused by dplan_run");
  expect(all_equal_f(c[0], 7.0f), "C untouched by refused runs");
  tandem_plan *bad = plan;
  expect(tandem_dplan_create(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, M, N, K, K - 1, N,
                             N, &bad) == 7 &&
             bad == NULL,
         "lda too small at 7, no plan");
  expect(tandem_dplan_create(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, M, N, K, K, N, N,
                             NULL) == 10,
         "NULL plan pointer at 10");
  tandem_plan *zplan = NULL;
  expect(tandem_zplan_create(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, 2, 2, 2, 2, 2, 2,
                             &zplan) == 0,
         "zplan_create");
  const double one[2] = {1.0, 0.0};
  double z[8] = {0};
  expect(tandem_zplan_run(NULL, z, z, one, z, zplan) == 1, "complex NULL alpha at 1");
  tandem_plan_destroy(zplan);

  /* Asynchronous runs, the plan destroyed while they are in flight. */
  tandem_run *runs[RUNS];
  for (int r = 0; r < RUNS; ++r) {
    for (int i = 0; i < M * N; ++i) c[r][i] = -1.0f;
    expect(tandem_splan_run_async(2.0f, a, b, 0.0f, c[r], plan, &runs[r]) == 0 && runs[r] != NULL,
           "splan_run_async");
  }
  expect(tandem_splan_run_async(2.0f, a, b, 0.0f, c[0], plan, NULL) == 7, "NULL run at 7");
  tandem_plan_destroy(plan);
  for (int r = 0; r < RUNS; ++r) {
    expect(tandem_run_wait(runs[r]) == 0, "run_wait");
    expect(all_equal_f(c[r], 2.0f * K), "an asynchronous run's C");
  }
  expect(tandem_run_ready(NULL) == 1 && tandem_run_wait(NULL) == 0, "NULL run is done");

  /* A run's error comes from its wait; a double plan's runs. */
  tandem_plan *dplan = NULL;
  expect(tandem_dplan_create(TANDEM_COL_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, M, N, K, M, K, M,
                             &dplan) == 0,
         "dplan_create");
  tandem_run *late = NULL;
  expect(tandem_dplan_run_async(1.0, NULL, bd, 0.0, cd, dplan, &late) == 0, "started");
  expect(tandem_run_wait(late) == 2, "its NULL a at 2, from the wait");
  for (int i = 0; i < M * N; ++i) cd[i] = -1.0;
  expect(tandem_dplan_run(3.0, ad, bd, 0.0, cd, dplan) == 0 && all_equal_d(cd, 3.0 * K),
         "dplan_run, column-major");

  /* A resident A (column-major: the operand every device needs whole), its runs with a NULL a,
   * an update, its errors, and a handle destroyed while its asynchronous run is in flight. */
  tandem_resident *kept = NULL, *none = NULL;
  expect(tandem_plan_resident(dplan, 'A', ad, &kept) == 0 && kept != NULL, "plan_resident");
  for (int i = 0; i < M * N; ++i) cd[i] = -1.0;
  expect(tandem_dplan_run_resident(2.0, NULL, bd, 0.0, cd, dplan, kept) == 0 &&
             all_equal_d(cd, 2.0 * K),
         "dplan_run_resident");
  for (int i = 0; i < M * K; ++i) ad[i] = 1.0;
  expect(tandem_resident_update(kept) == 0, "resident_update");
  expect(tandem_dplan_run_resident(2.0, NULL, bd, 0.0, cd, dplan, kept) == 0 &&
             all_equal_d(cd, 4.0 * K),
         "dplan_run_resident after the update");
  expect(tandem_plan_resident(dplan, 'X', ad, &none) == 2 && none == NULL, "operand 'X' at 2");
  expect(tandem_plan_resident(dplan, 'B', NULL, &none) == 3 && none == NULL, "NULL x at 3");
  expect(tandem_plan_resident(NULL, 'A', ad, &none) == 1, "NULL plan at 1");
  expect(tandem_plan_resident(dplan, 'A', ad, NULL) == 4, "NULL resident at 4");
  for (int i = 0; i < M * N; ++i) cd[i] = 9.0;
  expect(tandem_dplan_run_resident(2.0, ad, bd, 0.0, cd, dplan, kept) == 2, "a given with A kept");
  expect(tandem_dplan_run_resident(2.0, NULL, bd, 0.0, cd, dplan, NULL) == 7, "NULL resident");
  tandem_plan *splan = NULL;
  expect(tandem_splan_create(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, M, N, K, K, N, N,
                             &splan) == 0,
         "another splan_create");
  expect(tandem_dplan_run_resident(2.0, NULL, bd, 0.0, cd, splan, kept) == 6, "an s plan at 6");
  expect(tandem_plan_resident(splan, 'B', b, &none) == 0, "an s plan's resident B");
  expect(tandem_dplan_run_resident(2.0, NULL, bd, 0.0, cd, dplan, none) == 7,
         "an s resident refused by a d run at 7");
  tandem_resident *other_b = NULL;
  expect(tandem_plan_resident(dplan, 'B', bd, &other_b) == 0, "a resident B of the d plan");
  expect(tandem_dplan_run_resident(2.0, ad, NULL, 0.0, cd, splan, other_b) == 6,
         "a d resident with an s plan: the plan at 6");
  tandem_plan *dplan2 = NULL;
  expect(tandem_dplan_create(TANDEM_COL_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, M, N, K, M, K, M,
                             &dplan2) == 0,
         "another dplan_create");
  expect(tandem_dplan_run_resident(2.0, ad, NULL, 0.0, cd, dplan2, other_b) == 7 &&
             strstr(tandem_last_error(), "argument 7 (resident)") != NULL,
         "another plan's resident at 7, named so");
  expect(tandem_plan_resident(dplan, 'A', NULL, &none) == 3 &&
             strstr(tandem_last_error(), "argument 3 (x)") != NULL,
         "NULL x at 3, named so");
  tandem_resident_destroy(other_b);
  tandem_plan_destroy(dplan2);
  expect(tandem_dplan_run_resident_async(2.0, NULL, bd, 0.0, cd, dplan, kept, NULL) == 8,
         "NULL run at 8");
  expect(all_equal_d(cd, 9.0), "C untouched by refused resident runs");
  tandem_run *with_kept = NULL;
  expect(tandem_dplan_run_resident_async(3.0, NULL, bd, 0.0, cd, dplan, kept, &with_kept) == 0,
         "dplan_run_resident_async");
  tandem_resident_destroy(kept); /* the run keeps what it needs */
  expect(tandem_run_wait(with_kept) == 0 && all_equal_d(cd, 6.0 * K), "the run's C");
  tandem_resident_destroy(none);
  tandem_resident_destroy(NULL);
  tandem_plan_destroy(splan);
  expect(tandem_resident_bytes(NULL) == 0, "NULL holds nothing");

  tandem_plan_destroy(dplan);
  tandem_plan_destroy(NULL);

  if (failures == 0) printf("plan_c_test: all checks hold\n");
  return failures == 0 ? 0 : 1;
}
