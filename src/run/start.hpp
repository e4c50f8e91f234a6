// Starting a call's parts on their devices (a private header of run/): each part as a problem of
// its own, enqueued and flushed, B's pieces to every device in turn, and a thread beside the
// caller's for the CPU share or a device's feeder.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "base/clock.hpp"
#include "base/problem.hpp"
#include "gpu/share.hpp"
#include "plan/plan.hpp"
#include "run/recovery.hpp"
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
                                          std::shared_ptr<gpu::KeptOperand>* packed_b, bool first,
                                          Report& r) {
  try {
    auto inflight = gpu::enqueue(*part.device, part.params, rows_of(p, part.row0, part.rows),
                                 gpu::CallB{nullptr, packed_b, p.kept_b, p.kept_a});
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

}  // namespace tandem::detail
