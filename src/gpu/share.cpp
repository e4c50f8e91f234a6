// enqueue(): starts a share of the kind its device needs, and wraps it so that every OpenCL
// failure from then on reaches the executor as Failure, saying whether C may have been written.
#include "gpu/share.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "base/clock.hpp"
#include "base/precision.hpp"
#include "base/seams.hpp"
#include "gpu/errors.hpp"
#include "gpu/share_cl.hpp"

namespace tandem::detail::gpu {
namespace {

// The Failure a share's failure becomes: what it finished, once it has put back the old values
// of what it did not (salvage).
Failure salvaged(ShareImpl& impl, const Error& e) {
  ShareImpl::Salvaged s = impl.salvage();
  return Failure(e, !s.stopped, std::move(s.finished), s.overwrote);
}

// Runs `f`, turning OpenCL failures into Failure.
template <class F>
auto guarded(ShareImpl& impl, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const cl::Error& e) {
    throw salvaged(impl, translate(e));
  } catch (const Failure&) {
    throw;
  } catch (const Error& e) {
    throw salvaged(impl, e);
  }
}

class Guarded final : public InFlight {
 public:
  explicit Guarded(std::unique_ptr<ShareImpl> impl) : impl_(std::move(impl)) {
    a_path = impl_->a_path;
    b_path = impl_->b_path;
    c_path = impl_->c_path;
  }
  void flush() override {
    guarded(*impl_, [&] { impl_->flush(); });
    flushed_at_ns = clock::now_ns();
  }
  bool submitted() override {
    return guarded(*impl_, [&] { return impl_->submitted(); });
  }
  void feed(int host_threads) override {
    counted([&] { impl_->feed(host_threads); });
  }
  bool start_step() override {
    bool more = false;
    counted([&] { more = impl_->start_step(); });
    return more;
  }
  bool feeds() const override { return impl_->feeds(); }
  void wait() override {
    counted([&] { impl_->wait(); });
  }

 private:
  // Runs f guarded, then takes the share's counters, after a failure too: what was copied and
  // packed before it happened.
  template <class F>
  void counted(F&& f) {
    try {
      guarded(*impl_, f);
    } catch (...) {
      take_counters();
      throw;
    }
    take_counters();
  }

  void take_counters() {
    kernel_seconds = impl_->kernel_seconds;
    launches = impl_->launches;
    bytes_in = impl_->bytes_in;
    bytes_out = impl_->bytes_out;
    bytes_packed = impl_->bytes_packed;
  }

  std::unique_ptr<ShareImpl> impl_;
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
std::unique_ptr<InFlight> enqueue(Device& device, const SharedParams& params, const Share<T>& share,
                                  CallB b) {
  std::unique_ptr<ShareImpl> impl = is_discrete(device) ? make_discrete_share(device, share, b)
                                                        : make_unified_share(device, share);
  try {
    impl->start(params);
  } catch (const cl::Error& e) {
    throw salvaged(*impl, translate(e, buffer_sizes(e.err(), device, share)));
  } catch (const Error& e) {
    throw salvaged(*impl, e);
  }
  return std::make_unique<Guarded>(std::move(impl));
}

template <class T>
std::shared_ptr<KeptOperand> keep(Device& device, const SharedParams& params, const Share<T>& share,
                                  bool a) {
  if (!is_discrete(device)) return nullptr;
  try {
    return keep_discrete(device, params, share, a);
  } catch (const cl::Error& e) {
    throw translate(e, buffer_sizes(e.err(), device, share));
  }
}

KeptOperand::~KeptOperand() {
  if (counted_on_) counted_on_->resident_bytes().fetch_sub(counted_);
}

void KeptOperand::count_as_resident(Device& device) {
  counted_on_ = &device;
  counted_ = device_bytes();
  device.resident_bytes().fetch_add(counted_);
}

void KeptOn::add(Device& device, std::shared_ptr<KeptOperand> copy) {
  if (copy) copies_.emplace_back(&device, std::move(copy));
}

std::vector<std::shared_ptr<KeptOperand>> KeptOn::on(const Device& device) const {
  std::vector<std::shared_ptr<KeptOperand>> found;
  for (const auto& [dev, copy] : copies_)
    if (dev == &device) found.push_back(copy);
  return found;
}

int64_t KeptOn::bytes() const {
  int64_t sum = 0;
  for (const auto& each : copies_) sum += each.second->device_bytes();
  return sum;
}

template <class T>
bool has_copy(const KeptOn& kept, Device& device, const SharedParams& params, const Share<T>& share,
              bool a) {
  return is_discrete(device) && has_discrete_copy(kept, device, params, share, a);
}

std::vector<RowRange> unfinished(int64_t m, const std::vector<RowRange>& finished) {
  std::vector<RowRange> done = finished, left;
  std::sort(done.begin(), done.end(),
            [](const RowRange& a, const RowRange& b) { return a.row0 < b.row0; });
  int64_t at = 0;
  for (const RowRange& d : done) {
    if (d.row0 > at) left.push_back({at, d.row0 - at});
    at = std::max(at, d.row0 + d.rows);
  }
  if (at < m) left.push_back({at, m - at});
  return left;
}

bool injected_at(const DeviceInfo& info, int64_t row0) {
  return seams::fail_device() == info.index && seams::fail_b_piece() < 0 &&
         row0 >= seams::fail_after_rows();
}

template <class T>
void injected_failure(const DeviceInfo& info, const Share<T>& s, int64_t row0, int64_t rows,
                      bool in_place) {
  if (!injected_at(info, row0)) return;
  if (in_place)
    for (int64_t r = row0; r < row0 + rows; ++r)
      std::fill(s.c + r * s.ldc, s.c + r * s.ldc + s.n, quiet_nan<T>());
  throw Error(Error::Kind::Runtime,
              "the test seam fail_device failed this share at row " + std::to_string(row0));
}

void injected_b_failure(const DeviceInfo& info, size_t piece) {
  if (seams::fail_device() != info.index || seams::fail_b_piece() < 0 ||
      piece != static_cast<size_t>(seams::fail_b_piece()))
    return;
  throw Error(Error::Kind::Runtime,
              "the test seam fail_b_piece failed this share at B's piece " + std::to_string(piece));
}

#define INSTANTIATE(T)                                                                           \
  template void injected_failure<T>(const DeviceInfo&, const Share<T>&, int64_t, int64_t, bool); \
  template std::unique_ptr<InFlight> enqueue<T>(Device&, const SharedParams&, const Share<T>&,   \
                                                CallB);                                          \
  template std::shared_ptr<KeptOperand> keep<T>(Device&, const SharedParams&, const Share<T>&,   \
                                                bool);                                           \
  template bool has_copy<T>(const KeptOn&, Device&, const SharedParams&, const Share<T>&, bool);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::gpu
