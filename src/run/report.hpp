// The call's report (a private header of run/): how the plan was made, what each part's share
// did, and, once everything is joined, the rows on each side and the strategy that ran.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/clock.hpp"
#include "base/problem.hpp"
#include "base/seams.hpp"
#include "gpu/share.hpp"
#include "plan/plan.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// What the plan says of itself, and its balance, into the report.
inline void report_plan(const Plan& plan, Report& r) {
  const Basis& b = plan.basis;
  r.profile = b.profile;
  r.profile_bucket = b.bucket;
  r.profile_resident = b.resident;
  r.device = b.devices;
  r.gpu_fraction = b.gpu_fraction;
  r.kernel = b.kernel;
  r.profile_model = b.model;
  r.predicted_seconds = b.predicted_seconds;
  r.balance = plan.balance;
}

// What a part's share did, added to its device's report (after its wait, or its failure).
inline void add_counters(Report::Device& d, const gpu::InFlight& f) {
  d.kernel_seconds += f.kernel_seconds;
  d.launches += f.launches;
  d.bytes_in += f.bytes_in;
  d.bytes_out += f.bytes_out;
  d.bytes_packed += f.bytes_packed;
}

// Whether a part found all its operands in tandem_malloc's pinned blocks (or kept on the device:
// nothing to pack either) when it started.
inline bool all_pinned(const Report::Device& d) {
  const auto is_pinned = [](Report::Buffer b) {
    return b == Report::Buffer::Pinned || b == Report::Buffer::Resident;
  };
  return is_pinned(d.a) && is_pinned(d.b) && is_pinned(d.c);
}

// The devices' parts into the report (a failed device's rows are the CPU's, not the GPU's), then
// the rows on each side and the strategy that ran. Under a test's model of a machine (the seam
// call_ends) the call then lasts as long as that model says.
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
  if (const seams::CallEnds ends = seams::call_ends())
    ends(r.t_start, r.gpu_rows, cpu_rows, p.n, p.k);
  r.t_end = clock::now_ns();
}

}  // namespace tandem::detail
