// Planning one call: the request, the devices, each device's profile, the devices' rows and
// kernels (division.cpp divides the rows and the host's cores).
#include "plan/plan.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <numeric>
#include <string>
#include <tuple>

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/memo.hpp"
#include "base/text.hpp"
#include "gpu/pinned_memory.hpp"
#include "plan/feed_cost.hpp"
#include "plan/watch.hpp"
#include "profile/profile.hpp"

namespace tandem::detail {
namespace {

// hybrid without a fraction from options, environment or profile splits the rows evenly.
constexpr double kHybridDefaultFraction = 0.5;

// What a device's profile says for this call (an empty choice without a profile).
template <class T>
profile::Choice profile_choice(const Problem<T>& p, const Request& req, gpu::Device& device,
                               std::string* origin, std::shared_ptr<const profile::Profile>* out) {
  profile::Choice choice;
  const auto prof = profile::active_for(gpu::info(device));
  *out = prof;
  if (!prof) return choice;
  // Operands a discrete device copies without packing leave the host's cores to the CPU share:
  // the profile may hold a split for them.
  const bool discrete = gpu::is_discrete(device);
  const bool resident = discrete && gpu::operands_pinned(device, p);
  choice = profile::choose(*prof, std::is_same_v<T, double>, p.m, p.n, p.k, resident);
  // A split of C's rows saves the GPU only its rows' work; on a discrete device each share still
  // copies all of B. Where B outweighs A and C together (few rows over a long K), the split
  // measured on square problems costs more than it saves (100x8192x8192 sgemm on the H100 host:
  // 0.58 of the GPU alone), so auto keeps the GPU alone.
  if (req.strategy == Strategy::Auto && discrete && choice.fraction > 0 && choice.fraction < 1 &&
      static_cast<double>(p.k) * static_cast<double>(p.n) >
          static_cast<double>(p.m) * static_cast<double>(p.k + p.n)) {
    choice.fraction = 1.0;
    choice.kernel = choice.gpu_kernel;
    choice.cpu_threads = 0;
  }
  // Nor does a call that the CPU would finish before the device is fed: from pinned memory,
  // moving the operands at the bus's best rate (the rank-64 trailing updates of reference
  // LAPACK's dgetrf); from ordinary memory, the measured cost of feeding it, per call and per
  // byte, and its kernel's work (a blocked level-3 routine's deeper products:
  // docs/PERFORMANCE.md). The CPU's rate is the bucket's, lowered where C is narrow (dpotrf's
  // products, 64 wide, which the device wins).
  if (req.strategy == Strategy::Auto && discrete && choice.fraction > 0) {
    // From pinned memory the bus alone, at its best rate, with no fixed cost and the kernel left
    // out (a bound); from ordinary memory the measured feed.
    const FeedCost feed =
        resident ? FeedCost{0, gpu::bus_bytes_per_second(device), 0, 0} : ordinary_feed<T>(device);
    const double cpu =
        cpu_gflops_for(p, choice.cpu_gflops, choice.bucket, profile::cpu_shape().half_dimension);
    if (device_loses_to_cpu(p, feed, cpu)) choice.fraction = 0;
  }
  *origin = prof->origin;
  return choice;
}

// The direct kernel, for the device's share and its GPU-only kernel alike, where the call lies
// below the profile's direct_below (the defaults' without one) or the options ask for it.
template <class T>
void choose_direct(profile::Choice& choice, const Problem<T>& p, const Options& o,
                   const gpu::Device& device, const profile::Profile* prof) {
  const profile::Direct direct =
      profile::direct_for(prof, std::is_same_v<T, double>, gpu::info(device).is_gpu);
  if (o.direct.value_or(direct.applies(p.m, p.n, p.k)))
    choice.kernel = choice.gpu_kernel = direct.kernel;
}

// Explicit parameters are the caller's to get right; a profile's that do not fit this device (a
// platform-wide profile, a hand-edited file) give way to the defaults. A profile's set is found
// again by where it lies, not by its contents (hashing and comparing them cost a small call about
// 3k instructions): a profile never changes once read, and an entry holds the profile the set
// belongs to (`owner`; the defaults' sets are never destroyed), so no other set can take that
// address while the entry is remembered.
gpu::SharedParams kernel_for(const gpu::Device& device, bool fp64, const Options& o,
                             const gpu::Params& profile_kernel,
                             const std::shared_ptr<const profile::Profile>& owner,
                             const std::string& profile) {
  const gpu::Limits limits = gpu::limits_of(gpu::info(device));
  if (!o.kernel_params.empty()) return gpu::resolved(limits, fp64, o.kernel_params);
  struct Key {
    const gpu::Params* set;
    gpu::Limits limits;
    bool fp64;
    std::shared_ptr<const profile::Profile> owner;
  };
  struct View {
    const gpu::Params* set;
    const gpu::Limits& limits;
    bool fp64;
    const std::shared_ptr<const profile::Profile>& owner;
    uint64_t hash() const {
      uint64_t h = hash_value(set, hash_value(owner.get(), hash_value(fp64, 0)));
      return hash_value(limits.max_work_group, hash_value(limits.local_mem_bytes, h));
    }
    bool matches(const Key& k) const {
      return k.set == set && k.owner == owner && k.fp64 == fp64 &&
             k.limits.max_work_group == limits.max_work_group &&
             k.limits.local_mem_bytes == limits.local_mem_bytes && k.limits.is_gpu == limits.is_gpu;
    }
    Key own() const { return {set, limits, fp64, owner}; }
  };
  static auto& memo = *new Memo<Key, gpu::SharedParams>;  // never destroyed: calls until exit
  return memo.get(View{&profile_kernel, limits, fp64, owner}, [&] {
    try {
      return gpu::resolved(limits, fp64, profile_kernel);
    } catch (const Error& e) {
      warn_once("profile-kernel:" + profile, "the profile's kernel does not fit " +
                                                 gpu::info(device).describe() + " (" + e.what() +
                                                 "); using the default kernel");
      return gpu::resolved(limits, fp64, {});
    }
  });
}

// The devices' share of the rows. One device: its profile's fraction (auto), the request's or the
// profile's (hybrid). Several, without a profile for the set: under hybrid the request's, else
// every device and the CPU in proportion to the rates their profiles measured; under auto the
// devices whose own profiles give them rows, and the CPU if every one of those leaves it rows,
// in proportion to those rates.
double set_fraction(const Request& req, const std::vector<profile::Choice>& choices) {
  if (req.strategy == Strategy::Gpu) return 1.0;
  if (choices.size() == 1) {
    const double f = choices.front().fraction;
    if (req.strategy == Strategy::Hybrid)
      return req.fraction.value_or(f > 0 ? f : kHybridDefaultFraction);
    return f;
  }
  if (req.strategy == Strategy::Hybrid) {
    // Every device and the CPU, in proportion to the rates their profiles measured.
    double gpus = 0, cpu = 0;
    for (const auto& c : choices) {
      gpus += c.gpu_gflops;
      cpu = std::max(cpu, c.cpu_gflops);
    }
    return req.fraction.value_or(gpus > 0 && cpu > 0 ? gpus / (gpus + cpu)
                                                     : kHybridDefaultFraction);
  }
  double gpus = 0, cpu = 0;
  bool cpu_keeps_rows = true;
  int taking = 0;
  for (const auto& c : choices) {
    if (c.fraction <= 0) continue;
    ++taking;
    gpus += c.gpu_gflops > 0 ? c.gpu_gflops : 1.0;
    cpu = std::max(cpu, c.cpu_gflops);
    cpu_keeps_rows = cpu_keeps_rows && c.fraction < 1;
  }
  if (taking == 0) return 0.0;
  if (!cpu_keeps_rows || cpu <= 0) return 1.0;
  return gpus / (gpus + cpu);
}

// The devices Options::device names, else TANDEM_DEVICE's, else the default: the first GPU
// (choose_default_set() may weigh the others). A selector from the environment that names nothing
// says where it came from: the caller never wrote it.
std::vector<std::shared_ptr<gpu::Device>> selected_devices(const Options& o, bool& by_default) {
  const std::optional<std::string>& env = env_config().device;
  by_default = !o.device && !env;
  if (o.device || !env) return gpu::open_devices(o.device.value_or(""));
  try {
    return gpu::open_devices(*env);
  } catch (const Error& e) {
    throw Error(e.kind(), std::string("TANDEM_DEVICE: ") + e.what(), 0, e.cl_call(), e.cl_code());
  }
}

// A dgemm leaves out devices without fp64, while others remain to take their rows.
void drop_fp32_only(std::vector<std::shared_ptr<gpu::Device>>& devices,
                    std::vector<profile::Choice>& choices,
                    std::vector<std::shared_ptr<const profile::Profile>>& profiles) {
  std::string without;
  for (size_t i = devices.size(); i-- > 0;) {
    if (gpu::info(*devices[i]).fp64) continue;
    without = gpu::info(*devices[i]).describe() + (without.empty() ? "" : ", ") + without;
    const auto at = static_cast<std::ptrdiff_t>(i);
    devices.erase(devices.begin() + at);
    choices.erase(choices.begin() + at);
    profiles.erase(profiles.begin() + at);
  }
  if (devices.empty())
    throw Error(Error::Kind::Runtime, "device " + without + " has no fp64 support");
  if (!without.empty())
    warn_once("no-fp64:" + without, "dgemm leaves out " + without + ": no fp64 support");
}

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

// A profile's cost model for precision 's' or 'd', if it has one.
const cost::Model* model_of(const profile::Profile* prof, char precision) {
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
    const cost::Model* m = model_of(profile.get(), std::is_same_v<T, double> ? 'd' : 's');
    if (m == nullptr) return {};
    models.push_back(m);
  }
  return models;
}

// The devices' cost models for this precision, when auto plans the call with them: every device's
// profile has one, and the call is one no bucket measured or runs on several devices.
template <class T>
std::vector<const cost::Model*> models_for(
    const Problem<T>& p, const Request& req,
    const std::vector<std::shared_ptr<gpu::Device>>& devices,
    const std::vector<profile::Choice>& choices,
    const std::vector<std::shared_ptr<const profile::Profile>>& profiles) {
  if (req.strategy != Strategy::Auto) return {};
  const std::vector<const cost::Model*> models = all_models<T>(profiles);
  bool measured = devices.size() == 1;
  for (size_t i = 0; i < devices.size() && i < models.size(); ++i) {
    const bool discrete = gpu::is_discrete(*devices[i]);
    measured = measured && bucket_measured(p, choices[i], discrete,
                                           discrete && gpu::operands_pinned(*devices[i], p));
  }
  if (measured) return {};
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
             shape.element_bytes == o.shape.element_bytes && shape.reads_c == o.shape.reads_c &&
             shape.pinned == o.shape.pinned && shape.a_pinned == o.shape.a_pinned &&
             shape.b_pinned == o.shape.b_pinned && shape.c_pinned == o.shape.c_pinned &&
             cores == o.cores && sides == o.sides && cpu == o.cpu && margin == o.margin;
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
  constexpr bool fp64 = std::is_same_v<T, double>;
  ModelInputs in;
  in.shape.m = p.m;
  in.shape.n = p.n;
  in.shape.k = p.k;
  in.shape.element_bytes = sizeof(T);
  in.shape.reads_c = p.beta != T(0);
  // Which operands a device copies without packing: those pinned in its own context.
  const auto pinning = [&p](const gpu::Device& d) {
    return cost::Pinning{gpu::in_pinned_block(d, p.a, p.a_bytes()),
                         gpu::in_pinned_block(d, p.b, p.b_bytes()),
                         gpu::in_pinned_block(d, p.c, p.c_bytes())};
  };
  const cost::Pinning front = pinning(*devices.front());
  in.shape.pin(front);
  for (size_t i = 0; i < devices.size(); ++i) {
    in.params.push_back(kernel_for(*devices[i], fp64, o, *choices[i].kernel, profiles[i], origin));
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

// The plan the devices' cost models give: each device's rows in whole tiles of the kernel it
// will run, the CPU's threads (the cores it leaves feed the devices).
template <class T>
GpuPlan model_plan(const Problem<T>& p, const Options& o,
                   const std::vector<std::shared_ptr<gpu::Device>>& devices,
                   const std::vector<profile::Choice>& choices,
                   const std::vector<const cost::Model*>& models,
                   const std::vector<std::shared_ptr<const profile::Profile>>& profiles,
                   Report& r) {
  constexpr bool fp64 = std::is_same_v<T, double>;
  const ModelInputs in = model_inputs(p, o, devices, choices, models, profiles, r.profile);
  const std::vector<gpu::SharedParams>& params = in.params;
  const cost::Plan best = plan_memo().plan(profiles, models[0]->cpu, in.sides, in.shape,
                                           host_cores(), models[0]->split_margin);
  GpuPlan plan;
  int64_t row0 = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (best.rows[i] <= 0) continue;
    DevicePart part;
    part.device = devices[i];
    // A device that has every row runs its GPU-only kernel.
    part.params =
        best.cpu_rows > 0 || o.kernel_params.size() > 0
            ? params[i]
            : kernel_for(*devices[i], fp64, o, *choices[i].gpu_kernel, profiles[i], r.profile);
    // A part too long for the device's launches leaves its rows to the CPU (after the others').
    if (!bound_launches(part, p, o, models[i]->device.kernel_gflops)) continue;
    part.row0 = row0;
    part.rows = best.rows[i];
    row0 += part.rows;
    plan.parts.push_back(std::move(part));
  }
  plan.profile_threads = best.cpu_threads;
  r.gpu_fraction = static_cast<double>(row0) / static_cast<double>(p.m);
  r.profile_model = true;
  r.predicted_seconds = best.seconds;
  if (!plan.parts.empty()) r.kernel = text::describe(plan.parts.front().params);
  watch::plan(plan, p, Strategy::Auto, devices, choices, profiles, models[0], r);
  return plan;
}

// Auto's default set. The first GPU takes a call that names no device as it would alone (its
// buckets, its model), unless the machine has other GPUs and every one's profile has a cost model
// for the precision (a profile tuned on this host, `tandem tune`). Then the models weigh each GPU
// alone and all of them together, and one of those takes the call only where it beats the best
// before it by the first's split margin (a laptop's discrete GPU over its integrated one, listed
// first). The others are opened only once their profiles have models.
template <class T>
void choose_default_set(const Problem<T>& p, const Options& o, const Request& req,
                        std::vector<std::shared_ptr<gpu::Device>>& devices,
                        std::vector<profile::Choice>& choices,
                        std::vector<std::shared_ptr<const profile::Profile>>& profiles) {
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
  const char precision = std::is_same_v<T, double> ? 'd' : 's';
  std::string selector;
  for (const gpu::DeviceInfo& d : *found) {
    if (!gpu::counts_as_gpu(d)) continue;
    if (selector.empty() && d.index != gpu::info(*devices[0]).index) return;
    if (!model_of(profile::active_for(d).get(), precision)) return;
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
    all_choices.push_back(profile_choice(p, req, *all[i], &unused, &all_profiles.back()));
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

}  // namespace

Request request(const Options& o) {
  const EnvConfig& env = env_config();
  Request req;
  req.strategy = o.strategy.value_or(env.strategy.value_or(Strategy::Auto));
  if (o.gpu_fraction && !(*o.gpu_fraction >= 0.0 && *o.gpu_fraction <= 1.0))
    throw Error(Error::Kind::InvalidArgument,
                "options.gpu_fraction = " + std::to_string(*o.gpu_fraction) + " is outside [0, 1]");
  if (o.cpu_threads && *o.cpu_threads < 1)
    throw Error(Error::Kind::InvalidArgument,
                "options.cpu_threads = " + std::to_string(*o.cpu_threads) + " must be at least 1");
  if (o.feeder_threads && *o.feeder_threads < 1)
    throw Error(
        Error::Kind::InvalidArgument,
        "options.feeder_threads = " + std::to_string(*o.feeder_threads) + " must be at least 1");
  if (req.strategy == Strategy::Hybrid)
    req.fraction = o.gpu_fraction ? o.gpu_fraction : env.gpu_fraction;
  return req;
}

template <class T>
GpuPlan plan_gpu(const Problem<T>& p, const Options& o, const Request& req, Report& r) {
  constexpr bool fp64 = std::is_same_v<T, double>;
  bool by_default = false;
  auto devices = selected_devices(o, by_default);
  std::vector<profile::Choice> choices;
  std::vector<std::shared_ptr<const profile::Profile>> profiles(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    std::string origin;
    choices.push_back(profile_choice(p, req, *devices[i], &origin, &profiles[i]));
    choose_direct(choices.back(), p, o, *devices[i], profiles[i].get());
  }
  if (by_default && req.strategy == Strategy::Auto)
    choose_default_set(p, o, req, devices, choices, profiles);
  // The report names the profile of the first device that has one.
  for (size_t i = 0; i < devices.size() && r.profile.empty(); ++i)
    if (profiles[i]) {
      r.profile = profiles[i]->origin;
      r.profile_bucket = choices[i].bucket;
      r.profile_resident = choices[i].resident;
    }
  for (const auto& d : devices) r.device += (r.device.empty() ? "" : "; ") + gpu::description(*d);
  // Only a device with fp64 has a dgemm model, so none of these is left out of a dgemm.
  if (const auto models = models_for(p, req, devices, choices, profiles); !models.empty())
    return model_plan(p, o, devices, choices, models, profiles, r);
  GpuPlan plan;
  const double fraction = set_fraction(req, choices);
  r.gpu_fraction = fraction;
  if (fraction <= 0) return plan;
  if (fp64) drop_fp32_only(devices, choices, profiles);
  if (req.strategy != Strategy::Gpu && devices.size() == 1)
    plan.profile_threads = choices[0].cpu_threads;
  std::vector<double> weights;
  std::vector<int64_t> tiles;
  for (size_t i = 0; i < devices.size(); ++i) {
    const auto& c = choices[i];
    DevicePart part;
    part.device = devices[i];
    part.params =
        kernel_for(*devices[i], fp64, o, req.strategy == Strategy::Gpu ? *c.gpu_kernel : *c.kernel,
                   profiles[i], r.profile);
    tiles.push_back(gpu::row_tile(*part.params));
    const bool fits = bound_launches(part, p, o, c.gpu_gflops);
    plan.parts.push_back(std::move(part));
    // Under auto a device whose own profile keeps it idle stays idle; a call too long for its
    // launches stays off it, but under strategy gpu.
    const bool takes = (req.strategy != Strategy::Auto || devices.size() == 1 || c.fraction > 0) &&
                       (fits || req.strategy == Strategy::Gpu);
    weights.push_back(takes ? (c.gpu_gflops > 0 ? c.gpu_gflops : 1.0) : 0.0);
  }
  const auto rows = split_rows(fraction, p.m, weights, tiles);
  int64_t row0 = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    plan.parts[i].row0 = row0;
    plan.parts[i].rows = rows[i];
    row0 += rows[i];
  }
  plan.parts.erase(std::remove_if(plan.parts.begin(), plan.parts.end(),
                                  [](const DevicePart& d) { return d.rows == 0; }),
                   plan.parts.end());
  if (!plan.parts.empty()) r.kernel = text::describe(plan.parts.front().params);
  const size_t sides = plan.parts.size() + (plan.rows() < p.m ? 1 : 0);
  const Balance balance = o.balance.value_or(env_config().balance.value_or(
      req.strategy == Strategy::Auto && choices.front().dynamic ? Balance::Dynamic
                                                                : Balance::Static));
  if (sides >= 2) plan.balance = balance;
  watch::plan(plan, p, req.strategy, devices, choices, profiles, nullptr, r);
  return plan;
}

template GpuPlan plan_gpu<float>(const Problem<float>&, const Options&, const Request&, Report&);
template GpuPlan plan_gpu<double>(const Problem<double>&, const Options&, const Request&, Report&);

}  // namespace tandem::detail
