// Planning one call, top-down (plan_call): the request; the machine's route, for a call auto keeps
// on the CPU without opening a device; the candidates (candidates.hpp: the devices, each one's
// profile and what it says for the call); then one division of the rows, by the devices' cost
// models (models.hpp) where they plan the call, else by the profiles' buckets; and auto's watch
// over it (watch.hpp). division.cpp divides rows and cores.
#include "plan/plan.hpp"

#include <algorithm>
#include <string>

#include "base/after_fork.hpp"
#include "base/config.hpp"
#include "base/log.hpp"
#include "base/precision.hpp"
#include "base/text.hpp"
#include "plan/candidates.hpp"
#include "plan/models.hpp"
#include "plan/route.hpp"
#include "plan/watch.hpp"

namespace tandem::detail {
namespace {

// hybrid without a fraction from options, environment or profile splits the rows evenly.
constexpr double kHybridDefaultFraction = 0.5;

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

// The report names the profile of the first device that has one, and every device asked.
void describe(const Candidates& c, Basis& basis) {
  for (size_t i = 0; i < c.devices.size() && basis.profile.empty(); ++i)
    if (c.profiles[i]) {
      basis.profile = c.profiles[i]->origin;
      basis.bucket = c.choices[i].bucket;
      basis.resident = c.choices[i].resident;
    }
  for (const auto& d : c.devices)
    basis.devices += (basis.devices.empty() ? "" : "; ") + gpu::description(*d);
}

// The division the profiles' buckets give: the set's fraction of the rows (set_fraction), shared
// by the devices in proportion to their measured rates, each part's rows in whole tiles of its
// kernel and its launches bounded; the balance the options, the environment or (auto) the bucket
// ask. False where the devices get no rows.
template <class T>
bool divide_by_buckets(const Problem<T>& p, const Options& o, Candidates& c, Plan& plan) {
  constexpr Precision precision = precision_of<T>();
  const Request& req = plan.request;
  const double fraction = set_fraction(req, c.choices);
  plan.basis.gpu_fraction = fraction;
  if (fraction <= 0) return false;
  if (needs_fp64(precision)) drop_fp32_only(precision, c);
  const auto& [devices, choices, profiles] = c;
  if (req.strategy != Strategy::Gpu && devices.size() == 1)
    plan.profile_threads = choices[0].cpu_threads;
  std::vector<double> weights;
  std::vector<int64_t> tiles;
  for (size_t i = 0; i < devices.size(); ++i) {
    const auto& choice = choices[i];
    DevicePart part;
    part.device = devices[i];
    part.params = kernel_for(*devices[i], precision, o,
                             req.strategy == Strategy::Gpu ? *choice.gpu_kernel : *choice.kernel,
                             profiles[i], plan.basis.profile);
    tiles.push_back(gpu::row_tile(*part.params));
    const bool fits = bound_launches(part, p, o, choice.gpu_gflops);
    plan.parts.push_back(std::move(part));
    // Under auto a device whose own profile keeps it idle stays idle; a call too long for its
    // launches stays off it, but under strategy gpu.
    const bool takes =
        (req.strategy != Strategy::Auto || devices.size() == 1 || choice.fraction > 0) &&
        (fits || req.strategy == Strategy::Gpu);
    weights.push_back(takes ? (choice.gpu_gflops > 0 ? choice.gpu_gflops : 1.0) : 0.0);
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
  if (!plan.parts.empty()) plan.basis.kernel = text::describe(plan.parts.front().params);
  const size_t sides = plan.parts.size() + (plan.rows() < p.m ? 1 : 0);
  const Balance balance = o.balance.value_or(env_config().balance.value_or(
      req.strategy == Strategy::Auto && choices.front().dynamic ? Balance::Dynamic
                                                                : Balance::Static));
  if (sides >= 2) plan.balance = balance;
  return true;
}

// The devices' parts of the plan: the candidates, then one division of the rows, by the cost
// models where they plan the call (only devices with fp64 have a dgemm model, so none is left
// out of a dgemm there), else by the buckets; then auto's watch, which may demote it to the CPU
// alone. Throws Error where no device can take part.
template <class T>
void plan_devices(const Problem<T>& p, const Options& o, Plan& plan) {
  Candidates c = candidates(p, o, plan.request);
  describe(c, plan.basis);
  const std::vector<const cost::Model*> models = models_for(p, plan.request, c);
  if (!models.empty())
    model_plan(p, o, c, models, plan);
  else if (!divide_by_buckets(p, o, c, plan))
    return;  // the devices get no rows
  watch::plan(plan, p, models.empty() ? plan.request.strategy : Strategy::Auto, c.devices,
              c.choices, c.profiles, models.empty() ? nullptr : models.front());
}

// Records this precision's route where it is not known yet: the cubes auto plans on the CPU
// alone, planned here (OpenCL is open) with this call's options.
template <class T>
void learn_route(const Problem<T>& p, const Options& o, const Request& req) {
  constexpr Precision precision = precision_of<T>();
  // A child forked after OpenCL was used has no device: what it would find is not the machine's
  // route, and written to the profile directory it would keep later processes off the GPU.
  if (route::known(precision) || after_fork::opencl_lost()) return;
  route::learn(precision, [&](int64_t edge) {
    Problem<T> cube = p;
    cube.trans_a = cube.trans_b = false;
    cube.m = cube.n = cube.k = cube.lda = cube.ldb = cube.ldc = edge;
    cube.beta = T(0);
    Plan scratch;
    scratch.request = req;
    try {
      plan_devices(cube, o, scratch);
      return !scratch.parts.empty();
    } catch (const Error&) {
      return false;  // no device can take part: the CPU's
    }
  });
}

// The plan, and whether the route kept the call on the CPU; `learn`: record the route where a
// device was opened for it.
template <class T>
Plan make(const Problem<T>& p, const Options& o, bool learn) {
  Plan plan;
  plan.request = request(o);
  if (plan.request.strategy == Strategy::Cpu) return plan;
  const bool routed = route::eligible(o, plan.request.strategy);
  if (routed && route::cpu_alone(precision_of<T>(), p.m, p.n, p.k)) {
    plan.basis.profile = "route";  // OpenCL is not opened for it
    return plan;
  }
  try {
    plan_devices(p, o, plan);
  } catch (const Error& e) {
    if (e.kind() == Error::Kind::InvalidArgument) throw;
    plan.parts.clear();
    plan.profile_threads = 0;
    plan.balance = Balance::Static;
    plan.unavailable = e;
  }
  if (routed && learn) learn_route(p, o, plan.request);
  return plan;
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
Plan plan_call(const Problem<T>& p, const Options& o) {
  return make(p, o, true);
}

template <class T>
bool uses_devices(const Problem<T>& p, const Options& o, bool learn) {
  return !make(p, o, learn).parts.empty();
}

template <class T>
gpu::SharedParams kernel_alone(const std::shared_ptr<gpu::Device>& device, int64_t n) {
  // Planning this call does not ask for the feed (only auto does), so the measurement never
  // waits on its own once_flag.
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = std::to_string(gpu::info(*device).index);
  Problem<T> cube;
  cube.m = cube.n = cube.k = cube.lda = cube.ldb = cube.ldc = n;
  cube.alpha = cube.beta = T(1);
  Plan plan;
  plan.request = request(o);
  plan_devices(cube, o, plan);
  if (plan.parts.empty()) throw Error(Error::Kind::Runtime, "the device takes no rows alone");
  return plan.parts.front().params;
}

#define TANDEM_PLAN(T)                                                    \
  template Plan plan_call<T>(const Problem<T>&, const Options&);          \
  template bool uses_devices<T>(const Problem<T>&, const Options&, bool); \
  template gpu::SharedParams kernel_alone<T>(const std::shared_ptr<gpu::Device>&, int64_t);
TANDEM_FOR_EACH_ELEMENT(TANDEM_PLAN)
#undef TANDEM_PLAN

}  // namespace tandem::detail
