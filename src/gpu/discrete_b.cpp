// B's way onto a discrete device for one share (discrete_b_cl.hpp): kept on the device by an
// earlier share of the call, or sent in pieces, packed on the host once per platform or copied
// unstaged from the caller's memory, and transposed on the device where the kernel reads it so.
#include "base/precision.hpp"
#include "gpu/discrete_b_cl.hpp"
#include "gpu/pinned_memory.hpp"

namespace tandem::detail::gpu {
namespace {

// B kept on the device by an earlier share of this call (dynamic balance's chunks): nothing of it
// is sent. Its events are another share's, on other queues: a kernel always waits for them.
template <class T>
class ReusedB final : public ShareB<T> {
 public:
  using ShareB<T>::ShareB;
  void take_staging(StagingPool&) override {}
  bool packs() const override { return false; }
  bool plan_pieces(int64_t) override { return false; }
  std::optional<size_t> send_next(Commands&, int) override { return std::nullopt; }
  bool more() const override { return false; }
  void finish(Commands&) override {}
  std::vector<cl::Event> kernel_waits(const Commands&) const override { return this->b_->ready; }
  void offer_packed(const CallB&) override {}
  // A share that used B kept on the device copied nothing: the staging B was packed in is not
  // this share's to lose.
  void lose() override { this->b_->lost = true; }
};

// B sent by this share, piece by piece: as stored into scratch (tight) for the device to
// transpose, or into B's buffer at its padded width.
template <class T>
class SentB : public ShareB<T> {
 public:
  SentB(std::shared_ptr<DeviceB<T>> b, const Share<T>& s) : ShareB<T>(std::move(b)), s_(s) {}

  void take_staging(StagingPool& pool) override {
    DeviceB<T>& b = *this->b_;
    b.b.take(pool, (b.kb ? s_.n : s_.k) * b.dev_ld, with_host());
    if (b.kb != s_.trans_b) b.raw = pool.take(staging_bytes<T>(s_.k * s_.n), false);
  }

  // B's pieces (DeviceB::plan_pieces). They are slabs of K when the kernel reads B as stored and
  // untransposed (k x n).
  bool plan_pieces(int64_t chunks) override {
    DeviceB<T>& b = *this->b_;
    b.plan_pieces(s_.b_rows(), chunks);
    return !b.kb && !s_.trans_b && !b.raw && b.piece_ends.size() > 1;
  }

  std::optional<size_t> send_next(Commands& cmd, int threads) override {
    DeviceB<T>& b = *this->b_;
    const size_t q = piece_++;
    if (q >= b.piece_ends.size()) return std::nullopt;
    const int64_t q0 = q == 0 ? 0 : b.piece_ends[q - 1], q1 = b.piece_ends[q];
    const Stored from = source(q0, q1, threads);
    injected_b_failure(b.dev.info(), q);
    b.ready.emplace_back();
    const int64_t b_cols = s_.b_cols();
    const int64_t to_ld = b.raw ? b_cols : b.dev_ld;
    cmd.copy_in(b.raw ? b.raw->device : b.b.device(), q0 * to_ld, to_ld, from.host, q1 - q0, b_cols,
                from.ld, nullptr, &b.ready.back());
    cmd.submit_in();
    return q;
  }

  bool more() const override { return piece_ < this->b_->piece_ends.size(); }

  void finish(Commands& cmd) override {
    DeviceB<T>& b = *this->b_;
    if (!b.raw) return;
    cl::Event done;
    cmd.transpose(b.raw->device, 0, b.b.device(), 0, b.dev_ld, s_.b_rows(), s_.b_cols(), b.ready,
                  &done);
    b.ready = {done};
  }

  // Enqueued on this share's queues: one in-order queue waits for them by itself.
  std::vector<cl::Event> kernel_waits(const Commands& cmd) const override {
    std::vector<cl::Event> waits;
    cmd.after(waits, this->b_->ready);
    return waits;
  }

  // Whatever the device may still read: B, and the staging it was copied from.
  void lose() override {
    this->b_->lost = true;
    if (this->b_->packed_by) this->b_->packed_by->lost = true;
  }

 protected:
  // Stored rows of B on the host, and their leading dimension.
  struct Stored {
    const T* host;
    int64_t ld;
  };
  // Where B's stored rows [q0, q1) are copied from, packed first if the host packs them.
  virtual Stored source(int64_t q0, int64_t q1, int threads) = 0;
  // Whether B's staging needs a pinned buffer to pack into.
  virtual bool with_host() const = 0;

  Share<T> s_;

 private:
  size_t piece_ = 0;  // B's next piece to send
};

// B packed on the host into pinned staging and copied from there: this share's staging, or that of
// another device's share of the call on the same platform (DeviceB::packed_by), whichever first
// needs a piece packing it.
template <class T>
class PackedB final : public SentB<T> {
 public:
  PackedB(std::shared_ptr<DeviceB<T>> b, const Share<T>& s, int64_t& bytes_packed)
      : SentB<T>(std::move(b), s), bytes_packed_(bytes_packed) {}
  bool packs() const override { return true; }
  // B is on its way: the other devices of the platform may copy it from where it is packed.
  void offer_packed(const CallB& call) override {
    if (call.packed && !this->b_->packed_by && !*call.packed) *call.packed = this->b_;
  }

 private:
  typename SentB<T>::Stored source(int64_t q0, int64_t q1, int threads) override {
    DeviceB<T>& b = *this->b_;
    bytes_packed_ += b.pack_to(this->s_, q1, threads);
    const int64_t b_cols = this->s_.b_cols();
    return {b.packed() + q0 * b_cols, b_cols};
  }
  bool with_host() const override { return !this->b_->packed_by; }

  int64_t& bytes_packed_;
};

// B copied as stored straight from the caller's memory, unstaged: pinned, or any with the direct
// kernel (the driver copies ordinary memory itself).
template <class T>
class UnstagedB final : public SentB<T> {
 public:
  using SentB<T>::SentB;
  bool packs() const override { return false; }
  void offer_packed(const CallB&) override {}

 private:
  typename SentB<T>::Stored source(int64_t q0, int64_t, int) override {
    return {this->s_.b + q0 * this->s_.ldb, this->s_.ldb};
  }
  bool with_host() const override { return false; }
};

// B as another device's share of this call packed it, in memory this device can copy from
// (pinned memory of the same context), or none.
template <class T>
std::shared_ptr<DeviceB<T>> packed_elsewhere(const Device& dev, const Share<T>& s,
                                             const CallB& call) {
  if (!call.packed || !*call.packed) return nullptr;
  auto other = std::dynamic_pointer_cast<DeviceB<T>>(*call.packed);
  if (!other || &other->dev == &dev || other->lost || other->b.mapped == nullptr ||
      !other->same_host(s) || other->dev.context()() != dev.context()())
    return nullptr;
  return other;
}

}  // namespace

template <class T>
std::unique_ptr<ShareB<T>> share_b(Device& dev, const Share<T>& s, bool as_stored, bool kb,
                                   int64_t ldb, const CallB& call, int64_t& bytes_packed) {
  if (auto resident = call.resident_b ? kept_b_in(*call.resident_b, dev, s, kb, ldb) : nullptr)
    return std::make_unique<ReusedB<T>>(std::move(resident));
  auto* kept = call.on_device ? dynamic_cast<DeviceB<T>*>(call.on_device->get()) : nullptr;
  if (kept && kept->holds(s, kb, ldb))
    return std::make_unique<ReusedB<T>>(std::static_pointer_cast<DeviceB<T>>(*call.on_device));
  auto b = std::make_shared<DeviceB<T>>(dev, s, kb, ldb);
  b->pinned = in_pinned_block(dev, s.b, s.b_bytes());
  if (as_stored || b->pinned) return std::make_unique<UnstagedB<T>>(std::move(b), s);
  b->packed_by = packed_elsewhere(dev, s, call);
  return std::make_unique<PackedB<T>>(std::move(b), s, bytes_packed);
}

#define INSTANTIATE(T)                                                                          \
  template std::unique_ptr<ShareB<T>> share_b<T>(Device&, const Share<T>&, bool, bool, int64_t, \
                                                 const CallB&, int64_t&);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::gpu
