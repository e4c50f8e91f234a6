// A batch's plan (src/plan/batch.hpp).
#include "plan/batch.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/memo.hpp"
#include "base/precision.hpp"
#include "base/seams.hpp"
#include "cpu/batch.hpp"
#include "gpu/device.hpp"
#include "gpu/engine.hpp"
#include "gpu/pinned_memory.hpp"
#include "plan/candidates.hpp"
#include "plan/route.hpp"
#include "profile/choice.hpp"
#include "profile/defaults.hpp"
#include "profile/store.hpp"

namespace tandem::detail {
namespace {

// The kernel a device runs a batch with: the caller's (Options::kernel_params) where it is the
// direct kernel, else the profile's bucket (`own`, may be null), else its direct kernel; one that
// does not fit the device gives way to the next, down to the defaults' direct kernel for this
// kind of device, with one warning (a batch never leaves the device for a kernel that fits).
gpu::SharedParams batch_kernel(const gpu::Device& device, Precision precision, const Options& o,
                               const std::map<std::string, int>* own, const profile::Direct& direct,
                               const std::string& profile) {
  const gpu::DeviceInfo& info = gpu::info(device);
  if (!o.kernel_params.empty()) {
    gpu::SharedParams asked =
        gpu::resolved(gpu::limits_for(device, o.kernel_params), precision, o.kernel_params);
    // A tiled kernel's parameters (Options::kernel_params for single calls) do not apply to a
    // batch: it runs the profile's batch kernel instead.
    if (gpu::is_direct(*asked)) return asked;
  }
  const std::map<std::string, int>* tries[] = {own, direct.kernel,
                                               profile::direct_defaults(info.is_gpu).kernel};
  std::string refused;
  for (const std::map<std::string, int>* kernel : tries) {
    if (kernel == nullptr) continue;
    try {
      gpu::SharedParams p = gpu::resolved(gpu::limits_of(info), precision, *kernel);
      // A set without KERNEL 2 resolves to a tiled kernel, which has no batched form.
      if (!gpu::is_direct(*p)) {
        refused += std::string(refused.empty() ? "" : "; ") + "not the direct kernel";
        continue;
      }
      const std::string using_ =
          kernel == direct.kernel ? "its direct kernel" : "the default direct kernel";
      if (!refused.empty())
        warn_once(
            "batch-kernel:" + profile + ":" + routine_name(precision, "gemm").str() + ":" + using_,
            "a batch's kernel from the profile does not fit " + info.describe() + " (" + refused +
                "); using " + using_);
      return p;
    } catch (const Error& e) {
      refused += (refused.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  throw Error(Error::Kind::Runtime, "no direct kernel fits " + info.describe() + ": " + refused);
}

// The sides' rates for a batch (GFLOPS): what the tune measured of such batches where it did
// (the device alone with the bucket's kernel, the cores alone over whole products), else a single
// call's rates at the bucket of the batch's first shape (none where the shape is below every
// bucket).
struct SideRates {
  std::vector<double> weights;  // each device's (1 where not measured)
  double cpu = 0;
  // The cores' rate on a batch of few products (below batch.deal_from_count): where they are
  // fewer than the cores' threads, a single call's at the bucket of the batch's first shape where
  // there is one, as cpu_batch runs such products each over several threads, much as a single
  // call runs, where the batch rule's points were measured at batches of a hundred products and
  // more (on the H100 host ten s 512^3 products ran on the cores at 505 GFLOPS, the single call's
  // bucket says 458, the rule's point, 191 products, 1,081; the GPU alone ran them at 1,276);
  // else the batch rates' (one product a thread, as the rule's points ran).
  double cpu_few = 0;
  bool measured = true;  // every device's profile measured its rate near this batch
  bool alone = false;    // the first device's batch rule has the devices alone take this batch
  // The side the first device's batch rule has for this many products near these, where it
  // measured enough to say (choice.hpp's batch_side_at).
  std::optional<profile::BatchSide> side_at_count;
};

template <class T>
SideRates side_rates(const Candidates& c, const Problem<T>& first, int64_t count,
                     std::optional<double> edge, int threads) {
  constexpr Precision precision = precision_of<T>();
  SideRates r;
  for (size_t i = 0; i < c.devices.size(); ++i) {
    const gpu::DeviceInfo& info = gpu::info(*c.devices[i]);
    const profile::BatchRates batch =
        edge ? profile::batch_rates(
                   c.profiles[i].get(), precision, info.is_gpu, *edge, count,
                   gpu::is_discrete(*c.devices[i]) && gpu::operands_pinned(*c.devices[i], first))
             : profile::BatchRates{};
    if (i == 0) {
      r.alone = batch.devices_alone;
      r.side_at_count = batch.side_at_count;
    }
    const bool bucketed = c.choices[i].bucket > 0;
    const double device_rate = batch.device > 0 ? batch.device
                               : bucketed       ? c.choices[i].gpu_gflops
                                                : 0.0;
    r.measured = r.measured && device_rate > 0;
    r.weights.push_back(device_rate > 0 ? device_rate : 1.0);
    r.cpu = std::max(r.cpu, batch.cpu > 0 ? batch.cpu : bucketed ? c.choices[i].cpu_gflops : 0.0);
    const double single = bucketed ? c.choices[i].cpu_gflops : 0.0;
    r.cpu_few = std::max(r.cpu_few, count < threads ? (single > 0 ? single : batch.cpu)
                                                    : (batch.cpu > 0 ? batch.cpu : single));
  }
  return r;
}

// Every device's coalesced kernel (its profile's bucket for the batch's size and count, else its
// direct kernel) and share; the devices and profiles come from the candidates a single call of
// the batch's first shape would have. The shares follow the sides' rates (side_rates).
template <class T>
void plan_devices(const Problem<T>& first, const Problem<T>* next, int64_t count, const Options& o,
                  std::optional<double> edge, BatchPlan& plan) {
  constexpr Precision precision = precision_of<T>();
  Candidates c = candidates(first, o, plan.request);
  if (needs_fp64(precision)) drop_fp32_only(precision, c);
  const SideRates rates = side_rates(c, first, count, edge, o.cpu_threads.value_or(host_cores()));
  const std::vector<double>& weights = rates.weights;
  double gpus = 0;
  for (double w : weights) gpus += w;
  // Under auto, the side the batch rule has for this many products near these
  // (profile::batch_side_at: the sides kept at the counts the tune measured, and the count lines
  // between them, where a device's first stage, dealing's chunks and the cores' threads weigh as
  // the rule's own count hides). Where it says nothing, a batch auto deals goes to the devices as
  // the rule's point nearest in size has such products, dealt or to the devices alone
  // (`rates.alone`: the tune's rounds weighed the cores against them already, at their count);
  // one of fewer products than auto deals (defaults.hpp's batch_deal_from_count) go to one side
  // alone, the faster by the rates: the devices unless the rates were measured and the cores' is
  // higher (on the H100 host the cores ran ten s 256^3 products at 1.44x the GPU alone, where the
  // rule's 1,146 ran on the GPU alone at 1.50x the cores).
  const bool is_auto = plan.request.strategy == Strategy::Auto;
  const bool few = is_auto && count < profile::batch_deal_from_count();
  using profile::BatchSide;
  const std::optional<BatchSide> side = rates.side_at_count;
  // A batch of more products that the rule puts on the cores never reaches here (deal_from and
  // batch_uses_devices keep it there, asking at the largest product's size); one whose products
  // spread over sizes, asked here at their middle size, is dealt.
  const bool cores_few = side ? *side == BatchSide::Cores : rates.measured && rates.cpu_few > gpus;
  if (few && cores_few) return;  // no part: the cores take it
  const bool devices_only =
      plan.request.strategy == Strategy::Gpu ||
      (is_auto && (few || (side ? *side == BatchSide::Devices : rates.alone)));
  // Each device's kernel: the coalesced kernel's bucket for this batch (where its products lie
  // within a doubling), else the direct kernel.
  for (size_t i = 0; i < c.devices.size(); ++i) {
    const gpu::DeviceInfo& info = gpu::info(*c.devices[i]);
    const profile::Profile* profile = c.profiles[i].get();
    const std::map<std::string, int>* own =
        edge ? profile::coalesced_for(profile, precision, info.is_gpu, *edge, count) : nullptr;
    BatchPart part;
    part.device = c.devices[i];
    part.params = batch_kernel(*c.devices[i], precision, o, own,
                               profile::direct_for(profile, precision, info.is_gpu),
                               profile != nullptr ? profile->origin : std::string());
    plan.parts.push_back(std::move(part));
  }
  const double device_fraction =
      devices_only ? 1.0
                   : plan.request.fraction.value_or(
                         rates.measured && rates.cpu > 0 ? gpus / (gpus + rates.cpu) : 0.5);
  // The devices' problems, shared by their weights; the CPU takes the rest.
  const auto devices_problems =
      static_cast<int64_t>(std::llround(device_fraction * static_cast<double>(count)));
  int64_t given = 0;
  double before = 0;
  for (size_t i = 0; i < plan.parts.size(); ++i) {
    before += weights[i];
    const auto upto =
        static_cast<int64_t>(std::llround(static_cast<double>(devices_problems) * before / gpus));
    plan.parts[i].problems = upto - given;
    given = upto;
  }
  plan.cpu_problems = count - given;
  // A device that takes the whole batch fills larger stages than one that shares it in chunks;
  // one whose stages need no host work fills small ones, and keeps more in flight.
  const bool whole = plan.parts.size() == 1 && plan.cpu_problems == 0;
  for (BatchPart& part : plan.parts) {
    part.unstaged = gpu::unstaged(*part.device, first, next);
    part.stages.products = part.unstaged ? profile::batch_stage_products_unstaged()
                           : whole       ? profile::batch_stage_products()
                                         : profile::batch_stage_products_dealt();
    part.stages.in_flight = profile::batch_stages_in_flight(part.unstaged);
    if (part.unstaged) {
      part.stages.tail = profile::batch_stage_tail_unstaged();
      part.stages.tail_bytes = profile::batch_stage_tail_bytes_unstaged();
    }
  }
}

}  // namespace

template <class T>
BatchPlan plan_batch(const Problem<T>& first, int64_t count, const Options& o,
                     std::optional<double> edge, const Problem<T>* next) {
  BatchPlan plan;
  plan.request = request(o);
  try {
    plan_devices(first, next, count, o, edge, plan);
  } catch (const Error& e) {
    if (e.kind() == Error::Kind::InvalidArgument) throw;
    plan.parts.clear();
    plan.unavailable = e;
  }
  if (plan.parts.empty()) plan.cpu_problems = count;
  // Every device packs its problems' operands into staging on the host, but one whose stages are
  // unstaged.
  std::vector<bool> feeds, pinned(plan.parts.size(), false);
  for (const BatchPart& part : plan.parts) feeds.push_back(!part.unstaged);
  const Cores cores = divide_cores(o, feeds, pinned, plan.cpu_problems > 0, true, 0);
  for (size_t i = 0; i < plan.parts.size(); ++i) plan.parts[i].feeders = cores.feeders[i];
  // With no device, the cores' threads as for a batch of `count` such products on the cores.
  plan.cpu_threads =
      plan.parts.empty()
          ? batch_cpu_threads(static_cast<double>(count) * static_cast<double>(first.m) *
                                  static_cast<double>(first.n) * static_cast<double>(first.k),
                              o)
          : cores.cpu_threads;
  return plan;
}

namespace {

double volume(int64_t m, int64_t n, int64_t k) {
  return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

// The problems a pass over their shapes needs to see: the first alone where they have one shape.
template <class T>
Problems<T> distinct(Problems<T> products) {
  return products.one_shape ? products.from(0, std::min<int64_t>(products.count, 1)) : products;
}

}  // namespace

template <class T>
std::optional<double> coalesced_edge(Problems<T> products) {
  double least = 0, most = 0;
  for (const Problem<T>& p : distinct(products)) {
    const double v = volume(p.m, p.n, p.k);
    least = least == 0 ? v : std::min(least, v);
    most = std::max(most, v);
  }
  // Volumes: a doubling of the edge is eight times the volume.
  if (least <= 0 || most > 8 * least) return std::nullopt;
  return std::cbrt(std::sqrt(least * most));
}

namespace {

// A single call of the products' total work: a cube of edge cbrt(sum of m n k) in the first one's
// precision and memory, no transposes.
template <class T>
Problem<T> work_cube(Problems<T> products) {
  double work = 0;
  for (const Problem<T>& p : distinct(products)) work += volume(p.m, p.n, p.k);
  if (products.one_shape) work *= static_cast<double>(products.count);
  Problem<T> cube = products.front();
  const auto edge = static_cast<int64_t>(std::llround(std::cbrt(work)));
  cube.trans_a = cube.trans_b = cube.conj_a = cube.conj_b = false;
  cube.m = cube.n = cube.k = cube.lda = cube.ldb = cube.ldc = std::max<int64_t>(edge, 1);
  return cube;
}

// What edge_for reads from a product's candidates: the first device, and its profile's edges and
// rules (null where the tune measured none, defaults.json's edge standing in) for operands in
// ordinary memory and in that device's tandem_malloc memory, the rules kept alive by `profile`.
struct RuleEdges {
  std::weak_ptr<gpu::Device> device;
  bool discrete = false;
  std::optional<int64_t> ordinary, resident;
  std::shared_ptr<const profile::Profile> profile;
  const profile::BatchRule *ordinary_rule = nullptr, *resident_rule = nullptr;
};

template <class T>
RuleEdges rule_edges(const Problem<T>& first, const Options& o) {
  const Candidates c = candidates(first, o, request(o));  // Error where no device opens
  RuleEdges r;
  // Never below the smallest size a rule is measured at, whatever a profile says.
  const int64_t floor = profile::batch_tune().sizes.front();
  const std::optional<int64_t> defaults = std::max(profile::batch_devices_from(), floor);
  r.ordinary = r.resident = defaults;
  if (c.devices.empty()) return r;
  r.device = c.devices.front();
  r.discrete = gpu::is_discrete(*c.devices.front());
  if (!c.profiles.front()) return r;
  r.profile = c.profiles.front();
  const auto& precisions = r.profile->precisions;
  const auto it = precisions.find(precision_of<T>());
  if (it == precisions.end()) return r;
  const auto edge = [&](const std::optional<profile::BatchRule>& rule) {
    if (!rule) return defaults;
    return rule->devices_from > 0 ? std::optional<int64_t>(std::max(rule->devices_from, floor))
                                  : std::nullopt;
  };
  r.ordinary = edge(it->second.batch);
  r.resident = edge(it->second.batch_resident);
  if (it->second.batch) r.ordinary_rule = &*it->second.batch;
  if (it->second.batch_resident) r.resident_rule = &*it->second.batch_resident;
  return r;
}

// The edges for a product's shape, remembered per process and profile state (profile::changes(),
// which forget() moves on) where no option, variable or test seam picks the devices or weighs
// them (the cores' and feeders' threads weigh a set of GPUs, models.cpp): with the single call's
// plan, looking them up again on every batch cost ten products of 32^3-128^3 on the H100 host
// 1-11% of their time on the cores (bench/batch_choice). A remembered device since retired
// (gpu::retire) is looked up afresh, as the candidates leave it out.
template <class T>
RuleEdges remembered_edges(const Problem<T>& first, const Options& o) {
  if (o.device || env_config().device || o.cpu_threads || o.feeder_threads || seams::overridden())
    return rule_edges(first, o);
  struct Key {
    Precision precision;
    int64_t m, n, k;
    bool trans_a, trans_b;
    uint64_t profiles;
    bool operator==(const Key& o) const {
      return precision == o.precision && m == o.m && n == o.n && k == o.k && trans_a == o.trans_a &&
             trans_b == o.trans_b && profiles == o.profiles;
    }
  };
  struct View {
    Key key;
    uint64_t hash() const {
      uint64_t h = hash_value(key.precision, 0);
      for (const int64_t v : {key.m, key.n, key.k}) h = hash_value(v, h);
      return hash_value(key.profiles, hash_value(key.trans_b, hash_value(key.trans_a, h)));
    }
    bool matches(const Key& k) const { return k == key; }
    Key own() const { return key; }
  };
  static auto& memo = *new Memo<Key, RuleEdges>;  // never destroyed: calls until exit
  const View view{{precision_of<T>(), first.m, first.n, first.k, first.trans_a, first.trans_b,
                   profile::changes()}};
  RuleEdges r = memo.get(view, [&] { return rule_edges(first, o); });
  if (const auto device = r.device.lock(); device && gpu::retired(*device))
    r = rule_edges(first, o);
  return r;
}

// Under auto, the edge a batch's products are dealt from (`from`; the product asked for is the
// batch's largest), the rule it comes from where the tune measured one (`rule`, kept alive by
// `profile`), and whether that rule decides alone (`measured`): the tune measured it for operands
// in tandem_malloc memory of a discrete device, where they lie. There a single
// call of the batch's whole work is not asked: that cube's extent is not the blocks', so it is
// judged as ordinary memory, and where a batch stays small (on an H200 a cube of 276^3-804^3 for
// 10-31 products, below half the smallest bucket) it is not measured at all, which leaves it on the
// cores; it kept batches of 10-31 products of s 128^3-256^3 and d 128^3 there at 0.27-0.96x the GPU
// alone (docs/PERFORMANCE.md, "Batches").
struct Edge {
  std::optional<int64_t> from;
  std::shared_ptr<const profile::Profile> profile;
  const profile::BatchRule* rule = nullptr;
  bool measured = false;
};

template <class T>
Edge edge_for(const Problem<T>& largest, const Options& o) {
  try {
    RuleEdges r = remembered_edges(largest, o);
    const std::shared_ptr<gpu::Device> device = r.device.lock();
    const bool resident =
        r.discrete && device && gpu::any_pinned_block() && gpu::operands_pinned(*device, largest);
    if (resident)
      return {r.resident, std::move(r.profile), r.resident_rule, r.resident_rule != nullptr};
    return {r.ordinary, std::move(r.profile), r.ordinary_rule, false};
  } catch (const Error& e) {
    if (e.kind() == Error::Kind::InvalidArgument) throw;
    return {};  // no device: the cores take the batch
  }
}

// Whether the edge's rule keeps `count` products of the largest's size on the cores
// (profile::batch_side_at), asked only once the edge is passed.
template <class T>
bool keeps_cores(const Edge& edge, const Problem<T>& largest, int64_t count) {
  return edge.rule != nullptr &&
         profile::batch_side_at(*edge.rule, std::cbrt(volume(largest.m, largest.n, largest.k)),
                                count) == profile::BatchSide::Cores;
}

// The product of the largest m n k, where it reaches the smallest size a batch rule deals from;
// else null.
template <class T>
const Problem<T>* largest_dealable(Problems<T> products) {
  const auto floor = static_cast<double>(profile::batch_tune().sizes.front());
  const Problem<T>* largest = nullptr;
  double most = floor * floor * floor;
  for (const Problem<T>& p : distinct(products)) {
    const double v = volume(p.m, p.n, p.k);
    if (v >= most) {
      most = v;
      largest = &p;
    }
  }
  return largest;
}

}  // namespace

template <class T>
bool batch_uses_devices(Problems<T> products, const Options& o) {
  if (const Problem<T>* largest = largest_dealable(products); largest != nullptr) {
    const Edge edge = edge_for(*largest, o);
    if (keeps_cores(edge, *largest, products.count)) return false;
    if (edge.measured) return true;
  }
  return uses_devices(work_cube(products), o, true);
}

template <class T>
std::optional<int64_t> deal_from(Problems<T> products, const Options& o) {
  const Problem<T>* largest = largest_dealable(products);
  if (largest == nullptr) return std::nullopt;
  // The route first: where a single call of the whole batch's work stays on the cores, so does
  // every part of it, and OpenCL is not opened. Where the route is not known yet, that call is
  // planned, which learns it (a program's later small batches, in this process and later ones,
  // then stay on the cores without opening OpenCL).
  const Problem<T> whole = work_cube(products);
  bool planned = false;
  if (route::eligible(o, Strategy::Auto)) {
    if (!route::known(precision_of<T>())) {
      if (!uses_devices(whole, o, true)) return std::nullopt;
      planned = true;
    } else if (route::cpu_alone(precision_of<T>(), whole.m, whole.n, whole.k)) {
      return std::nullopt;
    }
  }
  // Then the rule's edge, remembered: a batch whose products all lie below it, or of a count its
  // rule keeps on the cores, is the cores' without planning the single call, which a rule
  // measured for tandem_malloc memory leaves unasked (edge_for).
  const Edge edge = edge_for(*largest, o);
  const auto from = edge.from ? static_cast<double>(*edge.from) : 0.0;
  if (!edge.from || volume(largest->m, largest->n, largest->k) < from * from * from ||
      keeps_cores(edge, *largest, products.count))
    return std::nullopt;
  if (!planned && !edge.measured && !uses_devices(whole, o, true)) return std::nullopt;
  return edge.from;
}

int batch_cpu_threads(double work, const Options& options) {
  if (options.cpu_threads) return *options.cpu_threads;
  return work < static_cast<double>(profile::batch_cpu_parallel_from()) ? 1 : host_cores();
}

template <class T>
int batch_cpu_threads(Problems<T> problems, const Options& options) {
  if (options.cpu_threads) return *options.cpu_threads;
  const auto least = static_cast<double>(profile::batch_cpu_parallel_from());
  const double each = problems.one_shape ? static_cast<double>(problems.count) : 1.0;
  double work = 0;
  for (const Problem<T>& p : distinct(problems)) {
    // A problem without a product is C = beta * C: m n multiplies.
    work += each * static_cast<double>(p.m) * static_cast<double>(p.n) *
            (p.has_product() ? static_cast<double>(p.k) : 1.0);
    if (work >= least) return host_cores();
  }
  return batch_cpu_threads(work, options);
}

template <class T>
void cores_batch(const Problem<T>* problems, int64_t count, int threads) {
  cpu_batch(problems, count, threads, profile::cores_small_edge(precision_of<T>(), threads));
}

template <class T>
int64_t large_first(Problem<T>* products, int64_t count, int64_t edge, bool one_shape) {
  // m n k against the edge cubed: a cube root per problem cost auto 0.6-0.7x strategy cpu on
  // batches of 16^3 products on the H100 host.
  const auto from = static_cast<double>(edge);
  const double least = from * from * from;
  if (one_shape)
    return count > 0 && volume(products[0].m, products[0].n, products[0].k) >= least ? count : 0;
  const Problem<T>* end = std::partition(products, products + count, [least](const Problem<T>& p) {
    return volume(p.m, p.n, p.k) >= least;
  });
  return end - products;
}

#define INSTANTIATE(T)                                                         \
  template BatchPlan plan_batch<T>(const Problem<T>&, int64_t, const Options&, \
                                   std::optional<double>, const Problem<T>*);  \
  template std::optional<double> coalesced_edge<T>(Problems<T>);               \
  template bool batch_uses_devices<T>(Problems<T>, const Options&);            \
  template std::optional<int64_t> deal_from<T>(Problems<T>, const Options&);   \
  template int batch_cpu_threads<T>(Problems<T>, const Options&);              \
  template void cores_batch<T>(const Problem<T>*, int64_t, int);               \
  template int64_t large_first<T>(Problem<T>*, int64_t, int64_t, bool);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
