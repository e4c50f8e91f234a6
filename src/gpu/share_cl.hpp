// What share.cpp needs of the two kinds of share, and the kernel-argument helpers both use.
#pragma once

#include <memory>

#include "cl.hpp"
#include "device_cl.hpp"
#include "share.hpp"

namespace tandem::detail::gpu {

// A share's implementation, before share.cpp wraps it to turn OpenCL failures into Failure.
class ShareImpl : public InFlight {
 public:
  // Enqueues everything the share can before feed(). Throws cl::Error or Error.
  virtual void start(const Params& params) = 0;
  // After a failure: lets the device finish with the caller's and the pool's memory. False if
  // even that failed (then nothing the share used may be reused).
  virtual bool drain() noexcept = 0;
  // Whether the caller's C may have been written (in place by the kernel, or by unpacking).
  virtual bool c_written() const = 0;
};

// The share on a device that shares memory with the host (unified_share.cpp).
template <class T>
std::unique_ptr<ShareImpl> make_unified_share(Device& device, const Share<T>& share);
// The share on a discrete device (discrete_share.cpp); `kept` as for enqueue().
template <class T>
std::unique_ptr<ShareImpl> make_discrete_share(Device& device, const Share<T>& share,
                                               std::shared_ptr<KeptB>* kept);

// Sets argument `arg` (then the next) to an index, 32- or 64-bit as the program was built.
inline void set_index(cl::Kernel& kernel, int& arg, bool long_index, int64_t v) {
  if (long_index)
    kernel.setArg(arg++, static_cast<cl_long>(v));
  else
    kernel.setArg(arg++, static_cast<cl_int>(v));
}

// One operand as the kernel sees it: buffer, element offset and leading dimension.
struct KernelOperand {
  const cl::Buffer* buffer;
  int64_t offset, ld;
};

// Sets the gemm kernel's arguments, indices 32- or 64-bit as the program was built.
template <class T>
void set_gemm_args(cl::Kernel& kernel, bool long_index, int64_t m, int64_t n, int64_t k, T alpha,
                   const KernelOperand& a, const KernelOperand& b, T beta, const KernelOperand& c) {
  int arg = 0;
  auto index = [&](int64_t v) { set_index(kernel, arg, long_index, v); };
  index(m);
  index(n);
  index(k);
  kernel.setArg(arg++, alpha);
  for (const KernelOperand* op : {&a, &b, &c}) {
    if (op == &c) kernel.setArg(arg++, beta);
    kernel.setArg(arg++, *op->buffer);
    index(op->offset);
    index(op->ld);
  }
}

// The gemm kernel's launch: one work-group of MDIMC x NDIMC work-items per MWG x NWG tile of C.
struct Launch {
  cl::NDRange global, local;
};
inline Launch launch_for(int64_t m, int64_t n, const Params& params) {
  const auto groups = [](int64_t extent, int64_t tile) { return (extent + tile - 1) / tile; };
  const int64_t mdimc = params.at("MDIMC"), ndimc = params.at("NDIMC");
  return {cl::NDRange(static_cast<size_t>(groups(n, params.at("NWG")) * ndimc),
                      static_cast<size_t>(groups(m, params.at("MWG")) * mdimc)),
          cl::NDRange(static_cast<size_t>(ndimc), static_cast<size_t>(mdimc))};
}

}  // namespace tandem::detail::gpu
