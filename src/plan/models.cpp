// Planning by the devices' cost models (models.hpp): when they plan a call, the plan they give
// (remembered by shape), and auto's default set of GPUs.
#include "plan/models.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <numeric>
#include <string>
#include <tuple>

#include "base/precision.hpp"
#include "base/text.hpp"
#include "gpu/pinned_memory.hpp"
#include "plan/device_profile.hpp"

namespace tandem::detail {
namespace {

// Whether a bucket measured a call like this one: its size within the buckets' range, no side
// more than twice another (the buckets are square), C not read on a discrete device (the buckets
// have beta = 0; reading C moves it across the bus from pinned memory, and from ordinary memory
// costs the host a pass over it), and the memory the bucket's split was measured on. Elsewhere a
// profile's cost model plans the call.
template <class T>
bool bucket_measured(const Problem<T>& p, const profile::Choice& c, bool discrete, bool resident) {
  if (c.bucket == 0) return true;  // below the smallest bucket: the CPU, as the profile says
  const int64_t longest = std::max({p.m, p.n, p.k}), shortest = std::min({p.m, p.n, p.k});
  const double size =
      std::cbrt(static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k));
  return longest <= 2 * shortest && size <= 2.0 * static_cast<double>(c.bucket) &&
         !(discrete && p.beta != T(0)) && resident == c.resident;
}

// A profile's cost model for this precision, if it has one.
const cost::Model* model_of(const profile::Profile* prof, Precision precision) {
  if (prof == nullptr) return nullptr;
  const auto it = prof->precisions.find(precision);
  return it == prof->precisions.end() || !it->second.model ? nullptr : &*it->second.model;
}

// Every device's cost model for this precision, or none if a device's profile has none.
template <class T>
std::vector<const cost::Model*> all_models(
    const std::vector<std::shared_ptr<const profile::Profile>>& profiles) {
  std::vector<const cost::Model*> models;
  for (const auto& profile : profiles) {
    const cost::Model* m = model_of(profile.get(), precision_of<T>());
    if (m == nullptr) return {};
    models.push_back(m);
  }
  return models;
}

// The plans the models made, by shape and sides, so that a program's repeated shapes are planned
// once (a plan costs some microseconds of arithmetic: about 10 on one device beside 16 cores).
// An entry holds the profiles its models belong to, so no other model can take their addresses.
class PlanMemo {
 public:
  struct Key {
    cost::Shape shape;
    int cores = 0;
    // Each side's model, tile, factors, platform and its own pinning (-1: the shape's).
    std::vector<std::tuple<const cost::DeviceModel*, int64_t, double, double, int, int>> sides;
    const cost::CpuModel* cpu = nullptr;
    double margin = 0;
    bool operator==(const Key& o) const {
      return shape.m == o.shape.m && shape.n == o.shape.n && shape.k == o.shape.k &&
             shape.element_bytes == o.shape.element_bytes &&
             shape.flops_per_multiply_add == o.shape.flops_per_multiply_add &&
             shape.reads_c == o.shape.reads_c && shape.pinned == o.shape.pinned &&
             shape.a_pinned == o.shape.a_pinned && shape.b_pinned == o.shape.b_pinned &&
             shape.c_pinned == o.shape.c_pinned && cores == o.cores && sides == o.sides &&
             cpu == o.cpu && margin == o.margin;
    }
  };
  cost::Plan plan(const std::vector<std::shared_ptr<const profile::Profile>>& owners,
                  const cost::CpuModel& cpu, const std::vector<cost::Side>& sides,
                  const cost::Shape& s, int cores, double margin) {
    Key key{s, cores, {}, &cpu, margin};
    for (const cost::Side& d : sides)
      key.sides.emplace_back(d.model, d.tile, d.both_busy, d.cpu_busy, d.platform,
                             d.pinning ? d.pinning->bits() : -1);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const Entry& e : entries_)
        if (e.key == key) return e.plan;
    }
    const cost::Plan plan = cost::best_plan(cpu, sides, s, cores, margin);
    std::lock_guard<std::mutex> lock(mutex_);
    Entry e{std::move(key), owners, plan};
    if (entries_.size() < kEntries)
      entries_.push_back(std::move(e));
    else
      entries_[next_++ % kEntries] = std::move(e);
    return plan;
  }

 private:
  static constexpr size_t kEntries = 64;
  struct Entry {
    Key key;
    std::vector<std::shared_ptr<const profile::Profile>> owners;
    cost::Plan plan;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
  size_t next_ = 0;
};

PlanMemo& plan_memo() {
  static PlanMemo& memo = *new PlanMemo;  // never destroyed: calls may plan until exit
  return memo;
}

// What the devices' cost models plan a call from: its shape, each device's side (its model, the
// row tile of the kernel it would run beside the CPU, its platform) and that kernel.
struct ModelInputs {
  cost::Shape shape;
  std::vector<cost::Side> sides;
  std::vector<gpu::SharedParams> params;
};

template <class T>
ModelInputs model_inputs(const Problem<T>& p, const Options& o,
                         const std::vector<std::shared_ptr<gpu::Device>>& devices,
                         const std::vector<profile::Choice>& choices,
                         const std::vector<const cost::Model*>& models,
                         const std::vector<std::shared_ptr<const profile::Profile>>& profiles,
                         const std::string& origin) {
  ModelInputs in;
  in.shape = model_shape(p);
  // Which operands a device copies without packing: those pinned in its own context.
  const auto pinning = [&p](const gpu::Device& d) {
    return cost::Pinning{gpu::in_pinned_block(d, p.a, p.a_bytes()),
                         gpu::in_pinned_block(d, p.b, p.b_bytes()),
                         gpu::in_pinned_block(d, p.c, p.c_bytes())};
  };
  const cost::Pinning front = pinning(*devices.front());
  in.shape.pin(front);
  for (size_t i = 0; i < devices.size(); ++i) {
    in.params.push_back(
        kernel_for(*devices[i], precision_of<T>(), o, *choices[i].kernel, profiles[i], origin));
    // Devices of one platform (one context) share B's packing: the first of them names it.
    int platform = static_cast<int>(i);
    for (size_t j = 0; j < i; ++j)
      if (gpu::info(*devices[j]).platform == gpu::info(*devices[i]).platform) {
        platform = static_cast<int>(j);
        break;
      }
    in.sides.push_back({&models[i]->device, gpu::row_tile(*in.params.back()), models[i]->both_busy,
                        models[i]->cpu_busy, platform});
    // A device of another platform than the first sees tandem_malloc memory as ordinary.
    const cost::Pinning own = platform == 0 ? front : pinning(*devices[i]);
    if (own.bits() != front.bits()) in.sides.back().pinning = own;
  }
  return in;
}

}  // namespace

template <class T>
std::vector<const cost::Model*> models_for(const Problem<T>& p, const Request& req,
                                           const Candidates& c) {
  if (req.strategy != Strategy::Auto) return {};
  const std::vector<const cost::Model*> models = all_models<T>(c.profiles);
  bool measured = c.devices.size() == 1;
  for (size_t i = 0; i < c.devices.size() && i < models.size(); ++i) {
    const bool discrete = gpu::is_discrete(*c.devices[i]);
    measured = measured && bucket_measured(p, c.choices[i], discrete,
                                           discrete && gpu::operands_pinned(*c.devices[i], p));
  }
  if (measured) return {};
  return models;
}

template <class T>
void model_plan(const Problem<T>& p, const Options& o, const Candidates& c,
                const std::vector<const cost::Model*>& models, Plan& plan) {
  const auto& [devices, choices, profiles] = c;
  Basis& basis = plan.basis;
  const ModelInputs in = model_inputs(p, o, devices, choices, models, profiles, basis.profile);
  const std::vector<gpu::SharedParams>& params = in.params;
  const cost::Plan best = plan_memo().plan(profiles, models[0]->cpu, in.sides, in.shape,
                                           host_cores(), models[0]->split_margin);
  int64_t row0 = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (best.rows[i] <= 0) continue;
    DevicePart part;
    part.device = devices[i];
    // A device that has every row runs its GPU-only kernel.
    part.params = best.cpu_rows > 0 || o.kernel_params.size() > 0
                      ? params[i]
                      : kernel_for(*devices[i], precision_of<T>(), o, *choices[i].gpu_kernel,
                                   profiles[i], basis.profile);
    // A part too long for the device's launches leaves its rows to the CPU (after the others').
    if (!bound_launches(part, p, o, models[i]->device.kernel_gflops)) continue;
    part.row0 = row0;
    part.rows = best.rows[i];
    row0 += part.rows;
    plan.parts.push_back(std::move(part));
  }
  plan.profile_threads = best.cpu_threads;
  basis.gpu_fraction = static_cast<double>(row0) / static_cast<double>(p.m);
  basis.model = true;
  basis.predicted_seconds = best.seconds;
  if (!plan.parts.empty()) basis.kernel = text::describe(plan.parts.front().params);
}

// The first GPU takes a call that names no device as it would alone (its
// buckets, its model), unless the machine has other GPUs and every one's profile has a cost model
// for the precision (a profile tuned on this host, `tandem tune`). Then the models weigh each GPU
// alone and all of them together, and one of those takes the call only where it beats the best
// before it by the first's split margin (a laptop's discrete GPU over its integrated one, listed
// first). The others are opened only once their profiles have models.
template <class T>
void choose_default_set(const Problem<T>& p, const Options& o, const Request& req, Candidates& c) {
  auto& [devices, choices, profiles] = c;
  static std::atomic<bool> unopened{false};  // the set once failed to open: it fails each time
  if (devices.size() != 1 || unopened.load(std::memory_order_relaxed)) return;
  const std::vector<gpu::DeviceInfo>* found = nullptr;
  try {
    found = &gpu::found_devices();
  } catch (const Error&) {
    return;  // the first device is open: it takes the call alone
  }
  if (std::count_if(found->begin(), found->end(),
                    [](const gpu::DeviceInfo& d) { return gpu::counts_as_gpu(d); }) < 2)
    return;
  std::string selector;
  for (const gpu::DeviceInfo& d : *found) {
    if (!gpu::counts_as_gpu(d)) continue;
    if (selector.empty() && d.index != gpu::info(*devices[0]).index) return;
    if (!model_of(profile::active_for(d).get(), precision_of<T>())) return;
    selector += (selector.empty() ? "" : ",") + std::to_string(d.index);
  }
  std::vector<std::shared_ptr<gpu::Device>> all;
  try {
    all = gpu::open_devices(selector);
  } catch (const Error&) {
    unopened.store(true, std::memory_order_relaxed);
    return;
  }
  std::vector<profile::Choice> all_choices{choices[0]};
  std::vector<std::shared_ptr<const profile::Profile>> all_profiles{profiles[0]};
  for (size_t i = 1; i < all.size(); ++i) {
    std::string unused;
    all_profiles.emplace_back();
    all_choices.push_back(profile_choice(p, req, all[i], &unused, &all_profiles.back()));
    choose_direct(all_choices.back(), p, o, *all[i], all_profiles.back().get());
  }
  const auto models = all_models<T>(all_profiles);
  if (models.size() != all.size()) return;
  const ModelInputs in = model_inputs(p, o, all, all_choices, models, all_profiles,
                                      profiles[0] ? profiles[0]->origin : "");
  const double margin = models[0]->split_margin;
  // The predicted seconds of the GPUs at these positions (with the CPU as their models plan it).
  const auto seconds = [&](const std::vector<size_t>& at) {
    std::vector<cost::Side> sides;
    std::vector<std::shared_ptr<const profile::Profile>> owners;
    for (size_t i : at) {
      sides.push_back(in.sides[i]);
      owners.push_back(all_profiles[i]);
    }
    return plan_memo()
        .plan(owners, models[at[0]]->cpu, sides, in.shape, host_cores(),
              models[at[0]]->split_margin)
        .seconds;
  };
  std::vector<size_t> best{0}, every(all.size());
  std::iota(every.begin(), every.end(), size_t{0});
  double best_seconds = seconds(best);
  for (size_t i = 1; i <= all.size(); ++i) {
    const std::vector<size_t> candidate = i < all.size() ? std::vector<size_t>{i} : every;
    const double t = seconds(candidate);
    if (t * (1 + margin) < best_seconds) {
      best = candidate;
      best_seconds = t;
    }
  }
  if (best.size() == 1 && best[0] == 0) return;
  devices.clear();
  choices.clear();
  profiles.clear();
  for (size_t i : best) {
    devices.push_back(all[i]);
    choices.push_back(all_choices[i]);
    profiles.push_back(all_profiles[i]);
  }
}

#define TANDEM_MODELS(T)                                                                    \
  template std::vector<const cost::Model*> models_for<T>(const Problem<T>&, const Request&, \
                                                         const Candidates&);                \
  template void model_plan<T>(const Problem<T>&, const Options&, const Candidates&,         \
                              const std::vector<const cost::Model*>&, Plan&);               \
  template void choose_default_set<T>(const Problem<T>&, const Options&, const Request&,    \
                                      Candidates&);
TANDEM_FOR_EACH_ELEMENT(TANDEM_MODELS)
#undef TANDEM_MODELS

}  // namespace tandem::detail
