// The co-tuner's search of the coalesced kernel's own parameters (the batch phase's first part):
// kernels/gemm_direct.cl's batched form, for batches of products of each of batch.kernel_sizes
// (database/defaults.json), at two counts each: as many products as the cores take
// batch.tune_call_seconds over (the batch rule's count) and batch.kernel_few. A tile made for one
// small call leaves a batch of large products far from what the device does (docs/PERFORMANCE.md,
// "Batches": 0.64x cuBLAS at 1024^3 with the direct kernel's 32 x 32 tiles), and a batch of few
// products wants smaller tiles than one of many: hence a bucket per size and count.
//
// Each candidate runs as a whole batch call on the device alone (strategy gpu), from tandem_malloc
// memory on a discrete device (copied with no packing, so what differs between kernels shows;
// from ordinary memory the host's packing hides it) and from ordinary memory on a unified one: an
// untimed call, then the median of three, every call checked exactly. The search starts from the
// direct kernel of the profile being tuned and tries the other buckets' winners and a ladder of
// larger tiles (tile_ladder) before its own steps; the buckets go from the largest size down. Its
// best then runs against the direct kernel in the confirm rule's interleaved rounds and is kept
// only where faster by the split margin, beyond the noise, and where it computes an awkward batch
// from random inputs right (batch_full_check); else the bucket records the direct kernel, and a
// batch near it runs the profile's direct kernel. What a bucket says holds at its size and count:
// a batch between buckets runs the nearest one's kernel. Candidates are logged as "coalesced"
// records and the rounds as "coalesced confirm" (with the direct kernel they were timed against),
// with their count and memory; a rerun resumes from them.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "base/precision.hpp"
#include "base/text.hpp"
#include "cotuner_internal.hpp"
#include "profile/choice.hpp"
#include "profile/defaults.hpp"

namespace tandem::tuner {

namespace {

// `base` with the parameters `values` names set to them; none where one of the values is not in
// the space or the point breaks a constraint.
std::optional<Point> point_of(const Space& space, Point base,
                              const std::map<std::string, int>& values) {
  for (size_t i = 0; i < space.dimension(); ++i) {
    const auto it = values.find(space.parameters[i].name);
    if (it == values.end()) continue;
    const auto& v = space.parameters[i].values;
    const auto at = std::find(v.begin(), v.end(), it->second);
    if (at == v.end()) return std::nullopt;
    base[i] = static_cast<int>(at - v.begin());
  }
  if (space.violated(base)) return std::nullopt;
  return base;
}

// Tiles a batch of larger products wants and a one-call search rarely reaches from a small
// call's kernel (database/defaults.json's batch.kernel_ladder: 256 work-items with 4 x 4 to 8 x 8
// results each, down to 32 x 32 tiles of 64 work-items), the largest first for large products.
// Tried in each bucket after the direct kernel and the other buckets' winners, before the
// search's own steps.
std::vector<Point> tile_ladder(const Space& space, int64_t size, Precision prec) {
  const prof::BatchTune& rule = prof::batch_tune();
  // The widest power of two within vector_bytes.
  int width = 1;
  while (2 * width * static_cast<int>(detail::element_bytes(prec)) <= rule.ladder_vector_bytes)
    width *= 2;
  std::vector<std::array<int, 4>> tiles = rule.ladder;
  if (size < rule.ladder_largest_first_from) std::reverse(tiles.begin(), tiles.end());
  std::vector<Point> out;
  if (!space.start) return out;
  for (const auto& [mwg, nwg, mdimc, ndimc] : tiles) {
    std::map<std::string, int> values = rule.ladder_fixed;
    values.insert({{"MWG", mwg}, {"NWG", nwg}, {"MDIMC", mdimc}, {"NDIMC", ndimc}});
    // The widest vector the space has up to `width`.
    for (int w = width; w >= 1; w /= 2) {
      for (const char* name : {"VWA", "VWB"}) values[name] = w;
      if (auto p = point_of(space, *space.start, values)) {
        out.push_back(*p);
        break;
      }
    }
  }
  return out;
}

}  // namespace

template <class T>
void Tuner::tune_coalesced(Precision prec, prof::PrecisionProfile& pp, PrecisionSummary& summary) {
  if (o_.batch_kernel_evaluations <= 0) return;
  const prof::BatchTune& rule = prof::batch_tune();
  std::vector<int64_t> sizes = o_.batch_sizes.empty() ? rule.kernel_sizes : o_.batch_sizes;
  // The largest first: there the kernel decides most, and time may run out before the smallest.
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const double end = precision_deadline_;
  // Half of the batch phase's time; the batch rule has the rest.
  precision_deadline_ = elapsed() + std::max(0.0, (end - elapsed()) / 2);
  const auto note = [&](const std::string& why) {
    summary.batch_failure += (summary.batch_failure.empty() ? "" : "; ") + why;
  };
  std::vector<std::pair<int64_t, int64_t>> buckets;  // (size, count), in measuring order
  for (const int64_t size : sizes) {
    if (3.0 * static_cast<double>(size * size) * static_cast<double>(detail::element_bytes(prec)) >
        static_cast<double>(rule.bytes)) {
      note("coalesced kernel: " + std::to_string(size) +
           "^3 left out: one product's operands exceed batch.tune_bytes");
      continue;
    }
    // A rerun resumes at the count the log has (the cores' rate, which sets it, varies).
    int64_t many = 0;
    for (auto r = log_.rbegin(); r != log_.rend() && many == 0; ++r)
      if (r->kind == "coalesced" && r->precision == prec && r->size == size &&
          r->count != rule.kernel_few)
        many = r->count;
    if (many == 0) many = batch_count<T>(prec, size);
    if (rule.kernel_few < many) buckets.emplace_back(size, rule.kernel_few);
    buckets.emplace_back(size, many);
  }
  std::vector<prof::CoalescedBucket> found;
  std::vector<Point> winners;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const auto [size, count] = buckets[i];
    if (out_of_time()) {
      note("coalesced kernel: out of time before " + std::to_string(count) + " x " +
           std::to_string(size) + "^3");
      break;
    }
    const double seconds =
        (precision_deadline_ - elapsed()) / static_cast<double>(buckets.size() - i);
    if (auto b = coalesced_bucket<T>(prec, pp, size, count, seconds, winners, summary))
      found.push_back(std::move(*b));
  }
  // What this run measured replaces the profile's buckets of the sizes it measured (the count of
  // many products varies between runs); the profile's others stay (a run out of time, or at
  // other sizes, loses none).
  for (const prof::CoalescedBucket& b : pp.coalesced)
    if (std::none_of(found.begin(), found.end(),
                     [&](const prof::CoalescedBucket& f) { return f.size == b.size; }))
      found.push_back(b);
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::pair(a.size, a.count) < std::pair(b.size, b.count);
  });
  pp.coalesced = std::move(found);
  summary.coalesced = pp.coalesced;
  precision_deadline_ = end;
}

// One bucket: the search, then the confirm rule's rounds of its best against the direct kernel.
template <class T>
std::optional<prof::CoalescedBucket> Tuner::coalesced_bucket(
    Precision prec, const prof::PrecisionProfile& pp, int64_t size, int64_t count, double seconds,
    std::vector<Point>& winners, PrecisionSummary& summary) {
  bool resident = detail::gpu::is_discrete(*device_);
  auto ws = std::make_unique<BatchWorkspace<T>>(size, count, resident);
  if (resident && !pinned(*device_, *ws)) {
    resident = false;
    ws.reset();
    ws = std::make_unique<BatchWorkspace<T>>(size, count, false);
  }
  // The profile's direct kernel as a batch would look it up (the bucket's direct_kernel).
  const std::map<std::string, int> profiles_direct = *prof::direct_for(&pp, info_.is_gpu).kernel;
  std::map<std::string, int> start = profiles_direct;
  start["KERNEL"] = detail::gpu::kDirect;
  const DeviceLimits limits{info_.max_work_group, info_.local_mem_bytes, info_.is_gpu,
                            info_.nv_compiler_options};
  const Space space =
      direct_space(limits, prec, detail::gpu::resolve_params(*device_, prec, start));
  const std::string what = std::to_string(count) + " x " + std::to_string(size) + "^3";
  Evaluator ev(
      space, [&](const Point& p) { return try_coalesced<T>(prec, *ws, space, p); },
      Budget{o_.batch_kernel_evaluations, std::max(1e-3, seconds * 2.0 / 3.0)},
      [&](const Point& p, const Outcome& out, const Evaluator& e) {
        ++summary.coalesced_evaluations;
        progress("coalesced", prec, e.evaluations(), o_.batch_kernel_evaluations,
                 e.best() ? e.best_cost() / static_cast<double>(count) : 0, size,
                 what + ": " + space.describe(p) +
                     (out.cost ? "" : "  [" + out.failure.substr(0, 80) + "]"));
      });
  for (const auto& r : log_)
    if (r.kind == "coalesced" && r.precision == prec && r.size == size && r.count == count &&
        r.resident == resident && r.point.size() == space.dimension() && !space.violated(r.point) &&
        kernel_params(space, r.point) == r.kernel) {
      ev.preload(r.point, r.seconds ? Outcome{r.seconds, ""} : Outcome{std::nullopt, r.failure});
      ++summary.coalesced_evaluations;
    }
  if (space.start && !ev.known(*space.start)) ev(*space.start);
  for (const Point& w : winners)
    if (!ev.known(w) && !space.violated(w)) ev(w);
  for (const Point& t : tile_ladder(space, size, prec))
    if (!ev.known(t)) ev(t);
  search(o_.strategy, ev, o_.seed);
  if (!ev.best() || !space.start) {
    summary.batch_failure += std::string(summary.batch_failure.empty() ? "" : "; ") +
                             "coalesced kernel at " + what + ": no candidate ran";
    return std::nullopt;
  }
  const Point best = *ev.best();
  if (std::find(winners.begin(), winners.end(), best) == winners.end()) winners.push_back(best);
  prof::CoalescedBucket b;
  b.size = size;
  b.count = count;
  b.direct_kernel = profiles_direct;
  b.resident = resident;
  const auto direct = kernel_params(space, *space.start);
  if (best == *space.start) {
    b.kernel = direct;
    b.gflops = b.direct_gflops = gflop(prec, size) * static_cast<double>(count) / ev.best_cost();
    b.verdict = to_string(Verdict::NotFaster);
    b.note = "the direct kernel was the search's best";
    return b;
  }
  // The direct kernel failing its rounds leaves nothing to keep.
  if (!confirm_coalesced<T>(prec, *ws, direct, kernel_params(space, best), b)) {
    summary.batch_failure += std::string(summary.batch_failure.empty() ? "" : "; ") +
                             "coalesced kernel at " + what + ": " + b.note;
    return std::nullopt;
  }
  return b;
}

// The confirm rule's rounds of `candidate` against `direct` on ws (from the log where an earlier
// run measured them, else now, then logged): b's kernel, rates, verdict and note. False where the
// direct kernel failed its rounds.
template <class T>
bool Tuner::confirm_coalesced(Precision prec, BatchWorkspace<T>& ws,
                              const std::map<std::string, int>& direct,
                              const std::map<std::string, int>& candidate,
                              prof::CoalescedBucket& b) {
  const auto n = static_cast<size_t>(prof::confirm_rule().rounds);
  const prof::LogRecord* logged = nullptr;
  for (auto it = log_.rbegin(); it != log_.rend() && logged == nullptr; ++it)
    if (it->kind == "coalesced confirm" && it->precision == prec && it->size == ws.n &&
        it->count == ws.count && it->resident == ws.resident && it->kernel == candidate &&
        it->base_kernel == direct && it->rounds.count("gpu") != 0 &&
        it->rounds.at("gpu").size() == n)
      logged = &*it;
  Rounds r;
  std::string failure;
  if (logged != nullptr) {
    r.gpu = logged->rounds.at("gpu");
    if (const auto c = logged->rounds.find("candidate"); c != logged->rounds.end())
      r.candidate = c->second;
    failure = logged->failure;
  } else {
    r = rounds(ws, {{"gpu", gpu_options(direct)}, {"candidate", gpu_options(candidate)}}, &failure);
  }
  Confirmed c = confirm_faster(r.candidate, r.gpu, o_.split_margin, prof::confirm_rule().confidence,
                               "the search's best", "the direct kernel");
  // Faster, but kept only where it also computes an awkward batch from random inputs right.
  if (c.verdict == Verdict::Faster)
    if (const std::string bad = batch_full_check<T>(gpu_options(candidate), o_.seed + 7, o_.tamper);
        !bad.empty()) {
      c.verdict = Verdict::NotFaster;
      c.note = "faster, but " + bad;
    }
  const double work = gflop(prec, ws.n) * static_cast<double>(ws.count);
  b.kernel = c.verdict == Verdict::Faster ? candidate : direct;
  b.gflops = r.candidate.empty() ? 0 : work / median_of(r.candidate);
  b.direct_gflops = r.gpu.empty() ? 0 : work / median_of(r.gpu);
  b.verdict = to_string(c.verdict);
  b.note = failure.empty() ? c.note : "the rounds failed: " + failure;
  if (logged == nullptr) {
    prof::LogRecord rec;
    rec.kind = "coalesced confirm";
    rec.precision = prec;
    rec.size = ws.n;
    rec.count = ws.count;
    rec.resident = ws.resident;
    rec.kernel = candidate;
    rec.base_kernel = direct;
    rec.rounds = {{"gpu", r.gpu}, {"candidate", r.candidate}};
    if (!r.candidate.empty()) rec.seconds = median_of(r.candidate);
    rec.failure = failure;
    rec.verdict = b.verdict;
    rec.note = b.note;
    append(rec);
  }
  return !r.gpu.empty();
}

// One candidate: an untimed call, then three timed, each checked; logged.
template <class T>
Outcome Tuner::try_coalesced(Precision prec, BatchWorkspace<T>& ws, const Space& space,
                             const Point& p) {
  const auto kernel = kernel_params(space, p);
  prebuild<T>(space, p);
  const Options opt = gpu_options(kernel);
  std::vector<double> times;
  std::string failure;
  for (int i = 0; i < 4 && failure.empty(); ++i) {
    double t = 0;
    failure = call_once(ws, opt, &t);
    if (failure.empty() && i > 0) times.push_back(t);
  }
  Timed timed;
  timed.failure = failure;
  if (failure.empty()) {
    timed.wall = summarize(times);
    timed.cost = timed.wall.median;
  }
  prof::LogRecord rec = record("coalesced", prec, ws.n, kernel, timed);
  rec.point = p;
  rec.count = ws.count;
  rec.resident = ws.resident;
  append(rec);
  return failure.empty() ? Outcome{timed.cost, ""} : Outcome{std::nullopt, failure};
}

#define X(T)                                                                                     \
  template void Tuner::tune_coalesced<T>(Precision, prof::PrecisionProfile&, PrecisionSummary&); \
  template Outcome Tuner::try_coalesced<T>(Precision, BatchWorkspace<T>&, const Space&,          \
                                           const Point&);
TANDEM_FOR_EACH_ELEMENT(X)
#undef X

}  // namespace tandem::tuner
