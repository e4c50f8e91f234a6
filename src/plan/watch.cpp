// Auto's watch over its plans (watch.hpp): the classes, kept for the life of the process, each
// call's time against the CPU alone's, and the demotion.
#include "plan/watch.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/memo.hpp"
#include "base/precision.hpp"
#include "gpu/device.hpp"
#include "plan/feed_cost.hpp"
#include "plan/models.hpp"
#include "profile/choice.hpp"
#include "profile/defaults.hpp"

namespace tandem::detail::watch {

namespace {

double median_of(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t h = x.size() / 2;
  return x.size() % 2 ? x[h] : 0.5 * (x[h - 1] + x[h]);
}

}  // namespace

bool slower_than_cpu(std::vector<double> ratios, double margin) {
  return !ratios.empty() && median_of(std::move(ratios)) > 1 + margin;
}

namespace {

using Profiles = std::vector<std::shared_ptr<const profile::Profile>>;

// What makes plans one class. A bucket's split is one plan whatever the shape it is applied to,
// so its calls are one class (each timed against the CPU's rate for its own shape); the cost
// model plans each shape its own way, so its classes are shapes whose sides are within a factor
// of two, with C read or not and the operands pinned or not.
struct Key {
  Profiles profiles;     // each device's (held, so that no other profile takes their addresses)
  uint64_t devices = 0;  // the devices' indices, hashed in order
  Precision precision = Precision::s;
  int64_t bucket = 0;          // the bucket whose split runs (0: the cost model's plan)
  bool resident = false;       // the bucket's split for tandem_malloc memory
  std::array<int, 3> shape{};  // the model's plans: floor(log2) of m, n and k
  int memory = 0;              // the model's plans: C read (1), operands pinned (2)
};

// The key of one planned call, looked up without copying the profiles.
struct View {
  const Profiles& profiles;
  const Key& rest;  // every field but `profiles`
  uint64_t hash() const {
    uint64_t h = hash_value(rest.devices, hash_value(rest.precision, 0));
    for (const auto& prof : profiles) h = hash_value(prof.get(), h);
    h = hash_value(rest.bucket, hash_value(rest.resident, h));
    return hash_value(rest.shape, hash_value(rest.memory, h));
  }
  bool matches(const Key& k) const {
    return k.profiles == profiles && k.devices == rest.devices && k.precision == rest.precision &&
           k.bucket == rest.bucket && k.resident == rest.resident && k.shape == rest.shape &&
           k.memory == rest.memory;
  }
};

int log2_class(int64_t d) { return d <= 1 ? 0 : 63 - __builtin_clzll(static_cast<uint64_t>(d)); }

}  // namespace

// One class of plans: its recent calls' times over the CPU alone's predicted time, whether it is
// demoted, and, where one of its calls was timed on the CPU alone, that call's time over the
// prediction (the scale its calls are judged by).
class Class {
 public:
  explicit Class(Key key) : key_(std::move(key)) {}
  bool demoted() const { return demoted_.load(std::memory_order_relaxed); }
  // Counts a call planned for the devices; true for the one call (the class's second) that the
  // CPU alone is to time instead.
  bool planned(bool close);
  // The CPU alone's time for the timed call, over its predicted time (0: it did not run).
  void timed_on_cpu(double ratio);
  void observe(double ratio);
  const Key& key() const { return key_; }

 private:
  std::string what() const;
  std::string describe(double median, bool timed) const;

  enum : int { kUntimed, kTiming, kTimed };

  const Key key_;
  std::atomic<bool> demoted_{false};
  std::atomic<int> planned_{0};  // calls planned for the devices, up to two
  std::atomic<int> cpu_timed_{kUntimed};
  std::mutex mutex_;
  int calls_ = 0;               // seen, the first (not counted) included
  std::vector<double> ratios_;  // the last watch_rule().calls, oldest overwritten first
  size_t next_ = 0;
  // The CPU alone's timed call over its prediction where below 1, the class's calls then judged
  // against it; else 1 (untimed, or timed slower: judged against the prediction).
  double scale_ = 1;
};

bool Class::planned(bool close) {
  const int before = planned_.load(std::memory_order_relaxed);
  if (before < 2) planned_.fetch_add(1, std::memory_order_relaxed);  // only the first two count
  int untimed = kUntimed;
  return close && before >= 1 &&
         cpu_timed_.compare_exchange_strong(untimed, kTiming, std::memory_order_relaxed);
}

void Class::timed_on_cpu(double ratio) {
  if (ratio <= 0) {  // it did not run: a later call times the CPU instead
    cpu_timed_.store(kUntimed, std::memory_order_relaxed);
    return;
  }
  // One timing only tightens the rule: a CPU slower than predicted (a busy moment, a call that
  // waited on another's) leaves the class judged against the prediction.
  const double scale = std::min(ratio, 1.0);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    scale_ = scale;
  }
  cpu_timed_.store(kTimed, std::memory_order_relaxed);
  if (!env_config().verbose) return;
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", ratio);
  log_line("auto: " + what() + ": one ran on the CPU alone in " + text +
           "x the predicted CPU time; the next are judged against " +
           (scale < ratio ? "the prediction" : "that"));
}

void Class::observe(double ratio) {
  const profile::WatchRule& rule = profile::watch_rule();
  double median = 0, scale = 1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (demoted() || calls_++ == 0) return;
    const auto window = static_cast<size_t>(rule.calls);
    if (ratios_.size() < window) {
      ratios_.push_back(ratio);
    } else {
      ratios_[next_] = ratio;
      next_ = (next_ + 1) % window;
    }
    if (ratios_.size() < window) return;
    scale = scale_;
    std::vector<double> judged = ratios_;
    for (double& r : judged) r /= scale;
    if (!slower_than_cpu(judged, rule.margin)) return;
    median = median_of(std::move(judged));
    demoted_.store(true, std::memory_order_relaxed);
  }
  if (env_config().verbose) log_line(describe(median, scale < 1));
}

std::string Class::what() const {
  std::string what = routine_name(key_.precision, "gemm").str() + " ";
  if (key_.bucket > 0)
    return what + "calls of the profile's " + std::to_string(key_.bucket) + " bucket" +
           (key_.resident ? " (tandem_malloc memory)" : "");
  return what + "calls the cost model planned of about " +
         std::to_string(int64_t{1} << key_.shape[0]) + "x" +
         std::to_string(int64_t{1} << key_.shape[1]) + "x" +
         std::to_string(int64_t{1} << key_.shape[2]);
}

std::string Class::describe(double median, bool timed) const {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", median);
  std::string origin;
  for (const auto& prof : key_.profiles)
    if (prof) origin += (origin.empty() ? "" : ", ") + prof->origin;
  const std::string against = timed ? "one of them timed on the CPU alone" : "its recorded rate";
  return "auto: " + what() + " ran at a median " + ratio +
         "x the CPU alone's time over their last " + std::to_string(profile::watch_rule().calls) +
         " (" + against + "; profile " + origin + "): the CPU alone takes them from now on";
}

namespace {

// Every class seen, for the life of the process: a demoted class must stay demoted, so none is
// ever dropped; past kClasses, new ones simply go unwatched.
class Classes {
 public:
  Class* find(const View& view) {
    const uint64_t h = view.hash();
    std::lock_guard<std::mutex> lock(mutex_);
    const auto [from, to] = table_.equal_range(h);
    for (auto it = from; it != to; ++it)
      if (view.matches(it->second->key())) return it->second.get();
    if (table_.size() >= kClasses) return nullptr;
    Key own = view.rest;
    own.profiles = view.profiles;
    return table_.emplace(h, std::make_unique<Class>(std::move(own)))->second.get();
  }

 private:
  static constexpr size_t kClasses = 4096;
  std::mutex mutex_;
  std::unordered_multimap<uint64_t, std::unique_ptr<Class>> table_;
};

Classes& classes() {
  static Classes& all = *new Classes;  // never destroyed: calls may plan until exit
  return all;
}

thread_local Call::Expected* t_expected = nullptr;  // the innermost Call on this thread

// The CPU alone's seconds for the call, from what the plan was made with: the cost model's CPU,
// or the bucket's rate (the best of the devices' profiles), lowered where C is narrow.
template <class T>
double cpu_seconds(const Problem<T>& p, const std::vector<profile::Choice>& choices,
                   const cost::Model* model) {
  if (model != nullptr) return model->cpu.seconds(model_shape(p), p.m, host_cores());
  double square = 0;
  for (const auto& c : choices) square = std::max(square, c.cpu_gflops);
  const double gflops =
      cpu_gflops_for(p, square, choices.front().bucket, profile::cpu_shape().half_dimension);
  if (gflops <= 0) return 0;
  return flops_per_multiply_add(precision_of<T>()) * static_cast<double>(p.m) *
         static_cast<double>(p.n) * static_cast<double>(p.k) / (gflops * 1e9);
}

// The plan as the CPU alone runs it.
void on_cpu_alone(Plan& plan) {
  plan.parts.clear();
  plan.profile_threads = 0;
  plan.balance = Balance::Static;
  plan.basis.gpu_fraction = 0;
  plan.basis.kernel.clear();
}

}  // namespace

template <class T>
void plan(Plan& plan, const Problem<T>& p, Strategy strategy,
          const std::vector<std::shared_ptr<gpu::Device>>& devices,
          const std::vector<profile::Choice>& choices, const Profiles& profiles,
          const cost::Model* model) {
  if (strategy != Strategy::Auto) return;
  // A call's own plan comes first in it; plans made after it while the call is planned (the
  // route's cubes, plan.cpp's learn_route) see the profile as it is: they are not this call's,
  // and what a process demoted must not reach the route that later processes read.
  if (t_expected != nullptr && std::exchange(t_expected->planned, true)) return;
  if (plan.parts.empty() || choices.empty()) return;
  Key rest;
  for (const auto& d : devices) rest.devices = hash_value(gpu::info(*d).index, rest.devices);
  rest.precision = precision_of<T>();
  if (model == nullptr) {
    rest.bucket = choices.front().bucket;
    rest.resident = choices.front().resident;
  } else {
    rest.shape = {log2_class(p.m), log2_class(p.n), log2_class(p.k)};
    rest.memory = (p.beta != T(0) ? 1 : 0) | (choices.front().resident ? 2 : 0);
  }
  Class* of = classes().find(View{profiles, rest});
  if (of == nullptr) return;
  if (of->demoted()) return on_cpu_alone(plan);
  const double cpu = cpu_seconds(p, choices, model);
  if (t_expected == nullptr || cpu <= 0) return;
  // A verdict the model made by a small margin is checked against the cores themselves once.
  const bool close =
      model != nullptr && plan.basis.predicted_seconds > profile::watch_rule().close * cpu;
  if (of->planned(close)) {
    on_cpu_alone(plan);
    t_expected->times_cpu = true;
  }
  t_expected->of = of;
  t_expected->cpu_seconds = cpu;
}

Call::Call() : outer_(t_expected) { t_expected = &expected_; }

Call::~Call() {
  // A call timing its class's CPU that never reported (it threw) leaves the timing to a later one.
  if (expected_.times_cpu && !expected_.reported) expected_.of->timed_on_cpu(0);
  t_expected = outer_;
}

void Call::ran(const Report& r) {
  if (expected_.of == nullptr) return;
  expected_.reported = true;
  const double ratio = r.t_end > r.t_start ? r.seconds() / expected_.cpu_seconds : 0;
  if (expected_.times_cpu) return expected_.of->timed_on_cpu(ratio);
  if (r.fell_back || r.gpu_rows == 0 || ratio <= 0) return;
  expected_.of->observe(ratio);
}

#define INSTANTIATE(T)                                                    \
  template void plan<T>(Plan&, const Problem<T>&, Strategy,               \
                        const std::vector<std::shared_ptr<gpu::Device>>&, \
                        const std::vector<profile::Choice>&, const Profiles&, const cost::Model*);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::watch
