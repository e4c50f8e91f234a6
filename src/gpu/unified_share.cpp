// A share on a device that shares memory with the host (an APU, an integrated GPU, PoCL): each
// operand is used in place (zero-copy) where OpenCL allows it, else packed into a pinned buffer
// the kernel reads itself; C is mapped, or unpacked from its staging, after the wait.
#include <algorithm>
#include <utility>

#include "base/precision.hpp"
#include "cpu/topology.hpp"
#include "gpu/host_pack.hpp"
#include "gpu/share_cl.hpp"

namespace tandem::detail::gpu {
namespace {

// The bytes a stored block occupies, for overlap tests.
struct Range {
  uintptr_t begin = 0, end = 0;
  bool overlaps(const Range& o) const { return begin < o.end && o.begin < end; }
};

template <class T>
Range range_of(const T* p, int64_t rows, int64_t cols, int64_t ld) {
  const auto b = reinterpret_cast<uintptr_t>(p);
  return {b, b + static_cast<uintptr_t>(span(rows, cols, ld)) * sizeof(T)};
}

// One operand: the caller's memory in place (zero-copy), or a packed copy in a pinned host buffer
// (CL_MEM_ALLOC_HOST_PTR) that the kernel reads directly.
template <class T>
struct Operand {
  Report::Buffer path = Report::Buffer::None;
  cl::Buffer in_place;  // zero-copy
  cl::Buffer pinned;    // staged
  T* mapped = nullptr;  // staged: pinned's host pointer while mapped
  int64_t ld = 0;       // leading dimension the kernel sees
  const cl::Buffer& kernel_buffer() const {
    return path == Report::Buffer::ZeroCopy ? in_place : pinned;
  }
};

// One kernel launch's rows of a share, and its event.
struct RowLaunch {
  int64_t r0, r1;
  cl::Event done;
};

template <class T>
class UnifiedShare final : public ShareImpl {
 public:
  UnifiedShare(Device& dev, const Share<T>& s) : dev_(dev), s_(s) {}
  // Whatever happened, nothing may still read or write host memory once this object is gone,
  // and C's map from start() is undone if a failure kept wait() from undoing it: a mapped buffer
  // lives as long as its mapping, so each failed share kept C's buffer (and a staged C's pinned
  // memory) for the life of the process (LeakSanitizer found it, issue 16). Where the queue
  // cannot be drained, the device keeps the buffers and the queue (Device::keep).
  ~UnifiedShare() override {
    if (!drain()) {
      for (Operand<T>* op : {&a_, &b_, &c_})
        for (cl::Buffer* buffer : {&op->in_place, &op->pinned})
          if ((*buffer)() != nullptr) dev_.keep(std::move(*buffer));
      dev_.keep(std::move(queue_));
      return;
    }
    unmap_c();
    dev_.give_queue(std::move(queue_));
  }
  UnifiedShare(const UnifiedShare&) = delete;
  UnifiedShare& operator=(const UnifiedShare&) = delete;

  void start(const SharedParams& shared) override {
    const KernelFacts f = facts_of(shared);
    const DeviceInfo& di = dev_.info();
    queue_ = dev_.take_queue();
    zero_copy_align_ =
        static_cast<uintptr_t>(std::max({64, di.base_addr_align_bytes, di.quirks.zero_copy_align}));
    const bool ka = read_transposed(f.a_t, s_.trans_a);
    const bool kb = read_transposed(f.b_t, s_.trans_b);
    stage_operands(ka, kb);
    run_kernel(shared, f, ka, kb);
    // The last command makes C visible to the host: a read-only map of the caller's own memory
    // (nothing is written back at unmap), or a map of its staging.
    const size_t c_bytes = static_cast<size_t>(span(s_.m, s_.n, c_.ld)) * sizeof(T);
    const cl::Buffer& c_buffer = c_.path == Report::Buffer::ZeroCopy ? c_.in_place : c_.pinned;
    void* mapped =
        queue_.enqueueMapBuffer(c_buffer, CL_FALSE, CL_MAP_READ, 0, c_bytes, nullptr, &last_event_);
    if (c_.path == Report::Buffer::ZeroCopy)
      c_map_ = mapped;
    else
      c_.mapped = static_cast<T*>(mapped);
  }

  bool drain() noexcept override {
    return drained(dev_, [&] {
      if (queue_() != nullptr) queue_.finish();
    });
  }

  // A staged C reaches the caller's array only when the host unpacks it, so queues that cannot
  // be drained touch nothing of it; in place, rows the kernel may have written beyond those
  // confirmed get their old values where they matter (beta != 0), once nothing can write them
  // again.
  Salvaged salvage() noexcept override {
    Salvaged s;
    const bool in_place = c_.path == Report::Buffer::ZeroCopy;
    const bool drained = drain();
    s.stopped = drained || !in_place;
    if (drained && snapshot_ && in_place) snapshot_->restore_from(confirmed_);
    s.overwrote = in_place && !launches_.empty() && s_.beta == T(0) && confirmed_ < s_.m;
    if (confirmed_ > 0) s.finished.push_back({0, confirmed_});
    return s;
  }

  void flush() override { queue_.flush(); }
  bool submitted() override {
    return launches_.front().done.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() <= CL_SUBMITTED;
  }
  bool feeds() const override { return false; }
  void feed(int host_threads) override { host_threads_ = std::max(1, host_threads); }

  // Launch by launch: the rows of each that completed are C's final rows in place; staged, C's
  // rows reach the caller's array only when all are done.
  void wait() override {
    const bool in_place = c_.path == Report::Buffer::ZeroCopy;
    kernel_seconds = 0;
    for (const RowLaunch& l : launches_) {
      cl::WaitForEvents({l.done});
      injected_failure(dev_.info(), s_, l.r0, l.r1 - l.r0, in_place);
      if (s_.timed)
        kernel_seconds +=
            static_cast<double>(l.done.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                l.done.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
            1e-9;
      if (in_place) confirmed_ = l.r1;
    }
    launches = static_cast<int>(launches_.size());
    cl::WaitForEvents({last_event_});
    if (!in_place) {
      unpack(c_.mapped, s_.m, s_.n, s_.c, s_.ldc, host_threads_);
      confirmed_ = s_.m;
    }
    cl::Event unmapped = unmap_c_async();
    cl::WaitForEvents({unmapped});
  }

 private:
  // Enqueues the unmap of C's map from start(), once.
  cl::Event unmap_c_async() {
    cl::Event unmapped;
    if (c_map_ != nullptr)
      queue_.enqueueUnmapMemObject(c_.in_place, std::exchange(c_map_, nullptr), nullptr, &unmapped);
    else if (c_.mapped != nullptr)
      queue_.enqueueUnmapMemObject(c_.pinned, std::exchange(c_.mapped, nullptr), nullptr,
                                   &unmapped);
    return unmapped;
  }

  void unmap_c() noexcept {
    try {
      if (unmap_c_async()() != nullptr) queue_.finish();
    } catch (...) {
      // The device failed again; nothing more can be done for its buffers.
    }
  }

  // OpenCL leaves commands on USE_HOST_PTR buffers with overlapping host regions undefined
  // (A @ A, or blocks of one array), so an operand overlapping one already in place is copied.
  // C is in place only when its rows leave no gaps (ldc == n): a runtime that shadows host
  // memory copies the whole span back, gaps included, which may belong to another thread.
  void stage_operands(bool ka, bool kb) {
    const Share<T>& s = s_;
    const Range rc = range_of(s.c, s.m, s.n, s.ldc);
    const Range ra = range_of(s.a, s.a_rows(), s.a_cols(), s.lda);
    const Range rb = range_of(s.b, s.b_rows(), s.b_cols(), s.ldb);
    const bool c_in_place = in_place_ok(s.c) && (s.ldc == s.n || s.m == 1);
    const bool a_in_place = ka == s.trans_a && in_place_ok(s.a) && !(c_in_place && ra.overlaps(rc));
    const bool b_in_place = kb == s.trans_b && in_place_ok(s.b) &&
                            !(c_in_place && rb.overlaps(rc)) && !(a_in_place && rb.overlaps(ra));
    input(a_, s.a, s.a_rows(), s.a_cols(), s.lda, ka != s.trans_a, a_in_place);
    input(b_, s.b, s.b_rows(), s.b_cols(), s.ldb, kb != s.trans_b, b_in_place);
    output(s.beta != T(0), c_in_place);
    a_path = a_.path;
    b_path = b_.path;
    c_path = c_.path;
  }

  void run_kernel(const SharedParams& shared, const KernelFacts& f, bool ka, bool kb) {
    const Share<T>& s = s_;
    const int64_t ka_rows = ka ? s.k : s.m, ka_cols = ka ? s.m : s.k;
    const int64_t kb_rows = kb ? s.n : s.k, kb_cols = kb ? s.k : s.n;
    const int64_t widest = std::max(
        {span(ka_rows, ka_cols, a_.ld), span(kb_rows, kb_cols, b_.ld), span(s.m, s.n, c_.ld)});
    const int64_t tiles = f.mwg + f.nwg + f.kwg;
    const bool long_index =
        f.index_long != 0 ||
        widest + tiles * std::max({a_.ld, b_.ld, c_.ld, int64_t{1}}) >= (int64_t{1} << 31) - 1;
    cl::Kernel kernel(
        gemm_program(dev_, precision_of<T>(), ka, kb, long_index, shared, {s.conj_a, s.conj_b}),
        "gemm");
    // C's old values, where the kernel writes them in place and they matter, before it does.
    snapshot_ =
        std::make_unique<Snapshot<T>>(s_, c_.path == Report::Buffer::ZeroCopy && s.beta != T(0));
    snapshot_->take(0, s.m, host_threads_);
    // Launches of at most LAUNCH_ROWS rows each (the plan's bound on a launch's duration).
    const int64_t step = launch_step(f, s.m);
    for (int64_t r0 = 0; r0 < s.m; r0 += step) {
      const int64_t rows = std::min(step, s.m - r0);
      set_gemm_args(kernel, long_index, rows, s.n, s.k, s.alpha,
                    {&a_.kernel_buffer(), ka ? r0 : r0 * a_.ld, a_.ld},
                    {&b_.kernel_buffer(), 0, b_.ld}, s.beta,
                    {&c_.kernel_buffer(), r0 * c_.ld, c_.ld});
      const Launch launch = launch_for(rows, s.n, f);
      launches_.push_back({r0, r0 + rows, {}});
      queue_.enqueueNDRangeKernel(kernel, cl::NullRange, launch.global, launch.local, nullptr,
                                  &launches_.back().done);
    }
  }

  bool in_place_ok(const void* p) const {
    return reinterpret_cast<uintptr_t>(p) % zero_copy_align_ == 0;
  }

  // A pinned buffer of `bytes` the kernel reads itself, mapped for the host to fill.
  void stage(Operand<T>& op, size_t bytes, bool write_only) {
    op.pinned = cl::Buffer(dev_.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
    op.mapped = static_cast<T*>(queue_.enqueueMapBuffer(
        op.pinned, CL_TRUE, write_only ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_WRITE, 0, bytes));
  }

  // One stored rows x cols operand, in place or staged; `transpose` packs it as cols x rows for
  // a kernel that reads the other layout (only a copy can change the layout).
  void input(Operand<T>& op, const T* host, int64_t rows, int64_t cols, int64_t ld, bool transpose,
             bool in_place) {
    if (in_place) {
      op.path = Report::Buffer::ZeroCopy;
      op.ld = ld;
      op.in_place =
          cl::Buffer(dev_.context(), CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                     static_cast<size_t>(span(rows, cols, ld)) * sizeof(T), const_cast<T*>(host));
      return;
    }
    op.path = Report::Buffer::Copy;
    op.ld = transpose ? rows : cols;
    stage(op, static_cast<size_t>(rows * cols) * sizeof(T), /*write_only=*/true);
    if (transpose)
      pack_transposed(host, rows, cols, ld, op.mapped, host_threads_);
    else
      pack(host, rows, cols, ld, op.mapped, host_threads_);
    // The kernel reads the pinned buffer itself; it must be unmapped first.
    queue_.enqueueUnmapMemObject(op.pinned, op.mapped);
    op.mapped = nullptr;
  }

  // C in place, or staged (with its old values when the kernel reads them: beta != 0).
  void output(bool read_c, bool in_place) {
    const Share<T>& s = s_;
    if (in_place) {
      c_.path = Report::Buffer::ZeroCopy;
      c_.ld = s.ldc;
      c_.in_place =
          cl::Buffer(dev_.context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, s.c_bytes(), s.c);
      return;
    }
    c_.path = Report::Buffer::Copy;
    c_.ld = s.n;
    stage(c_, static_cast<size_t>(s.m * s.n) * sizeof(T), /*write_only=*/!read_c);
    if (read_c) pack(static_cast<const T*>(s.c), s.m, s.n, s.ldc, c_.mapped, host_threads_);
    queue_.enqueueUnmapMemObject(c_.pinned, c_.mapped);
    c_.mapped = nullptr;
  }

  Device& dev_;
  Share<T> s_;
  uintptr_t zero_copy_align_ = 64;
  cl::CommandQueue queue_;
  Operand<T> a_, b_, c_;
  void* c_map_ = nullptr;
  std::vector<RowLaunch> launches_;
  std::unique_ptr<Snapshot<T>> snapshot_;
  int64_t confirmed_ = 0;  // rows [0, confirmed_) of C hold their final values
  cl::Event last_event_;
  int host_threads_ = topology::physical_cores();  // threads for packing and unpacking
};

}  // namespace

template <class T>
std::unique_ptr<ShareImpl> make_unified_share(Device& device, const Share<T>& share) {
  return std::make_unique<UnifiedShare<T>>(device, share);
}
#define INSTANTIATE(T) \
  template std::unique_ptr<ShareImpl> make_unified_share<T>(Device&, const Share<T>&);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::gpu
