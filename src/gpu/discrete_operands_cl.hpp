// A's and C's rows of a discrete share, chunk by chunk: how they reach the device, and how C's
// come back to the caller. Each operand takes one path, chosen once as the share starts
// (discrete_operands.cpp has them).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/cl.hpp"
#include "gpu/device_cl.hpp"
#include "gpu/discrete_commands_cl.hpp"
#include "gpu/share_cl.hpp"

namespace tandem::detail::gpu {

// op(A) of a whole problem kept on the device between calls (a resident A; gpu::keep): all its rows
// in the layout the kernel reads, one panel (leading dimension `dev_ld`: k padded where the kernel
// reads op(A) by rows, m padded where it reads it transposed). A share of any band of those rows,
// its A at the same host matrix, computes from it (rows_of) instead of sending its rows.
template <class T>
struct DeviceA final : KeptOperand {
  DeviceA(Device& device, const Share<T>& s, bool kernel_ka, int kernel_vw, bool kernel_direct,
          int64_t device_ld)
      : dev(device),
        host(s.a),
        ld(s.lda),
        m(s.m),
        k(s.k),
        trans(s.trans_a),
        ka(kernel_ka),
        vw(kernel_vw),
        direct(kernel_direct),
        dev_ld(device_ld) {}
  ~DeviceA() override {
    if (lost)
      dev.staging().lose(std::move(kept));
    else if (kept)
      dev.staging().give(std::move(kept));
  }
  DeviceA(const DeviceA&) = delete;
  DeviceA& operator=(const DeviceA&) = delete;
  int64_t device_bytes() const override { return kept ? static_cast<int64_t>(kept->bytes) : 0; }

  // The row of this A at which share s's A begins, where s's rows of op(A) are rows of this one
  // and a kernel reading A in layout `kernel_ka` with vectors of `kernel_vw` (`kernel_direct`:
  // the direct kernel) and, reading it by rows, leading dimension `kernel_lda`, reads them here as
  // it is; else -1. Read transposed, a band must begin on a whole vector.
  int64_t row_of(const Share<T>& s, bool kernel_ka, int kernel_vw, bool kernel_direct,
                 int64_t kernel_lda) const {
    if (s.lda != ld || s.k != k || s.trans_a != trans || kernel_ka != ka || kernel_vw != vw ||
        kernel_direct != direct || (!ka && kernel_lda != dev_ld) || s.a < host)
      return -1;
    const int64_t off = s.a - host;
    const int64_t row0 = trans ? off : off / ld;
    if ((!trans && off % ld != 0) || row0 + s.m > m) return -1;
    if (ka && vw > 0 && row0 % vw != 0) return -1;
    return row0;
  }

  Device& dev;
  const T* host;
  int64_t ld, m, k;
  bool trans, ka;
  int vw;
  bool direct;
  int64_t dev_ld;
  std::unique_ptr<Staging> kept;  // its device buffer (with the pinned one it was packed in)
  std::atomic<bool> lost{false};  // a share that used it could not drain its queues
};

// The copy of op(A) on `dev` among a resident operand's (`kept`) that holds share s's rows as a
// kernel with `f`'s layout, vectors and (by rows) leading dimension `lda` reads them, and the row
// at which they begin there (*row0); or null.
template <class T>
std::shared_ptr<DeviceA<T>> kept_a_in(const KeptOn& kept, const Device& dev, const Share<T>& s,
                                      bool ka, const KernelFacts& f, int64_t lda, int64_t* row0) {
  for (const std::shared_ptr<KeptOperand>& copy : kept.on(dev))
    if (auto a = std::dynamic_pointer_cast<DeviceA<T>>(copy)) {
      *row0 = a->row_of(s, ka, f.vw, f.direct, lda);
      if (*row0 >= 0) return a;
    }
  return nullptr;
}

// A's rows of each chunk on the device, at their place in the kernel's buffer. Packed on the
// host into pinned staging and copied from there (staged), or copied as stored straight from the
// caller's memory (unstaged: pinned memory, or any with the direct kernel, for which the driver
// copies ordinary memory itself); where the kernel reads A in the other layout, copied as stored
// into scratch and transposed on the device (a host-side transposing pack cost more than the copy
// on the H100 host).
template <class T>
class ARows {
 public:
  ARows(const Share<T>& s, bool ka, bool pinned) : s_(s), ka_(ka), pinned_(pinned) {}
  virtual ~ARows() = default;
  ARows(const ARows&) = delete;
  ARows& operator=(const ARows&) = delete;

  // Chunk ch's panel of op(A) to the kernel's buffer, at element ch.a_at with leading dimension
  // ch.a_ld, packed on `threads` host threads where A is staged: the event that says it is there.
  cl::Event send(Commands& cmd, const Chunk& ch, int threads);
  virtual const cl::Buffer& buffer() const { return staging_.device(); }
  // Whether the device transposes A (then the share needs the transpose kernel).
  bool transposes() const { return scratch_ != nullptr; }
  virtual Report::Buffer path() const {
    return pinned_ ? Report::Buffer::Pinned : Report::Buffer::Copy;
  }
  // Whether the host packs A.
  virtual bool packs() const = 0;
  // Whether A is on the device already (a resident A): nothing to send.
  virtual bool resident() const { return false; }

  // Staging for `elements` elements (the chunks' panels one after another), and scratch for A as
  // stored where the device transposes it; each given back, or kept aside for good where the
  // device may still use it (lose).
  virtual void take_staging(StagingPool& pool, int64_t elements) {
    staging_.take(pool, elements, packs());
  }
  void take_scratch(StagingPool& pool);
  void give_staging(StagingPool& pool);
  void give_scratch(StagingPool& pool);
  virtual void lose_staging(StagingPool& pool) { pool.lose(std::move(staging_.pooled)); }
  void lose_scratch(StagingPool& pool) { pool.lose(std::move(scratch_)); }
  // The staging A was sent into, for a resident A to keep (gpu::keep).
  std::unique_ptr<Staging> release_staging() { return std::move(staging_.pooled); }

 protected:
  // The stored block (rows x cols at `block`, leading dimension s.lda) to `to`; `tight_at`: where
  // it starts in A packed tight, as the staged path packs it.
  virtual void copy(Commands& cmd, const T* block, int64_t rows, int64_t cols, int64_t tight_at,
                    const KernelOperand& to, cl::Event* done, int threads) = 0;

  Share<T> s_;
  bool ka_, pinned_;
  Operand<T> staging_;
  std::unique_ptr<Staging> scratch_;  // A as stored, before transposition
};

// C's rows of each chunk: what goes to the device, where the product comes back to, and how it
// reaches the caller's C. Unstaged (pinned memory, or any with the direct kernel): C's rows go in
// as they are when beta != 0 and come back straight into the caller's C. Staged (ordinary
// memory): C never goes in; the kernel computes alpha op(A) op(B) alone, into pinned staging,
// and the host unpacks it onto the caller's C (adding beta C where beta != 0: C_ADDED).
template <class T>
class CRows {
 public:
  CRows(const Share<T>& s, int64_t ldc, bool pinned) : s_(s), ldc_(ldc), pinned_(pinned) {}
  virtual ~CRows() = default;
  CRows(const CRows&) = delete;
  CRows& operator=(const CRows&) = delete;

  // The beta the kernel computes with.
  virtual T device_beta() const = 0;
  // Chunk ch's rows of C to the device where the kernel reads them: their event onto `ready`.
  virtual void send(Commands& cmd, const Chunk& ch, std::vector<cl::Event>& ready) = 0;
  // Chunk ch's rows of C back after `waits`, completing ch.read; from here on, C's old values
  // in those rows may be gone where they come back into the caller's C.
  virtual void receive(Commands& cmd, Chunk& ch, const std::vector<cl::Event>* waits) = 0;
  // Once ch.read has completed: ch's rows into the caller's C on `threads` host threads, where
  // they are not there already.
  virtual void land(const Chunk& ch, int threads) = 0;
  // After a failure, with the share's queues drained or not: what C holds, its rows [0,
  // confirmed) landed.
  virtual ShareImpl::Salvaged salvage(bool drained, int64_t confirmed,
                                      const std::vector<Chunk>& chunks) const noexcept = 0;
  // Whether the host unpacks C.
  virtual bool unpacks() const = 0;

  const cl::Buffer& buffer() const { return staging_.device(); }
  Report::Buffer path() const { return pinned_ ? Report::Buffer::Pinned : Report::Buffer::Copy; }
  void take_staging(StagingPool& pool) { staging_.take(pool, s_.m * ldc_, unpacks()); }
  void give_staging(StagingPool& pool);
  void lose_staging(StagingPool& pool) { pool.lose(std::move(staging_.pooled)); }

 protected:
  Share<T> s_;
  int64_t ldc_;  // C's leading dimension on the device
  bool pinned_;
  Operand<T> staging_;
};

// A's path for share s on `dev` (Operands' rule): unstaged where the caller's memory is pinned or
// the kernel reads A as stored, else staged.
template <class T>
std::unique_ptr<ARows<T>> a_rows(Device& dev, const Share<T>& s, bool as_stored, bool ka,
                                 int64_t& bytes_packed);

// A's and C's rows of one share, each on its path.
template <class T>
class Operands {
 public:
  // The paths of share s's A and C on `dev`: unstaged where the caller's memory is pinned or the
  // kernel reads operands as stored (`as_stored`: the direct kernel), else staged. The kernel
  // reads A in layout ka, C with leading dimension ldc; the host's packing and unpacking count
  // into `bytes_packed`.
  Operands(Device& dev, const Share<T>& s, bool as_stored, bool ka, int64_t ldc,
           int64_t& bytes_packed, std::shared_ptr<DeviceA<T>> resident = nullptr);

  ARows<T>& a() { return *a_; }
  CRows<T>& c() { return *c_; }
  // Whether the host packs or unpacks either.
  bool packs() const { return a_->packs() || c_->unpacks(); }

  // Staging from the device's pool, in the order the share has always taken it (the pool gives
  // each the smallest idle fit in turn): A's (`a_elements`), C's, A's scratch. It goes back in
  // the same order once the share has drained its queues, or is kept aside for good where they
  // could not be drained (the device may still read or write it).
  void take_staging(int64_t a_elements);
  void give_staging();
  void lose_staging();

  // Chunk ch's rows of op(A) and, where the kernel reads them, of C to the device, on `threads`
  // host threads: the events they complete.
  std::vector<cl::Event> send(Commands& cmd, const Chunk& ch, int threads);

 private:
  Device& dev_;
  std::unique_ptr<ARows<T>> a_;
  std::unique_ptr<CRows<T>> c_;
};

}  // namespace tandem::detail::gpu
