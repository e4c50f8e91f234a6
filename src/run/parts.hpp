// The executor's parts that both ways of sharing out the rows use (a private header):
// executor.cpp runs a call's static split, executor_dynamic.cpp deals the rows in chunks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "base/after_fork.hpp"
#include "base/clock.hpp"
#include "base/log.hpp"
#include "base/problem.hpp"
#include "gpu/share.hpp"
#include "plan/plan.hpp"
#include "run/simulated_apu.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// The rows [row0, row0 + rows) of p as a problem of their own.
template <class T>
Problem<T> rows_of(const Problem<T>& p, int64_t row0, int64_t rows) {
  Problem<T> s = p;
  s.m = rows;
  s.a = p.trans_a ? p.a + row0 : p.a + row0 * p.lda;
  s.c = p.c + row0 * p.ldc;
  return s;
}

// A device could not do its part. Under strategy gpu that is the caller's error while the call
// has nothing of C to answer for (`c_untouched`: no device wrote any row of it and none that
// might is in flight), so the error leaves C as the caller gave it. Otherwise, and under the
// other strategies, the CPU takes the rows the device had not finished, with one warning per
// process, so that C is right: no call throws with part of C new and part old. C's old values
// must still be there: `c_touched` says a device that wrote C in place could not be stopped.
template <class T>
void gpu_unavailable(const Problem<T>& p, const Request& req, const Error& e, bool c_touched,
                     bool c_untouched, Report& r) {
  if (c_touched && p.beta != T(0))
    throw Error(Error::Kind::OutputLost,
                std::string("the GPU failed and could not be stopped after it may have written C "
                            "in place with beta != 0, so C's old values cannot be trusted: ") +
                    e.what());
  // In a child forked after OpenCL was used, where no call can have the GPU, every call computes
  // on the CPU, under strategy gpu too (after_fork.hpp).
  if (req.strategy == Strategy::Gpu && c_untouched && !after_fork::opencl_lost()) throw e;
  r.fell_back = true;
  if (r.fallback_reason.empty()) r.fallback_reason = e.what();
  warn_once("gpu-fallback", std::string("GPU path unavailable, computing on the CPU: ") + e.what());
}

// A device whose queues could not be drained after it failed is out of use from now on
// (gpu::retire): said once.
inline void say_if_retired(const gpu::Device& device) {
  if (gpu::retired(device))
    warn_once("retired:" + std::to_string(gpu::info(device).index),
              "device " + gpu::description(device) +
                  " could not be drained after it failed: tandem will not use it again in this "
                  "process");
}

// Runs `f` on a thread of its own, or here when no thread can be had; joined by the destructor.
class Beside {
 public:
  explicit Beside(const std::function<void()>& f) {
    try {
      thread_ = std::thread(f);
    } catch (const std::system_error&) {
      f();
    }
  }
  ~Beside() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

// Enqueues and flushes one part; nullptr when it cannot run (its rows are then the CPU's).
// `packed_b`: B as an earlier part of the call packed it (gpu::CallB::packed); `first`: no part
// of the call was started before it (none can have written C).
template <class T>
std::unique_ptr<gpu::InFlight> start_part(const Problem<T>& p, const Request& req,
                                          const DevicePart& part,
                                          std::shared_ptr<gpu::KeptB>* packed_b, bool first,
                                          Report& r) {
  try {
    auto inflight = gpu::enqueue(*part.device, part.params, rows_of(p, part.row0, part.rows),
                                 gpu::CallB{nullptr, packed_b});
    if (r.t_gpu_enqueued == 0) r.t_gpu_enqueued = clock::now_ns();
    inflight->flush();
    if (r.t_flush == 0) r.t_flush = inflight->flushed_at_ns;  // when clFlush returned
    return inflight;
  } catch (const gpu::Failure& e) {
    say_if_retired(*part.device);
    gpu_unavailable(p, req, e, e.c_touched(), first && !e.c_changed(), r);
  } catch (const Error& e) {
    if (e.kind() == Error::Kind::InvalidArgument) throw;
    gpu_unavailable(p, req, e, false, first, r);
  }
  return nullptr;
}

// The rest of B's pieces to every device that started, one piece to each in turn, until none is
// left (gpu::InFlight::start_step): each device computes on its first pieces while the host packs
// the next, once for all of them, instead of waiting for the devices before it to take all of B.
// A device whose step fails takes no more; `failed(i, failure)` records it.
// `flights` loses each device as it is done (null: none).
template <class F>
void start_in_turn(std::vector<gpu::InFlight*> flights, F&& failed) {
  for (bool any = true; any;) {
    any = false;
    for (size_t i = 0; i < flights.size(); ++i) {
      if (flights[i] == nullptr) continue;
      try {
        if (!flights[i]->start_step()) flights[i] = nullptr;
      } catch (const gpu::Failure& e) {
        flights[i] = nullptr;
        failed(i, e);
      }
      any = any || flights[i] != nullptr;
    }
  }
}

// What a part's share did, added to its device's report (after its wait, or its failure).
inline void add_counters(Report::Device& d, const gpu::InFlight& f) {
  d.kernel_seconds += f.kernel_seconds;
  d.launches += f.launches;
  d.bytes_in += f.bytes_in;
  d.bytes_out += f.bytes_out;
  d.bytes_packed += f.bytes_packed;
}

// Whether a part found all its operands in tandem_malloc's pinned blocks when it started.
inline bool all_pinned(const Report::Device& d) {
  const auto is_pinned = [](Report::Buffer b) { return b == Report::Buffer::Pinned; };
  return is_pinned(d.a) && is_pinned(d.b) && is_pinned(d.c);
}

// The devices' parts into the report (a failed device's rows are the CPU's, not the GPU's), then
// the rows on each side and the strategy that ran. Under a simulated APU (a test seam) the call
// then lasts as long as that model says.
template <class T>
void close_report(std::vector<Report::Device> devices, const Problem<T>& p, int64_t cpu_rows,
                  Report& r) {
  r.devices.reserve(r.devices.size() + devices.size());
  for (Report::Device& each : devices) {
    r.devices.push_back(std::move(each));
    const Report::Device& d = r.devices.back();
    r.feeder_threads += d.feeder_threads;
    if (d.failed) {
      r.gpu_rows += d.finished_rows;
      continue;
    }
    r.gpu_rows += d.rows;
    r.t_gpu_done = std::max(r.t_gpu_done, d.t_done);
    r.gpu_kernel_seconds = std::max(r.gpu_kernel_seconds, d.kernel_seconds);
  }
  if (!r.devices.empty()) {
    r.a = r.devices.front().a;
    r.b = r.devices.front().b;
    r.c = r.devices.front().c;
  }
  r.cpu_rows = cpu_rows;
  r.strategy = r.gpu_rows == 0     ? Strategy::Cpu
               : r.gpu_rows == p.m ? Strategy::Gpu
                                   : Strategy::Hybrid;
  simulated_apu::wait_out(r.t_start, r.gpu_rows, cpu_rows, p.n, p.k);
  r.t_end = clock::now_ns();
}

// Deals the rows of a planned call in chunks to its devices and, unless the strategy is gpu, the
// CPU, each taking the next chunk when it is free (Balance::Dynamic); a device that fails leaves
// its chunk and the rest to the others. Fills the report as execute() does.
template <class T>
void run_dynamic(const Problem<T>& p, const Options& o, const Request& req, const GpuPlan& plan,
                 Report& r);

}  // namespace tandem::detail
