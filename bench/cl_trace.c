/* Times every OpenCL call a program makes, for finding where a small GEMM's host time goes
 * (issue 17: tandem's whole small call against CLBlast's). Bench only, never linked into tandem:
 *
 *   LD_PRELOAD=build/bench/libcl_trace.so build/bench/call_phases ...
 *
 * Each wrapped function forwards to the next definition (the ICD loader's) and adds its wall time
 * and one call to its counter; counters are atomic, so any thread may call. A program that knows
 * about it finds cl_trace_reset() and cl_trace_dump() with dlsym (call_phases does); at exit the
 * totals go to stderr when CL_TRACE_AT_EXIT is set. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
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

static void add(int id, uint64_t t0) {
  __atomic_fetch_add(&total_ns[id], now_ns() - t0, __ATOMIC_RELAXED);
  __atomic_fetch_add(&calls[id], 1, __ATOMIC_RELAXED);
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

WRAP(cl_int, clEnqueueWriteBuffer,
     (cl_command_queue q, cl_mem b, cl_bool blocking, size_t off, size_t size, const void* p,
      cl_uint nw, const cl_event* w, cl_event* e),
     (q, b, blocking, off, size, p, nw, w, e))
WRAP(cl_int, clEnqueueWriteBufferRect,
     (cl_command_queue q, cl_mem b, cl_bool blocking, const size_t* bo, const size_t* ho,
      const size_t* reg, size_t brp, size_t bsp, size_t hrp, size_t hsp, const void* p, cl_uint nw,
      const cl_event* w, cl_event* e),
     (q, b, blocking, bo, ho, reg, brp, bsp, hrp, hsp, p, nw, w, e))
WRAP(cl_int, clEnqueueReadBuffer,
     (cl_command_queue q, cl_mem b, cl_bool blocking, size_t off, size_t size, void* p, cl_uint nw,
      const cl_event* w, cl_event* e),
     (q, b, blocking, off, size, p, nw, w, e))
WRAP(cl_int, clEnqueueReadBufferRect,
     (cl_command_queue q, cl_mem b, cl_bool blocking, const size_t* bo, const size_t* ho,
      const size_t* reg, size_t brp, size_t bsp, size_t hrp, size_t hsp, void* p, cl_uint nw,
      const cl_event* w, cl_event* e),
     (q, b, blocking, bo, ho, reg, brp, bsp, hrp, hsp, p, nw, w, e))
WRAP(cl_int, clEnqueueNDRangeKernel,
     (cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* off, const size_t* global,
      const size_t* local, cl_uint nw, const cl_event* w, cl_event* e),
     (q, k, dim, off, global, local, nw, w, e))
WRAP(void*, clEnqueueMapBuffer,
     (cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags f, size_t off, size_t size,
      cl_uint nw, const cl_event* w, cl_event* e, cl_int* err),
     (q, b, blocking, f, off, size, nw, w, e, err))
WRAP(cl_int, clEnqueueUnmapMemObject,
     (cl_command_queue q, cl_mem b, void* p, cl_uint nw, const cl_event* w, cl_event* e),
     (q, b, p, nw, w, e))
WRAP(cl_int, clFlush, (cl_command_queue q), (q))
WRAP(cl_int, clFinish, (cl_command_queue q), (q))
WRAP(cl_int, clWaitForEvents, (cl_uint n, const cl_event* e), (n, e))
WRAP(cl_kernel, clCreateKernel, (cl_program p, const char* name, cl_int* err), (p, name, err))
WRAP(cl_int, clReleaseKernel, (cl_kernel k), (k))
WRAP(cl_int, clSetKernelArg, (cl_kernel k, cl_uint i, size_t size, const void* v), (k, i, size, v))
WRAP(cl_mem, clCreateBuffer, (cl_context c, cl_mem_flags f, size_t size, void* p, cl_int* err),
     (c, f, size, p, err))
WRAP(cl_int, clReleaseMemObject, (cl_mem b), (b))
WRAP(cl_command_queue, clCreateCommandQueue,
     (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int* err), (c, d, p, err))
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

__attribute__((destructor)) static void at_exit(void) {
  if (getenv("CL_TRACE_AT_EXIT") == NULL) return;
  cl_trace_dump(stderr, 1.0);
  fputc('\n', stderr);
}
