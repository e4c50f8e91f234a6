// The paths of a discrete share's A and C rows (discrete_operands_cl.hpp): A staged or unstaged,
// transposed on the device or not; C unstaged, or staged and unpacked onto the caller's C, adding
// beta C there (C_ADDED).
#include "base/precision.hpp"
#include "gpu/discrete_operands_cl.hpp"
#include "gpu/host_pack.hpp"
#include "gpu/pinned_memory.hpp"

namespace tandem::detail::gpu {
namespace {

// A packed on the host, chunk by chunk, into pinned staging, and copied from there.
template <class T>
class StagedA final : public ARows<T> {
 public:
  StagedA(const Share<T>& s, bool ka, bool pinned, int64_t& bytes_packed)
      : ARows<T>(s, ka, pinned), bytes_packed_(bytes_packed) {}
  bool packs() const override { return true; }

 private:
  void copy(Commands& cmd, const T* block, int64_t rows, int64_t cols, int64_t tight_at,
            const KernelOperand& to, cl::Event* done, int threads) override {
    T* panel = this->staging_.mapped + tight_at;
    pack(block, rows, cols, this->s_.lda, panel, threads);
    bytes_packed_ += rows * cols * static_cast<int64_t>(sizeof(T));
    cmd.copy_in(*to.buffer, to.offset, to.ld, static_cast<const T*>(panel), rows, cols, cols,
                nullptr, done);
  }

  int64_t& bytes_packed_;
};

// A copied as stored straight from the caller's memory, unstaged.
template <class T>
class UnstagedA final : public ARows<T> {
 public:
  using ARows<T>::ARows;
  bool packs() const override { return false; }

 private:
  void copy(Commands& cmd, const T* block, int64_t rows, int64_t cols, int64_t,
            const KernelOperand& to, cl::Event* done, int) override {
    cmd.copy_in(*to.buffer, to.offset, to.ld, block, rows, cols, this->s_.lda, nullptr, done);
  }
};

// A on the device already (a resident A, DeviceA): nothing to send; the chunks' panels are its
// rows in the kept buffer (the share places them there).
template <class T>
class ResidentA final : public ARows<T> {
 public:
  ResidentA(const Share<T>& s, bool ka, std::shared_ptr<DeviceA<T>> kept)
      : ARows<T>(s, ka, false), kept_(std::move(kept)) {}
  bool packs() const override { return false; }
  bool resident() const override { return true; }
  const cl::Buffer& buffer() const override { return kept_->kept->device; }
  Report::Buffer path() const override { return Report::Buffer::Resident; }
  void take_staging(StagingPool&, int64_t) override {}
  // The device may still read the kept A: it is never given back or reused.
  void lose_staging(StagingPool&) override { kept_->lost = true; }

 private:
  void copy(Commands&, const T*, int64_t, int64_t, int64_t, const KernelOperand&, cl::Event*,
            int) override {}

  std::shared_ptr<DeviceA<T>> kept_;
};

// C copied straight from and into the caller's memory, unstaged: in where beta makes the kernel
// read it, and back as each chunk's kernel completes.
template <class T>
class UnstagedC final : public CRows<T> {
 public:
  using CRows<T>::CRows;
  T device_beta() const override { return this->s_.beta; }
  bool unpacks() const override { return false; }

  void send(Commands& cmd, const Chunk& ch, std::vector<cl::Event>& ready) override {
    const Share<T>& s = this->s_;
    if (s.beta == T(0)) return;
    ready.emplace_back();
    cmd.copy_in(this->buffer(), ch.r0 * this->ldc_, this->ldc_,
                static_cast<const T*>(s.c + ch.r0 * s.ldc), ch.r1 - ch.r0, s.n, s.ldc, nullptr,
                &ready.back());
  }

  void receive(Commands& cmd, Chunk& ch, const std::vector<cl::Event>* waits) override {
    const Share<T>& s = this->s_;
    cmd.copy_out(this->buffer(), ch.r0 * this->ldc_, this->ldc_, s.c + ch.r0 * s.ldc, ch.r1 - ch.r0,
                 s.n, s.ldc, waits, &ch.read);
  }

  void land(const Chunk&, int) override {}  // its copy back put it there

  // A chunk copied straight into the caller's C holds its final values once its copy completed,
  // and its old ones while its kernel has not completed (a failed kernel is never copied back).
  // The one case left is a copy that failed partway after its kernel completed: its rows cannot
  // be trusted, and the share reports C touched; so does one whose queues could not be drained.
  ShareImpl::Salvaged salvage(bool drained, int64_t confirmed,
                              const std::vector<Chunk>& chunks) const noexcept override {
    ShareImpl::Salvaged s;
    s.stopped = drained;
    if (confirmed > 0) s.finished.push_back({0, confirmed});
    if (!s.stopped) return s;
    for (const Chunk& ch : chunks) {
      if (ch.r1 <= confirmed) continue;
      if (status_of(ch.read) == CL_COMPLETE)
        s.finished.push_back({ch.r0, ch.r1 - ch.r0});
      else if (status_of(ch.kernel) == CL_COMPLETE && ch.read() != nullptr)
        s.stopped = false;  // a copy cut short
    }
    return s;
  }
};

// C in the caller's ordinary memory: never sent. Staging C's old values and sending them cost a
// host copy and a bus copy; the kernel computes with beta = 0 instead, and its product comes back
// into pinned staging, which the host unpacks onto the caller's C as each chunk lands.
template <class T>
class StagedC : public CRows<T> {
 public:
  StagedC(const Share<T>& s, int64_t ldc, bool pinned, int64_t& bytes_packed)
      : CRows<T>(s, ldc, pinned), bytes_packed_(bytes_packed) {}
  T device_beta() const override { return T(0); }
  bool unpacks() const override { return true; }

  void send(Commands&, const Chunk&, std::vector<cl::Event>&) override {}

  void receive(Commands& cmd, Chunk& ch, const std::vector<cl::Event>* waits) override {
    const Share<T>& s = this->s_;
    cmd.copy_out(this->buffer(), ch.r0 * this->ldc_, this->ldc_,
                 this->staging_.mapped + ch.r0 * s.n, ch.r1 - ch.r0, s.n, s.n, waits, &ch.read);
  }

  void land(const Chunk& ch, int threads) override {
    const Share<T>& s = this->s_;
    const int64_t rows = ch.r1 - ch.r0;
    unpack_onto(this->staging_.mapped + ch.r0 * s.n, rows, s.c + ch.r0 * s.ldc, threads);
    bytes_packed_ += rows * s.n * static_cast<int64_t>(sizeof(T));
  }

  // The host alone writes the caller's C, rows [0, confirmed) so far: queues that cannot be
  // drained touch nothing of it, and a failed chunk leaves its rows as they were.
  ShareImpl::Salvaged salvage(bool, int64_t confirmed,
                              const std::vector<Chunk>&) const noexcept override {
    ShareImpl::Salvaged s;
    if (confirmed > 0) s.finished.push_back({0, confirmed});
    return s;
  }

 protected:
  // The product's tight rows x n block `from` onto the caller's C at `to`: with beta = 0, it
  // replaces C's values.
  virtual void unpack_onto(const T* from, int64_t rows, T* to, int threads) {
    unpack(from, rows, this->s_.n, to, this->s_.ldc, threads);
  }

 private:
  int64_t& bytes_packed_;
};

// C_ADDED: C in ordinary memory with beta != 0. Adding beta C on the host as each chunk is
// unpacked costs a read of C (from ordinary memory on the H100 host, GPU alone at 16384 x 16384 x
// 256: beta = 0 ran 1.7-1.95x as fast as beta = 1 before this), and C's rows change only when the
// host has their product: a failed chunk leaves them as they were.
template <class T>
class AddedC final : public StagedC<T> {
 public:
  using StagedC<T>::StagedC;

 private:
  void unpack_onto(const T* from, int64_t rows, T* to, int threads) override {
    unpack_adding(from, rows, this->s_.n, this->s_.beta, to, this->s_.ldc, threads);
  }
};

}  // namespace

template <class T>
cl::Event ARows<T>::send(Commands& cmd, const Chunk& ch, int threads) {
  const Share<T>& s = s_;
  // The chunk's panel of op(A) as stored (rows x k, or k x rows when A is transposed), tight at
  // element r0 * k in staging and in scratch; in the kernel's buffer at ch.a_at with leading
  // dimension ch.a_ld.
  const int64_t rows = ch.r1 - ch.r0, tight_at = ch.r0 * s.k;
  const T* block = s.trans_a ? s.a + ch.r0 : s.a + ch.r0 * s.lda;
  const int64_t block_rows = s.trans_a ? s.k : rows, block_cols = s.trans_a ? rows : s.k;
  if (!scratch_) {
    cl::Event in;
    copy(cmd, block, block_rows, block_cols, tight_at, {&buffer(), ch.a_at, ch.a_ld}, &in, threads);
    return in;
  }
  // As stored into scratch, to be transposed into the kernel's buffer.
  std::vector<cl::Event> in(1);
  copy(cmd, block, block_rows, block_cols, tight_at, {&scratch_->device, tight_at, block_cols},
       &in[0], threads);
  cmd.submit_in();
  cl::Event ready;
  cmd.transpose(scratch_->device, tight_at, buffer(), ch.a_at, ch.a_ld, block_rows, block_cols, in,
                &ready);
  return ready;
}

template <class T>
void ARows<T>::take_scratch(StagingPool& pool) {
  if (!resident() && ka_ != s_.trans_a) scratch_ = pool.take(staging_bytes<T>(s_.m * s_.k), false);
}

template <class T>
void ARows<T>::give_staging(StagingPool& pool) {
  if (staging_.pooled) pool.give(std::move(staging_.pooled));
}

template <class T>
void ARows<T>::give_scratch(StagingPool& pool) {
  if (scratch_) pool.give(std::move(scratch_));
}

template <class T>
void CRows<T>::give_staging(StagingPool& pool) {
  if (staging_.pooled) pool.give(std::move(staging_.pooled));
}

template <class T>
std::unique_ptr<ARows<T>> a_rows(Device& dev, const Share<T>& s, bool as_stored, bool ka,
                                 int64_t& bytes_packed) {
  const bool a_pinned = in_pinned_block(dev, s.a, s.a_bytes());
  if (as_stored || a_pinned) return std::make_unique<UnstagedA<T>>(s, ka, a_pinned);
  return std::make_unique<StagedA<T>>(s, ka, a_pinned, bytes_packed);
}

template <class T>
Operands<T>::Operands(Device& dev, const Share<T>& s, bool as_stored, bool ka, int64_t ldc,
                      int64_t& bytes_packed, std::shared_ptr<DeviceA<T>> resident)
    : dev_(dev) {
  const bool c_pinned = in_pinned_block(dev, s.c, s.c_bytes());
  if (resident)
    a_ = std::make_unique<ResidentA<T>>(s, ka, std::move(resident));
  else
    a_ = a_rows(dev, s, as_stored, ka, bytes_packed);
  if (as_stored || c_pinned)
    c_ = std::make_unique<UnstagedC<T>>(s, ldc, c_pinned);
  else if (s.beta != T(0))
    c_ = std::make_unique<AddedC<T>>(s, ldc, c_pinned, bytes_packed);
  else
    c_ = std::make_unique<StagedC<T>>(s, ldc, c_pinned, bytes_packed);
}

template <class T>
void Operands<T>::take_staging(int64_t a_elements) {
  a_->take_staging(dev_.staging(), a_elements);
  c_->take_staging(dev_.staging());
  a_->take_scratch(dev_.staging());
}

template <class T>
void Operands<T>::give_staging() {
  a_->give_staging(dev_.staging());
  c_->give_staging(dev_.staging());
  a_->give_scratch(dev_.staging());
}

template <class T>
void Operands<T>::lose_staging() {
  a_->lose_staging(dev_.staging());
  c_->lose_staging(dev_.staging());
  a_->lose_scratch(dev_.staging());
}

template <class T>
std::vector<cl::Event> Operands<T>::send(Commands& cmd, const Chunk& ch, int threads) {
  std::vector<cl::Event> ready;
  if (!a_->resident()) ready.push_back(a_->send(cmd, ch, threads));
  c_->send(cmd, ch, ready);
  cmd.submit_in();
  return ready;
}

#define INSTANTIATE(T)        \
  template class ARows<T>;    \
  template class CRows<T>;    \
  template class Operands<T>; \
  template std::unique_ptr<ARows<T>> a_rows<T>(Device&, const Share<T>&, bool, bool, int64_t&);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::gpu
