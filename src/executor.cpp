// Running the planned shares of one call: the GPU's enqueued and flushed first, the CPU's beside
// it (on a thread of its own while the calling thread feeds a discrete GPU), both joined on every
// way out, and the CPU taking over whatever a failed GPU leaves.
#include "executor.hpp"

#include <exception>
#include <memory>
#include <system_error>
#include <thread>

#include "clock.hpp"
#include "cpu_share.hpp"
#include "gpu/share.hpp"
#include "log.hpp"
#include "plan.hpp"

namespace tandem::detail {
namespace {

// The GPU could not do its part. Under strategy gpu that is the caller's error; otherwise the
// CPU takes over, with one warning per process. C's old values must still be there.
template <class T>
void gpu_unavailable(const Problem<T>& p, const Request& req, const Error& e, bool c_touched,
                     Report& r) {
  if (c_touched && p.beta != T(0))
    throw Error(Error::Kind::OutputLost,
                std::string("the GPU failed after writing C in place and beta != 0, so C's old "
                            "values are lost: ") +
                    e.what());
  if (req.strategy == Strategy::Gpu) throw e;
  r.fell_back = true;
  r.fallback_reason = e.what();
  warn_once("gpu-fallback", std::string("GPU path unavailable, computing on the CPU: ") + e.what());
}

// Plans the GPU's share and enqueues it, flushed: nullptr (and rows 0) when it has no rows or
// cannot run.
template <class T>
std::unique_ptr<gpu::InFlight> start_gpu(const Problem<T>& p, const Options& o, const Request& req,
                                         GpuPlan& plan, Report& r) {
  try {
    plan = plan_gpu(p, o, req, r);
    if (plan.rows == 0) return nullptr;
    gpu::Share<T> s = p;  // the top rows of C
    s.m = plan.rows;
    auto inflight = gpu::enqueue(*plan.device, plan.params, s);
    r.t_gpu_enqueued = clock::now_ns();
    inflight->flush();
    r.t_flush = inflight->flushed_at_ns;  // set by the OpenCL layer when clFlush returned
    r.a = inflight->a_path;
    r.b = inflight->b_path;
    r.c = inflight->c_path;
    return inflight;
  } catch (const gpu::Failure& e) {
    gpu_unavailable(p, req, e, e.c_touched(), r);
  } catch (const Error& e) {
    if (e.kind() == Error::Kind::InvalidArgument) throw;
    gpu_unavailable(p, req, e, false, r);
  }
  plan.rows = 0;
  return nullptr;
}

// Joins a thread on every way out: the CPU share reads the caller's arrays.
struct Joiner {
  std::thread& t;
  ~Joiner() {
    if (t.joinable()) t.join();
  }
};

}  // namespace

template <class T>
void execute(const Problem<T>& p, const Options& o, Report& r) {
  r.t_start = clock::now_ns();
  const Request req = request(o);
  GpuPlan plan;
  std::unique_ptr<gpu::InFlight> inflight;
  if (req.strategy != Strategy::Cpu) inflight = start_gpu(p, o, req, plan, r);
  int64_t mg = plan.rows;

  // On a discrete device the calling thread keeps feeding the GPU (packing the rest of its rows,
  // unpacking C as it lands) while the CPU share runs on a thread of its own; otherwise the CPU
  // share runs here and the GPU is waited for after it.
  const bool beside = inflight && mg < p.m && inflight->feeds();
  const Cores cores = divide_cores(o, inflight != nullptr, beside, plan.profile_threads);
  r.cpu_threads = mg < p.m ? cores.cpu_threads : 0;
  if (inflight) {
    try {
      r.gpu_submitted_at_cpu_start = inflight->submitted();
    } catch (const Error&) {
      // A status that cannot be read now surfaces, with its cause, at the wait below.
    }
  }
  std::exception_ptr cpu_error;
  std::thread cpu_thread;
  const auto run_cpu = [&] {
    r.t_cpu_start = clock::now_ns();
    try {
      cpu_share(p, mg, p.m - mg, cores.cpu_threads, mg > 0);
    } catch (...) {
      cpu_error = std::current_exception();
    }
    r.t_cpu_end = clock::now_ns();
  };
  if (beside) {
    try {
      cpu_thread = std::thread(run_cpu);
    } catch (const std::system_error&) {
      run_cpu();  // no thread to be had: the CPU share runs here, the feeding after it
    }
  } else {
    run_cpu();
  }
  Joiner joiner{cpu_thread};

  if (inflight) {
    try {
      inflight->feed(cores.feeder);
      inflight->wait();
      r.t_gpu_done = clock::now_ns();
      r.gpu_kernel_seconds = inflight->kernel_seconds;
    } catch (const gpu::Failure& e) {
      if (cpu_thread.joinable()) cpu_thread.join();
      gpu_unavailable(p, req, e, e.c_touched(), r);
      inflight.reset();
      cpu_share(p, 0, mg, cores.cpu_threads, false);
      mg = 0;
    }
  }
  if (cpu_thread.joinable()) cpu_thread.join();
  if (cpu_error) std::rethrow_exception(cpu_error);
  r.gpu_rows = mg;
  r.cpu_rows = p.m - mg;
  r.strategy = mg == 0 ? Strategy::Cpu : mg == p.m ? Strategy::Gpu : Strategy::Hybrid;
  r.t_end = clock::now_ns();
}

template void execute<float>(const Problem<float>&, const Options&, Report&);
template void execute<double>(const Problem<double>&, const Options&, Report&);

}  // namespace tandem::detail
