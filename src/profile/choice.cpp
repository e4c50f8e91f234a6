// What a profile says for one call: the bucket nearest the call's size, and its split, kernel
// and CPU threads for the call's kind of memory; and whether the call is small enough for the
// direct kernel; and the coalesced kernel's bucket for a batch.
#include "profile/choice.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace tandem::detail::profile {

Choice choose(const Profile& p, Precision precision, int64_t m, int64_t n, int64_t k,
              bool resident) {
  Choice c;
  auto it = p.precisions.find(precision);
  if (it == p.precisions.end()) return c;
  const PrecisionProfile& pp = it->second;
  c.kernel = &pp.gpu_kernel;
  c.gpu_kernel = &pp.gpu_kernel;
  c.gpu_gflops = pp.gpu_gflops;
  if (pp.buckets.empty()) return c;
  const double size =
      std::cbrt(static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
  const Bucket* best = &pp.buckets.front();
  for (const auto& b : pp.buckets)
    if (std::fabs(std::log(size / double(b.size))) < std::fabs(std::log(size / double(best->size))))
      best = &b;
  if (!best->kernel.empty()) c.kernel = &best->kernel;
  if (!best->gpu_kernel.empty()) c.gpu_kernel = &best->gpu_kernel;
  const ResidentSplit* r = resident && best->resident ? &*best->resident : nullptr;
  if (r && !r->kernel.empty()) {
    c.kernel = &r->kernel;
    // The GPU alone was best there: its kernel is the one measured on this memory.
    if (r->gpu_parts == best->parts) c.gpu_kernel = &r->kernel;
  }
  if (size < 0.5 * static_cast<double>(pp.buckets.front().size)) {
    // Unmeasured: the CPU alone. A call sent to the GPU anyway (strategy gpu, hybrid) runs the
    // smallest bucket's kernels, the nearest measured, rather than the precision's, which were
    // tuned at its largest size: on the H100 an sgemm 256^3 made two work-groups of that one's
    // 128 x 256 tiles for 132 compute units and took 58 us in the kernel (docs/PERFORMANCE.md).
    return c;
  }
  c.fraction = best->fraction();
  c.cpu_threads = best->cpu_threads;
  c.dynamic = best->dynamic;
  c.bucket = best->size;
  c.gpu_gflops = best->gpu_gflops;
  c.cpu_gflops = best->cpu_gflops;
  if (r) {
    c.fraction = best->parts > 0 ? double(r->gpu_parts) / best->parts : 0.0;
    c.cpu_threads = r->cpu_threads;
    c.dynamic = r->dynamic;
    c.resident = true;
    if (r->gpu_gflops > 0) c.gpu_gflops = r->gpu_gflops;
  }
  return c;
}

Direct direct_for(const Profile* p, Precision precision, bool is_gpu) {
  if (p == nullptr) return direct_defaults(is_gpu);
  const auto it = p->precisions.find(precision);
  return direct_for(it == p->precisions.end() ? nullptr : &it->second, is_gpu);
}

Direct direct_for(const PrecisionProfile* pp, bool is_gpu) {
  Direct d = direct_defaults(is_gpu);
  if (pp == nullptr) return d;
  if (!pp->direct_kernel.empty()) d.kernel = &pp->direct_kernel;
  if (pp->direct_below) d.below = *pp->direct_below;
  return d;
}

namespace {

// How far apart two positive numbers are on a log scale.
double apart(double x, double y) {
  return std::abs(std::log(std::max(x, 1.0)) - std::log(std::max(y, 1.0)));
}

// The bucket nearest a batch of `count` products of about edge³: in size on a log scale, then in
// count; among those measured from `memory`'s kind where given; null where there is none.
const CoalescedBucket* nearest_bucket(const std::vector<CoalescedBucket>& buckets, double edge,
                                      int64_t count, std::optional<bool> memory = std::nullopt) {
  const CoalescedBucket* best = nullptr;
  double best_size = 0, best_count = 0;
  for (const CoalescedBucket& b : buckets) {
    if (memory && b.resident != memory) continue;
    const double s = apart(static_cast<double>(b.size), edge);
    const double c = apart(static_cast<double>(b.count), static_cast<double>(count));
    if (best == nullptr || s < best_size - 1e-9 || (s < best_size + 1e-9 && c < best_count)) {
      best = &b;
      best_size = s;
      best_count = c;
    }
  }
  return best;
}

// The point nearest `edge` in size on a log scale among those `takes` accepts (the first of
// equals); null where it accepts none.
template <class Takes>
const BatchPoint* nearest_point(const std::vector<BatchPoint>& points, double edge, Takes takes) {
  const BatchPoint* best = nullptr;
  for (const BatchPoint& point : points)
    if (takes(point) && (best == nullptr || apart(static_cast<double>(point.size), edge) <
                                                apart(static_cast<double>(best->size), edge)))
      best = &point;
  return best;
}

// What a batch rule measured at one count near a point (GFLOPS; 0: not measured), and whether
// its rounds kept dealing there.
struct Measured {
  int64_t count = 0;
  double cpu = 0, gpu = 0, dealt = 0;
  bool dealt_kept = false;
};

// The fastest side for `count` products between two measured counts, by the line each side's
// time draws through them (a time per product of the point's size is 1 / GFLOPS): the cores, the
// devices alone, and dealing where both counts measured it and the rounds kept it at either (a
// count whose rounds did not keep it gives a median the noise may have put ahead); none where the
// cores' or the devices' rate is missing at either count.
std::optional<BatchSide> fastest_between(const Measured& lo, const Measured& hi, int64_t count) {
  if (lo.cpu <= 0 || lo.gpu <= 0 || hi.cpu <= 0 || hi.gpu <= 0) return std::nullopt;
  const auto n = [](int64_t c) { return static_cast<double>(c); };
  const auto time = [&](double lo_rate, double hi_rate) {
    const double at_lo = n(lo.count) / lo_rate, at_hi = n(hi.count) / hi_rate;
    return at_lo + (n(count) - n(lo.count)) * (at_hi - at_lo) / (n(hi.count) - n(lo.count));
  };
  BatchSide best = BatchSide::Cores;
  double fastest = time(lo.cpu, hi.cpu);
  if (const double t = time(lo.gpu, hi.gpu); t < fastest) {
    best = BatchSide::Devices;
    fastest = t;
  }
  if (lo.dealt > 0 && hi.dealt > 0 && (lo.dealt_kept || hi.dealt_kept) &&
      time(lo.dealt, hi.dealt) < fastest)
    best = BatchSide::Dealt;
  return best;
}

// What was measured within a doubling of a batch's edge, and nothing farther.
bool within_doubling(int64_t size, double edge) {
  return apart(static_cast<double>(size), edge) <= std::log(2.0) + 1e-9;
}

}  // namespace

int64_t middle_count(int64_t few, int64_t count) {
  const int64_t middle = std::max<int64_t>(
      batch_deal_from_count(),
      std::llround(std::sqrt(static_cast<double>(few) * static_cast<double>(count))));
  return middle >= 2 * few && 2 * middle <= count ? middle : 0;
}

std::optional<BatchSide> batch_side_at(const BatchRule& rule, double edge, int64_t count) {
  const BatchPoint* point = nearest_point(rule.points, edge, [&](const BatchPoint& q) {
    return q.few && within_doubling(q.size, edge);
  });
  if (point == nullptr) return std::nullopt;
  const FewProducts& few = *point->few;
  if (count <= few.count) return few.devices ? BatchSide::Devices : BatchSide::Cores;
  if (count >= point->count) return std::nullopt;
  const Measured at_few{few.count, few.cpu_gflops, few.gpu_gflops};
  const Measured at_point{point->count, point->cpu_gflops, point->gpu_gflops, point->hybrid_gflops,
                          point->side() == BatchSide::Dealt};
  // A middle count where the cores or the devices alone failed is no count to draw lines through.
  const MiddleCount* middle =
      point->middle && point->middle->cpu_gflops > 0 && point->middle->gpu_gflops > 0
          ? &*point->middle
          : nullptr;
  if (middle == nullptr) {
    // Dealing measured at the point's count alone: the lines weigh the cores against the devices
    // alone, and the devices take the products as the point has them (dealt, or alone).
    const std::optional<BatchSide> side = fastest_between(at_few, at_point, count);
    return side == BatchSide::Devices && point->side() == BatchSide::Dealt ? BatchSide::Dealt
                                                                           : side;
  }
  if (count == middle->count) return middle->side;
  const Measured at_middle{middle->count, middle->cpu_gflops, middle->gpu_gflops,
                           middle->hybrid_gflops, middle->side == BatchSide::Dealt};
  return count < middle->count ? fastest_between(at_few, at_middle, count)
                               : fastest_between(at_middle, at_point, count);
}

const std::map<std::string, int>* coalesced_for(const PrecisionProfile& pp, bool is_gpu,
                                                double edge, int64_t count) {
  const CoalescedBucket* best = nearest_bucket(pp.coalesced, edge, count);
  // A bucket where the search's best did not beat the direct kernel holds a copy of the direct
  // kernel it measured, and one that did beat it was timed against the profile's direct kernel of
  // that day: either way the direct kernel the profile has now applies where it is another (a
  // later --direct-only may have changed it).
  if (best == nullptr || best->verdict != "faster" ||
      best->direct_kernel != *direct_for(&pp, is_gpu).kernel)
    return nullptr;
  return &best->kernel;
}

BatchRates batch_rates(const Profile* p, Precision precision, bool is_gpu, double edge,
                       int64_t count, bool resident) {
  BatchRates r;
  if (p == nullptr) return r;
  const auto it = p->precisions.find(precision);
  if (it == p->precisions.end()) return r;
  const PrecisionProfile& pp = it->second;
  // The bucket of the operands' memory nearest the batch, within a doubling: its own kernel's
  // rate where that is the kernel the batch runs, else the direct kernel's.
  if (const CoalescedBucket* b = nearest_bucket(pp.coalesced, edge, count, resident);
      b != nullptr && within_doubling(b->size, edge) &&
      b->direct_kernel == *direct_for(&pp, is_gpu).kernel)
    r.device = coalesced_for(pp, is_gpu, edge, count) == &b->kernel ? b->gflops : b->direct_gflops;
  if (const auto& rule = resident ? pp.batch_resident : pp.batch; rule) {
    const auto within = [&](const BatchPoint& point) { return within_doubling(point.size, edge); };
    const BatchPoint* near = nearest_point(
        rule->points, edge, [&](const BatchPoint& q) { return q.cpu_gflops > 0 && within(q); });
    if (near != nullptr) r.cpu = near->cpu_gflops;
    r.side_at_count = batch_side_at(*rule, edge, count);
    // The point whose side applies.
    const BatchPoint* side =
        nearest_point(rule->points, edge, [](const BatchPoint&) { return true; });
    if (side != nullptr && side->side() == BatchSide::Devices &&
        (within(*side) || (side == &rule->points.back() && edge > static_cast<double>(side->size))))
      r.devices_alone = true;
  }
  return r;
}

const std::map<std::string, int>* coalesced_for(const Profile* p, Precision precision, bool is_gpu,
                                                double edge, int64_t count) {
  if (p == nullptr) return nullptr;
  const auto it = p->precisions.find(precision);
  return it == p->precisions.end() ? nullptr : coalesced_for(it->second, is_gpu, edge, count);
}

}  // namespace tandem::detail::profile
