/* tandem's low-level GEMM for C (issue 44): a plan made once for a call's shape, run many times,
 * also asynchronously. The C++ interface is tandem/plan.hpp, which says what a plan keeps.
 *
 *   tandem_plan *plan;
 *   int info = tandem_splan_create(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS,
 *                                  m, n, k, lda, ldb, ldc, &plan);
 *   for (...) info = tandem_splan_run(1.0f, a, b[i], 0.0f, c[i], plan);
 *   tandem_run *later;
 *   info = tandem_splan_run_async(1.0f, a, b2, 0.0f, c2, plan, &later);
 *   ...
 *   info = tandem_run_wait(later);  (the run's status; frees it)
 *   tandem_plan_destroy(plan);
 *
 * Return values are tandem_sgemm's: 0, an invalid argument's 1-based position in the function's
 * own signature (C untouched), or a negative failure; tandem_last_error() describes it. The plan
 * comes last in each call, so the positions of the other arguments are those of the C++ calls.
 * A plan of one element type is refused by another's run (its position). Plans may be used from
 * several threads at once; a plan may be destroyed while its asynchronous runs are in flight. The
 * strategy and device come from the TANDEM_* environment variables, as for tandem_sgemm. */
#ifndef TANDEM_PLAN_H
#define TANDEM_PLAN_H

#include <stdint.h>

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tandem_plan tandem_plan; /* a plan, made by tandem_?plan_create */
typedef struct tandem_run tandem_run;   /* an asynchronous run, until tandem_run_wait */

/* Checks the shape (layout 1 ... ldc 9; `plan` NULL: 10), plans the call and builds its kernels;
 * *plan is set on success, NULL otherwise. */
int tandem_splan_create(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                        int64_t lda, int64_t ldb, int64_t ldc, tandem_plan **plan);
int tandem_dplan_create(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                        int64_t lda, int64_t ldb, int64_t ldc, tandem_plan **plan);
int tandem_cplan_create(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                        int64_t lda, int64_t ldb, int64_t ldc, tandem_plan **plan);
int tandem_zplan_create(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                        int64_t lda, int64_t ldb, int64_t ldc, tandem_plan **plan);

/* C = alpha op(A) op(B) + beta C with the plan's shape (alpha 1, a 2, b 3, beta 4, c 5, plan 6).
 * The complex forms take alpha and beta by address, as tandem_cgemm does. */
int tandem_splan_run(float alpha, const float *a, const float *b, float beta, float *c,
                     const tandem_plan *plan);
int tandem_dplan_run(double alpha, const double *a, const double *b, double beta, double *c,
                     const tandem_plan *plan);
int tandem_cplan_run(const void *alpha, const void *a, const void *b, const void *beta, void *c,
                     const tandem_plan *plan);
int tandem_zplan_run(const void *alpha, const void *a, const void *b, const void *beta, void *c,
                     const tandem_plan *plan);

/* The same run started on its own thread: *run (7) is set, and the call returns 0, once it has
 * started; its status comes from tandem_run_wait. The operands must stay alive, and A and B
 * unchanged, until then. No callback is registered anywhere. */
int tandem_splan_run_async(float alpha, const float *a, const float *b, float beta, float *c,
                           const tandem_plan *plan, tandem_run **run);
int tandem_dplan_run_async(double alpha, const double *a, const double *b, double beta, double *c,
                           const tandem_plan *plan, tandem_run **run);
int tandem_cplan_run_async(const void *alpha, const void *a, const void *b, const void *beta,
                           void *c, const tandem_plan *plan, tandem_run **run);
int tandem_zplan_run_async(const void *alpha, const void *a, const void *b, const void *beta,
                           void *c, const tandem_plan *plan, tandem_run **run);

/* Whether the run has finished (1) or not (0); a NULL run counts as finished. */
int tandem_run_ready(const tandem_run *run);
/* Waits for the run, frees it and returns its status (tandem_last_error() describes a failure on
 * the waiting thread). NULL: 0. */
int tandem_run_wait(tandem_run *run);

/* Frees the plan (NULL is accepted). Asynchronous runs in flight keep what they need; a
 * synchronous run on another thread must have returned. */
void tandem_plan_destroy(tandem_plan *plan);

/* Resident operands (tandem::Resident in tandem/plan.hpp, which says what is kept and when):
 *
 *   tandem_resident *kept;
 *   info = tandem_plan_resident(plan, 'A', a, &kept);       (a copied to the devices now)
 *   for (...) info = tandem_splan_run_resident(1.0f, NULL, b[i], 0.0f, c[i], plan, kept);
 *   ... change a ...; info = tandem_resident_update(kept);
 *   tandem_resident_destroy(kept);
 *
 * tandem_plan_resident keeps the plan's operand `operand` ('A' or 'B'), the matrix at x, on the
 * plan's discrete devices (plan 1, operand 2, x 3, resident 4; *resident NULL on failure): a copy
 * that would not fit returns TANDEM_ERROR_TOO_LARGE, nothing kept. x must stay allocated until the
 * handle is destroyed and its runs have ended: runs read it for the CPU's rows and those of a
 * device without a copy. */
typedef struct tandem_resident tandem_resident;
int tandem_plan_resident(const tandem_plan *plan, char operand, const void *x,
                         tandem_resident **resident);
/* The host's matrix copied again to the devices that keep it (resident 1). */
int tandem_resident_update(tandem_resident *resident);
/* Device memory its copies hold, in bytes (NULL: 0). */
int64_t tandem_resident_bytes(const tandem_resident *resident);
/* Frees it (NULL is accepted); runs in flight keep the copies they started with. */
void tandem_resident_destroy(tandem_resident *resident);

/* A run with the resident operand in place of the one it was made for, whose pointer (a 2 or b 3)
 * must be NULL; plan 6, resident 7, and for the asynchronous form run 8. */
int tandem_splan_run_resident(float alpha, const float *a, const float *b, float beta, float *c,
                              const tandem_plan *plan, const tandem_resident *resident);
int tandem_dplan_run_resident(double alpha, const double *a, const double *b, double beta,
                              double *c, const tandem_plan *plan, const tandem_resident *resident);
int tandem_cplan_run_resident(const void *alpha, const void *a, const void *b, const void *beta,
                              void *c, const tandem_plan *plan, const tandem_resident *resident);
int tandem_zplan_run_resident(const void *alpha, const void *a, const void *b, const void *beta,
                              void *c, const tandem_plan *plan, const tandem_resident *resident);
int tandem_splan_run_resident_async(float alpha, const float *a, const float *b, float beta,
                                    float *c, const tandem_plan *plan,
                                    const tandem_resident *resident, tandem_run **run);
int tandem_dplan_run_resident_async(double alpha, const double *a, const double *b, double beta,
                                    double *c, const tandem_plan *plan,
                                    const tandem_resident *resident, tandem_run **run);
int tandem_cplan_run_resident_async(const void *alpha, const void *a, const void *b,
                                    const void *beta, void *c, const tandem_plan *plan,
                                    const tandem_resident *resident, tandem_run **run);
int tandem_zplan_run_resident_async(const void *alpha, const void *a, const void *b,
                                    const void *beta, void *c, const tandem_plan *plan,
                                    const tandem_resident *resident, tandem_run **run);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_PLAN_H */
