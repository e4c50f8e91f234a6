/* Times every OpenCL call a program makes, for finding where a small GEMM's host time goes
 * (issue 17: tandem's whole small call against CLBlast's). Bench only, never linked into tandem:
 *
 *   LD_PRELOAD=build/bench/libcl_trace.so build/bench/call_phases ...
 *
 * Each wrapped function forwards to the next definition (the ICD loader's) and adds its wall time
 * and one call to its counter; counters are atomic, so any thread may call. A program that knows
 * about it finds cl_trace_reset() and cl_trace_dump() with dlsym (call_phases does); at exit the
 * totals go to stderr when CL_TRACE_AT_EXIT is set.
 *
 * CL_TRACE_TIMELINE=N also keeps the last N buffer writes and reads, kernel launches, clFlush,
 * clFinish and clWaitForEvents in a ring: host entry and return times and, for the commands, an
 * event (the caller's, retained, or one asked for here and kept from the caller), so that when the
 * device ran each command can be set beside when the host enqueued it and when it waited.
 * cl_trace_timeline() prints and empties the ring, one JSON object per line, oldest first: host
 * times from the oldest entry, device times (profiling events; null where the queue has none) from
 * the oldest QUEUED, and on the record that QUEUED comes from, queued_minus_host_ns (its QUEUED
 * less its host entry, raw: small and positive where the driver stamps QUEUED on the host's
 * CLOCK_MONOTONIC) and queued_minus_host_realtime_ns (the same against the entry's CLOCK_REALTIME,
 * for drivers that stamp wall-clock time), and host_enter_monotonic_ns (the entry on the program's
 * own CLOCK_MONOTONIC, std::chrono::steady_clock's on Linux, to set the commands beside the calls'
 * own times). CL_TRACE_PROFILE makes the program's queues profiled (below). At exit the ring
 * follows the totals to stderr. Events, retains and waits of its own go to the real functions, so
 * the counters see only the program's calls; unset, the timeline costs each wrapped command one
 * load. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRACED(X)             \
  X(clEnqueueWriteBuffer)     \
  X(clEnqueueWriteBufferRect) \
  X(clEnqueueReadBuffer)      \
  X(clEnqueueReadBufferRect)  \
  X(clEnqueueNDRangeKernel)   \
  X(clEnqueueMapBuffer)       \
  X(clEnqueueUnmapMemObject)  \
  X(clFlush)                  \
  X(clFinish)                 \
  X(clWaitForEvents)          \
  X(clCreateKernel)           \
  X(clReleaseKernel)          \
  X(clSetKernelArg)           \
  X(clCreateBuffer)           \
  X(clReleaseMemObject)       \
  X(clCreateCommandQueue)     \
  X(clReleaseCommandQueue)    \
  X(clRetainCommandQueue)     \
  X(clGetEventProfilingInfo)  \
  X(clGetEventInfo)           \
  X(clRetainEvent)            \
  X(clReleaseEvent)           \
  X(clGetKernelWorkGroupInfo) \
  X(clGetDeviceInfo)          \
  X(clRetainContext)          \
  X(clReleaseContext)

#define ID(name) id_##name,
enum { TRACED(ID) id_count };
#define NAME(name) #name,
static const char* const names[] = {TRACED(NAME)};

static uint64_t total_ns[id_count], calls[id_count];

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void* next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == NULL) {
    fprintf(stderr, "cl_trace: no %s after this library\n", name);
    abort();
  }
  return f;
}

static void count(int id, uint64_t ns) {
  __atomic_fetch_add(&total_ns[id], ns, __ATOMIC_RELAXED);
  __atomic_fetch_add(&calls[id], 1, __ATOMIC_RELAXED);
}

static void add(int id, uint64_t t0) { count(id, now_ns() - t0); }

/* The timeline's ring. Records go in when their call returns, under the lock; an event is
 * released outside it, as the driver may take locks of its own. */
struct record {
  int id;
  int blocking;  /* -1: not a read or write */
  int64_t bytes; /* -1: not a read or write */
  uint64_t enter_ns, return_ns;
  cl_event event;     /* NULL: none (a wait, or a failed enqueue) */
  cl_ulong device[4]; /* QUEUED, SUBMIT, START, END, filled when printed */
  int known;          /* bit i: device[i] was given */
};

static int timeline_cap = -1; /* -1: CL_TRACE_TIMELINE not read yet */
static pthread_once_t timeline_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static struct record* ring;
static int ring_next, ring_size;
static cl_int (*real_retain)(cl_event);
static cl_int (*real_release)(cl_event);
static cl_int (*real_wait)(cl_uint, const cl_event*);
static cl_int (*real_profiling)(cl_event, cl_profiling_info, size_t, void*, size_t*);

static void read_timeline(void) {
  const char* const v = getenv("CL_TRACE_TIMELINE");
  const long n = v != NULL ? strtol(v, NULL, 10) : 0;
  int cap = 0;
  if (n > 0) {
    cap = n < 1000000 ? (int)n : 1000000;
    ring = calloc((size_t)cap, sizeof *ring);
    if (ring == NULL) {
      fprintf(stderr, "cl_trace: no memory for a timeline of %d\n", cap);
      cap = 0;
    }
    *(void**)(&real_retain) = next("clRetainEvent");
    *(void**)(&real_release) = next("clReleaseEvent");
    *(void**)(&real_wait) = next("clWaitForEvents");
    *(void**)(&real_profiling) = next("clGetEventProfilingInfo");
  }
  __atomic_store_n(&timeline_cap, cap, __ATOMIC_RELEASE);
}

/* The ring's length, 0 when off: one load once read. */
static int timeline(void) {
  const int cap = __atomic_load_n(&timeline_cap, __ATOMIC_ACQUIRE);
  if (cap >= 0) return cap;
  pthread_once(&timeline_once, read_timeline);
  return __atomic_load_n(&timeline_cap, __ATOMIC_ACQUIRE);
}

static void remember(int id, uint64_t t0, uint64_t t1, int blocking, int64_t bytes, cl_event e) {
  const int cap = timeline();
  pthread_mutex_lock(&ring_lock);
  struct record* const slot = &ring[ring_next];
  const cl_event old = ring_size == cap ? slot->event : NULL;
  *slot = (struct record){
      .id = id, .blocking = blocking, .bytes = bytes, .enter_ns = t0, .return_ns = t1, .event = e};
  ring_next = (ring_next + 1) % cap;
  if (ring_size < cap) ++ring_size;
  pthread_mutex_unlock(&ring_lock);
  if (old != NULL) real_release(old);
}

static int64_t region_bytes(const size_t* r) {
  return r != NULL ? (int64_t)(r[0] * r[1] * r[2]) : 0;
}

/* One wrapper: the real function's type, found once, then timed around the call. */
#define WRAP(ret, name, params, args)                 \
  ret name params {                                   \
    static ret(*real) params;                         \
    if (real == NULL) *(void**)(&real) = next(#name); \
    const uint64_t t0 = now_ns();                     \
    ret r = real args;                                \
    add(id_##name, t0);                               \
    return r;                                         \
  }

/* An enqueue that makes a command: with the timeline on, its record keeps an event, the caller's
 * retained or one asked for here in the caller's stead (e points at it for the call). */
#define WRAP_COMMAND(name, params, args, blocking, bytes) \
  cl_int name params {                                    \
    static cl_int(*real) params;                          \
    if (real == NULL) *(void**)(&real) = next(#name);     \
    if (timeline() == 0) {                                \
      const uint64_t t0 = now_ns();                       \
      const cl_int r = real args;                         \
      add(id_##name, t0);                                 \
      return r;                                           \
    }                                                     \
    cl_event own = NULL;                                  \
    const int callers = e != NULL;                        \
    if (!callers) e = &own;                               \
    const uint64_t t0 = now_ns();                         \
    const cl_int r = real args;                           \
    const uint64_t t1 = now_ns();                         \
    count(id_##name, t1 - t0);                            \
    const cl_event kept = r == CL_SUCCESS ? *e : NULL;    \
    if (kept != NULL && callers) real_retain(kept);       \
    remember(id_##name, t0, t1, blocking, bytes, kept);   \
    return r;                                             \
  }

/* A flush or wait: with the timeline on, its record puts the host's waits among the commands. */
#define WRAP_WAIT(name, params, args)                              \
  cl_int name params {                                             \
    static cl_int(*real) params;                                   \
    if (real == NULL) *(void**)(&real) = next(#name);              \
    const uint64_t t0 = now_ns();                                  \
    const cl_int r = real args;                                    \
    const uint64_t t1 = now_ns();                                  \
    count(id_##name, t1 - t0);                                     \
    if (timeline() > 0) remember(id_##name, t0, t1, -1, -1, NULL); \
    return r;                                                      \
  }

WRAP_COMMAND(clEnqueueWriteBuffer,
             (cl_command_queue q, cl_mem b, cl_bool blocking, size_t off, size_t size,
              const void* p, cl_uint nw, const cl_event* w, cl_event* e),
             (q, b, blocking, off, size, p, nw, w, e), blocking != CL_FALSE, (int64_t)size)
WRAP_COMMAND(clEnqueueWriteBufferRect,
             (cl_command_queue q, cl_mem b, cl_bool blocking, const size_t* bo, const size_t* ho,
              const size_t* reg, size_t brp, size_t bsp, size_t hrp, size_t hsp, const void* p,
              cl_uint nw, const cl_event* w, cl_event* e),
             (q, b, blocking, bo, ho, reg, brp, bsp, hrp, hsp, p, nw, w, e), blocking != CL_FALSE,
             region_bytes(reg))
WRAP_COMMAND(clEnqueueReadBuffer,
             (cl_command_queue q, cl_mem b, cl_bool blocking, size_t off, size_t size, void* p,
              cl_uint nw, const cl_event* w, cl_event* e),
             (q, b, blocking, off, size, p, nw, w, e), blocking != CL_FALSE, (int64_t)size)
WRAP_COMMAND(clEnqueueReadBufferRect,
             (cl_command_queue q, cl_mem b, cl_bool blocking, const size_t* bo, const size_t* ho,
              const size_t* reg, size_t brp, size_t bsp, size_t hrp, size_t hsp, void* p,
              cl_uint nw, const cl_event* w, cl_event* e),
             (q, b, blocking, bo, ho, reg, brp, bsp, hrp, hsp, p, nw, w, e), blocking != CL_FALSE,
             region_bytes(reg))
WRAP_COMMAND(clEnqueueNDRangeKernel,
             (cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* off, const size_t* global,
              const size_t* local, cl_uint nw, const cl_event* w, cl_event* e),
             (q, k, dim, off, global, local, nw, w, e), -1, -1)
WRAP(void*, clEnqueueMapBuffer,
     (cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags f, size_t off, size_t size,
      cl_uint nw, const cl_event* w, cl_event* e, cl_int* err),
     (q, b, blocking, f, off, size, nw, w, e, err))
WRAP(cl_int, clEnqueueUnmapMemObject,
     (cl_command_queue q, cl_mem b, void* p, cl_uint nw, const cl_event* w, cl_event* e),
     (q, b, p, nw, w, e))
WRAP_WAIT(clFlush, (cl_command_queue q), (q))
WRAP_WAIT(clFinish, (cl_command_queue q), (q))
WRAP_WAIT(clWaitForEvents, (cl_uint n, const cl_event* e), (n, e))
WRAP(cl_kernel, clCreateKernel, (cl_program p, const char* name, cl_int* err), (p, name, err))
WRAP(cl_int, clReleaseKernel, (cl_kernel k), (k))
WRAP(cl_int, clSetKernelArg, (cl_kernel k, cl_uint i, size_t size, const void* v), (k, i, size, v))
WRAP(cl_mem, clCreateBuffer, (cl_context c, cl_mem_flags f, size_t size, void* p, cl_int* err),
     (c, f, size, p, err))
WRAP(cl_int, clReleaseMemObject, (cl_mem b), (b))
/* CL_TRACE_PROFILE set: every queue the program makes with clCreateCommandQueue (tandem's, built
 * for OpenCL 1.2; clCreateCommandQueueWithProperties is not wrapped) profiles its commands, so
 * that the timeline has device times for queues made without (tandem's plain queues: a batch's
 * stages). */
static cl_command_queue_properties profiled(cl_command_queue_properties p) {
  return getenv("CL_TRACE_PROFILE") != NULL ? p | CL_QUEUE_PROFILING_ENABLE : p;
}
WRAP(cl_command_queue, clCreateCommandQueue,
     (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int* err),
     (c, d, profiled(p), err))
WRAP(cl_int, clReleaseCommandQueue, (cl_command_queue q), (q))
WRAP(cl_int, clRetainCommandQueue, (cl_command_queue q), (q))
WRAP(cl_int, clGetEventProfilingInfo,
     (cl_event e, cl_profiling_info i, size_t size, void* v, size_t* ret), (e, i, size, v, ret))
WRAP(cl_int, clGetEventInfo, (cl_event e, cl_event_info i, size_t size, void* v, size_t* ret),
     (e, i, size, v, ret))
WRAP(cl_int, clRetainEvent, (cl_event e), (e))
WRAP(cl_int, clReleaseEvent, (cl_event e), (e))
WRAP(cl_int, clGetKernelWorkGroupInfo,
     (cl_kernel k, cl_device_id d, cl_kernel_work_group_info i, size_t size, void* v, size_t* ret),
     (k, d, i, size, v, ret))
WRAP(cl_int, clGetDeviceInfo, (cl_device_id d, cl_device_info i, size_t size, void* v, size_t* ret),
     (d, i, size, v, ret))
WRAP(cl_int, clRetainContext, (cl_context c), (c))
WRAP(cl_int, clReleaseContext, (cl_context c), (c))

/* Zeroes every counter. */
void cl_trace_reset(void) {
  for (int i = 0; i < id_count; ++i) {
    __atomic_store_n(&total_ns[i], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&calls[i], 0, __ATOMIC_RELAXED);
  }
}

/* The counters as one JSON object, {"clFinish": [calls, seconds], ...}, functions never called
 * left out, divided by `per` (the GEMM calls they served). */
void cl_trace_dump(FILE* out, double per) {
  fputc('{', out);
  int first = 1;
  for (int i = 0; i < id_count; ++i) {
    const uint64_t c = __atomic_load_n(&calls[i], __ATOMIC_RELAXED);
    if (c == 0) continue;
    fprintf(out, "%s\"%s\": [%.3f, %.9f]", first ? "" : ", ", names[i], (double)c / per,
            (double)__atomic_load_n(&total_ns[i], __ATOMIC_RELAXED) * 1e-9 / per);
    first = 0;
  }
  fputc('}', out);
}

static void put_us(FILE* out, const char* key, int known, double us) {
  if (known)
    fprintf(out, ", \"%s\": %.3f", key, us);
  else
    fprintf(out, ", \"%s\": null", key);
}

/* The timeline (CL_TRACE_TIMELINE), oldest entry first, one JSON object per line; then the ring is
 * empty and its events released. Nothing when the timeline is off or nothing was traced. */
void cl_trace_timeline(FILE* out) {
  /* Not timeline(): a process that made no traced call (PoCL's linker, under the same preload) may
   * have no OpenCL to find. */
  const int cap = __atomic_load_n(&timeline_cap, __ATOMIC_ACQUIRE);
  if (cap <= 0) return;
  struct record* const rs = malloc((size_t)cap * sizeof *rs);
  if (rs == NULL) return;
  pthread_mutex_lock(&ring_lock);
  const int n = ring_size;
  for (int i = 0; i < n; ++i) rs[i] = ring[(ring_next + cap - n + i) % cap];
  ring_size = ring_next = 0;
  pthread_mutex_unlock(&ring_lock);
  /* Records went in as their calls returned; threads may return out of entry order. */
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && rs[j - 1].enter_ns > rs[j].enter_ns; --j) {
      const struct record t = rs[j];
      rs[j] = rs[j - 1];
      rs[j - 1] = t;
    }
  static const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED,
                                            CL_PROFILING_COMMAND_SUBMIT, CL_PROFILING_COMMAND_START,
                                            CL_PROFILING_COMMAND_END};
  int base = -1; /* the record whose QUEUED is the device's zero */
  for (int i = 0; i < n; ++i) {
    if (rs[i].event == NULL) continue;
    real_wait(1, &rs[i].event); /* a command's times are given once it ends */
    for (int k = 0; k < 4; ++k)
      if (real_profiling(rs[i].event, what[k], sizeof(cl_ulong), &rs[i].device[k], NULL) ==
          CL_SUCCESS)
        rs[i].known |= 1 << k;
    if (base < 0 && (rs[i].known & 1)) base = i;
  }
  /* CLOCK_REALTIME less CLOCK_MONOTONIC now, for drivers whose QUEUED is wall-clock time (NVIDIA's
   * 580 is, as the H100 showed: its QUEUED less the monotonic entry was 1.8e18 ns). */
  struct timespec mono, wall;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &wall);
  const int64_t wall_minus_mono = ((int64_t)wall.tv_sec - (int64_t)mono.tv_sec) * 1000000000 +
                                  ((int64_t)wall.tv_nsec - (int64_t)mono.tv_nsec);
  const uint64_t host0 = n > 0 ? rs[0].enter_ns : 0;
  for (int i = 0; i < n; ++i) {
    const struct record* const r = &rs[i];
    fprintf(out,
            "{\"timeline\": \"%s\", \"host_enter_us\": %.3f, \"host_return_us\": %.3f, "
            "\"host_enter_monotonic_ns\": %llu",
            names[r->id], (double)(r->enter_ns - host0) * 1e-3,
            (double)(r->return_ns - host0) * 1e-3, (unsigned long long)r->enter_ns);
    if (r->blocking >= 0)
      fprintf(out, ", \"blocking\": %d, \"bytes\": %lld", r->blocking, (long long)r->bytes);
    else
      fputs(", \"blocking\": null, \"bytes\": null", out);
    static const char* const keys[4] = {"queued_us", "submit_us", "start_us", "end_us"};
    for (int k = 0; k < 4; ++k)
      put_us(out, keys[k], base >= 0 && (r->known >> k & 1),
             (double)((int64_t)(r->device[k] - rs[base < 0 ? 0 : base].device[0])) * 1e-3);
    if (i == base) {
      const int64_t d = (int64_t)(r->device[0] - r->enter_ns);
      fprintf(out, ", \"queued_minus_host_ns\": %lld, \"queued_minus_host_realtime_ns\": %lld",
              (long long)d, (long long)(d - wall_minus_mono));
    }
    fputs("}\n", out);
  }
  for (int i = 0; i < n; ++i)
    if (rs[i].event != NULL) real_release(rs[i].event);
  free(rs);
}

__attribute__((destructor)) static void at_exit(void) {
  if (getenv("CL_TRACE_AT_EXIT") != NULL) {
    cl_trace_dump(stderr, 1.0);
    fputc('\n', stderr);
  }
  cl_trace_timeline(stderr);
}
