// What the parts of a discrete share (discrete_share.cpp, discrete_operands.cpp, discrete_b.cpp)
// enqueue through: its queues and kernels (Commands), the chunks of C's rows, and the pooled
// staging of one operand.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/seams.hpp"
#include "gpu/cl.hpp"
#include "gpu/device_cl.hpp"
#include "gpu/share_cl.hpp"
#include "gpu/staging_pool.hpp"

namespace tandem::detail::gpu {

// One chunk of a discrete share: C's rows [r0, r1), computed by one kernel (the first chunk, when
// it runs slab by slab of K, by one per slab), and what it needs of A on the device.
struct Chunk {
  int64_t r0 = 0, r1 = 0;
  cl::Event kernel, read;
  std::vector<cl::Event> slabs;  // the first chunk: its kernels on the earlier slabs of K
  int64_t a_at = 0, a_ld = 0;    // its panel of op(A) on the device: first element, leading dim
};

// A leading dimension on the device: `elements` rounded up to the kernel's vector width, so
// that interior tiles take gemm.cl's unchecked vector loads and stores (a_full, b_full and
// c_full need it). The direct kernel reads operands as stored: tight.
inline int64_t padded(const KernelFacts& f, int64_t elements, int width) {
  if (f.direct || width <= 0 || !seams::pad_rows()) return elements;
  return (elements + width - 1) / width * width;
}

// Whether the kernel for share s indexes its operands with 64 bits (INDEX_LONG, or offsets past
// 32-bit range).
template <class T>
bool long_indices(const KernelFacts& f, const Share<T>& s) {
  const int64_t tiles = f.mwg + f.nwg + f.kwg;
  return f.index_long != 0 || std::max({s.m * s.k, s.k * s.n, s.m * s.n}) +
                                      tiles * std::max({s.m, s.n, s.k, int64_t{1}}) >=
                                  (int64_t{1} << 31) - 1;
}

// The bytes of pooled staging for `elements` elements (at least one element's).
template <class T>
size_t staging_bytes(int64_t elements) {
  return std::max<size_t>(static_cast<size_t>(elements) * sizeof(T), sizeof(T));
}

// Pooled staging for one operand: a device buffer, and (when the host packs the operand or
// unpacks it) a mapped pinned buffer to pack it into.
template <class T>
struct Operand {
  std::unique_ptr<Staging> pooled;
  T* mapped = nullptr;
  const cl::Buffer& device() const { return pooled->device; }
  // Staging for `elements` elements from the pool, with a pinned buffer where `with_host`.
  void take(StagingPool& pool, int64_t elements, bool with_host) {
    pooled = pool.take(staging_bytes<T>(elements), with_host);
    mapped = static_cast<T*>(pooled->mapped);
  }
};

// A discrete share's queues and kernels, and what it enqueues on them: copies in and out,
// counted in the share's bytes_in and bytes_out, the gemm kernel on a chunk's rows, and
// transposes on the device. Queues and kernels come from the device's pools and go back once the
// share has drained them.
class Commands {
 public:
  Commands(Device& dev, int64_t& bytes_in, int64_t& bytes_out)
      : dev_(dev), bytes_in_(bytes_in), bytes_out_(bytes_out) {}
  Commands(const Commands&) = delete;
  Commands& operator=(const Commands&) = delete;

  // The queues for a share of `chunks` chunks. A share of one chunk has nothing to overlap: its
  // copies and kernel go in order on one queue, with no event lists and no queues to take beyond
  // it (what a small call's time is mostly made of). A pipeline of chunks has the kernels' queue,
  // one for copies in and one for copies out, and with QUEUES=2 a second kernels' queue.
  void take_queues(size_t chunks, int kernel_queues);
  void give_queues();
  // The gemm kernel of `program`, and its transpose kernel where an operand is transposed on the
  // device; their indices are 64-bit where `long_index`.
  void take_kernels(const cl::Program& program, bool long_index, bool transposes);
  void give_kernels();

  // Whether every command goes on one in-order queue, which runs them in the order enqueued.
  bool ordered() const { return in_q_ == &queue_ && out_q_ == &queue_; }
  // Appends to `waits` what a command must wait for of `events`, enqueued on this share's
  // queues: all of them, or none on one in-order queue.
  void after(std::vector<cl::Event>& waits, const std::vector<cl::Event>& events) const {
    if (!ordered()) waits.insert(waits.end(), events.begin(), events.end());
  }
  // Whether each queue is submitted as it fills, rather than once, whole, by flush(): in a
  // pipeline, or while the host packs the next operand (B's copy runs while A and C are packed:
  // without it, one-chunk calls from ordinary memory took 2-4% longer on the H100 host). A share
  // of one chunk that packs nothing is submitted once (each clFlush cost about 1.4 us on the H100
  // host, and a small call made nine).
  void flush_as_filled(bool on) { flush_as_filled_ = on; }
  void flush();
  void finish();

  // A rows x cols block at host (leading dimension host_ld) into `buffer` at element `at`, with
  // leading dimension `ld` there, after `waits`; a rectangle copy unless both are tight.
  template <class T>
  void copy_in(const cl::Buffer& buffer, int64_t at, int64_t ld, const T* host, int64_t rows,
               int64_t cols, int64_t host_ld, const std::vector<cl::Event>* waits, cl::Event* done);
  // A rows x cols block of `buffer` at element `at` (leading dimension ld there) to host (leading
  // dimension host_ld), after `waits`.
  template <class T>
  void copy_out(const cl::Buffer& buffer, int64_t at, int64_t ld, T* host, int64_t rows,
                int64_t cols, int64_t host_ld, const std::vector<cl::Event>* waits,
                cl::Event* done);
  // Submits the copies in (out) so far, where queues are submitted as they fill.
  void submit_in() { submit(*in_q_); }
  void submit_out() { submit(*out_q_); }

  // dst (cols x rows at element dst_at, leading dimension dst_ld) = src (rows x cols, tight at
  // element src_at)^T on the device, after `waits`, on the kernels' queue.
  void transpose(const cl::Buffer& src, int64_t src_at, const cl::Buffer& dst, int64_t dst_at,
                 int64_t dst_ld, int64_t rows, int64_t cols, const std::vector<cl::Event>& waits,
                 cl::Event* done);
  // The transposes enqueued so far, whose time counts as kernel time.
  const std::vector<cl::Event>& transposes() const { return transposes_; }

  // The gemm kernel on chunk `chunk`'s queue (chunks take turns where there are two): C = alpha
  // op(A) op(B) + beta C for the m x n x k operands given, after `waits`.
  template <class T>
  void gemm(size_t chunk, const Launch& launch, int64_t m, int64_t n, int64_t k, T alpha,
            const KernelOperand& a, const KernelOperand& b, T beta, const KernelOperand& c,
            const std::vector<cl::Event>* waits, cl::Event* done);

 private:
  void submit(cl::CommandQueue& q) {
    if (flush_as_filled_) q.flush();
  }
  // The share's queues, each once (a share of one chunk has one queue under every name).
  std::vector<cl::CommandQueue*> queues();

  Device& dev_;
  int64_t &bytes_in_, &bytes_out_;
  cl::CommandQueue queue_;                   // kernels (and transposes)
  cl::CommandQueue queue2_;                  // with QUEUES=2: every other chunk's kernel
  cl::CommandQueue copies_in_, copies_out_;  // a pipeline's queues for copies in and out
  // Where copies in and out go: those queues, or (one chunk, nothing to overlap) queue_.
  cl::CommandQueue *in_q_ = nullptr, *out_q_ = nullptr;
  bool flush_as_filled_ = false;
  const cl::Program* program_ = nullptr;  // the program kernel_ and transpose_ came from
  cl::Kernel kernel_, transpose_;
  bool long_index_ = false;
  size_t transpose_tile_ = 1;
  std::vector<cl::Event> transposes_;
};

}  // namespace tandem::detail::gpu
