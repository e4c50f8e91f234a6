// One GPU share of a GEMM in flight, with no OpenCL types: the interface the executor drives
// (flush, feed, wait), the failure it may throw, and enqueue(), which starts a share on a
// unified-memory or a discrete device.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/problem.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail::gpu {

// One GPU share of a row-major GEMM: the rows [0, m) of C it computes.
template <class T>
using Share = Problem<T>;

// A share whose commands are enqueued. flush() submits them to the device without waiting;
// wait() blocks on the last event (clWaitForEvents), after which C holds the result. No OpenCL
// callbacks are used.
class InFlight {
 public:
  virtual ~InFlight() = default;
  virtual void flush() = 0;
  virtual void wait() = 0;
  // Discrete devices: enqueue() started B and the first chunk of C's rows; feed() packs and
  // enqueues the rest on `host_threads` threads, which wait() then uses to unpack C. Meant for the
  // thread that called enqueue(), while the CPU share runs on others. Unified devices: everything
  // was enqueued already, and this only sets the thread count for wait().
  virtual void feed(int host_threads) = 0;
  // Discrete devices: enqueue() sent B's first piece only (with the first chunk's work on it);
  // each call sends the next piece, and returns whether any is left. Called on every device of a
  // call in turn, piece by piece, before feeding, so that each starts computing while the host
  // packs the rest of B once for all of them; feed() sends whatever is left. Others: false.
  virtual bool start_step() { return false; }
  // Whether feed() and wait() do host work (packing, unpacking) worth overlapping with the CPU
  // share: true on a discrete device.
  virtual bool feeds() const = 0;
  // Whether the kernel has been submitted to the device (or runs, or is done).
  virtual bool submitted() = 0;
  Report::Buffer a_path = Report::Buffer::None, b_path = Report::Buffer::None,
                 c_path = Report::Buffer::None;
  double kernel_seconds = 0;            // from the kernels' profiling events, after wait()
  int launches = 0;                     // kernel launches, after wait()
  int64_t bytes_in = 0, bytes_out = 0;  // copied to and from the device, after wait()
  int64_t bytes_packed = 0;   // packed and unpacked on the host for the device, after wait()
  int64_t flushed_at_ns = 0;  // steady clock when clFlush returned (0: never flushed)
};

// Rows [row0, row0 + rows) of a share.
struct RowRange {
  int64_t row0 = 0, rows = 0;
};

// A GPU failure, and what it left in the caller's C: `finished`, the share's rows that hold their
// final values (launches or chunks that completed and reached C before it failed); every other
// row of the share holds its old values again where they matter (a share that wrote them in
// place restores them from its snapshot when beta != 0; `overwrote` says it wrote some with beta
// = 0 and kept none), so the CPU can compute them, unless `c_touched`: the device could not be
// stopped, and rows it may still write cannot be trusted.
class Failure : public Error {
 public:
  Failure(const Error& e, bool c_touched, std::vector<RowRange> finished = {},
          bool overwrote = false)
      : Error(e), c_touched_(c_touched), overwrote_(overwrote), finished_(std::move(finished)) {}
  bool c_touched() const noexcept { return c_touched_; }
  const std::vector<RowRange>& finished() const noexcept { return finished_; }
  // Whether the caller's C may differ from what it was before the call.
  bool c_changed() const noexcept { return c_touched_ || overwrote_ || !finished_.empty(); }

 private:
  bool c_touched_, overwrote_;
  std::vector<RowRange> finished_;
};

// The share's rows in [0, m) that `finished` leaves: what the CPU computes after a failure.
std::vector<RowRange> unfinished(int64_t m, const std::vector<RowRange>& finished);

// An operand on a discrete device, kept beyond the share that sent it. B as a share left it, for
// the shares after it in the same call: on the device, for the next share on that device (dynamic
// balance deals a device several chunks of C's rows, all with the same B, and B then crosses the
// bus once per device and call instead of once per chunk); and packed in the platform's pinned
// memory, for the other devices of the platform (every device needs all of B, and from ordinary
// memory the host then packs it once per call instead of once per device). And a resident
// operand's copy (keep), kept across calls. Opaque outside the discrete share (DeviceB
// in discrete_b_cl.hpp, DeviceA in discrete_operands_cl.hpp); its memory goes back to the device's
// pool when the last holder is gone.
class KeptOperand {
 public:
  virtual ~KeptOperand();
  // The device memory it holds, in bytes.
  virtual int64_t device_bytes() const = 0;
  // Marks it a resident operand's copy (keep): its device_bytes() count in
  // resident_bytes(device) until it is gone.
  void count_as_resident(Device& device);
  bool resident() const { return counted_on_ != nullptr; }

 private:
  Device* counted_on_ = nullptr;
  int64_t counted_ = 0;
};

// Where the shares of one call leave B for each other (see KeptOperand); either may be null.
struct CallB {
  // This device's B on the device: used when it is this share's B (same array, shape and
  // layout); a share that sends B leaves its own here.
  std::shared_ptr<KeptOperand>* on_device = nullptr;
  // B packed on the host by the call's first share that packed it: a share on a device of the
  // same platform copies from there instead of packing B again. Shares are started one after
  // another on one thread; a share leaves B here once its first piece is packed, and whichever
  // share first needs a later piece packs it.
  std::shared_ptr<KeptOperand>* packed = nullptr;
  // B, and A, kept on the devices between calls (tandem::Resident operands' copies): a copy on
  // this device that the share's kernel reads as it is is used instead of sending the operand.
  const KeptOn* resident_b = nullptr;
  const KeptOn* resident_a = nullptr;
};

// A resident operand's copies on discrete devices (keep), any number on each (one for each
// layout the kernels of its runs read it in): what a call with that operand finds there. Unified
// devices read the caller's memory in place and keep none. A copy's device memory counts in
// resident_bytes(device) until the last holder lets it go.
class KeptOn {
 public:
  void add(Device& device, std::shared_ptr<KeptOperand> copy);
  // The copies `device` keeps.
  std::vector<std::shared_ptr<KeptOperand>> on(const Device& device) const;
  // The device memory the copies hold, in bytes.
  int64_t bytes() const;

 private:
  std::vector<std::pair<const Device*, std::shared_ptr<KeptOperand>>> copies_;
};

// Whether `kept` has a copy of share's B (`a`: of its A) on `device` that `params`' kernel reads
// as it is.
template <class T>
bool has_copy(const KeptOn& kept, Device& device, const SharedParams& params, const Share<T>& share,
              bool a = false);

// B of `share` (the whole of it: its rows of C do not matter), or with `a` op(A) (all its rows),
// copied to the discrete `device` in the layout that `params`' kernel reads, packed through pinned
// staging as a share would send it, and waited for: the operand on the device for calls with it
// and that kernel (CallB::resident_b, resident_a) for as long as the result is held; its staging
// goes back to the device's pool when it is dropped. nullptr on a unified device (it reads the
// caller's memory in place). Throws Error (a failed allocation names the bytes asked for),
// leaving nothing on the device.
template <class T>
std::shared_ptr<KeptOperand> keep(Device& device, const SharedParams& params, const Share<T>& share,
                                  bool a);

// The device memory keep(device, params, share, a) takes on a discrete device, its operand padded
// and pooled as it will be, with the scratch a transposition on the device needs while it is made.
template <class T>
int64_t kept_bytes(const SharedParams& params, const Share<T>& share, bool a);

// Enqueues the share's transfers (if any), kernels and the return of C. Throws Failure (flush,
// feed and wait too) on any OpenCL failure. `b`: where the share finds B and leaves its own.
template <class T>
std::unique_ptr<InFlight> enqueue(Device& device, const SharedParams& params, const Share<T>& share,
                                  CallB b = {});

}  // namespace tandem::detail::gpu
