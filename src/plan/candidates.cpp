// The candidates of a plan (candidates.hpp): the devices, their profiles and what each says for
// the call.
#include "plan/candidates.hpp"

#include <optional>
#include <string>

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/memo.hpp"
#include "base/precision.hpp"
#include "gpu/engine.hpp"
#include "gpu/feed.hpp"
#include "gpu/pinned_memory.hpp"
#include "plan/device_profile.hpp"
#include "plan/feed_cost.hpp"
#include "plan/models.hpp"
#include "profile/defaults.hpp"

namespace tandem::detail {
namespace {

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

}  // namespace

// Auto's rules for a discrete device: the GPU alone where B outweighs A and C, and the CPU where
// feeding the device costs more than the CPU's whole call.
template <class T>
profile::Choice profile_choice(const Problem<T>& p, const Request& req,
                               const std::shared_ptr<gpu::Device>& shared, std::string* origin,
                               std::shared_ptr<const profile::Profile>* out) {
  gpu::Device& device = *shared;
  profile::Choice choice;
  const auto prof = profile::active_for(gpu::info(device));
  *out = prof;
  if (!prof) return choice;
  // Operands a discrete device copies without packing leave the host's cores to the CPU share:
  // the profile may hold a split for them.
  const bool discrete = gpu::is_discrete(device);
  const bool resident = discrete && gpu::operands_pinned(device, p);
  choice = profile::choose(*prof, precision_of<T>(), p.m, p.n, p.k, resident);
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
        resident ? FeedCost{0, gpu::bus_bytes_per_second(device), 0, 0} : ordinary_feed<T>(shared);
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
      profile::direct_for(prof, precision_of<T>(), gpu::info(device).is_gpu);
  if (o.direct.value_or(direct.applies(p.m, p.n, p.k)))
    choice.kernel = choice.gpu_kernel = direct.kernel;
}

// Explicit parameters are the caller's to get right; a profile's that do not fit this device (a
// platform-wide profile, a hand-edited file) give way to the defaults. A profile's set is found
// again by where it lies, not by its contents (hashing and comparing them cost a small call about
// 3k instructions): a profile never changes once read, and an entry holds the profile the set
// belongs to (`owner`; the defaults' sets are never destroyed), so no other set can take that
// address while the entry is remembered.
gpu::SharedParams kernel_for(const gpu::Device& device, Precision precision, const Options& o,
                             const gpu::Params& profile_kernel,
                             const std::shared_ptr<const profile::Profile>& owner,
                             const std::string& profile) {
  if (!o.kernel_params.empty())
    return gpu::resolved(gpu::limits_for(device, o.kernel_params), precision, o.kernel_params);
  const gpu::Limits limits = gpu::limits_for(device, profile_kernel);
  struct Key {
    const gpu::Params* set;
    gpu::Limits limits;
    Precision precision;
    std::shared_ptr<const profile::Profile> owner;
  };
  struct View {
    const gpu::Params* set;
    const gpu::Limits& limits;
    Precision precision;
    const std::shared_ptr<const profile::Profile>& owner;
    uint64_t hash() const {
      return gpu::hash_limits(limits,
                              hash_value(set, hash_value(owner.get(), hash_value(precision, 0))));
    }
    bool matches(const Key& k) const {
      return k.set == set && k.owner == owner && k.precision == precision && k.limits == limits;
    }
    Key own() const { return {set, limits, precision, owner}; }
  };
  static auto& memo = *new Memo<Key, gpu::SharedParams>;  // never destroyed: calls until exit
  return memo.get(View{&profile_kernel, limits, precision, owner}, [&] {
    try {
      return gpu::resolved(limits, precision, profile_kernel);
    } catch (const Error& e) {
      // A PTX path the device's probe refused says what the probe found. Without asynchronous
      // copies the same tiles run from registers (DB), if the device takes them.
      const std::string probe =
          gpu::is_engine(profile_kernel) || gpu::uses_async_copy(profile_kernel)
              ? "; its probe: " + gpu::engine_verdict(device).why
              : "";
      const std::string why = "the profile's kernel does not fit " + gpu::info(device).describe() +
                              " (" + e.what() + probe + "); using ";
      if (gpu::uses_async_copy(profile_kernel)) {
        gpu::Params plain = profile_kernel;
        plain["CA"] = 0;
        plain["DB"] = 1;
        try {
          const gpu::SharedParams tiles =
              gpu::resolved(gpu::limits_of(gpu::info(device)), precision, plain);
          warn_once("profile-kernel:" + profile, why + "its tiles without asynchronous copies");
          return tiles;
        } catch (const Error&) {  // they do not fit either (or name what no kernel has)
        }
      }
      warn_once("profile-kernel:" + profile, why + "the default kernel");
      return gpu::resolved(limits, precision, {});
    }
  });
}

// A precision that needs fp64 (dgemm) leaves out devices without it, while others remain to take
// their rows.
void drop_fp32_only(Precision precision, Candidates& c) {
  auto& [devices, choices, profiles] = c;
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
    warn_once("no-fp64:" + without, routine_name(precision, "gemm").str() + " leaves out " +
                                        without + ": no fp64 support");
}

template <class T>
Candidates candidates(const Problem<T>& p, const Options& o, const Request& req) {
  bool by_default = false;
  Candidates c;
  c.devices = selected_devices(o, by_default);
  c.profiles.resize(c.devices.size());
  for (size_t i = 0; i < c.devices.size(); ++i) {
    std::string origin;
    c.choices.push_back(profile_choice(p, req, c.devices[i], &origin, &c.profiles[i]));
    choose_direct(c.choices.back(), p, o, *c.devices[i], c.profiles[i].get());
  }
  if (by_default && req.strategy == Strategy::Auto) choose_default_set(p, o, req, c);
  return c;
}

#define TANDEM_CANDIDATES(T)                                                                    \
  template Candidates candidates<T>(const Problem<T>&, const Options&, const Request&);         \
  template profile::Choice profile_choice<T>(const Problem<T>&, const Request&,                 \
                                             const std::shared_ptr<gpu::Device>&, std::string*, \
                                             std::shared_ptr<const profile::Profile>*);         \
  template void choose_direct<T>(profile::Choice&, const Problem<T>&, const Options&,           \
                                 const gpu::Device&, const profile::Profile*);
TANDEM_FOR_EACH_ELEMENT(TANDEM_CANDIDATES)
#undef TANDEM_CANDIDATES

}  // namespace tandem::detail
