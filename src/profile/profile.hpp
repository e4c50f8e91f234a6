// Device profiles: what the co-tuner measured on one machine (kernel parameters, the hybrid split
// per size bucket, each side's rates), stored as JSON and applied by every later call. profile.cpp
// and the files beside it (profile_json.hpp) are the library's only users of nlohmann-json (the
// tandem command and the benchmarks use it too, for their own output).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/cost_model.hpp"

namespace tandem::detail::gpu {
struct DeviceInfo;
}

namespace tandem::detail::profile {

// What a profile is valid for: the OpenCL device and driver, and the CPU side.
struct Identity {
  std::string platform, device, driver;
  int compute_units = 0;
  std::string cpu_model, blas, blas_version, blas_core;
  int threads = 0;
  // The device's architecture (gpu/architecture.hpp), "" if its driver does not say. Not part of
  // what a local profile must match (the device's name implies it): the built-in database
  // matches on it between a device's own entry and its platform's.
  std::string architecture;
  bool operator==(const Identity& o) const;
  // The first field that differs from `o`, as "driver 'x' vs 'y'", or "" if none.
  std::string difference(const Identity& o) const;
  std::string file_name() const;  // stable and filesystem-safe
  // Whether `name` is the file_name() of an identity with this device (any driver, CPU or BLAS):
  // the only files of the profile directory that the lookup reads for this device.
  bool names_same_device(const std::string& name) const;
};

// This machine's identity with `device` as its OpenCL side.
Identity identity_for(const gpu::DeviceInfo& device);

// What the tune's interleaved rounds said of the split or the GPU alone its search found best
// (tuner::confirm_split): "faster" (kept: faster than each single side beyond the noise), "not
// faster" or "too noisy" (the machine's noise hid a gain; both keep the CPU alone), with why in
// words. Empty where no rounds ran: the search found the CPU alone best, or the profile is from
// before them.
struct Confirmation {
  std::string verdict, note;
};

// A split measured with every operand in tandem_malloc memory, which a discrete GPU copies
// with no packing: the host's cores are free for the CPU share, so its best split differs.
struct ResidentSplit {
  int gpu_parts = 0;
  int cpu_threads = 0;
  bool dynamic = false;  // dynamic balance ran the split faster than static
  std::map<std::string, int> kernel;
  double best_gflops = 0, gpu_gflops = 0;
  Confirmation confirmation;
};

// One tuned size: the best hybrid (kernel, split) measured at m = n = k = size.
struct Bucket {
  int64_t size = 0;
  int parts = 64;        // P
  int gpu_parts = 0;     // p_g: the GPU computes p_g / P of C's rows (0: the CPU alone is best)
  int cpu_threads = 0;   // CPU BLAS threads for the hybrid's CPU share (0: the default)
  bool dynamic = false;  // dynamic balance ran the split faster than static
  std::map<std::string, int> kernel;  // the hybrid's kernel parameters
  // The fastest GPU-only kernel at this size (strategy gpu); empty: the precision's gpu_kernel.
  std::map<std::string, int> gpu_kernel;
  double cpu_gflops = 0, gpu_gflops = 0, best_gflops = 0;
  std::optional<ResidentSplit> resident;  // discrete devices only
  Confirmation confirmation;
  double fraction() const { return parts > 0 ? double(gpu_parts) / parts : 0.0; }
};

struct PrecisionProfile {
  std::map<std::string, int> gpu_kernel;  // the best GPU-only kernel
  int64_t gpu_size = 0;                   // where it was measured
  double gpu_gflops = 0;
  std::vector<Bucket> buckets;  // ascending size
  // The cost model fitted while tuning (cost_model.hpp), for shapes no bucket measured, and the
  // measurements it was fitted to (each with the model's prediction for it).
  std::optional<cost::Model> model;
  std::vector<cost::Observation> observations;
  // The direct kernel (kernels/gemm_direct.cl, KERNEL 2) the co-tuner found, where it measured it
  // (GPU alone) and how fast; empty: the defaults' (direct_defaults). And the size below which a
  // call runs it: cbrt(m n k) < direct_below (0: never); none: the defaults'.
  std::map<std::string, int> direct_kernel;
  int64_t direct_size = 0;
  double direct_gflops = 0;
  std::optional<int64_t> direct_below;
};

struct Tuning {
  std::string strategy, objective, date;
  int budget_evaluations = 0, evaluations = 0;
  double budget_seconds = 0, seconds = 0;
};

struct Profile {
  int format = 1;
  std::string tandem_version;
  Identity identity;
  // How widely a built-in profile applies: "device" (same platform, device and compute units),
  // "architecture" (the devices of its platform nearest its architecture; a "device" entry serves
  // them too), "platform" (any device of the platform: the vendor fallback) or "any" (the global
  // one). Local profiles are always "device" and need the whole identity to match.
  std::string match = "device";
  std::map<char, PrecisionProfile> precisions;  // 's' and 'd'
  Tuning tuning;
  std::string origin;  // where it was read from; not stored
};

std::string to_json(const Profile& p);
// Throws std::runtime_error naming what is wrong.
Profile from_json(const std::string& text);

// $TANDEM_PROFILE_DIR, else $XDG_CACHE_HOME/tandem, else ~/.cache/tandem, else (no HOME)
// $XDG_RUNTIME_DIR/tandem where that is a directory of this user's alone (mode 0700); else ""
// (none): profiles are then kept in memory, for the process that saved them (save_local).
std::filesystem::path directory();
// The local profile file for `id` in directory(); "" where there is no directory.
std::filesystem::path path_for(const Identity& id);
// Writes the whole file or nothing (files::replace: never through a link, only over a regular
// file). Throws std::runtime_error.
void save(const Profile& p, const std::filesystem::path& file);
// Saves `p` as this machine's local profile for its identity: to path_for (returned), or, where
// there is no profile directory, into this process's memory (said once), returning "". Throws
// std::runtime_error.
std::filesystem::path save_local(const Profile& p);
// Reads one file: a regular file of a profile's size (1 MiB at most), never waiting on a FIFO.
// Throws std::runtime_error naming the file and the problem.
Profile load(const std::filesystem::path& file);
// Leaves out each cost model of `p` (with its measurements) whose numbers are outside the
// physical ranges a profile's must lie in (profile_ranges.cpp): a fit gone astray, such as a CPU
// at 1e276 GFLOPS from a quick tune at sizes of 64 on a busy machine, for which every later read
// would refuse the whole profile. Returns why, by precision; the co-tuner's save calls it.
std::map<char, std::string> drop_models_out_of_range(Profile& p);
// Whether a profile written by another tandem can be used by this one.
bool compatible(const Profile& p, std::string* why = nullptr);

// The built-in database (database/*.json, embedded at build time).
const std::vector<Profile>& builtin();

// The entry of `db` for `id` at `level` ("device": the device's own, tuned on the likest host,
// CPU and thread count, to this one; "platform": its vendor's; "any"); nullptr if none.
const Profile* builtin_entry(const std::string& level, const Identity& id,
                             const std::vector<Profile>& db);

// The entry of `db` whose architecture is nearest `id`'s, among its platform's "device" and
// "architecture" entries of the same family; nullptr if none (or `id` has no architecture).
// *how says which architecture it is and how near.
const Profile* nearest_architecture(const Identity& id, const std::vector<Profile>& db,
                                    std::string* how);

// The kernel parameters a device of this kind starts from before any profile (the database's
// database/defaults.json). Its names are every kernel parameter there is.
const std::map<std::string, int>& kernel_defaults(bool is_gpu);

// An empty parameter set that is never destroyed: what a Choice or Direct points at without one.
const std::map<std::string, int>& no_kernel();

// The direct kernel a device of this kind starts from and the size below which calls run it,
// until a profile tunes them (database/defaults.json's "direct"). `kernel` points into the
// defaults (never destroyed) or the profile it came from, and lives as long as that profile.
struct Direct {
  const std::map<std::string, int>* kernel = &no_kernel();
  int64_t below = 0;  // calls with cbrt(m n k) below this run the direct kernel; 0: none
  bool applies(int64_t m, int64_t n, int64_t k) const;
};
const Direct& direct_defaults(bool is_gpu);

// How long one kernel launch may be planned to run, and the rate assumed for a device without a
// profile (database/defaults.json's "launch").
struct LaunchBound {
  double max_seconds = 0.5, assumed_gflops = 100;
};
const LaunchBound& launch_bound();

// How the CPU BLAS's rate falls on a call whose C is narrow (database/defaults.json's
// "cpu_shape"; the rule is feed_cost.hpp's cpu_gflops_for).
struct CpuShape {
  double half_dimension = 0;
};
const CpuShape& cpu_shape();

// The smallest diagonal block a level-3 routine's halving leaves to the CPU BLAS under auto
// (database/defaults.json's "level3"; level3.hpp's Products::min_diagonal).
int64_t level3_min_diagonal(bool fp64);

// The smallest copy, in bytes, that the host's packing and unpacking share among threads
// (database/defaults.json's "host_pack", at most 4 GiB - 1; the rule is host_pack.cpp's
// over_rows).
size_t host_pack_parallel_from();

// The size buckets `tandem tune` measures when it is given none (database/defaults.json's
// "tune"; the rule is tuner::bucket_sizes).
struct TuneSizes {
  double call_seconds = 0.02;
  int buckets = 3;
  int64_t min_size = 256, max_size = 16384;
};
const TuneSizes& tune_sizes();

// How a tune confirms what its search found for a bucket (database/defaults.json's
// "confirm"; the rule is tuner::confirm_split): `rounds` interleaved rounds, each running the CPU
// alone, the GPU alone and the candidate, each after a pause of `settle_seconds`, `warmup` times
// untimed then once timed, judged as `tandem compare` judges a speedup (tuner::separate) at
// `confidence`. `compare_confidence` is compare's own.
struct ConfirmRule {
  int rounds = 5, warmup = 1;
  double settle_seconds = 0.2, confidence = 0.95, compare_confidence = 0.9;
};
const ConfirmRule& confirm_rule();

// How auto watches its plans while a process runs (database/defaults.json's "watch"; the
// rule is watch.hpp's): a class of plans whose last `calls` calls ran, by their median, more than
// `margin` slower than the CPU alone's recorded rate goes to the CPU alone.
struct WatchRule {
  int calls = 5;
  double margin = 0.1;
};
const WatchRule& watch_rule();

// Every local profile file whose identity is `id` (what `tandem profile reset` removes), among
// the files named for its device (Identity::names_same_device).
std::vector<std::filesystem::path> local_files(const Identity& id);

// The profile that applies to `id`: a local file for exactly this identity (its own file name
// first, then the other files named for its device; no other file is read), else the built-in
// database's closest entry (device, then platform, then any), else none. A local profile for
// the same device that differs in driver, CPU, BLAS or version, or one that cannot be read, is
// reported once on stderr and not applied. Cached (here, and nowhere else) until forget().
std::shared_ptr<const Profile> active(const Identity& id);
// The same for this machine with `device` as its OpenCL side: what a call's plan asks.
std::shared_ptr<const Profile> active_for(const gpu::DeviceInfo& device);
void forget();
// How many times forget() has run: what depends on the profiles in use (route.hpp) is taken
// again when it changes.
uint64_t changes();

// What a profile says for one call. The kernels point into the profile (or at an empty set, or
// the defaults), never copied: a small call's plan copied parameter maps several times over
// (issue 17). They live as long as the profile.
struct Choice {
  double fraction = 0;                                      // GPU share of C's rows
  const std::map<std::string, int>* kernel = &no_kernel();  // kernel parameters (may be empty)
  int cpu_threads = 0;                                      // 0: the default
  int64_t bucket = 0;                                       // the tuned size used (0: none)
  bool resident = false;                                    // the bucket's resident split was used
  // The best GPU-only kernel (for strategy gpu).
  const std::map<std::string, int>* gpu_kernel = &no_kernel();
  // The rates measured at the bucket (0: none): how a set of devices shares rows without a
  // profile of its own.
  double gpu_gflops = 0, cpu_gflops = 0;
  bool dynamic = false;  // the bucket's split ran fastest with dynamic balance
};

// The bucket nearest to cbrt(m n k) on a log scale; below half the smallest tuned size the CPU
// alone (the GPU was not measured there), with the smallest bucket's kernels for a call sent to
// the GPU anyway. The GPU-only kernel when the bucket has none; for strategy gpu the bucket's own
// GPU-only kernel when it has one.
// `resident`: every operand is in tandem_malloc memory on a discrete device; the bucket's
// resident split applies where it has one (and its kernel for strategy gpu too, where that
// split is the GPU alone).
Choice choose(const Profile& p, bool fp64, int64_t m, int64_t n, int64_t k, bool resident = false);

// The direct kernel and its threshold for this precision: `p`'s (may be null) where it has them,
// each on its own, else the defaults for this kind of device.
Direct direct_for(const Profile* p, bool fp64, bool is_gpu);

// One line of a tuning log (JSON lines, appended as measurements come, so an interrupted run
// resumes where it stopped).
struct LogRecord {
  // "kernel" (a phase-1 GPU-only candidate), "small" (a small bucket's), "direct" (the direct
  // kernel's), "split" (one hybrid configuration), "confirm" (a bucket's interleaved rounds,
  // of the candidate its other fields name) or "threshold" (the direct kernel's threshold)
  std::string kind;
  char precision = 's';
  int64_t size = 0;
  std::vector<int> point;                         // the candidate in its search space
  std::map<std::string, int> kernel;              // its kernel parameters
  int gpu_parts = 0, parts = 0, cpu_threads = 0;  // "split" records
  bool resident = false;                          // measured on tandem_malloc memory
  bool dynamic = false;                           // under dynamic balance
  std::optional<double> seconds;                  // median wall time; none if it failed
  double cost = 0;  // what the search minimised (seconds, joules or J*s)
  double min = 0, max = 0, spread = 0, kernel_seconds = 0;
  bool bimodal = false;
  std::string failure;
  // "confirm" records: each side's timed seconds in round order ("cpu", "gpu", "candidate"), and
  // the verdict and its words as the tune found them.
  std::map<std::string, std::vector<double>> rounds;
  std::string verdict, note;
};
std::string to_log_line(const LogRecord& r);                      // one line, no newline
std::optional<LogRecord> from_log_line(const std::string& line);  // nullopt if malformed

}  // namespace tandem::detail::profile
