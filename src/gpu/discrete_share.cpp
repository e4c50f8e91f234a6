// A share on a discrete device: C's rows in chunks, so copies overlap the kernels.
//
// B goes first (in pieces, so its copy overlaps its packing); then, chunk by chunk, the rows of A
// (and of C when beta != 0 and C is copied as it is) that the chunk needs go in on one queue, the
// chunk's kernel runs on a second once its inputs are there, and its rows of C come back on a
// third. C in the caller's ordinary memory never goes in: the device computes alpha op(A) op(B)
// alone, and the host adds beta C as it unpacks each chunk (C_ADDED below). Queues are linked by
// events, not callbacks, and flushed as they fill, so the device copies and computes while the
// host packs the next chunk. Each chunk is a GEMM of its own on tight panels in the device
// buffers. An operand in the caller's pinned memory (tandem_malloc) is copied straight from (and
// C straight into) the caller's arrays, with no packing. B can stay on the device for the next
// share of the same call (KeptB: dynamic balance's chunks), which then sends only its A and C; and
// B packed for one device is copied from the same pinned staging to the others of its platform.
#include <algorithm>
#include <mutex>
#include <vector>

#include "base/precision.hpp"
#include "base/seams.hpp"
#include "cpu/topology.hpp"
#include "gpu/device_b.hpp"
#include "gpu/host_pack.hpp"
#include "gpu/pinned_memory.hpp"
#include "gpu/share_cl.hpp"
#include "model/chunks.hpp"

namespace tandem::detail::gpu {
namespace {

template <class T>
class DiscreteShare final : public ShareImpl {
 public:
  DiscreteShare(Device& dev, const Share<T>& s, CallB b) : dev_(dev), s_(s), call_b_(b) {}

  // Whatever happened, nothing may still read or write host memory once this object is gone.
  // Staging goes back to the pool only once nothing uses it (a failed drain keeps it out).
  ~DiscreteShare() override {
    if (!drain()) {
      // Whatever the device may still read or write is kept aside rather than freed or reused:
      // B, the staging B was copied from (a share that used B kept on the device copied
      // nothing), and this share's own.
      if (b_) b_->lost = true;
      if (b_ && b_->packed_by && !b_reused_) b_->packed_by->lost = true;
      for (Operand<T>* op : {&a_, &c_}) dev_.staging().lose(std::move(op->pooled));
      dev_.staging().lose(std::move(a_raw_));
      return;
    }
    dev_.give_queue(std::move(queue_));
    dev_.give_queue(std::move(queue2_));
    dev_.give_queue(std::move(copies_in_), Device::Queue::Plain);
    dev_.give_queue(std::move(copies_out_), Device::Queue::Plain);
    if (program_ != nullptr) {
      dev_.programs().give_kernel(*program_, "gemm", std::move(kernel_));
      dev_.programs().give_kernel(*program_, "transpose", std::move(transpose_));
    }
    for (Operand<T>* op : {&a_, &c_})
      if (op->pooled) dev_.staging().give(std::move(op->pooled));
    if (a_raw_) dev_.staging().give(std::move(a_raw_));
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
    ldb_ = padded(kb_ ? s_.k : s_.n, f_.vw);
    ldc_ = padded(s_.n, f_.vwn);
    const int64_t step = std::min(chunk_rows(s_, f_, dev_.info()), launch_step(f_, s_.m));
    for (int64_t r0 = 0; r0 < s_.m; r0 += step) {  // A's panels one after another
      const int64_t r1 = std::min(s_.m, r0 + step), ld = ka_ ? padded(r1 - r0, f_.vw) : lda_;
      chunks_.push_back({r0, r1, {}, {}, {}, a_elements_, ld});
      a_elements_ += (ka_ ? s_.k : r1 - r0) * ld;
    }
    make_queues();
    take_staging();
    build_kernels();
    if (b_reused_) {
      launch(chunks_.front(), send_inputs(chunks_.front()));
      start_done();
      return;
    }
    plan_pieces();
    send_piece();
    // B is on its way: the other devices of the platform may copy it from where it is packed.
    if (call_b_.packed && !b_->direct && !b_->packed_by && !*call_b_.packed) *call_b_.packed = b_;
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
      if (!one_queue() || confirmed_ < s_.m)  // else its last copy was waited for: all done
        for (cl::CommandQueue* q : queues()) q->finish();
    });
  }

  // The device computes into its own memory, so a chunk's rows reach the caller's C only by its
  // copy back, which starts after its kernel has completed. Staged chunks reach C when the host
  // unpacks them: rows [0, confirmed_). A chunk copied straight into the caller's C holds its final
  // values once its copy completed, and its old ones while its kernel has not completed (a
  // failed kernel is never copied back). The one case left is a copy that failed partway after
  // its kernel completed: its rows cannot be trusted, and the share reports C touched. Queues
  // that cannot be drained touch nothing of a staged C (not c_direct_): the host alone writes the
  // caller's C there.
  Salvaged salvage() noexcept override {
    Salvaged s;
    s.stopped = drain() || !c_direct_;
    if (confirmed_ > 0) s.finished.push_back({0, confirmed_});
    if (!s.stopped || !c_direct_) return s;
    for (const Chunk& ch : chunks_) {
      if (ch.r1 <= confirmed_) continue;
      if (status_of(ch.read) == CL_COMPLETE)
        s.finished.push_back({ch.r0, ch.r1 - ch.r0});
      else if (status_of(ch.kernel) == CL_COMPLETE && ch.read() != nullptr)
        s.stopped = false;  // a copy cut short
    }
    return s;
  }

  void flush() override {
    for (cl::CommandQueue* q : queues()) q->flush();
  }

  bool submitted() override {
    return kernel_event_() == nullptr || status_of(kernel_event_) <= CL_SUBMITTED;
  }
  bool feeds() const override { return true; }

  void feed(int host_threads) override {
    host_threads_ = std::max(1, host_threads);
    while (!started()) send_piece();
    for (; next_ < chunks_.size(); ++next_) launch(chunks_[next_], send_inputs(chunks_[next_]));
    last_event_ = chunks_.back().read;
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
      if (!c_direct_) {
        const T* from = c_.mapped + ch.r0 * s_.n;
        T* to = s_.c + ch.r0 * s_.ldc;
        const int64_t rows = ch.r1 - ch.r0;
        if (c_added_)
          unpack_adding(from, rows, s_.n, s_.beta, to, s_.ldc, host_threads_);
        else
          unpack(from, rows, s_.n, to, s_.ldc, host_threads_);
        bytes_packed += rows * s_.n * static_cast<int64_t>(sizeof(T));
      }
      confirmed_ = ch.r1;
    }
    launches = static_cast<int>(ran.size());
    // Transposes ran on the first kernel queue before the kernels that wait for them: done too.
    for (const cl::Event& t : transposes_) add(t);
    kernel_seconds = busy_seconds(std::move(ran));
  }

 private:
  struct Chunk {
    int64_t r0 = 0, r1 = 0;
    cl::Event kernel, read;
    std::vector<cl::Event> slabs;  // the first chunk: its kernels on the earlier slabs of K
    int64_t a_at = 0, a_ld = 0;    // its panel of op(A) on the device: first element, leading dim
  };

  // The beta the kernel computes with.
  T device_beta() const { return c_added_ ? T(0) : s_.beta; }

  // Rows of C per chunk (gemm_params.hpp's rule, which the cost model predicts with).
  static int64_t chunk_rows(const Share<T>& s, const KernelFacts& f, const DeviceInfo& di) {
    const size_t bytes = static_cast<size_t>(s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(T);
    return cost::chunk_rows(s.m, s.n, bytes, f.mwg, f.nwg, di.compute_units, f.chunk_fill,
                            seams::overlap_from());
  }

  // The share's queues, each once (a share of one chunk has one queue under every name).
  std::vector<cl::CommandQueue*> queues() {
    std::vector<cl::CommandQueue*> out;
    for (cl::CommandQueue* q : {in_q_, &queue_, &queue2_, out_q_})
      if (q != nullptr && (*q)() != nullptr &&
          std::none_of(out.begin(), out.end(),
                       [q](cl::CommandQueue* o) { return (*o)() == (*q)(); }))
        out.push_back(q);
    return out;
  }

  // Submits what q holds so far where the device has something to do while the host goes on:
  // in a pipeline, or while the host packs the next operand (B's copy runs while A and C are
  // packed: without it, one-chunk calls from ordinary memory took 2-4% longer on the H100 host).
  // A share of one chunk that packs nothing is submitted once, whole, by flush() (each clFlush
  // cost about 1.4 us on the H100 host, and a small call made nine).
  void submit(cl::CommandQueue& q) {
    if (chunks_.size() > 1 || host_packs()) q.flush();
  }
  bool one_queue() const { return in_q_ == &queue_ && out_q_ == &queue_; }  // make_queues()
  // Whether some operand is packed or unpacked on the host.
  bool host_packs() const { return !a_direct_ || !c_direct_ || (!b_reused_ && !b_->direct); }

  // The kernels' queue, and queues for the copies in and out. A share of one chunk has nothing
  // to overlap: its copies and kernel go in order on the one queue, with no event lists and no
  // queues to create beyond it (what a small call's time is mostly made of).
  void make_queues() {
    queue_ = dev_.take_queue();
    if (chunks_.size() == 1) {
      in_q_ = out_q_ = &queue_;
      return;
    }
    copies_in_ = dev_.take_queue(Device::Queue::Plain);
    copies_out_ = dev_.take_queue(Device::Queue::Plain);
    in_q_ = &copies_in_;
    out_q_ = &copies_out_;
    if (f_.queues > 1) queue2_ = dev_.take_queue();
  }

  // Operands the caller keeps in pinned memory are copied as they are ("direct"): they need
  // device buffers only. So is every operand of the direct kernel (KERNEL 2), which reads them as
  // stored, from any memory: the driver copies ordinary memory itself, and the host packs
  // nothing. An operand the kernel reads in the other layout goes to the device as stored, into
  // scratch, and the device transposes it (a host-side transposing pack cost more than the copy
  // on the H100 host). B already on the device (kept by an earlier share of this call) is used
  // as it is.
  void take_staging() {
    const Share<T>& s = s_;
    const bool as_stored = f_.direct;
    const bool a_pinned = in_pinned_block(dev_, s.a, s.a_bytes()),
               c_pinned = in_pinned_block(dev_, s.c, s.c_bytes());
    a_direct_ = as_stored || a_pinned;
    c_direct_ = as_stored || c_pinned;
    c_added_ = !c_direct_ && s.beta != T(0);
    auto* kept = call_b_.on_device ? dynamic_cast<DeviceB<T>*>(call_b_.on_device->get()) : nullptr;
    b_reused_ = kept && kept->holds(s, kb_, ldb_);
    if (b_reused_) {
      b_ = std::static_pointer_cast<DeviceB<T>>(*call_b_.on_device);
    } else {
      b_ = std::make_shared<DeviceB<T>>(dev_, s, kb_, ldb_);
      b_->pinned = in_pinned_block(dev_, s.b, s.b_bytes());
      b_->direct = as_stored || b_->pinned;
      if (!b_->direct) b_->packed_by = packed_elsewhere(s);
    }
    a_path = a_pinned ? Report::Buffer::Pinned : Report::Buffer::Copy;
    b_path = b_->pinned ? Report::Buffer::Pinned : Report::Buffer::Copy;
    c_path = c_pinned ? Report::Buffer::Pinned : Report::Buffer::Copy;
    const auto bytes = [](int64_t elements) {
      return std::max<size_t>(static_cast<size_t>(elements) * sizeof(T), sizeof(T));
    };
    const auto take = [&](Operand<T>& op, int64_t elements, bool direct) {
      op.pooled = dev_.staging().take(bytes(elements), !direct);
      op.mapped = static_cast<T*>(op.pooled->mapped);
    };
    take(a_, a_elements_, a_direct_);
    take(c_, s.m * ldc_, c_direct_);
    if (ka_ != s.trans_a) a_raw_ = dev_.staging().take(bytes(s.m * s.k), false);
    if (b_reused_) return;
    take(b_->b, (kb_ ? s.n : s.k) * ldb_, b_->direct || b_->packed_by);
    if (kb_ != s.trans_b) b_->raw = dev_.staging().take(bytes(s.k * s.n), false);
  }

  // B as another device's share of this call packed it, in memory this device can copy from
  // (pinned memory of the same context), or none.
  std::shared_ptr<DeviceB<T>> packed_elsewhere(const Share<T>& s) const {
    if (!call_b_.packed || !*call_b_.packed) return nullptr;
    auto other = std::dynamic_pointer_cast<DeviceB<T>>(*call_b_.packed);
    if (!other || &other->dev == &dev_ || other->lost || other->b.mapped == nullptr ||
        !other->same_host(s) || other->dev.context()() != dev_.context()())
      return nullptr;
    return other;
  }

  void build_kernels() {
    const Share<T>& s = s_;
    const int64_t tiles = f_.mwg + f_.nwg + f_.kwg;
    long_index_ = f_.index_long != 0 || std::max({s.m * s.k, s.k * s.n, s.m * s.n}) +
                                                tiles * std::max({s.m, s.n, s.k, int64_t{1}}) >=
                                            (int64_t{1} << 31) - 1;
    program_ = &gemm_program(dev_, precision_of<T>(), ka_, kb_, long_index_, params_);
    kernel_ = dev_.programs().take_kernel(*program_, "gemm");
    if (!a_raw_ && !(b_ && b_->raw)) return;  // nothing to transpose on the device
    transpose_ = dev_.programs().take_kernel(*program_, "transpose");
    // The work-group the transpose requires (TILE_T in kernels/gemm.cl), asked once.
    transpose_tile_ =
        transpose_.getWorkGroupInfo<CL_KERNEL_COMPILE_WORK_GROUP_SIZE>(dev_.device())[0];
  }

  // A rows x cols block at host (leading dimension host_ld) into `buffer` at element `at`, with
  // leading dimension `ld` there; a rectangle copy unless both are tight.
  void copy_in(const cl::Buffer& buffer, int64_t at, int64_t ld, const T* host, int64_t rows,
               int64_t cols, int64_t host_ld, const std::vector<cl::Event>* waits,
               cl::Event* done) {
    constexpr size_t e = sizeof(T);
    const size_t row = static_cast<size_t>(cols) * e;
    if ((host_ld == cols && ld == cols) || rows == 1) {
      in_q_->enqueueWriteBuffer(buffer, CL_FALSE, static_cast<size_t>(at) * e,
                                row * static_cast<size_t>(rows), host, waits, done);
      return;
    }
    in_q_->enqueueWriteBufferRect(buffer, CL_FALSE, {static_cast<size_t>(at) * e, 0, 0}, {0, 0, 0},
                                  {row, static_cast<size_t>(rows), 1}, static_cast<size_t>(ld) * e,
                                  0, static_cast<size_t>(host_ld) * e, 0, host, waits, done);
  }

  // The same, counted in bytes_in (from the caller's memory).
  void write_block(const cl::Buffer& buffer, int64_t at, int64_t ld, const T* host, int64_t rows,
                   int64_t cols, int64_t host_ld, const std::vector<cl::Event>* waits,
                   cl::Event* done) {
    bytes_in += rows * cols * static_cast<int64_t>(sizeof(T));
    copy_in(buffer, at, ld, host, rows, cols, host_ld, waits, done);
  }

  // A rows x cols block of `buffer` at element `at` (leading dimension ld there) to host (leading
  // dimension host_ld), on the queue for copies out after `waits`.
  void copy_out(const cl::Buffer& buffer, int64_t at, int64_t ld, T* host, int64_t rows,
                int64_t cols, int64_t host_ld, const std::vector<cl::Event>* waits,
                cl::Event* done) {
    constexpr size_t e = sizeof(T);
    const size_t row = static_cast<size_t>(cols) * e;
    if ((host_ld == cols && ld == cols) || rows == 1) {
      out_q_->enqueueReadBuffer(buffer, CL_FALSE, static_cast<size_t>(at) * e,
                                row * static_cast<size_t>(rows), host, waits, done);
      return;
    }
    out_q_->enqueueReadBufferRect(buffer, CL_FALSE, {static_cast<size_t>(at) * e, 0, 0}, {0, 0, 0},
                                  {row, static_cast<size_t>(rows), 1}, static_cast<size_t>(ld) * e,
                                  0, static_cast<size_t>(host_ld) * e, 0, host, waits, done);
  }

  // A leading dimension on the device: `elements` rounded up to the kernel's vector width, so
  // that interior tiles take gemm.cl's unchecked vector loads and stores (a_full, b_full and
  // c_full need it). The direct kernel reads operands as stored: tight.
  int64_t padded(int64_t elements, int width) const {
    if (f_.direct || width <= 0 || !seams::pad_rows()) return elements;
    return (elements + width - 1) / width * width;
  }

  // B's pieces (DeviceB::plan_pieces). They are slabs of K when the kernel reads B as stored and
  // untransposed (k x n): then the first chunk runs slab by slab, each kernel waiting only for its
  // piece, so the device computes while the rest of B arrives.
  void plan_pieces() {
    b_->plan_pieces(s_.b_rows(), static_cast<int64_t>(chunks_.size()));
    k_slabs_ = !kb_ && !s_.trans_b && !b_->raw && b_->piece_ends.size() > 1 && chunks_.size() > 1;
  }

  // B's next piece (packed, unless pinned) to the device, and with slabs the first chunk's kernel
  // on it (its inputs go after B's first piece). After the last piece, B is transposed on the
  // device if the kernel reads it the other way, and without slabs the first chunk follows.
  void send_piece() {
    const Share<T>& s = s_;
    DeviceB<T>& b = *b_;
    if (const size_t q = piece_++; q < b.piece_ends.size()) {
      const int64_t q0 = q == 0 ? 0 : b.piece_ends[q - 1], q1 = b.piece_ends[q];
      const int64_t b_cols = s.b_cols();
      const T* host = s.b + q0 * s.ldb;
      int64_t ld = s.ldb;
      if (!b.direct) {
        bytes_packed += b.pack_to(s, q1, host_threads_);
        host = b.packed() + q0 * b_cols;
        ld = b_cols;
      }
      injected_b_failure(dev_.info(), q);
      b.ready.emplace_back();
      // As stored into scratch (tight) to be transposed, or into B's buffer at its padded width.
      const int64_t to_ld = b.raw ? b_cols : ldb_;
      write_block(b.raw ? b.raw->device : b.b.device(), q0 * to_ld, to_ld, host, q1 - q0, b_cols,
                  ld, nullptr, &b.ready.back());
      submit(*in_q_);
      if (k_slabs_) {
        if (q == 0) first_inputs_ = send_inputs(chunks_.front());
        run_first_slab(q);
      }
      if (piece_ < b.piece_ends.size()) return;
    }
    if (b.raw) {
      cl::Event done;
      transpose_on_device(b.raw->device, 0, b.b.device(), 0, ldb_, s.b_rows(), s.b_cols(), b.ready,
                          &done);
      b.ready = {done};
    }
    if (!k_slabs_) launch(chunks_.front(), send_inputs(chunks_.front()));
    start_done();
  }

  // The first chunk's kernel on B's piece q of K, after that piece and the chunk's own inputs;
  // the in-order queue keeps the slabs in sequence, each adding to what the one before wrote.
  // After the last, the chunk's rows of C go back.
  void run_first_slab(size_t q) {
    Chunk& ch = chunks_.front();
    if (never_runs(ch)) return;
    std::vector<cl::Event> waits = first_inputs_;
    waits.push_back(b_->ready[q]);
    const bool last = q + 1 == b_->piece_ends.size();
    if (!last) ch.slabs.emplace_back();
    cl::Event* done = last ? &ch.kernel : &ch.slabs.back();
    run_slab(queue_, ch, q == 0 ? 0 : b_->piece_ends[q - 1], b_->piece_ends[q],
             q == 0 ? device_beta() : T(1), &waits, done);
    if (q == 0) kernel_event_ = *done;
    if (last) read_back(ch);
  }

  // The start is done: B is on the device for the next share of this call there, and feed() goes
  // on from the second chunk.
  void start_done() {
    if (call_b_.on_device) *call_b_.on_device = b_;
    next_ = 1;
    if (kernel_event_() == nullptr) kernel_event_ = chunks_.front().kernel;
  }

  // dst (cols x rows at element dst_at, leading dimension dst_ld) = src (rows x cols, tight at
  // element src_at)^T on the device, after `waits`.
  void transpose_on_device(const cl::Buffer& src, int64_t src_at, const cl::Buffer& dst,
                           int64_t dst_at, int64_t dst_ld, int64_t rows, int64_t cols,
                           std::vector<cl::Event>& waits, cl::Event* done) {
    set_transpose_args(transpose_, long_index_, rows, cols, src, src_at, dst, dst_at, dst_ld);
    const size_t tile = transpose_tile_;
    const auto up = [tile](int64_t x) { return (static_cast<size_t>(x) + tile - 1) / tile * tile; };
    transposes_.emplace_back();
    queue_.enqueueNDRangeKernel(transpose_, cl::NullRange, cl::NDRange(up(cols), up(rows)),
                                cl::NDRange(tile, tile), &waits, &transposes_.back());
    *done = transposes_.back();
    submit(queue_);
  }

  // The chunk's rows of op(A) (and of C when beta != 0) to the device; the events they complete.
  std::vector<cl::Event> send_inputs(const Chunk& ch) {
    const Share<T>& s = s_;
    constexpr size_t e = sizeof(T);
    const int64_t rows = ch.r1 - ch.r0;
    std::vector<cl::Event> ready;
    // The chunk's panel of op(A) as stored (rows x k, or k x rows when A is transposed), tight at
    // element r0 * k on the host's staging and in scratch; in the kernel's buffer at ch.a_at with
    // leading dimension ch.a_ld.
    const int64_t tight_at = ch.r0 * s.k;
    const T* a_block = s.trans_a ? s.a + ch.r0 : s.a + ch.r0 * s.lda;  // its stored block
    const int64_t block_rows = s.trans_a ? s.k : rows, block_cols = s.trans_a ? rows : s.k;
    // As stored, into the kernel's buffer or, to be transposed there, into scratch.
    const cl::Buffer& a_target = a_raw_ ? a_raw_->device : a_.device();
    const int64_t target_at = a_raw_ ? tight_at : ch.a_at,
                  target_ld = a_raw_ ? block_cols : ch.a_ld;
    std::vector<cl::Event> a_in(1);
    if (a_direct_) {
      write_block(a_target, target_at, target_ld, a_block, block_rows, block_cols, s.lda, nullptr,
                  &a_in[0]);
    } else {
      T* panel = a_.mapped + tight_at;
      pack(a_block, block_rows, block_cols, s.lda, panel, host_threads_);
      bytes_in += rows * s.k * static_cast<int64_t>(e);
      bytes_packed += rows * s.k * static_cast<int64_t>(e);
      copy_in(a_target, target_at, target_ld, panel, block_rows, block_cols, block_cols, nullptr,
              &a_in[0]);
    }
    ready.emplace_back();
    if (a_raw_) {
      submit(*in_q_);
      transpose_on_device(a_raw_->device, tight_at, a_.device(), ch.a_at, ch.a_ld, block_rows,
                          block_cols, a_in, &ready.back());
    } else {
      ready.back() = a_in[0];
    }
    // Its rows of C, when beta makes the kernel read them.
    if (device_beta() != T(0)) {
      ready.emplace_back();
      if (c_direct_) {
        write_block(c_.device(), ch.r0 * ldc_, ldc_, s.c + ch.r0 * s.ldc, rows, s.n, s.ldc, nullptr,
                    &ready.back());
      } else {
        T* panel = c_.mapped + ch.r0 * s.n;
        pack(static_cast<const T*>(s.c + ch.r0 * s.ldc), rows, s.n, s.ldc, panel, host_threads_);
        bytes_in += rows * s.n * static_cast<int64_t>(e);
        bytes_packed += rows * s.n * static_cast<int64_t>(e);
        copy_in(c_.device(), ch.r0 * ldc_, ldc_, panel, rows, s.n, s.n, nullptr, &ready.back());
      }
    }
    submit(*in_q_);
    return ready;
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
    // Chunks take turns on two in-order queues when there are two: their kernels depend on
    // nothing but their events, so the device may start one chunk's work-groups while the last
    // of the one before still run, instead of idling through each chunk's tail.
    const size_t index = static_cast<size_t>(&ch - chunks_.data());
    cl::CommandQueue& kq = queue2_() != nullptr && index % 2 == 1 ? queue2_ : queue_;
    // One in-order queue runs the kernel after its inputs without a list to check.
    std::vector<cl::Event> ready;
    if (!one_queue() || b_reused_) ready = b_->ready;
    if (!one_queue()) ready.insert(ready.end(), own.begin(), own.end());
    run_slab(kq, ch, 0, s_.k, device_beta(), ready.empty() ? nullptr : &ready, &ch.kernel);
    read_back(ch);
  }

  // C's chunk rows += alpha op(A)[rows, p0:p1] op(B)[p0:p1, :], with `beta` on the old values.
  void run_slab(cl::CommandQueue& kq, Chunk& ch, int64_t p0, int64_t p1, T beta,
                std::vector<cl::Event>* waits, cl::Event* done) {
    const Share<T>& s = s_;
    const int64_t rows = ch.r1 - ch.r0;
    const int64_t a_at = ch.a_at + (ka_ ? p0 * ch.a_ld : p0);
    set_gemm_args(kernel_, long_index_, rows, s.n, p1 - p0, s.alpha, {&a_.device(), a_at, ch.a_ld},
                  {&b_->b.device(), p0 * ldb_, ldb_}, beta, {&c_.device(), ch.r0 * ldc_, ldc_});
    const Launch launch = launch_for(rows, s.n, f_);
    kq.enqueueNDRangeKernel(kernel_, cl::NullRange, launch.global, launch.local, waits, done);
    submit(kq);
  }

  // The chunk's rows of C back, after its kernel: into staging, or straight into the caller's C
  // (pinned, or any with the direct kernel; from here on its old values may be gone).
  void read_back(Chunk& ch) {
    const Share<T>& s = s_;
    const int64_t rows = ch.r1 - ch.r0;
    std::vector<cl::Event> computed;  // one in-order queue copies after the kernel by itself
    if (!one_queue()) computed.push_back(ch.kernel);
    bytes_out += rows * s.n * static_cast<int64_t>(sizeof(T));
    T* to = c_direct_ ? s.c + ch.r0 * s.ldc : c_.mapped + ch.r0 * s.n;
    copy_out(c_.device(), ch.r0 * ldc_, ldc_, to, rows, s.n, c_direct_ ? s.ldc : s.n,
             computed.empty() ? nullptr : &computed, &ch.read);
    submit(*out_q_);
  }

  Device& dev_;
  Share<T> s_;
  SharedParams params_;
  KernelFacts f_;                 // what the share reads of params_
  bool ka_ = false, kb_ = false;  // the layouts the kernel reads A and B in
  // Leading dimensions on the device (padded) of op(A) as rows (read transposed, each chunk's
  // panel has its own), B and C; and the elements A's panels take.
  int64_t lda_ = 0, ldb_ = 0, ldc_ = 0, a_elements_ = 0;
  // Copied straight from (C: into) the caller's memory: pinned, or any with the direct kernel.
  bool a_direct_ = false, c_direct_ = false;
  // C_ADDED: C is staged and beta != 0. Staging C's old values and sending them cost a host copy
  // and a bus copy; adding beta C on the host as each chunk is unpacked costs a read of C (from
  // ordinary memory on the H100 host, GPU alone at 16384 x 16384 x 256: beta = 0 ran 1.7-1.95x
  // as fast as beta = 1 before this). The kernel then computes with beta = 0, and C's rows change
  // only when the host has their product: a failed chunk leaves them as they were.
  bool c_added_ = false;
  bool long_index_ = false;
  cl::CommandQueue queue_;                   // kernels (and transposes)
  cl::CommandQueue queue2_;                  // with QUEUES=2: every other chunk's kernel
  cl::CommandQueue copies_in_, copies_out_;  // a pipeline's queues for copies in and out
  // Where copies in and out go: those queues, or (one chunk, nothing to overlap) queue_.
  cl::CommandQueue *in_q_ = nullptr, *out_q_ = nullptr;
  const cl::Program* program_ = nullptr;  // the program kernel_ and transpose_ came from
  cl::Kernel kernel_, transpose_;
  size_t transpose_tile_ = 1;
  std::vector<Chunk> chunks_;
  size_t next_ = 0;  // the first chunk not yet enqueued (0 until B and the first chunk are)
  CallB call_b_;     // where B is found and left for the shares after this one
  std::shared_ptr<DeviceB<T>> b_;  // B on the device, this share's or kept from an earlier one
  bool b_reused_ = false;          // B was on the device already: nothing of it is sent
  bool k_slabs_ = false;           // the first chunk runs slab by slab of K (plan_pieces)
  size_t piece_ = 0;               // B's next piece to send
  std::vector<cl::Event> first_inputs_;  // the first chunk's own inputs, when it runs in slabs
  std::vector<cl::Event> transposes_;    // operands transposed on the device
  Operand<T> a_, c_;
  std::unique_ptr<Staging> a_raw_;  // scratch for A as stored, before transposition
  cl::Event kernel_event_, last_event_;
  int64_t confirmed_ = 0;  // rows [0, confirmed_) of C hold their final values
  int host_threads_ = topology::physical_cores();  // threads for packing and unpacking
};

}  // namespace

template <class T>
std::unique_ptr<ShareImpl> make_discrete_share(Device& device, const Share<T>& share, CallB b) {
  return std::make_unique<DiscreteShare<T>>(device, share, b);
}
template std::unique_ptr<ShareImpl> make_discrete_share<float>(Device&, const Share<float>&, CallB);
template std::unique_ptr<ShareImpl> make_discrete_share<double>(Device&, const Share<double>&,
                                                                CallB);

}  // namespace tandem::detail::gpu
