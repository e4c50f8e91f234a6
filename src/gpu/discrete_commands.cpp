// A discrete share's queues and kernels, and the copies, transposes and gemm kernels it enqueues
// on them (discrete_commands_cl.hpp).
#include "base/precision.hpp"
#include "gpu/discrete_commands_cl.hpp"

namespace tandem::detail::gpu {

void Commands::take_queues(size_t chunks, int kernel_queues) {
  queue_ = dev_.take_queue();
  if (chunks == 1) {
    in_q_ = out_q_ = &queue_;
    return;
  }
  copies_in_ = dev_.take_queue(Device::Queue::Plain);
  copies_out_ = dev_.take_queue(Device::Queue::Plain);
  in_q_ = &copies_in_;
  out_q_ = &copies_out_;
  if (kernel_queues > 1) queue2_ = dev_.take_queue();
}

void Commands::give_queues() {
  dev_.give_queue(std::move(queue_));
  dev_.give_queue(std::move(queue2_));
  dev_.give_queue(std::move(copies_in_), Device::Queue::Plain);
  dev_.give_queue(std::move(copies_out_), Device::Queue::Plain);
}

void Commands::take_kernels(const cl::Program& program, bool long_index, bool transposes) {
  long_index_ = long_index;
  program_ = &program;
  kernel_ = dev_.programs().take_kernel(program, "gemm");
  if (!transposes) return;
  transpose_ = dev_.programs().take_kernel(program, "transpose");
  // The work-group the transpose requires (TILE_T in kernels/gemm.cl), asked once.
  transpose_tile_ =
      transpose_.getWorkGroupInfo<CL_KERNEL_COMPILE_WORK_GROUP_SIZE>(dev_.device())[0];
}

void Commands::give_kernels() {
  if (program_ == nullptr) return;
  dev_.programs().give_kernel(*program_, "gemm", std::move(kernel_));
  dev_.programs().give_kernel(*program_, "transpose", std::move(transpose_));
}

std::vector<cl::CommandQueue*> Commands::queues() {
  std::vector<cl::CommandQueue*> out;
  for (cl::CommandQueue* q : {in_q_, &queue_, &queue2_, out_q_})
    if (q != nullptr && (*q)() != nullptr &&
        std::none_of(out.begin(), out.end(), [q](cl::CommandQueue* o) { return (*o)() == (*q)(); }))
      out.push_back(q);
  return out;
}

void Commands::flush() {
  for (cl::CommandQueue* q : queues()) q->flush();
}

void Commands::finish() {
  for (cl::CommandQueue* q : queues()) q->finish();
}

template <class T>
void Commands::copy_in(const cl::Buffer& buffer, int64_t at, int64_t ld, const T* host,
                       int64_t rows, int64_t cols, int64_t host_ld,
                       const std::vector<cl::Event>* waits, cl::Event* done) {
  constexpr size_t e = sizeof(T);
  bytes_in_ += rows * cols * static_cast<int64_t>(e);
  const size_t row = static_cast<size_t>(cols) * e;
  if ((host_ld == cols && ld == cols) || rows == 1) {
    in_q_->enqueueWriteBuffer(buffer, CL_FALSE, static_cast<size_t>(at) * e,
                              row * static_cast<size_t>(rows), host, waits, done);
    return;
  }
  in_q_->enqueueWriteBufferRect(buffer, CL_FALSE, {static_cast<size_t>(at) * e, 0, 0}, {0, 0, 0},
                                {row, static_cast<size_t>(rows), 1}, static_cast<size_t>(ld) * e, 0,
                                static_cast<size_t>(host_ld) * e, 0, host, waits, done);
}

template <class T>
void Commands::copy_out(const cl::Buffer& buffer, int64_t at, int64_t ld, T* host, int64_t rows,
                        int64_t cols, int64_t host_ld, const std::vector<cl::Event>* waits,
                        cl::Event* done) {
  constexpr size_t e = sizeof(T);
  bytes_out_ += rows * cols * static_cast<int64_t>(e);
  const size_t row = static_cast<size_t>(cols) * e;
  if ((host_ld == cols && ld == cols) || rows == 1) {
    out_q_->enqueueReadBuffer(buffer, CL_FALSE, static_cast<size_t>(at) * e,
                              row * static_cast<size_t>(rows), host, waits, done);
    return;
  }
  out_q_->enqueueReadBufferRect(buffer, CL_FALSE, {static_cast<size_t>(at) * e, 0, 0}, {0, 0, 0},
                                {row, static_cast<size_t>(rows), 1}, static_cast<size_t>(ld) * e, 0,
                                static_cast<size_t>(host_ld) * e, 0, host, waits, done);
}

void Commands::transpose(const cl::Buffer& src, int64_t src_at, const cl::Buffer& dst,
                         int64_t dst_at, int64_t dst_ld, int64_t rows, int64_t cols,
                         const std::vector<cl::Event>& waits, cl::Event* done) {
  set_transpose_args(transpose_, long_index_, rows, cols, src, src_at, dst, dst_at, dst_ld);
  const size_t tile = transpose_tile_;
  const auto up = [tile](int64_t x) { return (static_cast<size_t>(x) + tile - 1) / tile * tile; };
  transposes_.emplace_back();
  queue_.enqueueNDRangeKernel(transpose_, cl::NullRange, cl::NDRange(up(cols), up(rows)),
                              cl::NDRange(tile, tile), &waits, &transposes_.back());
  *done = transposes_.back();
  submit(queue_);
}

template <class T>
void Commands::gemm(size_t chunk, const Launch& launch, int64_t m, int64_t n, int64_t k, T alpha,
                    const KernelOperand& a, const KernelOperand& b, T beta, const KernelOperand& c,
                    const std::vector<cl::Event>* waits, cl::Event* done) {
  // Chunks take turns on two in-order queues when there are two: their kernels depend on
  // nothing but their events, so the device may start one chunk's work-groups while the last
  // of the one before still run, instead of idling through each chunk's tail.
  cl::CommandQueue& kq = queue2_() != nullptr && chunk % 2 == 1 ? queue2_ : queue_;
  set_gemm_args(kernel_, long_index_, m, n, k, alpha, a, b, beta, c);
  kq.enqueueNDRangeKernel(kernel_, cl::NullRange, launch.global, launch.local, waits, done);
  submit(kq);
}

#define TANDEM_COMMANDS(T)                                                                         \
  template void Commands::copy_in<T>(const cl::Buffer&, int64_t, int64_t, const T*, int64_t,       \
                                     int64_t, int64_t, const std::vector<cl::Event>*, cl::Event*); \
  template void Commands::copy_out<T>(const cl::Buffer&, int64_t, int64_t, T*, int64_t, int64_t,   \
                                      int64_t, const std::vector<cl::Event>*, cl::Event*);         \
  template void Commands::gemm<T>(                                                                 \
      size_t, const Launch&, int64_t, int64_t, int64_t, T, const KernelOperand&,                   \
      const KernelOperand&, T, const KernelOperand&, const std::vector<cl::Event>*, cl::Event*);
TANDEM_FOR_EACH_ELEMENT(TANDEM_COMMANDS)
#undef TANDEM_COMMANDS

}  // namespace tandem::detail::gpu
