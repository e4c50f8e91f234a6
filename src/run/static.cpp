// The static run of a plan: every device's part enqueued and flushed first, the CPU's rows beside
// them (on a thread of its own while threads feed discrete devices), all joined on every way out,
// and the CPU taking over the rows of any device that fails.
#include <algorithm>
#include <exception>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "base/clock.hpp"
#include "base/precision.hpp"
#include "base/text.hpp"
#include "cpu/share.hpp"
#include "gpu/share.hpp"
#include "run/recovery.hpp"
#include "run/report.hpp"
#include "run/runs.hpp"
#include "run/start.hpp"

namespace tandem::detail {
namespace {

// One device's part in flight, and what became of it.
struct Running {
  std::shared_ptr<gpu::Device> device;
  int64_t row0 = 0, rows = 0;  // its part of C
  std::unique_ptr<gpu::InFlight> inflight;
  Report::Device report;
  bool feeds = false;
  std::unique_ptr<Error> failure;  // it failed after it was enqueued
  bool c_touched = false;
  bool c_changed = false;  // it may have changed the caller's C (gpu::Failure::c_changed)
  std::vector<gpu::RowRange> finished;  // of its rows, those that reached C before it failed
};

// A part failed after it was enqueued: what it did, and what it finished, kept for after the join.
void failed(Running& run, const gpu::Failure& e) {
  add_counters(run.report, *run.inflight);
  run.failure = std::make_unique<Error>(e);
  run.c_touched = e.c_touched();
  run.c_changed = e.c_changed();
  run.finished = e.finished();
}

// Starts the planned parts; `cpu_ranges` receives the rows the CPU computes.
template <class T>
std::vector<Running> start_gpus(const Problem<T>& p, const Request& req, const Plan& plan,
                                std::vector<std::pair<int64_t, int64_t>>& cpu_ranges,
                                std::unique_lock<std::mutex>& exclusive, Report& r) {
  std::vector<Running> running;
  if (plan.rows() < p.m) cpu_ranges.emplace_back(plan.rows(), p.m - plan.rows());
  std::vector<std::shared_ptr<gpu::Device>> devices;
  for (const DevicePart& part : plan.parts) devices.push_back(part.device);
  exclusive = gpu::exclusive_for(devices);
  std::shared_ptr<gpu::KeptOperand> packed_b;  // B, packed once for every device of a platform
  for (const DevicePart& part : plan.parts) {
    auto inflight = start_part(p, req, part, &packed_b, running.empty(), r);
    if (!inflight) {
      cpu_ranges.emplace_back(part.row0, part.rows);
      continue;
    }
    Running run;
    run.device = part.device;
    run.row0 = part.row0;
    run.rows = part.rows;
    run.feeds = inflight->feeds();
    run.report.index = gpu::info(*part.device).index;
    run.report.name = gpu::description(*part.device);
    // The plan described the first part's kernel for the call's report already.
    run.report.kernel = &part == &plan.parts.front() ? r.kernel : text::describe(part.params);
    run.report.row0 = part.row0;
    run.report.rows = part.rows;
    run.report.chunks = 1;
    run.report.a = inflight->a_path;
    run.report.b = inflight->b_path;
    run.report.c = inflight->c_path;
    run.inflight = std::move(inflight);
    running.push_back(std::move(run));
  }
  std::vector<gpu::InFlight*> flights;
  for (Running& run : running) flights.push_back(run.inflight.get());
  // A part that fails while it starts feeds nothing: its feeder's cores go to the others.
  start_in_turn(std::move(flights), [&](size_t i, const gpu::Failure& e) {
    failed(running[i], e);
    running[i].feeds = false;
  });
  return running;
}

// Feeds (on a discrete device) and waits for one part; a failure is kept for after the join.
void finish(Running& run, int feeder_threads) {
  if (run.failure) return;  // it failed while it started
  try {
    run.inflight->feed(feeder_threads);
    run.inflight->wait();
    run.report.t_done = clock::now_ns();
    add_counters(run.report, *run.inflight);
  } catch (const gpu::Failure& e) {
    failed(run, e);
  }
}

// The CPU's ranges on a thread of its own while this thread and others feed discrete devices;
// else here, and the devices are waited for after it. Everything is joined before it returns.
template <class T>
void run_shares(const Problem<T>& p, std::vector<Running>& running,
                const std::vector<std::pair<int64_t, int64_t>>& cpu_ranges, const Cores& cores,
                Report& r) {
  std::exception_ptr cpu_error;
  const auto run_cpu = [&] {
    r.t_cpu_start = clock::now_ns();
    try {
      for (const auto& [row0, rows] : cpu_ranges)
        cpu_share(p, row0, rows, cores.cpu_threads, !running.empty());
    } catch (...) {
      cpu_error = std::current_exception();
    }
    r.t_cpu_end = clock::now_ns();
  };
  const bool any_feeds =
      std::any_of(running.begin(), running.end(), [](const Running& run) { return run.feeds; });
  {
    std::unique_ptr<Beside> cpu;
    if (!cpu_ranges.empty() && any_feeds)
      cpu = std::make_unique<Beside>(run_cpu);
    else if (!cpu_ranges.empty())
      run_cpu();
    // One thread per feeding device; this one feeds the first and then waits for the rest.
    std::vector<std::unique_ptr<Beside>> feeders;
    Running* here = nullptr;
    for (size_t i = 0; i < running.size(); ++i) {
      Running* run = &running[i];
      run->report.feeder_threads = run->feeds ? std::max(1, cores.feeders[i]) : 0;
      if (!run->feeds) continue;
      if (here == nullptr)
        here = run;
      else
        feeders.push_back(
            std::make_unique<Beside>([run] { finish(*run, run->report.feeder_threads); }));
    }
    if (here != nullptr) finish(*here, here->report.feeder_threads);
    for (Running& run : running)
      if (!run.feeds) finish(run, cores.total);
  }
  if (cpu_error) std::rethrow_exception(cpu_error);
}

// A device that failed leaves the rows it had not finished to the CPU, once everything else is
// done (it put back their old values). Under strategy gpu that is an error only while no device
// wrote any of C (`cpu_rows`: the rows the CPU computed already, of devices that failed to start).
template <class T>
int64_t recover(const Problem<T>& p, const Request& req, std::vector<Running>& running,
                int64_t cpu_rows, const Cores& cores, Report& r) {
  const bool c_untouched =
      cpu_rows == 0 && std::all_of(running.begin(), running.end(), [](const Running& run) {
        return run.failure && !run.c_changed;
      });
  int64_t rows = 0;
  for (Running& run : running) {
    if (!run.failure) continue;
    run.report.failed = true;
    run.report.failure = run.failure->what();
    say_if_retired(*run.device);
    gpu_unavailable(p, req, *run.failure, run.c_touched, c_untouched, r);
    run.inflight.reset();
    run.report.finished_rows = run.rows;
    for (const gpu::RowRange& u : gpu::unfinished(run.rows, run.finished)) {
      cpu_share(p, run.row0 + u.row0, u.rows, cores.total, false);
      rows += u.rows;
      run.report.finished_rows -= u.rows;
    }
  }
  return rows;
}

// How the cores are divided, now that it is known which parts are in flight and feed.
Cores cores_for(const Options& o, const std::vector<Running>& running, bool cpu_rows,
                int profile_threads) {
  std::vector<bool> feeds, pinned;
  for (const Running& run : running) {
    feeds.push_back(run.feeds);
    pinned.push_back(all_pinned(run.report));
  }
  return divide_cores(o, feeds, pinned, cpu_rows, !running.empty(), profile_threads);
}

}  // namespace

template <class T>
void run_static(const Problem<T>& p, const Options& o, const Plan& plan, Report& r) {
  const Request& req = plan.request;
  std::vector<std::pair<int64_t, int64_t>> cpu_ranges;  // (row0, rows) the CPU computes
  // Taken before any share starts and released after every share is gone (declared first).
  std::unique_lock<std::mutex> exclusive;
  std::vector<Running> running = start_gpus(p, req, plan, cpu_ranges, exclusive, r);
  int64_t cpu_rows = 0;
  for (const auto& range : cpu_ranges) cpu_rows += range.second;
  const Cores cores = cores_for(o, running, cpu_rows > 0, plan.profile_threads);
  r.cpu_threads = cpu_rows > 0 ? cores.cpu_threads : 0;
  for (Running& run : running) {
    if (!p.timed) break;
    try {
      r.gpu_submitted_at_cpu_start = r.gpu_submitted_at_cpu_start || run.inflight->submitted();
    } catch (const Error&) {
      // A status that cannot be read now surfaces, with its cause, at the wait below.
    }
  }
  run_shares(p, running, cpu_ranges, cores, r);
  cpu_rows += recover(p, req, running, cpu_rows, cores, r);
  r.cpu_chunks = static_cast<int>(cpu_ranges.size());
  std::vector<Report::Device> devices;
  devices.reserve(running.size());
  for (Running& run : running) devices.push_back(std::move(run.report));  // not read again
  close_report(std::move(devices), p, cpu_rows, r);
}

#define INSTANTIATE(T) \
  template void run_static<T>(const Problem<T>&, const Options&, const Plan&, Report&);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
