// The compiled GEMM programs of one device, as the OpenCL files use them: a cache of builds keyed
// by what their #defines and build options follow from, and the program for one share.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/memo.hpp"
#include "base/precision.hpp"
#include "gpu/cl.hpp"
#include "gpu/gemm_params.hpp"
#include "gpu/programs.hpp"

namespace tandem::detail::gpu {

// What a GEMM program is built from: its #defines and build options follow from these. It refers
// to the caller's parameters, which the cache copies only for a program it has not seen.
struct ProgramKey {
  Precision precision = Precision::s;
  bool trans_a = false, trans_b = false, long_index = false;
  bool failing = false;  // the seam fail_builds
  const Params& params;
  // A complex kernel's conjugations of op(A) and op(B) (kernels/element.cl's CONJ_A, CONJ_B).
  bool conj_a = false, conj_b = false;
  bool emulate = false;  // the seam emulate_engine (kernels/gemm_engine.cl's ENGINE_EMULATE)
  int flags() const {
    return index_of(precision) | (trans_a ? 4 : 0) | (trans_b ? 8 : 0) | (long_index ? 16 : 0) |
           (failing ? 32 : 0) | (conj_a ? 64 : 0) | (conj_b ? 128 : 0) | (emulate ? 256 : 0);
  }
};

class ProgramCache {
 public:
  ProgramCache(cl::Context context, cl::Device device);

  // The GEMM program for `key` on the device `info` describes: its #defines prepended to its
  // kernel file, built once; a failed build is remembered too. Builds of different programs run
  // concurrently (the tuner compiles candidates ahead of measuring them). A program built before
  // is found by its key, without its #defines written out again (a small call's host time, issue
  // 17). Throws Error (OpenCL, with the compiler's log).
  const cl::Program& get(const ProgramKey& key, const DeviceInfo& info);
  // The same for `shared`, a set that never changes (key.params is *shared), found again by its
  // address: hashing and comparing the set cost a small call about 4k instructions (issue 17).
  const cl::Program& get(const ProgramKey& key, const SharedParams& shared, const DeviceInfo& info);

  // A kernel of a program this cache built, made once and reused: a share takes it for the
  // time it sets its arguments and enqueues it, and gives it back once its queues drained, every
  // argument then set again by the next share that takes it. Its arguments are only ever the
  // device's own buffers (a discrete share's staging), never one wrapping the caller's memory.
  // Making one (clCreateKernel) took about 4 us on the H100 host, and a small call made two.
  cl::Kernel take_kernel(const cl::Program& program, const char* name);
  void give_kernel(const cl::Program& program, const char* name, cl::Kernel kernel);

  // A fresh, uncached build: the source, the options, the compiler's log and the device binary.
  // Throws cl::Error only if no program can be made; a failed build is reported in the log.
  BuildReport inspect(const char* source, const std::string& defines, const std::string& options);

 private:
  struct Entry {
    std::once_flag built;
    cl::Program program;
    std::string error;  // non-empty: the build failed, and this says why
  };
  void build(const char* source, const std::string& defines, const std::string& options,
             Entry& result);

  cl::Context context_;
  cl::Device device_;
  std::mutex mutex_;
  // Every program asked for, built or being built or failed, by its key's hash.
  struct Known {
    int flags;
    Params params;
    std::shared_ptr<Entry> entry;
  };
  std::unordered_multimap<uint64_t, Known> entries_;
  // Programs built for shared sets, by the set's address and the key's flags (memo.hpp).
  Memo<std::pair<SharedParams, int>, std::shared_ptr<Entry>> by_address_;
  std::shared_ptr<Entry> built(const ProgramKey& key, const DeviceInfo& info);
  // Kernels given back, by program and kernel name.
  std::map<std::pair<cl_program, std::string>, std::vector<cl::Kernel>> idle_kernels_;
};

// The program a share runs: precision, the layouts the kernel reads A and B in, the index width
// and the parameters, built once per device. Holds the `gemm` kernel, and kernels/gemm.cl's hold
// `transpose` too (the direct kernel's never needs it: it reads operands as stored).
// A complex program conjugates op(A) where conj.a and op(B) where conj.b says (a real one never).
struct Conjugate {
  bool a = false, b = false;
};
const cl::Program& gemm_program(Device& device, Precision precision, bool read_a_transposed,
                                bool read_b_transposed, bool long_index, const Params& params,
                                Conjugate conj = {});
const cl::Program& gemm_program(Device& device, Precision precision, bool read_a_transposed,
                                bool read_b_transposed, bool long_index, const SharedParams& params,
                                Conjugate conj);

}  // namespace tandem::detail::gpu
