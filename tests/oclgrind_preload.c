// Preloaded (LD_PRELOAD) into tests/oclgrind_test under Oclgrind's uninitialised-value check
// (tests/oclgrind.sh), to give that check the facts that Debian 12's Oclgrind 21.10 loses. Its
// Uninitialized plugin keeps a shadow per buffer, and two of its gaps made it report values that
// are defined (each shown with a 30-line OpenCL program on 2026-11-23; the upstream source at
// src/plugins/Uninitialized.cpp is unchanged in 2026):
//  - A CL_MEM_USE_HOST_PTR buffer gets no shadow when it is created (the plugin's
//    memoryAllocated is commented out), so its first kernel takes the caller's data for
//    uninitialised. tandem's zero-copy operands are such buffers. Here each one is mapped for
//    writing once, which changes no value and tells the plugin the bytes are set.
//  - A released buffer's shadow is never freed, and Oclgrind gives its number to the next
//    buffer: a kernel that reads a new buffer then sees the old one's shadow, of the old size.
//    Here no buffer is released before the process ends, so numbers are not reused. The test's
//    sizes are small and the staging pool reuses its buffers, so this keeps a few MiB.
// A third gap is not mended here: each host write makes the buffer's shadow that write's size,
// from its start. A buffer written in pieces (a discrete share's chunks) has a shadow of garbage,
// and a staging buffer reused for a larger operand keeps a shadow too small for what a kernel
// writes there (the device's transpose). So the uninitialised-value run sends each discrete
// share in one chunk (oclgrind_test.cpp), and runs each kernel variant in a process of its own,
// with a fresh staging pool (oclgrind.sh). A rectangle write (clEnqueueWriteBufferRect) sets no
// shadow at all, so the share's rows on the device are tight there too (seams::pad_rows), and
// every write is a plain one.
#define CL_TARGET_OPENCL_VERSION 120
#define _GNU_SOURCE
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void*, cl_int*);

static void* next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == NULL) {
    fprintf(stderr, "oclgrind_preload: %s not found\n", name);
    abort();
  }
  return f;
}

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host,
                      cl_int* error) {
  static CreateBuffer create = NULL;
  if (create == NULL) create = (CreateBuffer)next("clCreateBuffer");
  cl_mem buffer = create(context, flags, size, host, error);
  if (buffer == NULL || !(flags & CL_MEM_USE_HOST_PTR)) return buffer;
  // Mapped for writing (not reading) and unmapped: the plugin marks a region so mapped as set
  // (Uninitialized::memoryMap), and Oclgrind moves no data, its buffer being the host memory.
  cl_device_id device;
  cl_int status = clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, NULL);
  cl_command_queue queue = status == CL_SUCCESS ? clCreateCommandQueue(context, device, 0, &status)
                                                : NULL;
  if (queue != NULL) {
    void* mapped =
        clEnqueueMapBuffer(queue, buffer, CL_TRUE, CL_MAP_WRITE, 0, size, 0, NULL, NULL, &status);
    if (mapped != NULL) status = clEnqueueUnmapMemObject(queue, buffer, mapped, 0, NULL, NULL);
    if (status == CL_SUCCESS) status = clFinish(queue);
    clReleaseCommandQueue(queue);
  }
  if (status != CL_SUCCESS) {
    fprintf(stderr, "oclgrind_preload: mapping a USE_HOST_PTR buffer for writing failed (%d)\n",
            status);
    abort();
  }
  return buffer;
}

// The last reference is kept: the buffer lives until the process ends. (References Oclgrind
// takes itself are released inside it, unseen here; tandem waits for its queues first.)
cl_int clReleaseMemObject(cl_mem buffer) {
  static cl_int (*release)(cl_mem) = NULL;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (release == NULL) release = (cl_int(*)(cl_mem))next("clReleaseMemObject");
  cl_uint references = 0;
  cl_int status = CL_SUCCESS;
  if (clGetMemObjectInfo(buffer, CL_MEM_REFERENCE_COUNT, sizeof references, &references, NULL) !=
          CL_SUCCESS ||
      references > 1)
    status = release(buffer);
  pthread_mutex_unlock(&lock);
  return status;
}
