/* A preloaded library that fails OpenCL's waits and finishes, for tests/faults_calls_test.sh: the
 * N-th call of clWaitForEvents or clFinish in the process (one count for both) and every P-th
 * after it return CL_OUT_OF_RESOURCES, as a device lost mid-call would make them.
 *
 *   CL_FAULTS=N[,P]        which calls fail (P = 0 or absent: the N-th alone)
 *   CL_FAULTS_WHEN=after   the real call runs first, so the device's work is done (the default)
 *   CL_FAULTS_WHEN=before  the failure comes back at once, with the commands still in flight
 *
 * Every other call goes to the next definition (the ICD loader's). At exit the calls counted and
 * failed go to stderr as "cl_faults: COUNT calls, FAILED failed". Test only: never linked into
 * tandem. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_long g_calls, g_failed;
static long g_first = -1, g_every = 0;
static int g_before = 0;

static void *next(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (f == NULL) {
    fprintf(stderr, "cl_faults: no %s to forward to\n", name);
    abort();
  }
  return f;
}

__attribute__((constructor)) static void read_settings(void) {
  const char *faults = getenv("CL_FAULTS");
  if (faults != NULL) {
    char *end = NULL;
    g_first = strtol(faults, &end, 10);
    if (end != NULL && *end == ',') g_every = strtol(end + 1, NULL, 10);
  }
  const char *when = getenv("CL_FAULTS_WHEN");
  g_before = when != NULL && strcmp(when, "before") == 0;
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "cl_faults: %ld calls, %ld failed\n", atomic_load(&g_calls),
          atomic_load(&g_failed));
}

/* Whether this call (counted here) fails. */
static int fails(void) {
  const long n = atomic_fetch_add(&g_calls, 1) + 1;
  const int fail =
      g_first > 0 && (n == g_first || (g_every > 0 && n > g_first && (n - g_first) % g_every == 0));
  if (fail) atomic_fetch_add(&g_failed, 1);
  return fail;
}

/* The next definitions, found at the first call (a process without OpenCL never makes one). */
typedef cl_int(CL_API_CALL *WaitFn)(cl_uint, const cl_event *);
typedef cl_int(CL_API_CALL *FinishFn)(cl_command_queue);
static _Atomic(WaitFn) g_wait;
static _Atomic(FinishFn) g_finish;

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint num_events, const cl_event *event_list) {
  if (atomic_load(&g_wait) == NULL) atomic_store(&g_wait, (WaitFn)next("clWaitForEvents"));
  const WaitFn real = atomic_load(&g_wait);
  if (!fails()) return real(num_events, event_list);
  if (!g_before) real(num_events, event_list);
  return CL_OUT_OF_RESOURCES;
}

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue queue) {
  if (atomic_load(&g_finish) == NULL) atomic_store(&g_finish, (FinishFn)next("clFinish"));
  const FinishFn real = atomic_load(&g_finish);
  if (!fails()) return real(queue);
  if (!g_before) real(queue);
  return CL_OUT_OF_RESOURCES;
}
