// The built-in database's global numbers (database/defaults.json): the kernel parameters a device
// starts from before any profile, the direct kernel's defaults, and the thresholds and rules that
// are data, not literals in the code (launch bound, narrow-C rate, level-3 diagonal, host packing,
// tune sizes, the tune's confirmation, auto's watch).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/precision.hpp"

namespace tandem::detail::profile {

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

// The matrix-engine codelet's parameters (kernels/gemm_engine.cl, KERNEL 3) before a profile
// tunes them (database/defaults.json's "engine"); its host-side parameters are kernel_defaults'.
const std::map<std::string, int>& engine_defaults();

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
// (database/defaults.json's "level3"; level3.hpp's Products::min_diagonal), by precision. Throws
// std::logic_error for a precision the file gives no size (only s and d have one yet).
int64_t level3_min_diagonal(Precision precision);

// The smallest copy, in bytes, that the host's packing and unpacking share among threads
// (database/defaults.json's "host_pack", at most 4 GiB - 1; the rule is host_pack.cpp's
// over_rows).
size_t host_pack_parallel_from();

// The most bytes of staging one stage of a batch's pipeline on a device uses (database/
// defaults.json's "batch"; the rule is src/gpu/batch.cpp's): a chunk dealt to a device goes in
// stages of at most this much, batch_stages_in_flight of them in flight.
size_t batch_stage_bytes();
// A stage holds at least this many of its largest products where they exceed batch_stage_bytes
// (within the device's allocation limit): a few large products a launch leave the device idle.
// For a device that takes a batch alone; one that shares it holds at least
// batch_stage_products_dealt (the rule is src/plan/batch.cpp's).
int64_t batch_stage_products();
int64_t batch_stage_products_dealt();
// Where a device's stages need no host work (unstaged: every operand copied straight from and
// into tandem_malloc memory), at least this many, whether it takes the batch alone or shares it.
int64_t batch_stage_products_unstaged();
// An unstaged batch's stages shrink towards a chunk's end: each takes at most 1/tail of what is
// left (0: no such cap), a cap never below tail_bytes (gpu::Stages).
int batch_stage_tail_unstaged();
int64_t batch_stage_tail_bytes_unstaged();
// Stages a device keeps in flight, each on a queue of its own: staged (packed and unpacked on the
// host, each holding pinned staging) or unstaged (device memory only).
int batch_stages_in_flight(bool unstaged);
// The most bytes that floor raises a stage to (a d 4096^3 product alone is 400 MB).
size_t batch_stage_max_bytes();
// Under auto, a batch's products with cbrt(m n k) below this stay on the cores whatever their
// count, where no profile holds a batch rule for the batch's precision and memory
// (database/defaults.json's "batch"; the rule is plan/batch.hpp's deal_from).
int64_t batch_devices_from();
// Under auto, a batch of fewer dealt products than this is not dealt but runs on the faster side
// alone: every side's first chunk would be a single product, dealt before any rate is known
// (database/defaults.json's "batch"; the rule is plan/batch.cpp's).
int64_t batch_deal_from_count();
// A batch on the cores of fewer multiply-adds than this runs on the calling thread
// (database/defaults.json's "batch"; the rule is plan/batch.hpp's batch_cpu_threads).
int64_t batch_cpu_parallel_from();

// The largest m, n and k of a product that the cores' batch runs on the cores' small kernel
// (cpu/small_kernel.hpp) rather than as a CPU BLAS call, for `prec` on `threads` threads: the edge
// of the last pair of database/defaults.json's cores_small.edge for the precision whose thread
// count `threads` reaches; 0 (none) below the first.
int64_t cores_small_edge(Precision prec, int threads);

// What the co-tuner's batch phase measures (database/defaults.json's "batch"; the rule is
// tuner/cotuner_batch.cpp's): strided batches of products of each of `sizes` (ascending), each
// of as many products as the cores alone take `call_seconds` over, within `bytes` of operands.
// The coalesced kernel's own parameters are searched for products of each of `kernel_sizes`
// (ascending) at two counts: that many, and `kernel_few` (tuner/cotuner_coalesced.cpp), trying
// first a ladder of tiles (MWG, NWG, MDIMC, NDIMC each), with `ladder_fixed`'s parameters and
// vectors of `ladder_vector_bytes` (or the widest below), the largest tile first for products
// from `ladder_largest_first_from`³, the smallest first below.
struct BatchTune {
  std::vector<int64_t> sizes;
  double call_seconds = 0.05;
  size_t bytes = size_t{1} << 30;
  std::vector<int64_t> kernel_sizes;
  int64_t kernel_few = 10;
  std::vector<std::array<int, 4>> ladder;
  std::map<std::string, int> ladder_fixed;
  int ladder_vector_bytes = 16;
  int64_t ladder_largest_first_from = 256;
};
const BatchTune& batch_tune();

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
  int batch_sets_where_too_noisy = 2;  // sets of rounds in all at a batch point too noisy to decide
};
const ConfirmRule& confirm_rule();

// How auto watches its plans while a process runs (database/defaults.json's "watch"; the
// rule is watch.hpp's): a class of plans whose last `calls` calls ran, by their median, more than
// `margin` slower than the CPU alone's recorded rate goes to the CPU alone. A cost model's class
// whose plan was predicted to take over `close` times the CPU alone's predicted time has one call
// timed on the CPU alone, and its calls are judged against that instead.
struct WatchRule {
  int calls = 5;
  double margin = 0.1;
  double close = 0.5;
};
const WatchRule& watch_rule();

}  // namespace tandem::detail::profile
