// enqueue(): starts a share of the kind its device needs, and wraps it so that every OpenCL
// failure from then on reaches the executor as Failure, saying whether C may have been written.
#include "share.hpp"

#include <string>

#include "clock.hpp"
#include "errors.hpp"
#include "seams.hpp"
#include "share_cl.hpp"

namespace tandem::detail::gpu {
namespace {

// Runs `f`, turning OpenCL failures into Failure. `touched` says whether C may have been written
// by then.
template <class F>
auto guarded(F&& f, bool touched) -> decltype(f()) {
  try {
    return f();
  } catch (const cl::Error& e) {
    throw Failure(translate(e), touched);
  } catch (const Failure&) {
    throw;
  } catch (const Error& e) {
    throw Failure(e, touched);
  }
}

class Guarded final : public InFlight {
 public:
  Guarded(std::unique_ptr<ShareImpl> impl, int device_index)
      : impl_(std::move(impl)), device_index_(device_index) {
    a_path = impl_->a_path;
    b_path = impl_->b_path;
    c_path = impl_->c_path;
  }
  void flush() override {
    guarded([&] { impl_->flush(); }, touched());
    flushed_at_ns = clock::now_ns();
  }
  bool submitted() override {
    return guarded([&] { return impl_->submitted(); }, touched());
  }
  void feed(int host_threads) override {
    guarded([&] { impl_->feed(host_threads); }, touched());
  }
  bool feeds() const override { return impl_->feeds(); }
  void wait() override {
    if (seams::fail_device() == device_index_) {
      impl_->drain();
      throw Failure(Error(Error::Kind::Runtime, "the test seam fail_device failed this share"),
                    touched());
    }
    guarded([&] { impl_->wait(); }, touched());
    kernel_seconds = impl_->kernel_seconds;
    bytes_in = impl_->bytes_in;
    bytes_out = impl_->bytes_out;
  }

 private:
  bool touched() const { return impl_->c_written(); }
  std::unique_ptr<ShareImpl> impl_;
  int device_index_;
};

// What a failed buffer creation needs said beside OpenCL's status: how large this share's
// operands are against what the device allows.
template <class T>
std::string buffer_sizes(cl_int code, const Device& device, const Share<T>& share) {
  if (code != CL_INVALID_BUFFER_SIZE && code != CL_MEM_OBJECT_ALLOCATION_FAILURE) return "";
  return "the share's A, B and C span " + std::to_string(share.a_bytes()) + ", " +
         std::to_string(share.b_bytes()) + " and " + std::to_string(share.c_bytes()) +
         " bytes; the device allows " + std::to_string(info(device).max_alloc_bytes) +
         " bytes per buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE) and has " +
         std::to_string(info(device).global_mem_bytes) + " in all";
}

}  // namespace

template <class T>
std::unique_ptr<InFlight> enqueue(Device& device, const Params& params, const Share<T>& share,
                                  std::shared_ptr<KeptB>* kept) {
  std::unique_ptr<ShareImpl> impl = is_discrete(device) ? make_discrete_share(device, share, kept)
                                                        : make_unified_share(device, share);
  try {
    impl->start(params);
  } catch (const cl::Error& e) {
    impl->drain();
    throw Failure(translate(e, buffer_sizes(e.err(), device, share)), impl->c_written());
  } catch (const Error& e) {
    impl->drain();
    throw Failure(e, impl->c_written());
  }
  return std::make_unique<Guarded>(std::move(impl), info(device).index);
}

template std::unique_ptr<InFlight> enqueue<float>(Device&, const Params&, const Share<float>&,
                                                  std::shared_ptr<KeptB>*);
template std::unique_ptr<InFlight> enqueue<double>(Device&, const Params&, const Share<double>&,
                                                   std::shared_ptr<KeptB>*);

}  // namespace tandem::detail::gpu
