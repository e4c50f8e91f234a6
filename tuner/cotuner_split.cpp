// The co-tuner's phase 2: at each size bucket, the split p_g/P of C's rows between the best
// kernels and the CPU BLAS (nearly unimodal in p_g), the CPU share's thread count, and on a
// discrete GPU the chunking of the GPU's share; each winner gets the full check.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <thread>

#include "base/precision.hpp"
#include "cotuner_internal.hpp"
#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "profile/defaults.hpp"
#include "profile/tune_log.hpp"

namespace tandem::tuner {
namespace {

// The discrete pipeline's settings tried for each kernel: work-groups per compute unit in a
// chunk (64: one chunk, no overlap) and kernel queues.
std::vector<std::pair<int, int>> pipelines() {
  return {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {4, 1}, {4, 2}, {64, 1}};
}

int cores() {
  return std::min(detail::topology::physical_cores(), detail::cpu_blas::current_threads());
}

// `k` reading A and B as the call stores them (A_T = B_T = -1), where it reads either the other
// way for the tuner's calls (NoTrans); otherwise nothing. Such an operand is transposed on the
// device before the kernel runs, in a launch of its own: phase 1 ranks kernels by their device
// time, which counts the transpose's few microseconds but not the launch, and on the H100 a
// launch cost 13-16 us of a 256^3 call's 104 (docs/PERFORMANCE.md). Whole calls decide here.
std::optional<std::map<std::string, int>> as_stored(const std::map<std::string, int>& k) {
  const auto reads_transposed = [&k](const char* name) {
    const auto it = k.find(name);
    return it != k.end() && it->second == 1;
  };
  if (!reads_transposed("A_T") && !reads_transposed("B_T")) return std::nullopt;
  auto v = k;
  v["A_T"] = -1;
  v["B_T"] = -1;
  return v;
}

}  // namespace

// One size bucket: the CPU alone, then the best split on ordinary memory and, on a discrete
// device, on tandem_malloc memory, each confirmed by interleaved rounds (confirm) or the CPU
// alone.
template <class T>
prof::Bucket Tuner::split_bucket(Precision prec, int64_t size,
                                 const std::vector<std::map<std::string, int>>& top) {
  bucket_best_ = 0;
  prof::Bucket b;
  b.size = size;
  b.parts = o_.parts;
  Measured cpu, best;
  {
    Workspace<T> ws(size);
    cpu = hybrid_time<T>(prec, ws, {}, 0, default_threads(0));
    b.cpu_gflops = std::isfinite(cpu.seconds) ? gflop(prec, size) / cpu.seconds : 0;
    Split sp = search_split<T>(prec, ws, cpu, top);
    b.confirmation = confirm<T>(prec, ws, cpu, sp);
    best = sp.best;
    b.gpu_parts = sp.gpu_parts;
    b.cpu_threads = sp.cpu_threads;
    b.dynamic = sp.dynamic;
    b.kernel = sp.kernel;
    b.gpu_kernel = sp.gpu_kernel;
    b.gpu_gflops = sp.gpu_gflops;
  }
  // The winner gets the full check; one that fails it leaves the bucket to the CPU.
  if (b.gpu_parts > 0 &&
      !winner_checks<T>(size, b.gpu_parts, b.cpu_threads, b.dynamic, b.kernel, o_.seed + 99)) {
    b.gpu_parts = 0;
    b.dynamic = false;
    b.kernel.clear();
    best = cpu;
    b.confirmation.note += "; it then failed its full check: the CPU alone kept";
  }
  // So does the GPU-only kernel where it is another; one that fails leaves strategy gpu the
  // precision's kernel (checked in phase 1).
  if (!b.gpu_kernel.empty() && !(b.gpu_parts == o_.parts && b.gpu_kernel == b.kernel) &&
      !winner_checks<T>(size, o_.parts, 0, false, b.gpu_kernel, o_.seed + 98))
    b.gpu_kernel.clear();
  b.best_gflops = std::isfinite(best.seconds) ? gflop(prec, size) / best.seconds : 0;

  // On a discrete device, operands in tandem_malloc memory are copied with no packing, which
  // leaves the host's cores to the CPU share: their split is searched on such memory too. What
  // it keeps is stored even where that is the CPU alone, so that such calls never fall back on
  // the ordinary memory's split, which was not measured for them.
  if (detail::gpu::is_discrete(*device_) && !out_of_time()) {
    Workspace<T> ws(size, /*in_tandem_memory=*/true);
    Split sp = search_split<T>(prec, ws, cpu, top);
    prof::ResidentSplit r;
    r.confirmation = confirm<T>(prec, ws, cpu, sp);
    if (sp.gpu_parts > 0 &&
        winner_checks<T>(size, sp.gpu_parts, sp.cpu_threads, sp.dynamic, sp.kernel, o_.seed + 97)) {
      r.gpu_parts = sp.gpu_parts;
      r.cpu_threads = sp.cpu_threads;
      r.dynamic = sp.dynamic;
      r.kernel = sp.kernel;
      r.gpu_gflops = sp.gpu_gflops;
      r.best_gflops = std::isfinite(sp.best.seconds) ? gflop(prec, size) / sp.best.seconds : 0;
    } else {
      if (sp.gpu_parts > 0) r.confirmation.note += "; it then failed its full check";
      r.gpu_gflops = sp.gpu_gflops;
      r.best_gflops = b.cpu_gflops;
    }
    b.resident = r;
  }
  return b;
}

// One workspace's best split over the kernels `top`: the CPU alone, each kernel alone, the split
// p_g/P (nearly unimodal), then at the best split the CPU share's thread count and the split
// again next to it.
template <class T>
Split Tuner::search_split(Precision prec, Workspace<T>& ws, const Measured& cpu,
                          const std::vector<std::map<std::string, int>>& top) {
  Split sp;
  if (o_.split_min == 0) sp.best = cpu;  // else the CPU alone is outside the range
  for (const auto& ranked : top) {
    if (out_of_time()) break;
    std::map<std::string, int> kernel;
    const Measured gpu = gpu_alone<T>(prec, ws, ranked, &kernel);
    sp.gpu_gflops =
        std::max(sp.gpu_gflops, std::isfinite(gpu.seconds) ? gflop(prec, ws.n) / gpu.seconds : 0.0);
    if (gpu.cost < sp.best_gpu.cost) {
      sp.best_gpu = gpu;
      sp.gpu_kernel = kernel;  // strategy gpu's kernel at this size
    }
    auto at = [&](int g) {
      return g == 0          ? cpu
             : g == o_.parts ? gpu
                             : hybrid_time<T>(prec, ws, kernel, g, search_threads(ws.resident));
    };
    const int pg = minimize_unimodal([&](int g) { return at(g).cost; }, o_.split_min, o_.split_max);
    const Measured t = at(pg);
    if (t.cost < sp.best.cost) {
      sp.best = t;
      sp.gpu_parts = pg;
      sp.kernel = kernel;
    }
  }
  if (sp.gpu_parts > 0 && sp.gpu_parts < o_.parts) refine_split<T>(prec, ws, cpu, sp);
  if (sp.gpu_parts > 0 && sp.gpu_parts < o_.parts) choose_balance<T>(prec, ws, sp);
  return sp;
}

// The split found, once more under dynamic balance (its static rows as each side's expected
// share): whichever ran faster is kept. On a quiet machine the two differ by dynamic balance's
// extra chunks, or by its making up for a split that P's granularity left off the optimum.
template <class T>
void Tuner::choose_balance(Precision prec, Workspace<T>& ws, Split& sp) {
  if (out_of_time()) return;
  const Measured m =
      hybrid_time<T>(prec, ws, sp.kernel, sp.gpu_parts,
                     sp.cpu_threads > 0 ? sp.cpu_threads : search_threads(ws.resident),
                     /*dynamic=*/true);
  if (m.cost < sp.best.cost) {
    sp.best = m;
    sp.dynamic = true;
  }
}

// The kernel `ranked` with no CPU share; on a discrete GPU with the chunking that runs it
// fastest alone; then, at that chunking, reading the operands as stored where it does not
// (as_stored), whichever whole call is faster. *kernel gets the kernel as measured, chunking
// and layout included.
template <class T>
Measured Tuner::gpu_alone(Precision prec, Workspace<T>& ws,
                          const std::map<std::string, int>& ranked,
                          std::map<std::string, int>* kernel) {
  *kernel = ranked;
  Measured gpu;
  if (!discrete_time()) {
    gpu = hybrid_time<T>(prec, ws, ranked, o_.parts, 0);
  } else {
    for (const auto& [fill, queues] : pipelines()) {
      if (out_of_time() && *kernel != ranked) break;  // the first is measured whatever the clock
      std::map<std::string, int> k = ranked;
      k["CHUNK_FILL"] = fill;
      k["QUEUES"] = queues;
      const Measured m = hybrid_time<T>(prec, ws, k, o_.parts, 0);
      if (m.cost < gpu.cost || *kernel == ranked) {
        gpu = m;
        *kernel = k;
      }
    }
  }
  if (const auto stored = as_stored(*kernel); stored && !out_of_time()) {
    const Measured m = hybrid_time<T>(prec, ws, *stored, o_.parts, 0);
    if (m.cost < gpu.cost) {
      gpu = m;
      *kernel = *stored;
    }
  }
  return gpu;
}

// At the best split: the CPU share's thread count (the cores it leaves feed the GPU on a
// discrete device), then the split again next to it. A split must beat the better single
// strategy by the margin, or that one is kept.
template <class T>
void Tuner::refine_split(Precision prec, Workspace<T>& ws, const Measured& cpu, Split& sp) {
  sp.cpu_threads = search_threads(ws.resident);
  const int all = cores();
  std::set<int> counts;
  for (int c : {all, all - 1, all - 2, all - 4, all / 2, all / 4})
    if (c >= 1 && c <= all && c != sp.cpu_threads) counts.insert(c);
  const int split = sp.gpu_parts;
  for (int c : counts) {
    if (out_of_time()) break;
    const Measured m = hybrid_time<T>(prec, ws, sp.kernel, split, c);
    if (m.cost < sp.best.cost) {
      sp.best = m;
      sp.cpu_threads = c;
    }
  }
  for (int g : {split - 2, split - 1, split + 1, split + 2}) {
    if (g <= std::max(0, o_.split_min - 1) || g >= std::min(o_.parts, o_.split_max + 1) ||
        out_of_time())
      continue;
    const Measured m = hybrid_time<T>(prec, ws, sp.kernel, g, sp.cpu_threads);
    if (m.cost < sp.best.cost) {
      sp.best = m;
      sp.gpu_parts = g;
    }
  }
  // Either side alone competes only where the range includes it.
  constexpr double kOutside = std::numeric_limits<double>::infinity();
  const double cpu_cost = o_.split_min == 0 ? cpu.cost : kOutside;
  const double gpu_cost = o_.split_max == o_.parts ? sp.best_gpu.cost : kOutside;
  if (cpu_cost == kOutside && gpu_cost == kOutside) return;
  const int keep =
      keep_split(cpu_cost, gpu_cost, sp.gpu_parts, sp.best.cost, o_.parts, o_.split_margin);
  if (keep != sp.gpu_parts) {
    sp.best = keep == 0 ? cpu : sp.best_gpu;
    sp.gpu_parts = keep;
    sp.kernel = keep == 0 ? std::map<std::string, int>{} : sp.gpu_kernel;
    sp.cpu_threads = 0;
  }
}

// One configuration's cost and wall time: from the log when already measured, else timed and
// logged.
template <class T>
Measured Tuner::hybrid_time(Precision prec, Workspace<T>& ws,
                            const std::map<std::string, int>& kernel, int gpu_parts, int threads,
                            bool dynamic) {
  if (const auto* r = logged_split(prec, ws.n, kernel, gpu_parts, threads, ws.resident, dynamic))
    return r->seconds ? Measured{r->cost, *r->seconds} : Measured{};
  if (gpu_parts > 0 && gpu_parts < o_.parts && out_of_time())
    return Measured{};  // the split search stops with the clock
  Timed t = time(ws, split_options(kernel, gpu_parts, threads, dynamic));
  prof::LogRecord rec = record("split", prec, ws.n, kernel, t);
  rec.gpu_parts = gpu_parts;
  rec.parts = o_.parts;
  rec.cpu_threads = threads;
  rec.resident = ws.resident;
  rec.dynamic = dynamic;
  append(rec);
  if (t.failure.empty() && (bucket_best_ == 0 || t.wall.median < bucket_best_))
    bucket_best_ = t.wall.median;
  progress("split", prec, bucket_index_, static_cast<int>(o_.sizes.size()), bucket_best_, ws.n,
           "size " + std::to_string(ws.n) + (ws.resident ? " resident" : "") +
               " p_g=" + std::to_string(gpu_parts) + "/" + std::to_string(o_.parts) +
               (threads ? " threads=" + std::to_string(threads) : "") +
               (dynamic ? " dynamic" : "") +
               (t.failure.empty() ? "" : "  [" + t.failure.substr(0, 80) + "]"));
  return t.failure.empty() ? Measured{t.cost, t.wall.median} : Measured{};
}

// How one configuration of the split runs: the CPU alone (gpu_parts 0), the GPU alone (P) or
// a split, on `threads` CPU threads (0: default_threads).
Options Tuner::split_options(const std::map<std::string, int>& kernel, int gpu_parts, int threads,
                             bool dynamic) const {
  Options opt;
  opt.device = o_.device;
  // Always explicit, so an active profile's thread count never leaks into the comparison.
  opt.cpu_threads = threads > 0 ? threads : default_threads(gpu_parts);
  if (gpu_parts == 0) {
    opt.strategy = Strategy::Cpu;
  } else if (gpu_parts == o_.parts) {
    opt = gpu_options(kernel);
  } else {
    opt.strategy = Strategy::Hybrid;
    opt.gpu_fraction = double(gpu_parts) / o_.parts;
    opt.kernel_params = kernel;
    opt.balance = dynamic ? Balance::Dynamic : Balance::Static;
    // The cores the CPU share leaves feed a discrete device: what a profile's thread count
    // means when a call applies it (plan.cpp, divide_cores).
    opt.feeder_threads = std::max(1, cores() - *opt.cpu_threads);
  }
  return opt;
}

// The full check of a split's winner (on ordinary memory); false if it failed.
template <class T>
bool Tuner::winner_checks(int64_t size, int gpu_parts, int cpu_threads, bool dynamic,
                          const std::map<std::string, int>& kernel, uint64_t seed) {
  Options opt;
  opt.device = o_.device;
  opt.strategy = gpu_parts == o_.parts ? Strategy::Gpu : Strategy::Hybrid;
  opt.balance = dynamic ? Balance::Dynamic : Balance::Static;
  opt.gpu_fraction = double(gpu_parts) / o_.parts;
  opt.kernel_params = kernel;
  if (cpu_threads > 0) {
    opt.cpu_threads = cpu_threads;
    opt.feeder_threads = std::max(1, cores() - cpu_threads);
  }
  return full_check<T>(std::min<int64_t>(size, 512), opt, seed, o_.tamper).empty();
}

// Interleaved rounds of the CPU alone, the GPU alone and the candidate the search found (`sp`),
// judged by confirm_split: what is kept goes into `sp`, and the verdict into the log, the
// progress and the profile. Only where the objective is time (energy has no per-call reading),
// and never where the search kept the CPU alone, the safe choice. A log's rounds for the same
// candidate are used again rather than measured, and judged by today's rule.
template <class T>
prof::Confirmation Tuner::confirm(Precision prec, Workspace<T>& ws, const Measured& cpu,
                                  Split& sp) {
  const bool cpu_in = o_.split_min == 0;
  const bool gpu_in = o_.split_max == o_.parts && std::isfinite(sp.best_gpu.cost);
  if (sp.gpu_parts == 0 || o_.objective != "time" || (!cpu_in && !gpu_in)) return {};
  const prof::ConfirmRule& rule = prof::confirm_rule();
  Rounds r;
  const prof::LogRecord* logged = logged_confirm(prec, ws.n, sp, ws.resident);
  const std::optional<std::string> logged_verdict =
      logged ? std::optional<std::string>(logged->verdict) : std::nullopt;
  if (logged != nullptr) {
    const auto side = [logged](const char* name) {
      const auto it = logged->rounds.find(name);
      return it == logged->rounds.end() ? std::vector<double>{} : it->second;
    };
    r = {side("cpu"), side("gpu"), side("candidate")};
  } else {
    std::vector<std::pair<std::string, Options>> sides;
    if (cpu_in) sides.emplace_back("cpu", split_options({}, 0, 0, false));
    if (gpu_in && sp.gpu_parts < o_.parts)
      sides.emplace_back("gpu", split_options(sp.gpu_kernel, o_.parts, 0, false));
    sides.emplace_back("candidate",
                       split_options(sp.kernel, sp.gpu_parts, sp.cpu_threads, sp.dynamic));
    r = rounds(ws, sides);
  }
  const Confirmed c = confirm_split(r, sp.gpu_parts, o_.parts, o_.split_margin, rule.confidence);
  prof::LogRecord rec = record("confirm", prec, ws.n, sp.kernel, Timed{});
  rec.gpu_parts = sp.gpu_parts;
  rec.parts = o_.parts;
  rec.cpu_threads = sp.cpu_threads;
  rec.resident = ws.resident;
  rec.dynamic = sp.dynamic;
  rec.seconds = std::nullopt;  // the candidate failed in every round
  if (!r.candidate.empty()) rec.seconds = rec.cost = summarize(r.candidate).median;
  rec.rounds = {{"cpu", r.cpu}, {"gpu", r.gpu}, {"candidate", r.candidate}};
  rec.verdict = to_string(c.verdict);
  rec.note = c.note;
  // Rounds taken from the log are logged again only where today's rule judges them otherwise.
  if (logged_verdict != rec.verdict) append(rec);
  progress("confirm", prec, bucket_index_, static_cast<int>(o_.sizes.size()), bucket_best_, ws.n,
           "size " + std::to_string(ws.n) + (ws.resident ? " resident" : "") + ": " + c.note,
           /*keep_line=*/true);
  if (c.keep != sp.gpu_parts) {
    const bool gpu = c.keep == o_.parts;
    sp.best = gpu ? sp.best_gpu : cpu;
    sp.gpu_parts = c.keep;
    sp.kernel = gpu ? sp.gpu_kernel : std::map<std::string, int>{};
    sp.cpu_threads = 0;
    sp.dynamic = false;
  }
  return {to_string(c.verdict), c.note};
}

// `rule.rounds` rounds of every side, each in an order drawn for the round (round_order, from
// `first_round` on, so that a further set of rounds draws orders of its own), after
// a pause for the threads of the side before it to go idle, run `warmup` times untimed (what that
// side left behind is not this one's cost) and then once timed: the machine's drift hits every
// side alike, and no side always follows the same other one. A side that fails keeps no times
// (it cannot be kept).
template <class W>
Rounds Tuner::rounds(W& ws, const std::vector<std::pair<std::string, Options>>& sides,
                     std::string* failure_out, int first_round) {
  const prof::ConfirmRule& rule = prof::confirm_rule();
  std::map<std::string, std::vector<double>> times;
  std::set<std::string> failed;
  std::string first_failure;
  for (int round = 0; round < rule.rounds; ++round)
    for (const size_t i : round_order(sides.size(), first_round + round)) {
      const auto& [name, opt] = sides[i];
      if (failed.count(name)) continue;
      std::this_thread::sleep_for(std::chrono::duration<double>(rule.settle_seconds));
      double seconds = 0;
      std::string failure;
      for (int w = 0; w <= rule.warmup && failure.empty(); ++w)
        failure = call_once(ws, opt, &seconds);
      if (!failure.empty()) {
        failed.insert(name);
        times.erase(name);
        if (first_failure.empty()) first_failure = name + ": " + failure;
        continue;
      }
      times[name].push_back(seconds);
    }
  if (failure_out != nullptr) *failure_out = first_failure;
  return {times["cpu"], times["gpu"], times["candidate"]};
}

// The latest confirm record of this candidate with today's number of rounds (an earlier one may
// carry a verdict by another rule).
const prof::LogRecord* Tuner::logged_confirm(Precision prec, int64_t size, const Split& sp,
                                             bool resident) const {
  const auto rounds = static_cast<size_t>(prof::confirm_rule().rounds);
  for (auto r = log_.rbegin(); r != log_.rend(); ++r) {
    const auto it = r->rounds.find("candidate");
    if (r->kind == "confirm" && r->precision == prec && r->size == size && r->kernel == sp.kernel &&
        r->gpu_parts == sp.gpu_parts && r->parts == o_.parts && r->cpu_threads == sp.cpu_threads &&
        r->resident == resident && r->dynamic == sp.dynamic && it != r->rounds.end() &&
        it->second.size() == rounds)
      return &*r;
  }
  return nullptr;
}

// The CPU share's threads when the tuner does not vary them: every core alone, one fewer beside
// a GPU share (the feeder's).
int Tuner::default_threads(int gpu_parts) {
  return gpu_parts > 0 ? std::max(1, cores() - 1) : cores();
}

// The CPU share's threads while the split is searched: one core fewer than all for the feeder,
// or half the cores where the feeder packs and unpacks the GPU's operands (a discrete device,
// ordinary memory), which one core could not keep up with on the H100 host
// (docs/PERFORMANCE.md). The thread search afterwards tries other counts.
int Tuner::search_threads(bool resident) const {
  if (detail::gpu::is_discrete(*device_) && !resident) return std::max(1, cores() / 2);
  return default_threads(1);
}

// Phase 1 (cotuner.cpp) runs each bucket through here.
#define X(T)                                                                                    \
  template prof::Bucket Tuner::split_bucket<T>(Precision, int64_t,                              \
                                               const std::vector<std::map<std::string, int>>&); \
  template Rounds Tuner::rounds<BatchWorkspace<T>>(                                             \
      BatchWorkspace<T>&, const std::vector<std::pair<std::string, Options>>&, std::string*, int);
TANDEM_FOR_EACH_ELEMENT(X)
#undef X

}  // namespace tandem::tuner
