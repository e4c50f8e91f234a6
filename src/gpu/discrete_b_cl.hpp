// B on a discrete device: DeviceB, which one share sends and the shares after it in the same call
// use (kept on the device for the next share there, gpu::KeptOperand in share.hpp; packed once on
// the host for the devices of a platform), and ShareB, how one share gets it onto its device.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "gpu/cl.hpp"
#include "gpu/device_cl.hpp"
#include "gpu/discrete_commands_cl.hpp"
#include "gpu/host_pack.hpp"
#include "gpu/share.hpp"
#include "gpu/staging_pool.hpp"

namespace tandem::detail::gpu {

// B on the device in the kernel's layout, with what is needed to know it again: one share's, or
// kept for the shares after it (KeptOperand). Its staging goes back to the pool with the last share
// holding it, unless a share could not drain its queues (then something may still use it). B
// packed on the host by another device's share (`packed_by`) is held until this one is gone.
template <class T>
struct DeviceB final : KeptOperand {
  DeviceB(Device& device, const Share<T>& s, bool kernel_kb, int64_t device_ld)
      : dev(device),
        host(s.b),
        ld(s.ldb),
        rows(s.b_rows()),
        cols(s.b_cols()),
        trans(s.trans_b),
        kb(kernel_kb),
        dev_ld(device_ld) {}
  ~DeviceB() override {
    if (lost) {  // a device may still copy from or into it: never freed or reused
      dev.staging().lose(std::move(b.pooled));
      dev.staging().lose(std::move(raw));
      return;
    }
    if (b.pooled) dev.staging().give(std::move(b.pooled));
    if (raw) dev.staging().give(std::move(raw));
  }
  DeviceB(const DeviceB&) = delete;
  DeviceB& operator=(const DeviceB&) = delete;

  int64_t device_bytes() const override {
    return static_cast<int64_t>((b.pooled ? b.pooled->bytes : 0) + (raw ? raw->bytes : 0));
  }

  // Whether this is share s's B, read by the kernel in layout kb with leading dimension
  // device_ld on the device.
  bool holds(const Share<T>& s, bool kernel_kb, int64_t device_ld) const {
    return same_host(s) && kb == kernel_kb && dev_ld == device_ld;
  }

  // Whether share s's B is this one's on the host (the packed copy is B as stored, tight,
  // whatever layout a kernel reads it in).
  bool same_host(const Share<T>& s) const {
    return host == s.b && ld == s.ldb && rows == s.b_rows() && cols == s.b_cols() &&
           trans == s.trans_b;
  }

  // B's pieces: slabs of its stored rows, at most four and no more than the share's chunks; or,
  // copying another device's packed copy, that share's pieces.
  void plan_pieces(int64_t b_rows, int64_t chunks) {
    if (packed_by) {
      piece_ends = packed_by->piece_ends;
      return;
    }
    const int64_t pieces = std::min<int64_t>(4, chunks);
    for (int64_t i = 0; i < pieces; ++i)
      if (const int64_t q1 = b_rows * (i + 1) / pieces;
          q1 > (piece_ends.empty() ? 0 : piece_ends.back()))
        piece_ends.push_back(q1);
  }

  // The packed copy up to share s's stored row q1 of B: what is not packed yet, on `threads`
  // threads, into this one's staging or that of the share it copies, whichever share first needs
  // it. Returns the bytes it packed.
  int64_t pack_to(const Share<T>& s, int64_t q1, int threads) {
    DeviceB& owner = packed_by ? *packed_by : *this;
    std::lock_guard<std::mutex> lock(owner.pack_mutex);
    const int64_t from = owner.packed_rows;
    if (from >= q1) return 0;
    pack(s.b + from * s.ldb, q1 - from, cols, s.ldb, owner.b.mapped + from * cols, threads);
    owner.packed_rows = q1;
    return (q1 - from) * cols * static_cast<int64_t>(sizeof(T));
  }

  // Where B is packed on the host, tight: its own staging, or another share's.
  const T* packed() const { return packed_by ? packed_by->b.mapped : b.mapped; }

  Device& dev;
  const T* host;
  int64_t ld, rows, cols;
  bool trans, kb;
  int64_t dev_ld;       // its leading dimension on the device (padded to the kernel's vectors)
  bool pinned = false;  // in the caller's pinned memory
  Operand<T> b;
  std::unique_ptr<Staging> raw;     // B as stored, before the device transposed it
  std::vector<cl::Event> ready;     // B is on the device, in the kernel's layout
  std::vector<int64_t> piece_ends;  // the stored row at which each of B's pieces ends
  // Of the packed copy (in this one's staging), its stored rows [0, packed_rows) are packed. The
  // devices of a call take B's pieces in turn, and whichever first needs a piece packs it: the
  // shares after the first do not wait for all of B, and a failing first share strands nobody.
  std::mutex pack_mutex;
  int64_t packed_rows = 0;
  std::atomic<bool> lost{false};       // dynamic balance's sides may mark it from their threads
  std::shared_ptr<DeviceB> packed_by;  // the share, on another device, whose packed B this copies
};

// The copy of share s's B on `dev` among a resident operand's (`kept`) that a kernel reading B in
// layout kb with leading dimension ldb reads as it is, or null.
template <class T>
std::shared_ptr<DeviceB<T>> kept_b_in(const KeptOn& kept, const Device& dev, const Share<T>& s,
                                      bool kb, int64_t ldb) {
  for (const std::shared_ptr<KeptOperand>& copy : kept.on(dev))
    if (auto b = std::dynamic_pointer_cast<DeviceB<T>>(copy); b && b->holds(s, kb, ldb)) return b;
  return nullptr;
}

// How one discrete share has B on its device, chosen once as the share starts (share_b): kept on
// the device by an earlier share of the call, with nothing to send; or sent by this share in
// pieces, packed on the host (by this share, or by another device's of the platform) or copied
// unstaged from the caller's memory. Sent B is transposed on the device where the kernel reads it
// in the other layout.
template <class T>
class ShareB {
 public:
  explicit ShareB(std::shared_ptr<DeviceB<T>> b) : b_(std::move(b)) {}
  virtual ~ShareB() = default;
  ShareB(const ShareB&) = delete;
  ShareB& operator=(const ShareB&) = delete;

  // B on the device, for this share's kernels and those of the shares after it.
  const std::shared_ptr<DeviceB<T>>& device_b() const { return b_; }
  // op(B) from its row (of K) p0 on, as the kernel reads it.
  KernelOperand from_row(int64_t p0) const {
    return {&b_->b.device(), p0 * b_->dev_ld, b_->dev_ld};
  }
  Report::Buffer path() const {
    return b_->resident() ? Report::Buffer::Resident
           : b_->pinned   ? Report::Buffer::Pinned
                          : Report::Buffer::Copy;
  }

  // Its staging from the pool (none for B kept on the device).
  virtual void take_staging(StagingPool& pool) = 0;
  // Whether the host packs B for this share (or copies it packed by another's).
  virtual bool packs() const = 0;
  // Plans B's pieces for a share of `chunks` chunks; returns whether they are slabs of K that
  // the first chunk can run on one by one as they arrive.
  virtual bool plan_pieces(int64_t chunks) = 0;
  // B's next piece to the device, after the `threads` host threads packed it where it is
  // packed: its index, or none when no piece is left.
  virtual std::optional<size_t> send_next(Commands& cmd, int threads) = 0;
  // Whether any piece is left to send.
  virtual bool more() const = 0;
  // Once every piece is sent: B transposed on the device where the kernel reads it so.
  virtual void finish(Commands& cmd) = 0;
  // What a kernel of this share waits for of B, enqueued as it is.
  virtual std::vector<cl::Event> kernel_waits(const Commands& cmd) const = 0;
  // Leaves B, packed on the host, in the call's slot for the other devices of the platform.
  virtual void offer_packed(const CallB& call) = 0;
  // After queues that could not be drained: what the device may still read of B, and the
  // staging it was copied from, kept aside rather than freed or reused.
  virtual void lose() = 0;

 protected:
  std::shared_ptr<DeviceB<T>> b_;
};

// How share s has B on `dev`, where the kernel reads it in layout kb with leading dimension ldb
// (all of it as stored where `as_stored`: the direct kernel); `call` as for enqueue(). The host's
// packing counts into `bytes_packed`.
template <class T>
std::unique_ptr<ShareB<T>> share_b(Device& dev, const Share<T>& s, bool as_stored, bool kb,
                                   int64_t ldb, const CallB& call, int64_t& bytes_packed);

}  // namespace tandem::detail::gpu
