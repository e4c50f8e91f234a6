// A share on a discrete device, the pipeline: C's rows in chunks, so copies overlap the kernels.
//
// B goes first, in pieces so that its copy overlaps its packing (or not at all: B kept on the
// device by an earlier share of the call; discrete_b.cpp). Then, chunk by chunk, the rows of A
// (and of C where the kernel reads them) that the chunk needs go in on one queue, the chunk's
// kernel runs on a second once its inputs are there, and its rows of C come back on a third;
// discrete_operands.cpp says how each operand's rows travel (packed through pinned staging, or
// unstaged from the caller's memory) and how C's reach the caller (C in ordinary memory never
// goes in: the host adds beta C as it unpacks). Queues are linked by events, not callbacks, and
// flushed as they fill, so the device copies and computes while the host packs the next chunk;
// a share of one chunk runs in order on one queue (discrete_commands.cpp). Each chunk is a GEMM
// of its own on tight panels in the device buffers; when the kernel reads B as stored, the first
// chunk runs slab by slab of K as B's pieces arrive.
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "base/precision.hpp"
#include "base/seams.hpp"
#include "cpu/topology.hpp"
#include "gpu/discrete_b_cl.hpp"
#include "gpu/discrete_commands_cl.hpp"
#include "gpu/discrete_operands_cl.hpp"
#include "gpu/share_cl.hpp"
#include "model/chunks.hpp"

namespace tandem::detail::gpu {
namespace {

template <class T>
class DiscreteShare final : public ShareImpl {
 public:
  DiscreteShare(Device& dev, const Share<T>& s, CallB b)
      : dev_(dev), s_(s), call_b_(b), cmd_(dev, bytes_in, bytes_out) {}

  // Whatever happened, nothing may still read or write host memory once this object is gone.
  // Staging goes back to the pool only once nothing uses it (a failed drain keeps it out).
  ~DiscreteShare() override {
    if (!drain()) {
      // Whatever the device may still read or write is kept aside rather than freed or reused:
      // B (and the staging it was copied from), and this share's own staging.
      if (b_) b_->lose();
      if (ops_) ops_->lose_staging();
      return;
    }
    cmd_.give_queues();
    cmd_.give_kernels();
    if (ops_) ops_->give_staging();
  }
  DiscreteShare(const DiscreteShare&) = delete;
  DiscreteShare& operator=(const DiscreteShare&) = delete;

  // B's first piece and the first chunk's start, so the device has work before the host turns to
  // anything else; start_step() sends B's other pieces, and feed() enqueues the rest.
  void start(const SharedParams& shared) override {
    params_ = shared;
    f_ = facts_of(shared);
    ka_ = read_transposed(f_.a_t, s_.trans_a);
    kb_ = read_transposed(f_.b_t, s_.trans_b);
    lda_ = padded(s_.k, f_.vw);
    ldc_ = padded(s_.n, f_.vwn);
    find_resident_a();
    plan_chunks();
    cmd_.take_queues(chunks_.size(), f_.queues);
    take_operands();
    take_kernels();
    // The first chunk runs slab by slab of K where B's pieces are such slabs and more chunks
    // follow; else once all of B is there.
    send_piece_ = b_->plan_pieces(static_cast<int64_t>(chunks_.size())) && chunks_.size() > 1
                      ? &DiscreteShare::send_piece_and_slab
                      : &DiscreteShare::send_piece_then_chunk;
    send_piece();
    b_->offer_packed(call_b_);
    call_b_.packed = nullptr;  // the call's slot is asked only while the share starts
  }

  bool start_step() override {
    if (!started()) send_piece();
    return !started();
  }

  // Whether B and the first chunk are enqueued (start_done()).
  bool started() const { return next_ > 0; }

  bool drain() noexcept override {
    return drained(dev_, [&] {
      // One in-order queue whose last copy was waited for has nothing left.
      if (!cmd_.ordered() || confirmed_ < s_.m) cmd_.finish();
    });
  }

  // The device computes into its own memory, so a chunk's rows reach the caller's C only by its
  // copy back, which starts after its kernel has completed; rows [0, confirmed_) landed. What
  // the rest hold depends on where they came back to (CRows::salvage).
  Salvaged salvage() noexcept override {
    const bool drained = drain();
    return ops_ ? ops_->c().salvage(drained, confirmed_, chunks_) : Salvaged{};
  }

  void flush() override { cmd_.flush(); }

  bool submitted() override {
    return kernel_event_() == nullptr || status_of(kernel_event_) <= CL_SUBMITTED;
  }
  bool feeds() const override { return true; }

  void feed(int host_threads) override {
    host_threads_ = std::max(1, host_threads);
    while (!started()) send_piece();
    for (; next_ < chunks_.size(); ++next_) launch(chunks_[next_], send_inputs(chunks_[next_]));
  }

  // Chunk by chunk, as each arrives: its rows of C into the caller's array.
  void wait() override {
    if (next_ < chunks_.size()) feed(host_threads_);
    std::vector<std::pair<cl_ulong, cl_ulong>> ran;  // each kernel's start and end (if timed)
    const auto add = [&ran, timed = s_.timed](const cl::Event& ev) {
      ran.emplace_back(timed ? ev.getProfilingInfo<CL_PROFILING_COMMAND_START>() : 0,
                       timed ? ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() : 0);
    };
    for (const Chunk& ch : chunks_) {
      injected_failure(dev_.info(), s_, ch.r0, ch.r1 - ch.r0, false);
      cl::WaitForEvents({ch.read});
      add(ch.kernel);
      for (const cl::Event& slab : ch.slabs) add(slab);
      ops_->c().land(ch, host_threads_);
      confirmed_ = ch.r1;
    }
    launches = static_cast<int>(ran.size());
    // Transposes ran on the first kernel queue before the kernels that wait for them: done too.
    for (const cl::Event& t : cmd_.transposes()) add(t);
    kernel_seconds = busy_seconds(std::move(ran));
  }

 private:
  // Rows of C per chunk (gemm_params.hpp's rule, which the cost model predicts with).
  static int64_t chunk_rows(const Share<T>& s, const KernelFacts& f, const DeviceInfo& di) {
    const size_t bytes = static_cast<size_t>(s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(T);
    return cost::chunk_rows(s.m, s.n, bytes, f.mwg, f.nwg, di.compute_units, f.chunk_fill,
                            seams::overlap_from());
  }

  // A resident A on this device whose rows hold the share's (CallB::resident_a), and where the
  // share's begin there.
  void find_resident_a() {
    if (call_b_.resident_a)
      resident_a_ = kept_a_in(*call_b_.resident_a, dev_, s_, ka_, f_, lda_, &resident_row0_);
  }

  // The chunks, each a whole number of launches, and A's panels one after another on the device
  // (or, A resident, the chunks' rows where the kept A has them).
  void plan_chunks() {
    const int64_t step = std::min(chunk_rows(s_, f_, dev_.info()), launch_step(f_, s_.m));
    for (int64_t r0 = 0; r0 < s_.m; r0 += step) {
      if (resident_a_) {
        const int64_t row = resident_row0_ + r0;
        chunks_.push_back({r0,
                           std::min(s_.m, r0 + step),
                           {},
                           {},
                           {},
                           ka_ ? row : row * lda_,
                           ka_ ? resident_a_->dev_ld : lda_});
        continue;
      }
      const int64_t r1 = std::min(s_.m, r0 + step), ld = ka_ ? padded(r1 - r0, f_.vw) : lda_;
      chunks_.push_back({r0, r1, {}, {}, {}, a_elements_, ld});
      a_elements_ += (ka_ ? s_.k : r1 - r0) * ld;
    }
  }

  int64_t padded(int64_t elements, int width) const { return gpu::padded(f_, elements, width); }

  // Each operand's path (the direct kernel, KERNEL 2, reads every operand as stored, from any
  // memory), and their staging from the pool.
  void take_operands() {
    ops_ = std::make_unique<Operands<T>>(dev_, s_, f_.direct, ka_, ldc_, bytes_packed, resident_a_);
    b_ = share_b(dev_, s_, f_.direct, kb_, padded(kb_ ? s_.k : s_.n, f_.vw), call_b_, bytes_packed);
    ops_->take_staging(a_elements_);
    b_->take_staging(dev_.staging());
    a_path = ops_->a().path();
    b_path = b_->path();
    c_path = ops_->c().path();
    cmd_.flush_as_filled(chunks_.size() > 1 || ops_->packs() || b_->packs());
  }

  void take_kernels() {
    // A resident A is indexed across all its rows, not only the share's.
    const bool long_index =
        long_indices(f_, s_) ||
        (resident_a_ && (resident_a_->ka ? resident_a_->k : resident_a_->m) * resident_a_->dev_ld +
                                f_.mwg + f_.kwg >=
                            (int64_t{1} << 31) - 1);
    const cl::Program& program = gemm_program(dev_, precision_of<T>(), ka_, kb_, long_index,
                                              params_, {s_.conj_a, s_.conj_b});
    // B kept on the device by an earlier share that transposed it still holds its scratch: the
    // transpose kernel is taken then too, though this share transposes nothing of B.
    cmd_.take_kernels(program, long_index,
                      ops_->a().transposes() || b_->device_b()->raw != nullptr);
  }

  void send_piece() { (this->*send_piece_)(); }

  // B's next piece to the device; after the last (transposed on the device if the kernel reads it
  // the other way), the first chunk. B kept on the device has no piece: the first chunk goes now.
  void send_piece_then_chunk() {
    if (b_->send_next(cmd_, host_threads_) && b_->more()) return;
    b_->finish(cmd_);
    launch(chunks_.front(), send_inputs(chunks_.front()));
    start_done();
  }

  // B's next piece to the device and the first chunk's kernel on it (its inputs go after B's
  // first piece), so the device computes while the rest of B arrives.
  void send_piece_and_slab() {
    if (const std::optional<size_t> q = b_->send_next(cmd_, host_threads_)) {
      if (*q == 0) first_inputs_ = send_inputs(chunks_.front());
      run_first_slab(*q);
      if (b_->more()) return;
    }
    b_->finish(cmd_);
    start_done();
  }

  // The first chunk's kernel on B's piece q of K, after that piece and the chunk's own inputs;
  // the in-order queue keeps the slabs in sequence, each adding to what the one before wrote.
  // After the last, the chunk's rows of C go back.
  void run_first_slab(size_t q) {
    Chunk& ch = chunks_.front();
    if (never_runs(ch)) return;
    const DeviceB<T>& b = *b_->device_b();
    std::vector<cl::Event> waits = first_inputs_;
    waits.push_back(b.ready[q]);
    const bool last = q + 1 == b.piece_ends.size();
    if (!last) ch.slabs.emplace_back();
    cl::Event* done = last ? &ch.kernel : &ch.slabs.back();
    run_slab(ch, q == 0 ? 0 : b.piece_ends[q - 1], b.piece_ends[q],
             q == 0 ? ops_->c().device_beta() : T(1), &waits, done);
    if (q == 0) kernel_event_ = *done;
    if (last) read_back(ch);
  }

  // The start is done: B is on the device for the next share of this call there, and feed() goes
  // on from the second chunk.
  void start_done() {
    if (call_b_.on_device) *call_b_.on_device = b_->device_b();
    next_ = 1;
    if (kernel_event_() == nullptr) kernel_event_ = chunks_.front().kernel;
  }

  // The chunk's rows of op(A) (and of C where the kernel reads them) to the device; the events
  // they complete.
  std::vector<cl::Event> send_inputs(const Chunk& ch) {
    return ops_->send(cmd_, ch, host_threads_);
  }

  // The seams' failing chunk: its kernel never runs, as a failed one would not, and wait() fails
  // there; the chunks after it run on, so salvage() must find them by their events.
  bool never_runs(const Chunk& ch) const {
    return injected_at(dev_.info(), ch.r0) &&
           (&ch == &chunks_.front() || !injected_at(dev_.info(), (&ch - 1)->r0));
  }

  // The chunk's kernel (after B and `own`, its inputs) and the copy of its rows of C back (the
  // first chunk's, when it runs in slabs: run_first_slab).
  void launch(Chunk& ch, const std::vector<cl::Event>& own) {
    if (never_runs(ch)) return;
    std::vector<cl::Event> ready = b_->kernel_waits(cmd_);
    cmd_.after(ready, own);
    run_slab(ch, 0, s_.k, ops_->c().device_beta(), ready.empty() ? nullptr : &ready, &ch.kernel);
    read_back(ch);
  }

  // C's chunk rows += alpha op(A)[rows, p0:p1] op(B)[p0:p1, :], with `beta` on the old values.
  void run_slab(Chunk& ch, int64_t p0, int64_t p1, T beta, const std::vector<cl::Event>* waits,
                cl::Event* done) {
    const Share<T>& s = s_;
    const int64_t rows = ch.r1 - ch.r0;
    const int64_t a_at = ch.a_at + (ka_ ? p0 * ch.a_ld : p0);
    cmd_.gemm(static_cast<size_t>(&ch - chunks_.data()), launch_for(rows, s.n, f_), rows, s.n,
              p1 - p0, s.alpha, {&ops_->a().buffer(), a_at, ch.a_ld}, b_->from_row(p0), beta,
              {&ops_->c().buffer(), ch.r0 * ldc_, ldc_}, waits, done);
  }

  // The chunk's rows of C back, after its kernel.
  void read_back(Chunk& ch) {
    std::vector<cl::Event> computed;  // one in-order queue copies after the kernel by itself
    cmd_.after(computed, {ch.kernel});
    ops_->c().receive(cmd_, ch, computed.empty() ? nullptr : &computed);
    cmd_.submit_out();
  }

  Device& dev_;
  Share<T> s_;
  CallB call_b_;  // where B is found and left for the shares after this one
  SharedParams params_;
  KernelFacts f_;                 // what the share reads of params_
  bool ka_ = false, kb_ = false;  // the layouts the kernel reads A and B in
  // Leading dimensions on the device (padded) of op(A) as rows (read transposed, each chunk's
  // panel has its own) and C; and the elements A's panels take.
  int64_t lda_ = 0, ldc_ = 0, a_elements_ = 0;
  Commands cmd_;
  std::unique_ptr<Operands<T>> ops_;        // A's and C's rows, each on its path
  std::shared_ptr<DeviceA<T>> resident_a_;  // A kept on the device, holding the share's rows
  int64_t resident_row0_ = 0;               // where they begin there
  std::unique_ptr<ShareB<T>> b_;            // B, kept on the device or sent by this share
  // B's next piece, and the first chunk's work on it (start()).
  void (DiscreteShare::*send_piece_)() = &DiscreteShare::send_piece_then_chunk;
  std::vector<Chunk> chunks_;
  size_t next_ = 0;  // the first chunk not yet enqueued (0 until B and the first chunk are)
  std::vector<cl::Event> first_inputs_;  // the first chunk's own inputs, when it runs in slabs
  cl::Event kernel_event_;
  int64_t confirmed_ = 0;  // rows [0, confirmed_) of C hold their final values
  int host_threads_ = topology::physical_cores();  // threads for packing and unpacking
};

}  // namespace

template <class T>
std::unique_ptr<ShareImpl> make_discrete_share(Device& device, const Share<T>& share, CallB b) {
  return std::make_unique<DiscreteShare<T>>(device, share, b);
}

#define INSTANTIATE(T) \
  template std::unique_ptr<ShareImpl> make_discrete_share<T>(Device&, const Share<T>&, CallB);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::gpu
