// Dynamic balance: the rows of C go out in chunks (dealer.hpp) to each device and the CPU as
// each becomes free. Every side's first chunk is dealt before any side runs, and every device's
// is enqueued and flushed before the CPU starts; each device then takes its next chunk on a
// thread of its own (this one drives the first), so a device is never waiting for another's
// chunk, and takes it one chunk ahead, so it has work queued while the host finishes the one
// before. A discrete device keeps B from its first chunk
// for the rest. A device that fails takes no more chunks; its failed chunks go to the CPU once
// everything else is done.
#include <algorithm>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "base/precision.hpp"
#include "base/text.hpp"
#include "cpu/share.hpp"
#include "plan/dealer.hpp"
#include "run/recovery.hpp"
#include "run/report.hpp"
#include "run/runs.hpp"
#include "run/start.hpp"

namespace tandem::detail {
namespace {

// The smallest chunk: 1/64 of the rows (RaijinCL's P), so a call is dealt in at most about 64
// chunks whatever its size.
constexpr int64_t kMinParts = 64;

// One chunk on a device.
struct Flight {
  Chunk chunk;
  std::unique_ptr<gpu::InFlight> inflight;
};

// One device taking chunks, and what became of it. A device has up to two chunks at a time:
// the one it computes and the next, enqueued before the first is waited for, so the device is
// not idle while the host finishes one chunk and sends the next.
struct Side {
  DevicePart part;
  size_t index = 0;  // in the dealer
  Flight now, ahead;
  std::shared_ptr<gpu::KeptOperand> kept_b;  // B on the device, sent with the first chunk
  Report::Device report;
  int feeders = 0;
  // Its chunks that failed, for the CPU, and why; the device takes no more after the first.
  std::vector<Chunk> failed;
  std::unique_ptr<Error> failure;
  bool c_touched = false;
  bool c_changed = false;  // a failed chunk may have changed the caller's C
};

// The side fails with chunk c: it takes no more chunks, and the rows of c it had not finished
// (it put back their old values) go to the CPU.
void fail(Dealer& dealer, Side& s, const Chunk& c, const Error& e, bool c_touched,
          const std::vector<gpu::RowRange>& finished = {}, bool c_changed = false) {
  if (!s.failure) s.failure = std::make_unique<Error>(e);
  s.c_touched = s.c_touched || c_touched;
  s.c_changed = s.c_changed || c_changed;
  int64_t left = 0;
  for (const gpu::RowRange& u : gpu::unfinished(c.rows, finished)) {
    s.failed.push_back({c.row0 + u.row0, u.rows});
    left += u.rows;
  }
  s.report.finished_rows += c.rows - left;
  dealer.retire(s.index);
}

// Enqueues and flushes side's next chunk into f; false when none is left for it (`ahead`: see
// Dealer::take) or the enqueue failed (the side has then failed). `packed_b`, for first chunks
// only (they start one after another on one thread): B as another side packed it.
template <class T>
bool start_next(const Problem<T>& p, Dealer& dealer, Side& s, Flight& f, bool ahead = false,
                std::shared_ptr<gpu::KeptOperand>* packed_b = nullptr) {
  if (s.failure) return false;
  f.chunk = dealer.take(s.index, ahead);
  if (f.chunk.rows == 0) return false;
  try {
    f.inflight = gpu::enqueue(*s.part.device, s.part.params, rows_of(p, f.chunk.row0, f.chunk.rows),
                              gpu::CallB{&s.kept_b, packed_b, p.kept_b, p.kept_a});
    f.inflight->flush();
    return true;
  } catch (const gpu::Failure& e) {
    fail(dealer, s, f.chunk, e, e.c_touched(), e.finished(), e.c_changed());
  } catch (const Error& e) {
    fail(dealer, s, f.chunk, e, false);
  }
  f.inflight.reset();
  return false;
}

// Finishes f: feeds and waits for it, and counts its rows, or fails the side with it.
void finish(Dealer& dealer, Side& s, Flight& f, const std::function<void()>& before_wait) {
  try {
    f.inflight->feed(s.feeders);
    before_wait();
    f.inflight->wait();
    add_counters(s.report, *f.inflight);
    s.report.rows += f.chunk.rows;
    ++s.report.chunks;
    s.report.t_done = clock::now_ns();
  } catch (const gpu::Failure& e) {
    add_counters(s.report, *f.inflight);
    fail(dealer, s, f.chunk, e, e.c_touched(), e.finished(), e.c_changed());
  }
  f.inflight.reset();
}

// Finishes the chunk in flight and keeps taking chunks, one ahead, until none is left or the
// device fails; a chunk already ahead when the device fails is still finished if it can be.
template <class T>
void drive(const Problem<T>& p, Dealer& dealer, Side& s) {
  while (s.now.inflight) {
    finish(dealer, s, s.now, [&] {
      if (!s.ahead.inflight) start_next(p, dealer, s, s.ahead, /*ahead=*/true);
    });
    std::swap(s.now, s.ahead);
    if (!s.now.inflight) start_next(p, dealer, s, s.now);
  }
}

// The devices' sides, each with its first chunk enqueued and flushed (or failed).
template <class T>
std::vector<Side> first_chunks(const Problem<T>& p, const Plan& plan, Dealer& dealer) {
  std::vector<Side> sides(plan.parts.size());
  std::shared_ptr<gpu::KeptOperand> packed_b;  // B, packed once for every device of a platform
  for (size_t i = 0; i < sides.size(); ++i) {
    Side& s = sides[i];
    s.part = plan.parts[i];
    s.index = i;
    const auto& info = gpu::info(*s.part.device);
    s.report.index = info.index;
    s.report.name = info.describe();
    s.report.kernel = text::describe(s.part.params);
    const bool started = start_next(p, dealer, s, s.now, false, &packed_b);
    // The caller's mistake is not a device failure (as with a static split).
    if (s.failure && s.failure->kind() == Error::Kind::InvalidArgument) throw *s.failure;
    if (started) {
      s.report.row0 = s.now.chunk.row0;
      s.report.a = s.now.inflight->a_path;
      s.report.b = s.now.inflight->b_path;
      s.report.c = s.now.inflight->c_path;
    }
  }
  std::vector<gpu::InFlight*> flights;
  for (Side& s : sides) flights.push_back(s.now.inflight.get());
  start_in_turn(std::move(flights), [&](size_t i, const gpu::Failure& e) {
    Side& s = sides[i];
    add_counters(s.report, *s.now.inflight);
    fail(dealer, s, s.now.chunk, e, e.c_touched(), e.finished(), e.c_changed());
    s.now.inflight.reset();
  });
  return sides;
}

// How the cores are divided: feeders for the devices that pack and unpack, the rest for the CPU.
Cores cores_for(const Options& o, const std::vector<Side>& sides, bool cpu_takes,
                int profile_threads) {
  std::vector<bool> feeds, pinned;
  for (const Side& s : sides) {
    feeds.push_back(s.now.inflight && s.now.inflight->feeds());
    pinned.push_back(all_pinned(s.report));
  }
  return divide_cores(o, feeds, pinned, cpu_takes, !sides.empty(), profile_threads);
}

// Failed chunks, and rows no side was left to take, go to the CPU on every core; C's old values
// must still be there (gpu_unavailable decides; under strategy gpu a failure is an error only
// while no side wrote any of C, `cpu_rows` being the CPU's).
template <class T>
int64_t recover(const Problem<T>& p, const Request& req, std::vector<Side>& sides, Dealer& dealer,
                int64_t cpu_rows, int cores, Report& r) {
  const bool c_untouched =
      cpu_rows == 0 && std::all_of(sides.begin(), sides.end(), [](const Side& s) {
        return s.failure && s.report.rows == 0 && !s.c_changed;
      });
  int64_t rows = 0;
  for (Side& s : sides) {
    if (!s.failure) continue;
    s.report.failed = true;
    s.report.finished_rows += s.report.rows;  // its chunks that completed
    s.report.failure = s.failure->what();
    say_if_retired(*s.part.device);
    gpu_unavailable(p, req, *s.failure, s.c_touched, c_untouched, r);
    for (const Chunk& c : s.failed) {
      cpu_share(p, c.row0, c.rows, cores, false);
      rows += c.rows;
    }
  }
  for (Chunk c = dealer.take(sides.size()); c.rows > 0; c = dealer.take(sides.size())) {
    cpu_share(p, c.row0, c.rows, cores, false);
    rows += c.rows;
  }
  return rows;
}

}  // namespace

template <class T>
void run_dynamic(const Problem<T>& p, const Options& o, const Plan& plan, Report& r) {
  const Request& req = plan.request;
  // The sides: each device's expected share, then the CPU's (none under strategy gpu).
  std::vector<int64_t> shares, tiles;
  std::vector<bool> costly;
  std::vector<std::shared_ptr<gpu::Device>> devices;
  for (const DevicePart& part : plan.parts) {
    shares.push_back(part.rows);
    tiles.push_back(gpu::row_tile(*part.params));
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
    if (!p.timed) break;  // only a Report or the log shows it
    try {
      r.gpu_submitted_at_cpu_start =
          r.gpu_submitted_at_cpu_start || (s.now.inflight && s.now.inflight->submitted());
    } catch (const Error&) {
      // A status that cannot be read now surfaces, with its cause, at the wait.
    }
  }
  const Cores cores = cores_for(o, sides, cpu_takes, plan.profile_threads);
  // The CPU's first chunk is dealt here, before any device's thread can ask ahead: every side
  // with a share starts the call with rows, however slowly its thread gets going.
  const Chunk cpu_first = cpu_takes ? dealer.take(sides.size()) : Chunk{};
  int64_t cpu_rows = 0;
  std::exception_ptr cpu_error;
  {
    std::unique_ptr<Beside> cpu;
    if (cpu_takes)
      cpu = std::make_unique<Beside>([&] {
        r.t_cpu_start = clock::now_ns();
        try {
          for (Chunk c = cpu_first; c.rows > 0; c = dealer.take(sides.size())) {
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
      s->feeders = s->now.inflight && s->now.inflight->feeds() ? std::max(1, cores.feeders[i]) : 0;
      s->report.feeder_threads = s->feeders;
      if (i > 0)
        others.push_back(std::make_unique<Beside>([&p, &dealer, s] { drive(p, dealer, *s); }));
    }
    if (!sides.empty()) drive(p, dealer, sides.front());
  }
  if (cpu_error) std::rethrow_exception(cpu_error);
  r.cpu_threads = cpu_rows > 0 ? cores.cpu_threads : 0;
  cpu_rows += recover(p, req, sides, dealer, cpu_rows, cores.total, r);
  std::vector<Report::Device> reports;
  for (const Side& s : sides) reports.push_back(s.report);
  close_report(reports, p, cpu_rows, r);
}

#define INSTANTIATE(T) \
  template void run_dynamic<T>(const Problem<T>&, const Options&, const Plan&, Report&);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
