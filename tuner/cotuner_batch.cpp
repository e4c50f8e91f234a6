// The co-tuner's batch phase: where auto sends a batch's products to the devices rather than keep
// them on the cores, and whether it deals them or gives the devices them all (profile.hpp's
// BatchRule), measured for one precision, for operands in ordinary memory and, on a discrete
// device, in tandem_malloc memory, which the device copies with no packing and so leaves the
// host's cores to compute (on the H100 host dealing paid there at sizes where it did not from
// ordinary memory: docs/PERFORMANCE.md, "Batches").
//
// At each size, from the largest down, a strided batch of size³ products runs under strategy
// cpu, under strategy gpu (the devices alone) and under strategy hybrid (the products dealt to
// the device's coalesced kernel, with the kernel the profile being tuned gives it, and to the
// cores), in the confirm rule's interleaved rounds, every call checked. The side a size keeps is
// the one confirm_split keeps of a split: dealing where the rounds show it faster than the cores
// alone and than the devices alone by the split margin, beyond the noise; else the devices alone
// where they beat the cores; else the cores. A size whose rounds are too noisy to decide gets a
// new set of rounds, judged on its own (confirm.batch_sets_where_too_noisy sets in all, time
// allowing), and the last set's verdict stands. (On the H100 host dealing lost to the GPU alone at
// 512^3-1024^3, down to 0.69x, where the cores ran at a third of its rate or less.) The measuring
// stops at the first size where the cores keep it: the rule's edge lies between that size and
// the one above it, the geometric middle of the two, as sizes are compared on a log scale; the
// smallest size measured where the devices paid at every size; half a doubling above the largest
// where the devices ran there but did not pay; 0 (never) where they failed there
// (batch_rule_from). Products smaller than any size measured stay on the cores. Where a size
// keeps the devices, a batch of few of its products (batch_few) and one at the middle count
// between those and its own (batch_middle) are measured too: auto's side for a count follows them
// (profile::batch_side_at). The rounds are logged as "batch" records (and "batch few", "batch
// middle") and resumed from them. `tandem tune --batch-only` runs this phase
// alone for the profile that applies now.
#include <algorithm>
#include <cmath>
#include <functional>

#include "base/precision.hpp"
#include "cotuner_internal.hpp"
#include "plan/plan.hpp"
#include "profile/choice.hpp"
#include "profile/defaults.hpp"

namespace tandem::tuner {

prof::BatchRule batch_rule_from(std::vector<prof::BatchPoint> points) {
  std::sort(points.begin(), points.end(),
            [](const prof::BatchPoint& a, const prof::BatchPoint& b) { return a.size < b.size; });
  prof::BatchRule rule;
  rule.points = points;
  if (points.empty()) return rule;
  // The smallest size from which the devices (dealt or alone) won at every larger one.
  size_t from = points.size();
  while (from > 0 && points[from - 1].side() != prof::BatchSide::Cores) --from;
  if (from == points.size()) {
    // Where the devices failed at the largest size (neither the dealt side nor the devices alone
    // kept times: a wrong result, a device that failed) they never pay; where they ran but did
    // not pay, they may above what was measured, as a single call of the batch's work says
    // (batch_uses_devices).
    const prof::BatchPoint& largest = points.back();
    rule.devices_from = largest.hybrid_gflops > 0 || largest.gpu_gflops > 0
                            ? std::llround(static_cast<double>(largest.size) * std::sqrt(2.0))
                            : 0;
  } else if (from == 0) {
    rule.devices_from = points.front().size;
  } else {
    rule.devices_from = std::llround(std::sqrt(static_cast<double>(points[from - 1].size) *
                                               static_cast<double>(points[from].size)));
  }
  return rule;
}

namespace {

// The kernel the profile being tuned gives a batch of `count` products of size³: its coalesced
// bucket's, else its direct kernel, else the defaults' (never the kernel of the profile in force
// while tuning).
std::map<std::string, int> batch_kernel(const prof::PrecisionProfile& pp, bool is_gpu, int64_t size,
                                        int64_t count) {
  const auto* own = prof::coalesced_for(pp, is_gpu, static_cast<double>(size), count);
  return own != nullptr ? *own : *prof::direct_for(&pp, is_gpu).kernel;
}

// A size's point from the rounds its verdict rests on: each side's rate by its median, the side
// kept, and the kept side's verdict against the cores alone (dealt or the devices alone).
prof::BatchPoint point_of(Precision prec, int64_t size, int64_t count, const Rounds& r,
                          const Confirmed& c) {
  prof::BatchPoint point;
  point.size = size;
  point.count = count;
  const double work = gflop(prec, size) * static_cast<double>(count);
  point.cpu_gflops = work / median_of(r.cpu);
  point.gpu_gflops = r.gpu.empty() ? 0 : work / median_of(r.gpu);
  point.hybrid_gflops = r.candidate.empty() ? 0 : work / median_of(r.candidate);
  point.chosen = c.keep == 1   ? prof::BatchSide::Dealt
                 : c.keep == 2 ? prof::BatchSide::Devices
                               : prof::BatchSide::Cores;
  point.verdict = to_string(c.verdict);
  point.note = c.note;
  return point;
}

}  // namespace

template <class T>
void Tuner::tune_batch(Precision prec, prof::PrecisionProfile& pp, PrecisionSummary& summary) {
  batch_counts_.clear();
  const double end = precision_deadline_;
  precision_deadline_ = elapsed() + std::max(0.0, std::min(o_.batch_seconds, end - elapsed()));
  // The coalesced kernel's buckets first: the rule then deals with the kernel a batch will run.
  tune_coalesced<T>(prec, pp, summary);
  if (auto rule = batch_rule<T>(prec, pp, false, summary)) pp.batch = std::move(*rule);
  if (detail::gpu::is_discrete(*device_))
    if (auto rule = batch_rule<T>(prec, pp, true, summary)) pp.batch_resident = std::move(*rule);
  precision_deadline_ = end;
}

// The count of products a batch of `size` has: as many as the cores alone take the call time
// over, at their rate on a first batch (four products a core, or about 10^7 multiply-adds if
// more: a batch of fewer products than cores leaves cores idle and would understate their rate),
// the median of three calls after a warm-up, within the bytes allowed.
template <class T>
int64_t Tuner::batch_count(Precision prec, int64_t size) {
  if (const auto it = batch_counts_.find(size); it != batch_counts_.end()) return it->second;
  const prof::BatchTune& rule = prof::batch_tune();
  const double seconds = o_.batch_call_seconds > 0 ? o_.batch_call_seconds : rule.call_seconds;
  const double each =
      3.0 * static_cast<double>(size * size) * static_cast<double>(detail::element_bytes(prec));
  const auto most =
      std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(rule.bytes) / each));
  const double volume = static_cast<double>(size) * static_cast<double>(size * size);
  const int64_t trial = std::clamp<int64_t>(
      std::max<int64_t>(4 * detail::host_cores(), std::llround(1e7 / volume)), 1, most);
  BatchWorkspace<T> ws(size, trial, false);
  Options cpu;
  cpu.strategy = Strategy::Cpu;
  std::vector<double> times;
  for (int i = 0; i < 4; ++i) {
    double t = 0;
    if (!call_once(ws, cpu, &t).empty()) break;
    if (i > 0) times.push_back(t);
  }
  const double t = median_of(times);
  // At least a product a core (as the trial batch), within the bytes allowed.
  const int64_t least = std::min<int64_t>(most, detail::host_cores());
  const int64_t count =
      t > 0
          ? std::clamp<int64_t>(std::llround(seconds / t * static_cast<double>(trial)), least, most)
          : trial;
  batch_counts_[size] = count;
  return count;
}

// One size's rounds in one memory, at the size's count (batch_count's), or at its point's middle
// count where one is given (`middle`, logged as "batch middle"): from the log where an earlier run
// measured them, else measured now (not yet logged: the caller logs them with their verdict).
template <class T>
BatchRounds Tuner::batch_rounds(Precision prec, int64_t size, bool resident, const Options& cpu,
                                const Options& hybrid, int set, int64_t middle) {
  BatchRounds out;
  if (const prof::LogRecord* logged = logged_batch(prec, size, resident, hybrid.kernel_params,
                                                   middle > 0 ? "batch middle" : "batch", middle)) {
    out.logged = true;
    out.count = logged->count;
    out.rounds.cpu = logged->rounds.at("cpu");
    if (const auto g = logged->rounds.find("gpu"); g != logged->rounds.end())
      out.rounds.gpu = g->second;
    if (const auto c = logged->rounds.find("candidate"); c != logged->rounds.end())
      out.rounds.candidate = c->second;
    out.failure = logged->failure;
    out.verdict = logged->verdict;
    out.note = logged->note;
    return out;
  }
  out.count = middle > 0 ? middle : batch_count<T>(prec, size);
  BatchWorkspace<T> ws(size, out.count, resident);
  // tandem_malloc gives ordinary memory where the device cannot pin so much: not what is asked.
  if (resident && !pinned(*device_, ws)) {
    out.failure = "tandem_malloc could not pin the batch's operands";
    out.count = 0;  // not measured: the caller goes on to the next size
    return out;
  }
  // One untimed call of each side first: a device's first batch of a size sets up what later
  // ones reuse (staging, on the host and on the device), which the rounds' calls must not pay.
  // On the H100 host the first timed dgemm call of 118 x 512^3 ran 1.9x the others and alone
  // hid a 1.74x gain in overlapping ranges.
  Options gpu = hybrid;
  gpu.strategy = Strategy::Gpu;
  for (const Options* side : {&cpu, static_cast<const Options*>(&gpu), &hybrid}) {
    double untimed = 0;
    (void)call_once(ws, *side, &untimed);
  }
  out.rounds = rounds(ws, {{"cpu", cpu}, {"gpu", gpu}, {"candidate", hybrid}}, &out.failure,
                      set * prof::confirm_rule().rounds);
  return out;
}

// The side one size's rounds keep (confirm.hpp's batch_side_sets): a set too noisy to decide is
// measured again, time allowing, unless it came from the log, which holds the set that decided;
// `measured` becomes the set the verdict rests on. The note is the point's: with the failure a
// side met, or the log's own.
template <class T>
Confirmed Tuner::judge_batch(BatchRounds& measured, Precision prec, int64_t size, bool resident,
                             const Options& cpu, const Options& hybrid, int64_t middle) {
  int set = 0;
  std::string lost;  // why a further set was not measured
  const auto again = [&]() -> std::optional<Rounds> {
    if (out_of_time()) {
      lost = "set " + std::to_string(set + 2) + " not measured: out of time";
      return std::nullopt;
    }
    BatchRounds more = batch_rounds<T>(prec, size, resident, cpu, hybrid, ++set, middle);
    if (more.count == 0 || more.rounds.cpu.empty()) {
      lost = "set " + std::to_string(set + 1) + " not measured: " + more.failure;
      return std::nullopt;
    }
    measured.failure = std::move(more.failure);
    return std::move(more.rounds);
  };
  const prof::ConfirmRule& confirm = prof::confirm_rule();
  Confirmed c =
      batch_side_sets(measured.rounds, measured.logged ? 1 : confirm.batch_sets_where_too_noisy,
                      again, o_.split_margin, confirm.confidence);
  // A resumed point keeps the log's note where today's rule gives its verdict (the note tells
  // the sets of rounds apart, which the rounds alone do not).
  if (measured.logged && measured.verdict == to_string(c.verdict))
    c.note = measured.note;
  else if (!measured.failure.empty())
    c.note = "failed: " + measured.failure + "; " + c.note;
  if (!lost.empty()) c.note += "; " + lost;
  return c;
}

// A point's few products (profile.hpp's FewProducts): a strided batch of batch.kernel_few
// products of size³ under the cores alone and under the devices alone (`device`, with the kernel
// the profile being tuned gives such a batch: its coalesced bucket's, else its direct kernel), in
// the confirm rule's rounds after an untimed call of each, every call checked; the devices alone
// kept only where they beat the cores beyond the noise (tuner::few_side), a set of rounds too
// noisy to decide measured again as a point's is (confirm.batch_sets_where_too_noisy, time
// allowing; the last set's verdict stands). Each set is logged as a "batch few" record, the last
// with its verdict and note, and a rerun resumes the last; none where the cores failed, the
// operands could not be pinned as asked, or time ran out.
template <class T>
std::optional<prof::FewProducts> Tuner::batch_few(Precision prec, const prof::PrecisionProfile& pp,
                                                  int64_t size, bool resident, const Options& cpu,
                                                  const std::optional<std::string>& device) {
  const prof::ConfirmRule& confirm = prof::confirm_rule();
  Options gpu;
  gpu.strategy = Strategy::Gpu;
  gpu.device = device;
  gpu.kernel_params = batch_kernel(pp, info_.is_gpu, size, prof::batch_tune().kernel_few);
  prof::LogRecord rec;
  rec.kind = "batch few";
  rec.precision = prec;
  rec.size = size;
  rec.count = prof::batch_tune().kernel_few;
  rec.kernel = gpu.kernel_params;
  rec.resident = resident;
  std::vector<prof::LogRecord> sets;  // measured now, logged once judged
  std::string lost;                   // why a further set was not measured
  std::optional<BatchWorkspace<T>> ws;
  const auto measure = [&]() -> std::optional<Rounds> {
    if (out_of_time()) {
      if (!sets.empty())
        lost = "set " + std::to_string(sets.size() + 1) + " not measured: out of time";
      return std::nullopt;
    }
    if (!ws) {
      ws.emplace(size, rec.count, resident);
      if (resident && !pinned(*device_, *ws)) return std::nullopt;
      for (const Options* side : {&cpu, static_cast<const Options*>(&gpu)}) {
        double untimed = 0;
        (void)call_once(*ws, *side, &untimed);
      }
    }
    prof::LogRecord set = rec;
    // Round orders of their own: after those of every set of the point's rounds.
    const int first =
        (confirm.batch_sets_where_too_noisy + static_cast<int>(sets.size())) * confirm.rounds;
    Rounds r = rounds(*ws, {{"cpu", cpu}, {"gpu", gpu}}, &set.failure, first);
    if (r.cpu.empty()) {  // nothing to weigh the devices against
      lost = "set " + std::to_string(sets.size() + 1) + " not measured: " + set.failure;
      return std::nullopt;
    }
    set.rounds = {{"cpu", r.cpu}, {"gpu", r.gpu}};
    sets.push_back(set);
    return r;
  };
  const prof::LogRecord* logged =
      logged_batch(prec, size, resident, gpu.kernel_params, "batch few", rec.count);
  Rounds r;
  if (logged != nullptr) {
    r = Rounds{logged->rounds.at("cpu"), logged->rounds.at("gpu"), {}};
  } else if (auto first = measure()) {
    r = std::move(*first);
  } else {
    return std::nullopt;
  }
  Confirmed c =
      judged_in_sets(r, logged != nullptr ? 1 : confirm.batch_sets_where_too_noisy, measure,
                     [&](const Rounds& x) { return few_side(x, confirm.confidence); });
  const std::string& failure = logged != nullptr ? logged->failure : sets.back().failure;
  // A resumed record keeps its note where today's rule gives its verdict (the note tells the
  // sets of rounds apart, which the last set's rounds alone do not).
  if (logged != nullptr && logged->verdict == to_string(c.verdict) && !logged->note.empty())
    c.note = logged->note;
  else if (!failure.empty())
    c.note = "failed: " + failure + "; " + c.note;
  if (!lost.empty()) c.note += "; " + lost;
  for (size_t i = 0; i < sets.size(); ++i) {
    if (i + 1 == sets.size()) {
      sets[i].verdict = to_string(c.verdict);
      sets[i].note = c.note;
    }
    append(sets[i]);
  }
  prof::FewProducts few;
  few.count = rec.count;
  const double work = gflop(prec, size) * static_cast<double>(rec.count);
  few.cpu_gflops = work / median_of(r.cpu);
  few.gpu_gflops = r.gpu.empty() ? 0 : work / median_of(r.gpu);
  few.devices = c.keep == 1;
  few.verdict = to_string(c.verdict);
  few.note = c.note;
  return few;
}

// A point's middle count (profile.hpp's MiddleCount): a strided batch of profile::middle_count
// products of the point's size, between its few products' count and its own (none where they
// were not measured: the side for a count rests on them, profile::batch_side_at), under the three
// sides of its rounds (batch_rounds, with the kernel the profile being tuned gives such a batch),
// judged, and measured again where too noisy, as the point is (judge_batch); logged as a "batch
// middle" record, and resumed from one. None where the point's count leaves no count between,
// the cores failed, the operands could not be pinned as asked, or time ran out.
template <class T>
std::optional<prof::MiddleCount> Tuner::batch_middle(Precision prec,
                                                     const prof::PrecisionProfile& pp,
                                                     const prof::BatchPoint& point, bool resident,
                                                     const Options& cpu, Options hybrid) {
  const int64_t count = point.few ? prof::middle_count(point.few->count, point.count) : 0;
  if (count == 0 || out_of_time()) return std::nullopt;
  hybrid.kernel_params = batch_kernel(pp, info_.is_gpu, point.size, count);
  BatchRounds measured = batch_rounds<T>(prec, point.size, resident, cpu, hybrid, 0, count);
  if (measured.count == 0 || measured.rounds.cpu.empty()) return std::nullopt;
  const prof::BatchPoint at =
      point_of(prec, point.size, measured.count, measured.rounds,
               judge_batch<T>(measured, prec, point.size, resident, cpu, hybrid, count));
  if (!measured.logged)
    log_batch("batch middle", prec, resident, hybrid.kernel_params, at, measured);
  return prof::MiddleCount{at.count,  at.cpu_gflops, at.gpu_gflops, at.hybrid_gflops,
                           at.side(), at.verdict,    at.note};
}

template <class T>
std::optional<prof::BatchRule> Tuner::batch_rule(Precision prec, const prof::PrecisionProfile& pp,
                                                 bool resident, PrecisionSummary& summary) {
  std::vector<int64_t> sizes = o_.batch_sizes.empty() ? prof::batch_tune().sizes : o_.batch_sizes;
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const char* memory = resident ? "tandem_malloc memory" : "ordinary memory";
  Options cpu;
  cpu.strategy = Strategy::Cpu;
  Options hybrid;
  hybrid.strategy = Strategy::Hybrid;
  hybrid.device = o_.device;
  const auto note = [&](const std::string& why) {
    summary.batch_failure += (summary.batch_failure.empty() ? "" : "; ") + why;
  };
  const auto most = static_cast<double>(prof::batch_tune().bytes);
  std::vector<prof::BatchPoint> points;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t size = sizes[i];
    if (out_of_time()) {
      note(std::string("out of time before ") + memory + " at " + std::to_string(size) + "^3");
      break;
    }
    if (3.0 * static_cast<double>(size) * static_cast<double>(size) *
            static_cast<double>(detail::element_bytes(prec)) >
        most) {
      note(std::to_string(size) + "^3 left out: one product's operands exceed batch.tune_bytes");
      continue;
    }
    prof::BatchPoint point;
    point.size = size;
    // The bucket for this size's count: the logged one where a record resumes (the cores' rate,
    // which sets it, varies between runs), else the one measured now.
    int64_t count = 0;
    // (Only records logged_batch would resume: those with the devices-alone side.)
    for (auto r = log_.rbegin(); r != log_.rend() && count == 0; ++r)
      if (r->kind == "batch" && r->precision == prec && r->size == size &&
          r->resident == resident && r->rounds.count("gpu") > 0)
        count = r->count;
    hybrid.kernel_params =
        batch_kernel(pp, info_.is_gpu, size, count > 0 ? count : batch_count<T>(prec, size));
    BatchRounds measured = batch_rounds<T>(prec, size, resident, cpu, hybrid);
    Rounds& r = measured.rounds;
    point.count = measured.count;
    if (point.count == 0) {
      note(std::string(memory) + " at " + std::to_string(size) +
           "^3 left out: " + measured.failure);
      continue;
    }
    if (r.cpu.empty()) {  // the cores alone failed: nothing to weigh dealing against
      note(std::string(memory) + " at " + std::to_string(size) + "^3: " + measured.failure);
      break;
    }
    point = point_of(prec, size, point.count, r,
                     judge_batch<T>(measured, prec, size, resident, cpu, hybrid));
    if (!measured.logged) log_batch("batch", prec, resident, hybrid.kernel_params, point, measured);
    // Where the devices take such products, which side takes few of them, and which a count
    // between those and the point's (below the rule's edge every batch stays on the cores).
    if (point.side() != prof::BatchSide::Cores) {
      point.few = batch_few<T>(prec, pp, size, resident, cpu, hybrid.device);
      point.middle = batch_middle<T>(prec, pp, point, resident, cpu, hybrid);
    }
    points.push_back(point);
    summary.batch_points.emplace_back(resident, point);
    progress("batch", prec, static_cast<int>(i + 1), static_cast<int>(sizes.size()),
             r.candidate.empty() ? 0 : median_of(r.candidate) / static_cast<double>(point.count),
             size,
             std::to_string(point.count) + " x " + std::to_string(size) + "^3, " + memory + ": " +
                 prof::to_string(point.side()),
             true);
    if (point.side() == prof::BatchSide::Cores) break;
  }
  if (points.empty()) return std::nullopt;
  return batch_rule_from(points);
}

template <class T>
std::string Tuner::call_once(BatchWorkspace<T>& ws, const Options& opt, double* seconds, double*) {
  std::fill(ws.c.begin(), ws.c.end(), detail::quiet_nan<T>());
  BatchReport r;
  const int64_t n = ws.n;
  try {
    const detail::clock::Stopwatch call;
    gemm_batch_strided<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, T(1), ws.a.data(), n,
                          n * n, ws.b.data(), n, n * n, T(0), ws.c.data(), n, n * n, ws.count, opt,
                          &r);
    *seconds = call.seconds();
  } catch (const Error& e) {
    return e.what();
  }
  // Dealt means dealt: a device that failed, or none taking part, is not what is measured.
  if (opt.strategy != Strategy::Cpu) {
    for (const BatchReport::Device& d : r.devices)
      if (d.failed) return "device failed: " + d.failure;
    if (r.device_problems == 0) return "no device took part";
  }
  if (o_.tamper && r.device_problems > 0)
    o_.tamper(ws.c.data(), ws.elements(), detail::precision_of<T>(), r.cpu_problems > 0);
  if (*seconds > o_.timeout_seconds)
    return "timeout: one call took " + std::to_string(*seconds) + " s";
  return ws.cheap_check();
}

#define X(T)                                                                                 \
  template void Tuner::tune_batch<T>(Precision, prof::PrecisionProfile&, PrecisionSummary&); \
  template std::string Tuner::call_once<T>(BatchWorkspace<T>&, const Options&, double*, double*);
TANDEM_FOR_EACH_ELEMENT(X)
#undef X

}  // namespace tandem::tuner
