// A batch's problems dealt to the devices and the CPU (src/run/batch.hpp).
#include "run/batch.hpp"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "base/clock.hpp"
#include "base/log.hpp"
#include "base/precision.hpp"
#include "base/text.hpp"
#include "gpu/batch.hpp"
#include "plan/batch.hpp"
#include "plan/dealer.hpp"

namespace tandem::detail {
namespace {

// The smallest chunk a device is dealt is 1/kMinParts of the batch, or (on a small batch) four
// problems per CPU thread; the CPU's is a quarter of it (dealer.hpp), or less after its first
// chunk where less is what it would finish with the devices (Dealer::take_in_time).
constexpr int64_t kMinParts = 64;
constexpr int64_t kPerThread = 4;
// Every side's first chunk is at most 1/kFirstParts of the batch: the static shares are guesses
// (the tune's rates for batches near this one, or a single call's, measured on another day), so a
// side runs a little before its measured rate
// (problems per second, dealer.hpp's set_rate) sizes its later chunks.
constexpr int64_t kFirstParts = 16;

// Problems per second since `started` (steady-clock ns).
double rate(int64_t problems, int64_t started) {
  const double seconds = static_cast<double>(clock::now_ns() - started) * 1e-9;
  return seconds > 0 ? static_cast<double>(problems) / seconds : 0.0;
}

// What became of one device's part.
struct Outcome {
  gpu::BatchStats stats;
  std::vector<gpu::ProblemRange> unfinished;
  std::optional<Error> failure;
  bool c_written = false;    // the failure came after an unstaged copy into some unfinished C
  std::exception_ptr crash;  // anything but a device's failure (out of host memory)
};

// Whether the devices finished no C and wrote none: under strategy gpu their failure is then the
// caller's error, every C as it was.
bool nothing_written(const std::vector<Outcome>& out) {
  for (const Outcome& o : out)
    if (o.stats.problems > 0 || o.c_written) return false;
  return true;
}

// What the sides of one batch share: the dealer, every side's first chunk (dealt before any
// side runs, so each side with a share gets one however the threads are scheduled), and the
// devices that have not flushed their first stage yet.
struct Table {
  Dealer dealer;
  std::vector<Chunk> first;
  std::mutex mutex;
  std::condition_variable cv;
  size_t unflushed = 0;
};

// Device `i`'s side, on a thread of its own (or the caller's, deal's rule): its chunks through
// the coalesced kernel, its rate reported to the dealer stage by stage; a failure retires it.
template <class T>
void device_side(Table& table, size_t i, const BatchPart& part, Problems<T> problems,
                 Outcome& out) {
  gpu::BatchHooks hooks;
  hooks.take = [&table, i](bool ahead) {
    const Chunk c = table.first[i].rows > 0 ? std::exchange(table.first[i], Chunk{})
                                            : table.dealer.take(i, ahead);
    return gpu::ProblemRange{c.row0, c.rows};
  };
  bool told = false;
  hooks.flushed = [&] {
    std::lock_guard<std::mutex> lock(table.mutex);
    if (told) return;
    told = true;
    --table.unflushed;
    table.cv.notify_all();
  };
  const int64_t started = clock::now_ns();
  int64_t done = 0;
  hooks.finished = [&, started](int64_t problems_done) {
    done += problems_done;
    table.dealer.set_rate(i, rate(done, started));
  };
  try {
    out.stats =
        gpu::run_batch(*part.device, part.params, problems, hooks, part.feeders, part.stages);
  } catch (const gpu::BatchFailure& f) {
    table.dealer.retire(i);
    out.failure = static_cast<const Error&>(f);
    out.unfinished = f.unfinished();
    out.stats = f.stats();
    out.c_written = f.c_written();
  } catch (...) {
    table.dealer.retire(i);
    out.crash = std::current_exception();
    hooks.flushed();  // unless it was
  }
}

// Deals the problems to the devices, each on a thread of its own, and to the CPU on this one
// (where the CPU has no share, this one runs the first device's side), until none is left; counts
// the CPU's problems in `report`. What became of each device.
template <class T>
std::vector<Outcome> deal(Problems<T> problems, const BatchPlan& plan, BatchReport& report) {
  const auto count = problems.count;
  const size_t cpu = plan.parts.size();  // the CPU's side in the dealer
  std::vector<int64_t> shares;
  for (const BatchPart& part : plan.parts) shares.push_back(part.problems);
  shares.push_back(plan.cpu_problems);
  std::vector<bool> costly(plan.parts.size(), true);
  costly.push_back(false);
  Table table{
      Dealer(count, shares, {}, costly, std::max(count / kMinParts, kPerThread * plan.cpu_threads)),
      {},
      {},
      {},
      plan.parts.size()};
  const int64_t first_at_most = std::max<int64_t>(1, count / kFirstParts);
  for (size_t i = 0; i <= plan.parts.size(); ++i)
    table.first.push_back(table.dealer.take(i, false, first_at_most));
  std::vector<Outcome> out(plan.parts.size());
  std::vector<std::thread> threads;
  threads.reserve(plan.parts.size());
  // Every device's thread is joined on every way out (one still joinable at its end terminates
  // the program): the CPU's side may throw (out of memory) while they run.
  struct Joined {
    std::vector<std::thread>& threads;
    ~Joined() {
      for (std::thread& t : threads)
        if (t.joinable()) t.join();
    }
  } joined{threads};
  // Where the CPU has no share (strategy gpu), this thread has nothing to compute: it runs the
  // first device's side itself, which spares a thread's start and join (on the H100 host 80 and
  // 45 us of a batch of ten s 512^3 products that takes 0.7 ms: bench/batch_timeline).
  const bool cpu_idle = table.first[cpu].rows == 0;
  for (size_t i = cpu_idle ? 1 : 0; i < plan.parts.size(); ++i)
    threads.emplace_back([&, i] { device_side(table, i, plan.parts[i], problems, out[i]); });
  if (cpu_idle) {
    device_side(table, 0, plan.parts[0], problems, out[0]);
  } else {
    // The CPU starts once every device has flushed its first stage.
    std::unique_lock<std::mutex> lock(table.mutex);
    table.cv.wait(lock, [&] { return table.unflushed == 0; });
  }
  const int64_t started = clock::now_ns();
  // After its first chunk the CPU takes only what it would finish with the devices (its
  // smallest chunk, a product a thread, can take it far longer than the devices take the rest:
  // on the H100 host hybrid ran 100 s 1024^3 products from tandem_malloc memory at 0.64x the GPU
  // alone).
  for (Chunk c = table.first[cpu]; c.rows > 0; c = table.dealer.take_in_time(cpu)) {
    cores_batch(problems.data + c.row0, c.rows, plan.cpu_threads);
    report.cpu_problems += c.rows;
    table.dealer.set_rate(cpu, rate(report.cpu_problems, started));
  }
  for (std::thread& t : threads) t.join();
  for (const Outcome& o : out)
    if (o.crash) std::rethrow_exception(o.crash);
  // What no side took: every side with a share failed (under gpu, the CPU has none). Unless no C
  // was written under gpu: then the failure is the caller's error (settle), every C untouched.
  if (report.cpu_problems == 0 && nothing_written(out) && plan.request.strategy == Strategy::Gpu)
    return out;
  if (const Chunk c = table.dealer.rest(); c.rows > 0) {
    cores_batch(problems.data + c.row0, c.rows, host_cores());
    report.cpu_problems += c.rows;
  }

  return out;
}

// What the devices did, into `report`; the problems a failed device left go to the CPU, on every
// core, with one warning.
template <class T>
void settle(Problems<T> problems, const BatchPlan& plan, const std::vector<Outcome>& out,
            const char* routine, BatchReport& report) {
  const bool gpu_only = plan.request.strategy == Strategy::Gpu;
  int64_t finished = 0;
  for (const Outcome& o : out) finished += o.stats.problems;
  // Under gpu, a failure before any C was written is the caller's error, every C untouched.
  if (gpu_only && nothing_written(out))
    for (const Outcome& o : out)
      if (o.failure) throw *o.failure;
  for (size_t i = 0; i < plan.parts.size(); ++i) {
    const Outcome& o = out[i];
    BatchReport::Device d;
    d.index = gpu::info(*plan.parts[i].device).index;
    d.name = gpu::description(*plan.parts[i].device);
    d.problems = o.stats.problems;
    d.chunks = o.stats.chunks;
    d.launches = o.stats.launches;
    d.bytes_in = o.stats.bytes_in;
    d.bytes_out = o.stats.bytes_out;
    d.bytes_staged = o.stats.bytes_staged;
    d.feeder_threads = plan.parts[i].feeders;
    d.kernel = text::describe(plan.parts[i].params);
    if (o.failure) {
      d.failed = true;
      d.failure = o.failure->what();
      int64_t left = 0;
      for (const gpu::ProblemRange& r : o.unfinished) {
        cores_batch(problems.data + r.first, r.count, host_cores());
        left += r.count;
      }
      report.cpu_problems += left;
      warn_once("batch-device-failed:" + std::to_string(d.index),
                std::string(routine) + ": " + d.name + " failed (" + d.failure +
                    "); the CPU computed the " + std::to_string(left) +
                    " problems it had not finished");
    }
    report.devices.push_back(std::move(d));
  }
  report.device_problems = finished;
  report.strategy = report.cpu_problems == 0 ? Strategy::Gpu
                    : finished == 0          ? Strategy::Cpu
                                             : Strategy::Hybrid;
}

}  // namespace

template <class T>
void run_batch(Problems<T> problems, const BatchPlan& plan, const char* routine,
               BatchReport& report) {
  const auto count = problems.count;
  const bool gpu_only = plan.request.strategy == Strategy::Gpu;
  report.cpu_threads = plan.cpu_threads;
  if (plan.parts.empty()) {
    if (plan.unavailable) {
      if (gpu_only) throw *plan.unavailable;
      warn_once("gpu-fallback", std::string("GPU path unavailable, computing on the CPU: ") +
                                    plan.unavailable->what());
    }
    cores_batch(problems.data, problems.count, plan.cpu_threads);
    report.cpu_problems = count;
    report.strategy = Strategy::Cpu;
    return;
  }
  settle(problems, plan, deal(problems, plan, report), routine, report);
}

#define INSTANTIATE(T) \
  template void run_batch<T>(Problems<T>, const BatchPlan&, const char*, BatchReport&);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
