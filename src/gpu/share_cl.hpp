// What share.cpp needs of the two kinds of share, and the kernel-argument helpers both use.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "base/seams.hpp"
#include "gpu/cl.hpp"
#include "gpu/device_cl.hpp"
#include "gpu/host_pack.hpp"
#include "gpu/share.hpp"

namespace tandem::detail::gpu {

// Runs `finish`, which waits for everything a share's queues hold: whether they drained. Queues
// that cannot be drained (or that the seam fail_drain says could not be) may still hold commands
// on the share's memory, and take the device out of use (retire).
template <class F>
bool drained(Device& device, F&& finish) noexcept {
  try {
    finish();
    if (seams::fail_drain() != device.info().index) return true;
  } catch (...) {
    // The device failed again: what it holds stays where it is.
  }
  retire(device);
  return false;
}

// A share's implementation, before share.cpp wraps it to turn OpenCL failures into Failure.
class ShareImpl : public InFlight {
 public:
  // Enqueues everything the share can before feed(). Throws cl::Error or Error.
  virtual void start(const SharedParams& params) = 0;
  // After a failure: lets the device finish with the caller's and the pool's memory. False if
  // even that failed (then nothing the share used may be reused).
  virtual bool drain() noexcept = 0;
  // After a failure: drains, then puts back the old values of every row of C the share may have
  // written but not finished where they matter (beta != 0), and says what C holds.
  struct Salvaged {
    std::vector<RowRange> finished;  // rows that hold their final values
    // False when the device could not be drained and may still write the caller's C (its rows
    // of C cannot be trusted then).
    bool stopped = true;
    // Rows the share wrote in place whose old values it did not keep (beta = 0 needs none): C
    // then differs from what the caller gave beyond the finished rows.
    bool overwrote = false;
  };
  virtual Salvaged salvage() noexcept = 0;
};

// The old values of the rows of C that a unified share writes in place, taken before anything is
// written there, for a failure to put back: only where C's old values matter (beta != 0), and
// only the rows taken (a row the share never wrote holds its old values still).
template <class T>
class Snapshot {
 public:
  Snapshot(const Share<T>& s, bool needed) : s_(s), needed_(needed) {
    if (needed_) {
      // Not value-initialised: take() writes every element it reads back, and zeroing C's size
      // first would cost a pass over memory as large as C.
      copy_.reset(new T[static_cast<size_t>(s.m * s.n)]);
      taken_.assign(static_cast<size_t>(s.m), 0);
    }
  }
  // Rows [row0, row0 + rows), before the share may write them, on `threads` host threads.
  void take(int64_t row0, int64_t rows, int threads) {
    if (!needed_) return;
    copy_rows(static_cast<const T*>(s_.c + row0 * s_.ldc), s_.ldc, rows, s_.n,
              copy_.get() + row0 * s_.n, s_.n, threads);
    std::fill(taken_.begin() + row0, taken_.begin() + row0 + rows, 1);
  }
  // The old values of the rows taken from row0 on.
  void restore_from(int64_t row0) const {
    if (!needed_) return;
    for (int64_t r = std::max<int64_t>(row0, 0); r < s_.m; ++r)
      if (taken_[static_cast<size_t>(r)])
        std::copy(copy_.get() + r * s_.n, copy_.get() + (r + 1) * s_.n, s_.c + r * s_.ldc);
  }

 private:
  Share<T> s_;
  bool needed_;
  std::unique_ptr<T[]> copy_;
  std::vector<char> taken_;
};

// What a failure injected by the seams fail_device and fail_after_rows does at a launch or chunk
// boundary (row0, rows are the ones the share would finish next): nothing, unless this is the
// device and the boundary; then NaN over those rows where `in_place` (a kernel cut short in C)
// and an Error, thrown as a failing device's would be. Where it writes NaN it is called once the
// device is done with those rows: NaN written while the device still read or wrote them raced
// with it (TSan, issue 16).
bool injected_at(const DeviceInfo& info, int64_t row0);  // whether it fails there
template <class T>
void injected_failure(const DeviceInfo& info, const Share<T>& s, int64_t row0, int64_t rows,
                      bool in_place);
// The seam fail_b_piece: throws as the device's discrete share sends B's piece `piece`.
void injected_b_failure(const DeviceInfo& info, size_t piece);

// The share on a device that shares memory with the host (unified_share.cpp).
template <class T>
std::unique_ptr<ShareImpl> make_unified_share(Device& device, const Share<T>& share);
// The share on a discrete device (discrete_share.cpp); `b` as for enqueue().
template <class T>
std::unique_ptr<ShareImpl> make_discrete_share(Device& device, const Share<T>& share, CallB b);
// keep (share.hpp) on a discrete device (discrete_share.cpp).
// Throws cl::Error or Error.
template <class T>
std::shared_ptr<KeptOperand> keep_discrete(Device& device, const SharedParams& params,
                                           const Share<T>& share, bool a);
// has_copy (share.hpp) on a discrete device (discrete_share.cpp).
template <class T>
bool has_discrete_copy(const KeptOn& kept, const Device& device, const SharedParams& params,
                       const Share<T>& share, bool a);

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

// The transpose kernel's arguments: dst (cols x rows, leading dimension dst_ld, at element
// dst_offset) = src (rows x cols, tight at element src_offset)^T.
inline void set_transpose_args(cl::Kernel& kernel, bool long_index, int64_t rows, int64_t cols,
                               const cl::Buffer& src, int64_t src_offset, const cl::Buffer& dst,
                               int64_t dst_offset, int64_t dst_ld) {
  int arg = 0;
  auto index = [&](int64_t v) { set_index(kernel, arg, long_index, v); };
  index(rows);
  index(cols);
  kernel.setArg(arg++, src);
  index(src_offset);
  index(cols);
  kernel.setArg(arg++, dst);
  index(dst_offset);
  index(dst_ld);
}

// How long the device ran at least one of these commands: kernels on two queues may overlap.
inline double busy_seconds(std::vector<std::pair<cl_ulong, cl_ulong>> ran) {
  std::sort(ran.begin(), ran.end());
  cl_ulong busy = 0, from = 0, to = 0;
  bool open = false;
  for (const auto& [start, end] : ran) {
    if (open && start <= to) {
      to = std::max(to, end);
      continue;
    }
    if (open) busy += to - from;
    from = start;
    to = std::max(start, end);
    open = true;
  }
  if (open) busy += to - from;
  return static_cast<double>(busy) * 1e-9;
}

// An event's execution status; CL_QUEUED for one never enqueued, a failure if it cannot be read.
inline cl_int status_of(const cl::Event& ev) noexcept {
  if (ev() == nullptr) return CL_QUEUED;
  try {
    return ev.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
  } catch (...) {
    return CL_INVALID_EVENT;
  }
}

// The gemm kernel's launch: one work-group of MDIMC x NDIMC work-items per MWG x NWG tile of C.
struct Launch {
  cl::NDRange global, local;
};
inline Launch launch_for(int64_t m, int64_t n, const KernelFacts& f) {
  const auto groups = [](int64_t extent, int64_t tile) { return (extent + tile - 1) / tile; };
  return {cl::NDRange(static_cast<size_t>(groups(n, f.nwg) * f.ndimc),
                      static_cast<size_t>(groups(m, f.mwg) * f.mdimc)),
          cl::NDRange(static_cast<size_t>(f.ndimc), static_cast<size_t>(f.mdimc))};
}

// Rows of C per kernel launch: LAUNCH_ROWS (the plan's bound on one launch's duration, so a
// display GPU's watchdog never fires) in whole tiles, at least one tile; all m rows without it.
inline int64_t launch_step(const KernelFacts& f, int64_t m) {
  const int64_t bound = f.launch_rows;
  if (bound <= 0 || bound >= m) return std::max<int64_t>(m, 1);
  const int64_t mwg = std::max(1, f.mwg);
  return std::max(mwg, bound / mwg * mwg);
}

}  // namespace tandem::detail::gpu
