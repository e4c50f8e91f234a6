// Dynamic balance: the rows of C go out in chunks (dealer.hpp) to each device and the CPU as
// each becomes free. Every device's first chunk is enqueued and flushed before the CPU starts;
// each device then takes its next chunk on a thread of its own (this one drives the first), so a
// device is never waiting for another's chunk. A device that fails takes no more chunks; its
// failed chunk goes to the CPU once everything else is done.
#include <algorithm>
#include <exception>
#include <memory>
#include <vector>

#include "cpu_share.hpp"
#include "dealer.hpp"
#include "executor_parts.hpp"
#include "text.hpp"

namespace tandem::detail {
namespace {

// The smallest chunk: 1/64 of the rows (RaijinCL's P), so a call is dealt in at most about 64
// chunks whatever its size.
constexpr int64_t kMinParts = 64;

// One device taking chunks, and what became of it.
struct Side {
  DevicePart part;
  size_t index = 0;  // in the dealer
  std::unique_ptr<gpu::InFlight> inflight;
  Chunk current;
  Report::Device report;
  int feeders = 0;
  // Its chunk that failed, for the CPU, and why; the device takes no more after it.
  Chunk failed;
  std::unique_ptr<Error> failure;
  bool c_touched = false;
};

// Enqueues and flushes side's next chunk; false when none is left or the enqueue failed (the
// chunk is then kept as failed).
template <class T>
bool start_next(const Problem<T>& p, Dealer& dealer, Side& s) {
  s.current = dealer.take(s.index);
  if (s.current.rows == 0) return false;
  try {
    s.inflight =
        gpu::enqueue(*s.part.device, s.part.params, rows_of(p, s.current.row0, s.current.rows));
    s.inflight->flush();
    return true;
  } catch (const gpu::Failure& e) {
    s.failure = std::make_unique<Error>(e);
    s.c_touched = e.c_touched();
  } catch (const Error& e) {
    s.failure = std::make_unique<Error>(e);
  }
  s.failed = s.current;
  dealer.retire(s.index);
  return false;
}

// Finishes the chunk in flight and keeps taking chunks until none is left or the device fails.
template <class T>
void drive(const Problem<T>& p, Dealer& dealer, Side& s) {
  while (s.inflight) {
    try {
      s.inflight->feed(s.feeders);
      s.inflight->wait();
      s.report.kernel_seconds += s.inflight->kernel_seconds;
      s.report.rows += s.current.rows;
      ++s.report.chunks;
      s.report.t_done = clock::now_ns();
    } catch (const gpu::Failure& e) {
      s.failure = std::make_unique<Error>(e);
      s.c_touched = e.c_touched();
      s.failed = s.current;
      dealer.retire(s.index);
    }
    s.inflight.reset();
    if (!s.failure && !start_next(p, dealer, s)) break;
  }
}

// The devices' sides, each with its first chunk enqueued and flushed (or failed).
template <class T>
std::vector<Side> first_chunks(const Problem<T>& p, const GpuPlan& plan, Dealer& dealer) {
  std::vector<Side> sides(plan.parts.size());
  for (size_t i = 0; i < sides.size(); ++i) {
    Side& s = sides[i];
    s.part = plan.parts[i];
    s.index = i;
    const auto& info = gpu::info(*s.part.device);
    s.report.index = info.index;
    s.report.name = info.describe();
    s.report.kernel = text::describe(s.part.params);
    const bool started = start_next(p, dealer, s);
    // The caller's mistake is not a device failure (as with a static split).
    if (s.failure && s.failure->kind() == Error::Kind::InvalidArgument) throw *s.failure;
    if (started) {
      s.report.row0 = s.current.row0;
      s.report.a = s.inflight->a_path;
      s.report.b = s.inflight->b_path;
      s.report.c = s.inflight->c_path;
    }
  }
  return sides;
}

// How the cores are divided: feeders for the devices that pack and unpack, the rest for the CPU.
Cores cores_for(const Options& o, const std::vector<Side>& sides, bool cpu_takes,
                int profile_threads) {
  std::vector<bool> feeds, pinned;
  for (const Side& s : sides) {
    feeds.push_back(s.inflight && s.inflight->feeds());
    pinned.push_back(all_pinned(s.report));
  }
  return divide_cores(o, feeds, pinned, cpu_takes, !sides.empty(), profile_threads);
}

// Failed chunks, and rows no side was left to take, go to the CPU on every core; C's old values
// must still be there (gpu_unavailable decides).
template <class T>
int64_t recover(const Problem<T>& p, const Request& req, std::vector<Side>& sides, Dealer& dealer,
                int cores, Report& r) {
  int64_t rows = 0;
  for (Side& s : sides) {
    if (!s.failure) continue;
    s.report.failed = true;
    s.report.failure = s.failure->what();
    gpu_unavailable(p, req, *s.failure, s.c_touched, r);
    cpu_share(p, s.failed.row0, s.failed.rows, cores, false);
    rows += s.failed.rows;
  }
  for (Chunk c = dealer.take(sides.size()); c.rows > 0; c = dealer.take(sides.size())) {
    cpu_share(p, c.row0, c.rows, cores, false);
    rows += c.rows;
  }
  return rows;
}

}  // namespace

template <class T>
void run_dynamic(const Problem<T>& p, const Options& o, const Request& req, const GpuPlan& plan,
                 Report& r) {
  // The sides: each device's expected share, then the CPU's (none under strategy gpu).
  std::vector<int64_t> shares, tiles;
  std::vector<bool> costly;
  std::vector<std::shared_ptr<gpu::Device>> devices;
  for (const DevicePart& part : plan.parts) {
    shares.push_back(part.rows);
    tiles.push_back(gpu::row_tile(part.params));
    costly.push_back(gpu::is_discrete(*part.device));  // each chunk copies B
    devices.push_back(part.device);
  }
  const int64_t cpu_share_rows = p.m - plan.rows();
  shares.push_back(cpu_share_rows);
  tiles.push_back(1);
  costly.push_back(false);
  Dealer dealer(p.m, shares, tiles, costly, (p.m + kMinParts - 1) / kMinParts);
  // Taken before any chunk starts and released after every side is done.
  std::unique_lock<std::mutex> exclusive = gpu::exclusive_for(devices);
  r.t_gpu_enqueued = clock::now_ns();
  std::vector<Side> sides = first_chunks(p, plan, dealer);
  r.t_flush = clock::now_ns();
  const bool cpu_takes = cpu_share_rows > 0;
  for (Side& s : sides) {
    try {
      r.gpu_submitted_at_cpu_start =
          r.gpu_submitted_at_cpu_start || (s.inflight && s.inflight->submitted());
    } catch (const Error&) {
      // A status that cannot be read now surfaces, with its cause, at the wait.
    }
  }
  const Cores cores = cores_for(o, sides, cpu_takes, plan.profile_threads);
  int64_t cpu_rows = 0;
  std::exception_ptr cpu_error;
  {
    std::unique_ptr<Beside> cpu;
    if (cpu_takes)
      cpu = std::make_unique<Beside>([&] {
        r.t_cpu_start = clock::now_ns();
        try {
          for (Chunk c = dealer.take(sides.size()); c.rows > 0; c = dealer.take(sides.size())) {
            cpu_share(p, c.row0, c.rows, cores.cpu_threads, true);
            cpu_rows += c.rows;
            ++r.cpu_chunks;
          }
        } catch (...) {
          cpu_error = std::current_exception();
          dealer.retire(sides.size());
        }
        r.t_cpu_end = clock::now_ns();
      });
    std::vector<std::unique_ptr<Beside>> others;
    for (size_t i = 0; i < sides.size(); ++i) {
      Side* s = &sides[i];
      s->feeders = s->inflight && s->inflight->feeds() ? std::max(1, cores.feeders[i]) : 0;
      s->report.feeder_threads = s->feeders;
      if (i > 0)
        others.push_back(std::make_unique<Beside>([&p, &dealer, s] { drive(p, dealer, *s); }));
    }
    if (!sides.empty()) drive(p, dealer, sides.front());
  }
  if (cpu_error) std::rethrow_exception(cpu_error);
  r.cpu_threads = cpu_rows > 0 ? cores.cpu_threads : 0;
  cpu_rows += recover(p, req, sides, dealer, cores.total, r);
  std::vector<Report::Device> reports;
  for (const Side& s : sides) reports.push_back(s.report);
  close_report(reports, p, cpu_rows, r);
}

template void run_dynamic<float>(const Problem<float>&, const Options&, const Request&,
                                 const GpuPlan&, Report&);
template void run_dynamic<double>(const Problem<double>&, const Options&, const Request&,
                                  const GpuPlan&, Report&);

}  // namespace tandem::detail
