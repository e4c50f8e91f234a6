/* fork() after tandem has used OpenCL (the strategy and devices come from the TANDEM_* variables
 * ctest sets): the child's calls compute on the CPU and are right, under every strategy; so are a
 * grandchild's; tandem_malloc and tandem_free work in the child, on its own blocks and the
 * parent's; a plan made in the parent runs in the child and the grandchild, on the CPU, and in the
 * parent again, as does the resident B made with it (updated and freed in the child); the
 * parent's calls after the fork still work. A child that hangs is killed by an
 * alarm, so the test fails instead of waiting for ctest's timeout. Exit 0 when all holds. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tandem/plan.h"
#include "tandem/tandem.h"

enum { N = 300, ALARM_SECONDS = 60 };

/* One sgemm and one dgemm of N x N x N (rows of C over both sides at the fraction the
 * environment asks), checked element by element. */
static int products(const char *who) {
  float *a = tandem_malloc(sizeof(float) * N * N), *b = tandem_malloc(sizeof(float) * N * N);
  float *c = tandem_malloc(sizeof(float) * N * N);
  double *ad = malloc(sizeof(double) * N * N), *bd = malloc(sizeof(double) * N * N);
  double *cd = malloc(sizeof(double) * N * N);
  if (!a || !b || !c || !ad || !bd || !cd) {
    printf("%s: out of memory\n", who);
    return 1;
  }
  for (int i = 0; i < N * N; ++i) {
    a[i] = (float)(i % 7);
    b[i] = 1.0f;
    c[i] = -1.0f;
    ad[i] = (double)(i % 5);
    bd[i] = 2.0;
    cd[i] = 3.0;
  }
  int wrong = 0;
  int info = tandem_sgemm(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, N, N, N, 1.0f, a, N,
                          b, N, 0.0f, c, N);
  int info_d = tandem_dgemm(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, N, N, N, 0.5, ad, N,
                            bd, N, 1.0, cd, N);
  for (int i = 0; i < N; ++i) {
    double row = 0, row_d = 0; /* sum over the row of A: B is constant */
    for (int p = 0; p < N; ++p) {
      row += (float)((i * N + p) % 7);
      row_d += (double)((i * N + p) % 5);
    }
    for (int j = 0; j < N; ++j) {
      wrong += c[i * N + j] != (float)row;
      wrong += cd[i * N + j] != 0.5 * 2.0 * row_d + 3.0;
    }
  }
  printf("%s: sgemm info %d, dgemm info %d, %d wrong%s%s\n", who, info, info_d, wrong,
         info || info_d ? ": " : "", info || info_d ? tandem_last_error() : "");
  fflush(stdout);
  tandem_free(a);
  tandem_free(b);
  tandem_free(c);
  free(ad);
  free(bd);
  free(cd);
  return info != 0 || info_d != 0 || wrong != 0;
}

/* Runs f in a child and returns 0 if it exited 0 within the alarm. */
static int in_child(int (*f)(void), const char *who) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    alarm(ALARM_SECONDS);
    _exit(f());
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  if (WIFSIGNALED(status)) {
    printf("%s: killed by signal %d%s\n", who, WTERMSIG(status),
           WTERMSIG(status) == SIGALRM ? " (it hung)" : "");
    return 1;
  }
  return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

static void *parent_block;
static tandem_plan *parent_plan; /* made and run in the parent before the fork */
static float parent_b[N * N];    /* all 2: the parent's plan's resident B */
static tandem_resident *parent_kept;

/* A run of the parent's plan (N x N x N, A all 1, B all 2: every element 2 N), synchronous and
 * asynchronous, checked element by element. */
static int plan_products(const char *who) {
  float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N);
  float *c = malloc(sizeof(float) * N * N);
  if (!a || !b || !c) return 1;
  for (int i = 0; i < N * N; ++i) a[i] = 1.0f, b[i] = 2.0f, c[i] = -1.0f;
  int info = tandem_splan_run(1.0f, a, b, 0.0f, c, parent_plan);
  int wrong = 0;
  for (int i = 0; i < N * N; ++i) wrong += c[i] != 2.0f * N;
  tandem_run *run = NULL;
  int started = tandem_splan_run_async(0.5f, a, b, 0.0f, c, parent_plan, &run);
  int info_async = started ? started : tandem_run_wait(run);
  for (int i = 0; i < N * N; ++i) wrong += c[i] != (float)N;
  /* And with the parent's resident B (kept on a discrete device before the fork). */
  int info_kept = tandem_splan_run_resident(1.0f, a, NULL, 0.0f, c, parent_plan, parent_kept);
  for (int i = 0; i < N * N; ++i) wrong += c[i] != 2.0f * N;
  printf("%s: the parent's plan, info %d, async %d, resident %d, %d wrong%s%s\n", who, info,
         info_async, info_kept, wrong, info || info_async || info_kept ? ": " : "",
         info || info_async || info_kept ? tandem_last_error() : "");
  fflush(stdout);
  free(a);
  free(b);
  free(c);
  return info != 0 || info_async != 0 || info_kept != 0 || wrong != 0;
}

static int grandchild(void) { return products("grandchild") | plan_products("grandchild"); }

static int child(void) {
  int failed = products("child");
  failed |= plan_products("child");
  failed |= products("child, again");
  tandem_free(parent_block); /* the parent's block: released, or left, without OpenCL */
  failed |= in_child(grandchild, "grandchild");
  /* The parent's resident B updated and freed here, without OpenCL. */
  if (tandem_resident_update(parent_kept) != 0) {
    printf("child: resident_update failed: %s\n", tandem_last_error());
    failed = 1;
  }
  failed |= plan_products("child, after the update");
  tandem_resident_destroy(parent_kept);
  return failed;
}

int main(void) {
  parent_block = tandem_malloc((size_t)4 << 20); /* pinned on a discrete device */
  if (products("parent before fork")) return 1;
  for (int i = 0; i < N * N; ++i) parent_b[i] = 2.0f;
  if (tandem_splan_create(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, N, N, N, N, N, N,
                          &parent_plan) != 0 ||
      tandem_plan_resident(parent_plan, 'B', parent_b, &parent_kept) != 0 ||
      plan_products("parent before fork"))
    return 1;
  int failed = in_child(child, "child");
  failed |= products("parent after fork");
  failed |= plan_products("parent after fork");
  tandem_resident_destroy(parent_kept);
  tandem_plan_destroy(parent_plan);
  tandem_free(parent_block);
  printf("%s\n", failed ? "FAILED" : "ok");
  return failed;
}
