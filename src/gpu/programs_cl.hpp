// The compiled GEMM programs of one device, as the OpenCL files use them: a cache of builds keyed
// by the source's #defines and the build options, and the program for one share.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cl.hpp"
#include "gemm_params.hpp"
#include "programs.hpp"

namespace tandem::detail::gpu {

class ProgramCache {
 public:
  ProgramCache(cl::Context context, cl::Device device);

  // The compiled program for `defines` prepended to `source` (a kernel file; `defines` names
  // which, through KERNEL), built once; a failed build is remembered too. Builds of different
  // programs run concurrently (the tuner compiles candidates ahead of measuring them). Throws
  // Error (OpenCL, with the compiler's log).
  const cl::Program& get(const char* source, const std::string& defines,
                         const std::string& options);

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
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_;
};

// The program a share runs: precision, the layouts the kernel reads A and B in, the index width
// and the parameters, built once per device. Holds the `gemm` kernel, and kernels/gemm.cl's hold
// `transpose` too (the direct kernel's never needs it: it reads operands as stored).
const cl::Program& gemm_program(Device& device, bool fp64, bool read_a_transposed,
                                bool read_b_transposed, bool long_index, const Params& params);

}  // namespace tandem::detail::gpu
