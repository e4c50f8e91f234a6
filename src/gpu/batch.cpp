// A batch's problems on one device (src/gpu/batch.hpp): stages of problems laid out in one
// staging buffer (every run's A, then B, then C), copied in with one write per operand, computed
// with one launch per run, C read back in one copy and unpacked, or read into the caller's C
// (unstaged); a few stages in flight.
#include "gpu/batch.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>

#include "base/precision.hpp"
#include "cpu/tasks.hpp"
#include "gpu/errors.hpp"
#include "gpu/host_pack.hpp"
#include "gpu/pinned_memory.hpp"
#include "gpu/share_cl.hpp"
#include "profile/defaults.hpp"

namespace tandem::detail::gpu {
namespace {

// Each operand's place in staging starts on a multiple of this many elements, so the kernel's
// vector loads find it aligned.
constexpr int64_t kAlign = 32;
// The most problems one launch's third dimension holds (NVIDIA's OpenCL, as CUDA's grids, takes
// at most 65535 work-groups along it).
constexpr int64_t kLaunchProblems = 65535;
// A run's operand is copied as stored, gaps and all, where that moves at most this much more than
// its problems' blocks packed tight.
constexpr double kRegionSlack = 1.25;

int64_t align_up(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Problems that one launch can compute together: one shape, one operation on each operand, one
// alpha (beta is applied by the host as C comes back).
template <class T>
bool same_launch(const Problem<T>& x, const Problem<T>& y) {
  return x.m == y.m && x.n == y.n && x.k == y.k && x.trans_a == y.trans_a &&
         x.trans_b == y.trans_b && x.conj_a == y.conj_a && x.conj_b == y.conj_b &&
         x.alpha == y.alpha;
}

// One operand of a run as the kernel reads it: where it starts in staging, its leading dimension
// and the distance from one problem's to the next's. `region`: the caller's blocks as stored,
// from `from` (elements of them); else each problem's block packed tight.
template <class T>
struct Part {
  int64_t offset = 0, ld = 0, stride = 0;
  bool region = false;
  bool from_caller = false;  // the region is written straight from tandem_malloc memory
  const T* from = nullptr;
  T* to = nullptr;  // C only: read into the caller's C there (unstaged), not unpacked
  int64_t elements = 0;
};

// A run of problems [first, first + count) of a stage that one launch computes.
template <class T>
struct Run {
  int64_t first = 0, count = 0;
  Part<T> a, b, c;
};

// A problem's A (is_a) or B as the caller stored it.
template <class T>
struct Stored {
  const T* at;
  int64_t rows, cols, ld;
  int64_t tight() const { return rows * cols; }  // elements packed tight
  int64_t spanned() const { return span(rows, cols, ld); }
};
template <class T>
Stored<T> stored(const Problem<T>& p, bool is_a) {
  return is_a ? Stored<T>{p.a, p.a_rows(), p.a_cols(), p.lda}
              : Stored<T>{p.b, p.b_rows(), p.b_cols(), p.ldb};
}

// How an input operand of the run [first, first + count) is laid out: as stored where its blocks
// lie at one stride with one leading dimension and that moves little more than packing them,
// else packed (tight, its leading dimension the block's width). A (is_a) or B.
template <class T>
Part<T> lay_out(Problems<T> problems, int64_t first, int64_t count, bool is_a, int64_t& cursor,
                const Device& device) {
  const Stored<T> x0 = stored(problems[first], is_a);
  // Addresses as integers: the blocks of a grouped batch may lie in unrelated arrays.
  const auto address = [&](int64_t i) {
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(stored(problems[i], is_a).at));
  };
  const auto size = static_cast<int64_t>(sizeof(T));
  const int64_t step = count > 1 ? address(first + 1) - address(first) : 0;
  bool uniform = step >= 0 && step % size == 0;
  for (int64_t i = first + 1; uniform && i < first + count; ++i)
    uniform = address(i) - address(i - 1) == step && stored(problems[i], is_a).ld == x0.ld;
  const int64_t stride = step / size;
  const int64_t region = (count - 1) * stride + x0.spanned();
  Part<T> part;
  part.offset = cursor;
  // The blocks as stored, gaps and all, only where every byte between them is the caller's: the
  // blocks touch or overlap (a stride no longer than a block's span, 0 included), or the whole
  // region lies in one tandem_malloc block. A grouped batch's blocks may be evenly spaced in
  // unrelated arrays, with allocator headers or unmapped pages between them.
  const bool pinned =
      uniform && in_pinned_block(device, x0.at, static_cast<size_t>(region) * sizeof(T));
  if (uniform && (stride <= x0.spanned() || pinned) &&
      static_cast<double>(region) <=
          kRegionSlack * static_cast<double>(count) * static_cast<double>(x0.tight())) {
    part.region = true;
    part.from = x0.at;
    part.elements = region;
    part.ld = x0.ld;
    part.stride = stride;
    part.from_caller = pinned;
  } else {
    part.ld = x0.cols;
    part.stride = x0.tight();
    part.elements = count * x0.tight();
  }
  cursor = align_up(cursor + part.elements);
  return part;
}

// Whether `q`'s C can follow `p`'s in one read into the caller's memory (q = p: whether p's can
// start one): beta 0 (the product needs none of C's old values, so a copy cut short by a failure
// leaves nothing the CPU's recomputing needs), C's rows packed tight (ldc = n), and q's C right
// after p's.
template <class T>
bool c_follows(const Problem<T>& p, const Problem<T>& q, int64_t after) {
  return q.beta == T(0) && q.ldc == q.n && q.c == p.c + after * p.m * p.n;
}

// Where a run's C can be read into the caller's, unstaged: every problem's C as c_follows says,
// all in one tandem_malloc block of the device's context. Else nullptr: C comes back through
// staging.
template <class T>
T* unstaged_c(Problems<T> problems, int64_t first, int64_t count, const Device& device) {
  const Problem<T>& p = problems[first];
  for (int64_t i = first; i < first + count; ++i)
    if (!c_follows(p, problems[i], i - first)) return nullptr;
  return in_pinned_block(device, p.c, static_cast<size_t>(count * p.m * p.n) * sizeof(T)) ? p.c
                                                                                          : nullptr;
}

}  // namespace

template <class T>
bool unstaged(const Device& device, const Problem<T>& first, const Problem<T>* next) {
  return is_discrete(device) && operands_pinned(device, first) && c_follows(first, first, 0) &&
         (next == nullptr || c_follows(first, *next, 1));
}

namespace {

// One stage of the pipeline: its problems, where they lie in its staging, and the events the
// host waits on.
template <class T>
struct Stage {
  ProblemRange range;
  std::vector<Run<T>> runs;
  int64_t elements = 0;            // the whole staging
  int64_t c_begin = 0, c_end = 0;  // C's parts, together at the end
  bool staged = false;  // it packs or unpacks on the host (its staging has a pinned buffer)
  std::unique_ptr<Staging> staging;
  cl::CommandQueue queue;
  cl::Event read;
  int64_t launches = 0, bytes_in = 0, bytes_out = 0, bytes_staged = 0;
  T* mapped() const { return static_cast<T*>(staging->mapped); }
};

// The elements of staging one problem takes at most: A, B and C packed tight, each aligned.
template <class T>
int64_t staged(const Problem<T>& p) {
  return stored(p, true).tight() + stored(p, false).tight() + p.m * p.n + 3 * kAlign;
}

// Problems of a chunk, from `first`, that fit in `budget` elements of staging (at least one).
template <class T>
int64_t fitting(Problems<T> problems, ProblemRange range, int64_t budget) {
  int64_t used = 0, count = 0;
  for (; count < range.count; ++count) {
    used += staged(problems[range.first + count]);
    if (used > budget && count > 0) break;
  }
  return std::max<int64_t>(count, 1);
}

// Host copies, each independent: run on `threads` threads, in the tasks' lane `lane` (one of the
// device's own, so its feeders never share an arena with the CPU's side of the batch).
class Copies {
 public:
  void add(std::function<void()> f) { jobs_.push_back(std::move(f)); }
  void run(int threads, int lane) {
    const auto n = static_cast<int64_t>(jobs_.size());
    if (n == 0) return;
    if (threads < 2 || n < 2) {
      for (auto& f : jobs_) f();
    } else {
      const int64_t blocks = std::min<int64_t>(n, 8 * threads);
      tasks::in_arena(
          threads,
          [&] {
            tasks::parallel_for(blocks, [&](int64_t b) {
              for (int64_t i = n * b / blocks; i < n * (b + 1) / blocks; ++i)
                jobs_[static_cast<size_t>(i)]();
            });
          },
          lane);
    }
    jobs_.clear();
  }

 private:
  std::vector<std::function<void()>> jobs_;
};

// A large region copied in pieces, so the threads share it.
template <class T>
void add_region(Copies& copies, const T* from, T* to, int64_t elements) {
  constexpr int64_t kPiece = int64_t{1} << 18;  // elements a job copies at most
  for (int64_t e = 0; e < elements; e += kPiece) {
    const int64_t n = std::min(kPiece, elements - e);
    copies.add([=] { std::memcpy(to + e, from + e, static_cast<size_t>(n) * sizeof(T)); });
  }
}

template <class T>
class DeviceBatch {
 public:
  DeviceBatch(Device& dev, const SharedParams& params, Problems<T> problems,
              const BatchHooks& hooks, int host_threads, const Stages& stages)
      : hooks_(hooks),
        dev_(dev),
        params_(params),
        f_(facts_of(params)),
        problems_(problems),
        threads_(std::max(1, host_threads)),
        in_flight_(static_cast<size_t>(std::max(1, stages.in_flight))) {
    // At least stage_products of the largest products where they need more than stage_bytes, up
    // to batch.stage_max_bytes; within half the device's largest allocation.
    int64_t largest = 0;
    for (const Problem<T>& p : problems) largest = std::max(largest, staged(p));
    const auto floor =
        std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(stages.products, 1)) *
                               static_cast<uint64_t>(largest) * sizeof(T),
                           profile::batch_stage_max_bytes());
    const auto cap = static_cast<int64_t>(
        std::min<uint64_t>(std::max<uint64_t>(profile::batch_stage_bytes(), floor),
                           std::max<uint64_t>(dev.info().max_alloc_bytes / 2, 1)));
    budget_ = std::max<int64_t>(cap / static_cast<int64_t>(sizeof(T)), 1);
    tail_ = std::max(stages.tail, 0);
    tail_floor_ = std::min(budget_, std::max(stages.tail_bytes / static_cast<int64_t>(sizeof(T)),
                                             std::max<int64_t>(stages.products, 1) * largest));
  }

  BatchStats run() {
    try {
      for (;;) {
        if (flight_.size() < in_flight_) {
          const ProblemRange r = next(!flight_.empty());
          if (r.count > 0) {
            start(r);
            signal();
            continue;
          }
          if (flight_.empty()) break;
        }
        finish();
      }
    } catch (const cl::Error& e) {
      fail(translate(e));
    } catch (const Error& e) {
      fail(e);
    } catch (const std::exception& e) {  // out of host memory: drained and left to the CPU too
      fail(Error(Error::Kind::Runtime, e.what()));
    }
    signal();
    for (cl::CommandQueue& q : queues_) dev_.give_queue(std::move(q), Device::Queue::Plain);
    release_kernel();
    return stats_;
  }

 private:
  // The next stage's problems: what is left of the last chunk, else a new chunk from the dealer.
  ProblemRange next(bool ahead) {
    if (pending_.count == 0) {
      pending_ = hooks_.take(ahead);
      if (pending_.count > 0) ++stats_.chunks;
      if (tail_ > 0) pending_staged_ = staged_total(pending_);
    }
    if (pending_.count == 0) return {};
    // A stage's staging at most: the budget, and with the tail rule 1/tail_ of what is left
    // where that is more than tail_floor_.
    const int64_t cap =
        tail_ > 0 ? std::min(budget_, std::max(tail_floor_, pending_staged_ / tail_)) : budget_;
    const ProblemRange r{pending_.first,
                         std::min(fitting(problems_, pending_, cap), pending_.count)};
    if (tail_ > 0) pending_staged_ -= staged_total(r);
    pending_.first += r.count;
    pending_.count -= r.count;
    return r;
  }

  // The staging the problems of `r` need at most (staged): one product's times their count where
  // the batch has one shape.
  int64_t staged_total(ProblemRange r) const {
    if (r.count == 0) return 0;
    if (problems_.one_shape) return r.count * staged(problems_[r.first]);
    int64_t total = 0;
    for (int64_t i = r.first; i < r.first + r.count; ++i) total += staged(problems_[i]);
    return total;
  }

  // Lays out, packs and enqueues a stage, and flushes it.
  void start(ProblemRange r) {
    // In flight from here: a failure from now on leaves its problems to the others.
    flight_.emplace_back();
    Stage<T>& s = flight_.back();
    s.range = r;
    lay_out_stage(s);
    s.staging = dev_.staging().take(
        static_cast<size_t>(std::max<int64_t>(s.elements, 1)) * sizeof(T), s.staged);
    if (queues_.size() < in_flight_) queues_.push_back(dev_.take_queue(Device::Queue::Plain));
    s.queue = queues_[next_queue_];
    next_queue_ = (next_queue_ + 1) % in_flight_;
    pack_stage(s);
    enqueue(s);
    s.queue.flush();
  }

  void lay_out_stage(Stage<T>& s) {
    for (int64_t i = s.range.first; i < s.range.first + s.range.count;) {
      int64_t j = i + 1;
      while (j < s.range.first + s.range.count && same_launch(problems_[i], problems_[j])) ++j;
      s.runs.push_back(Run<T>{i, j - i, {}, {}, {}});
      i = j;
    }
    int64_t cursor = 0;
    for (Run<T>& run : s.runs) run.a = lay_out(problems_, run.first, run.count, true, cursor, dev_);
    for (Run<T>& run : s.runs)
      run.b = lay_out(problems_, run.first, run.count, false, cursor, dev_);
    // C comes back packed, every run's together, in one read.
    s.c_begin = cursor;
    for (Run<T>& run : s.runs) {
      const Problem<T>& p = problems_[run.first];
      run.c.offset = cursor;
      run.c.ld = p.n;
      run.c.stride = p.m * p.n;
      run.c.elements = run.count * p.m * p.n;
      run.c.to = unstaged_c(problems_, run.first, run.count, dev_);
      cursor += run.c.elements;
      s.staged = s.staged || run.c.to == nullptr || !run.a.from_caller || !run.b.from_caller;
    }
    s.c_end = cursor;
    s.elements = cursor;
  }

  // The host's copies into staging: every packed block and every region not sent from the
  // caller's memory.
  void pack_stage(Stage<T>& s) {
    if (!s.staged) return;
    Copies copies;
    T* const base = s.mapped();
    for (const Run<T>& run : s.runs) {
      for (const bool is_a : {true, false}) {
        const Part<T>& part = is_a ? run.a : run.b;
        if (part.region) {
          if (!part.from_caller) add_region(copies, part.from, base + part.offset, part.elements);
          continue;
        }
        for (int64_t i = 0; i < run.count; ++i) {
          const Stored<T> x = stored(problems_[run.first + i], is_a);
          T* to = base + part.offset + i * part.stride;
          copies.add([x, to] { pack(x.at, x.rows, x.cols, x.ld, to, 1); });
        }
      }
    }
    copies.run(threads_, lane());
  }

  // The stage's writes, its launches and C's read, in order on its queue.
  void enqueue(Stage<T>& s) {
    const cl::Buffer& device = s.staging->device;
    T* const base = s.mapped();
    const auto write = [&](const Part<T>& part) {
      if (part.elements == 0) return;
      const void* from = part.from_caller ? static_cast<const void*>(part.from)
                                          : static_cast<const void*>(base + part.offset);
      const size_t bytes = static_cast<size_t>(part.elements) * sizeof(T);
      s.queue.enqueueWriteBuffer(device, CL_FALSE, static_cast<size_t>(part.offset) * sizeof(T),
                                 bytes, from);
      s.bytes_in += static_cast<int64_t>(bytes);
      if (!part.from_caller) s.bytes_staged += static_cast<int64_t>(bytes);
    };
    for (const Run<T>& run : s.runs) write(run.a);
    for (const Run<T>& run : s.runs) write(run.b);
    const bool long_index = s.elements > std::numeric_limits<int32_t>::max();
    for (const Run<T>& run : s.runs) {
      const Problem<T>& p = problems_[run.first];
      cl::Kernel& kernel = kernel_for(p, long_index);
      int arg = 0;
      auto index = [&](int64_t v) { set_index(kernel, arg, long_index, v); };
      index(p.m);
      index(p.n);
      index(p.k);
      kernel.setArg(arg++, p.alpha);
      for (const Part<T>* part : {&run.a, &run.b, &run.c}) {
        if (part == &run.c) kernel.setArg(arg++, T(0));  // beta: the host adds beta C
        kernel.setArg(arg++, device);
        index(part->offset);
        index(part->ld);
        index(part->stride);
      }
      const int first_arg = arg;
      const auto groups = [](int64_t extent, int64_t tile) { return (extent + tile - 1) / tile; };
      const auto across = static_cast<size_t>(groups(p.n, f_.nwg) * f_.ndimc),
                 down = static_cast<size_t>(groups(p.m, f_.mwg) * f_.mdimc);
      for (int64_t first = 0; first < run.count; first += kLaunchProblems) {
        arg = first_arg;
        index(first);
        const int64_t n = std::min(kLaunchProblems, run.count - first);
        s.queue.enqueueNDRangeKernel(
            kernel, cl::NullRange, cl::NDRange(across, down, static_cast<size_t>(n)),
            cl::NDRange(static_cast<size_t>(f_.ndimc), static_cast<size_t>(f_.mdimc), 1));
        ++s.launches;
      }
    }
    // C: each run's unstaged into the caller's, or consecutive runs' together into staging. The
    // queue is in order, so the last read's event says every one is done.
    const auto read = [&](int64_t from, int64_t to, T* caller_c) {
      const size_t bytes = static_cast<size_t>(to - from) * sizeof(T);
      // base exists only in a staged stage's staging: no arithmetic on it otherwise.
      T* into = caller_c != nullptr ? caller_c : base + from;
      s.queue.enqueueReadBuffer(device, CL_FALSE, static_cast<size_t>(from) * sizeof(T), bytes,
                                into, nullptr, &s.read);
      s.bytes_out += static_cast<int64_t>(bytes);
      if (caller_c == nullptr) s.bytes_staged += static_cast<int64_t>(bytes);
    };
    int64_t staged_from = s.c_begin;
    for (const Run<T>& run : s.runs) {
      if (run.c.to == nullptr) continue;
      if (run.c.offset > staged_from) read(staged_from, run.c.offset, nullptr);
      read(run.c.offset, run.c.offset + run.c.elements, run.c.to);
      staged_from = run.c.offset + run.c.elements;
    }
    if (s.c_end > staged_from) read(staged_from, s.c_end, nullptr);
  }

  // Waits for the oldest stage and unpacks its C into the caller's.
  void finish() {
    Stage<T>& s = flight_.front();
    s.read.wait();
    if (injected_at(dev_.info(), s.range.first)) {
      // As a copy cut short would leave C read unstaged into the caller's: not the product.
      for (const Run<T>& run : s.runs)
        if (run.c.to != nullptr) std::fill(run.c.to, run.c.to + run.c.elements, quiet_nan<T>());
      throw Error(Error::Kind::Runtime, "the test seam fail_device failed this batch at problem " +
                                            std::to_string(s.range.first));
    }
    Copies copies;
    const T* const base = s.mapped();
    for (const Run<T>& run : s.runs) {
      if (run.c.to != nullptr) continue;  // read into the caller's C already
      for (int64_t i = 0; i < run.count; ++i) {
        const Problem<T>& p = problems_[run.first + i];
        const T* from = base + run.c.offset + i * run.c.stride;
        if (p.beta == T(0))
          copies.add([&p, from] { unpack(from, p.m, p.n, p.c, p.ldc, 1); });
        else
          copies.add([&p, from] { unpack_adding(from, p.m, p.n, p.beta, p.c, p.ldc, 1); });
      }
    }
    copies.run(threads_, lane());
    // C holds the stage's products now (beta C added): the stage leaves the flight before its
    // staging goes back to the pool, which allocates and may throw, so that a failure then never
    // counts the stage unfinished and has the CPU add beta C again.
    std::unique_ptr<Staging> staging = std::move(s.staging);
    stats_.problems += s.range.count;
    stats_.launches += s.launches;
    stats_.bytes_in += s.bytes_in;
    stats_.bytes_out += s.bytes_out;
    stats_.bytes_staged += s.bytes_staged;
    const int64_t done = s.range.count;
    flight_.pop_front();
    if (hooks_.finished) hooks_.finished(done);
    dev_.staging().give(std::move(staging));
  }

  // The kernel for a run's operations, one program per (read layouts, conjugations, index width).
  cl::Kernel& kernel_for(const Problem<T>& p, bool long_index) {
    const cl::Program& program =
        gemm_program(dev_, precision_of<T>(), read_transposed(*params_, "A_T", p.trans_a),
                     read_transposed(*params_, "B_T", p.trans_b), long_index, params_,
                     Conjugate{p.conj_a, p.conj_b});
    for (auto& [prog, kernel] : kernels_)
      if (prog == program()) return kernel;
    kernels_.emplace_back(program(), dev_.programs().take_kernel(program, "gemm_batch"));
    programs_.push_back(program);
    return kernels_.back().second;
  }

  void release_kernel() {
    for (size_t i = 0; i < kernels_.size(); ++i)
      dev_.programs().give_kernel(programs_[i], "gemm_batch", std::move(kernels_[i].second));
    kernels_.clear();
    programs_.clear();
  }

  // After a failure: lets the device finish with the staging (retiring it if it cannot), and
  // throws what the device had taken and not finished.
  [[noreturn]] void fail(const Error& e) {
    signal();
    std::vector<ProblemRange> unfinished;
    bool c_written = false;
    for (const Stage<T>& s : flight_) {
      unfinished.push_back(s.range);
      const bool c_unstaged = std::any_of(s.runs.begin(), s.runs.end(),
                                          [](const Run<T>& run) { return run.c.to != nullptr; });
      c_written = c_written || (c_unstaged && s.read() != nullptr);
    }
    if (pending_.count > 0) unfinished.push_back(pending_);
    const bool ok = drained(dev_, [&] {
      for (cl::CommandQueue& q : queues_) q.finish();
    });
    for (Stage<T>& s : flight_)
      if (s.staging) {
        if (ok)
          dev_.staging().give(std::move(s.staging));
        else
          dev_.staging().lose(std::move(s.staging));
      }
    flight_.clear();
    if (ok)
      for (cl::CommandQueue& q : queues_) dev_.give_queue(std::move(q), Device::Queue::Plain);
    else
      for (cl::CommandQueue& q : queues_) dev_.keep(std::move(q));
    queues_.clear();
    kernels_.clear();
    programs_.clear();
    throw BatchFailure(e, std::move(unfinished), stats_, c_written);
  }

  // The tasks' lane of this device's feeders: its own, beside the CPU's (lane 0).
  int lane() const { return 1 + dev_.info().index; }

  // Calls hooks_.flushed the first time only.
  void signal() {
    if (signalled_) return;
    signalled_ = true;
    if (hooks_.flushed) hooks_.flushed();
  }

  const BatchHooks& hooks_;
  bool signalled_ = false;
  Device& dev_;
  const SharedParams& params_;
  KernelFacts f_;
  Problems<T> problems_;
  int threads_;
  size_t in_flight_;            // stages in flight at most, each on a queue of its own
  int64_t budget_ = 0;          // elements of staging a stage may use
  int tail_ = 0;                // Stages::tail
  int64_t tail_floor_ = 0;      // the least the tail rule's cap drops to, in elements
  int64_t pending_staged_ = 0;  // the staging pending_'s problems need (with tail_ only)
  ProblemRange pending_;
  std::deque<Stage<T>> flight_;
  std::vector<cl::CommandQueue> queues_;
  size_t next_queue_ = 0;
  std::vector<std::pair<cl_program, cl::Kernel>> kernels_;
  std::vector<cl::Program> programs_;
  BatchStats stats_;
};

}  // namespace

template <class T>
BatchStats run_batch(Device& device, const SharedParams& params, Problems<T> problems,
                     const BatchHooks& hooks, int host_threads, const Stages& stages) {
  return DeviceBatch<T>(device, params, problems, hooks, host_threads, stages).run();
}

#define INSTANTIATE(T)                                                                           \
  template BatchStats run_batch<T>(Device&, const SharedParams&, Problems<T>, const BatchHooks&, \
                                   int, const Stages&);                                          \
  template bool unstaged<T>(const Device&, const Problem<T>&, const Problem<T>*);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::gpu
