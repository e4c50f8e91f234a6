// Planning a batch on the devices (strategies gpu, hybrid, and auto's dealt products): which
// devices take part (none where auto finds the cores faster for a batch of few), each with
// the coalesced kernel its profile gives (the direct kernel's batched form, with the parameters
// of the profile's coalesced bucket nearest the batch, else the direct kernel's), every side's
// expected share of the problems (what the dealer starts from: src/plan/dealer.hpp), and the
// host's cores divided between the devices' feeders and the CPU's problems.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "base/problem.hpp"
#include "gpu/batch.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "plan/plan.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

struct BatchPart {
  std::shared_ptr<gpu::Device> device;
  gpu::SharedParams params;  // the coalesced kernel's set
  int64_t problems = 0;      // its expected share
  int feeders = 1;           // host threads that pack and unpack for it
  // Its stages need no host work (gpu::unstaged, judged on the batch's first problem): no
  // feeders, small stages, more of them in flight.
  bool unstaged = false;
  // stages.products, the fewest of the batch's largest products a stage holds (where they exceed
  // batch.stage_bytes): batch.stage_products_unstaged where the stages are unstaged, else
  // batch.stage_products where this device takes the whole batch alone and
  // batch.stage_products_dealt where it shares it (each chunk then needs stages to overlap);
  // stages.in_flight, batch.stages_in_flight's, staged or unstaged.
  gpu::Stages stages;
};

struct BatchPlan {
  Request request;
  std::vector<BatchPart> parts;
  int64_t cpu_problems = 0;  // the CPU's expected share (the rest of the batch)
  int cpu_threads = 1;
  // Why no device can take part, where the strategy wanted one: the CPU takes the batch with one
  // warning, but under strategy gpu, where it is the caller's error.
  std::optional<Error> unavailable;
};

// The plan for `count` problems under `options`, which ask for gpu, hybrid or auto (as hybrid
// but where the batch rule has the devices alone take this many products of their size, or fewer
// than batch.deal_from_count, below);
// `first` is a problem of the batch (with a product) for the profiles' lookup (the api passes a
// product of the dealt ones: a grouped batch's kernel is chosen by it). Shares: under hybrid
// the options' or TANDEM_GPU_FRACTION's fraction of the problems to the devices, else in proportion
// to the sides' rates (equal where a side has none): what the tune measured of batches of about
// this size and count (profile::batch_rates: the coalesced bucket's rate on the device alone, the
// batch rule's point for the cores) where it did, else a single call's at the problem's bucket;
// the devices' part shared by their own rates; under gpu all of them to the devices, and under
// auto for fewer products than batch.deal_from_count all of them to the faster side by those
// rates, the cores' a single call's where the products are fewer than the cores' threads (the
// devices unless both were measured and the cores' is higher: then no part, and the cores run
// the batch on batch_cpu_threads' threads). Auto follows the side the first device's batch rule
// has for this many products of about the products' edge (profile::batch_side_at: the cores,
// for fewer than batch.deal_from_count only, as deal_from keeps a larger batch there; the devices
// alone; or dealt) where it says, else from the products' rule point on, all of them to the
// devices where the point nearest the products' edge chose the devices alone (profile::
// batch_rates' devices_alone). A batch whose products spread over more than a doubling (no edge)
// is dealt.
// Throws Error
// (InvalidArgument) naming an option out of range.
// `edge`: the products' edge for the coalesced kernel's bucket (coalesced_edge); none: every device
// runs its direct kernel. `next`: the problem after `first`, where there is one (whether their C
// lie back to back, for gpu::unstaged).
template <class T>
BatchPlan plan_batch(const Problem<T>& first, int64_t count, const Options& options,
                     std::optional<double> edge, const Problem<T>* next = nullptr);

// The edge cbrt(m n k) a batch's products (each with a product) look up the coalesced kernel's
// bucket by: the geometric middle of the smallest and the largest, where they lie within a
// doubling of each other; none where they spread wider (one tile would be wrong for some of them,
// and the direct kernel, made for small calls, runs them all).
template <class T>
std::optional<double> coalesced_edge(Problems<T> products);

// Whether auto deals these products (each with a product) to the devices. Where their largest
// reaches a batch rule's smallest size: not where the rule (deal_from's) keeps their count on the
// cores (profile::batch_side_at); yes where that rule was measured for tandem_malloc memory of
// a discrete device and their operands lie there (it decides alone). Else where a single call of
// their total work, a cube of edge cbrt(sum of m n k) in the first one's precision and memory,
// would have a device take part (plan.hpp's uses_devices): the profile measured a device paying
// at that much work. A small batch stays on the cores, where a device's first stage would cost
// more than the whole batch does there. Where it plans that single call, it learns the
// precision's route as a single call does, so that a program's later small batches are kept on
// the cores without opening OpenCL (deal_from, which the api asks first, always does).
template <class T>
bool batch_uses_devices(Problems<T> products, const Options& options);

// Under auto, the edge from which these products (each with a product) are dealt to the devices
// (m n k at least its cube; smaller ones stay on the cores), where any is. The edge is the batch
// rule's (profile.hpp's BatchRule) of the profile a single call of the largest product would
// follow, on its first device, for the memory that product's operands lie in (tandem_malloc
// memory on a discrete device, else ordinary); without one, database/defaults.json's
// batch.devices_from; remembered per process for each product shape and profile state where no
// option, variable or seam picks the devices. None, cheapest first: where the largest is below
// the smallest size a batch rule deals from (database/defaults.json's batch.tune_sizes' smallest:
// nothing smaller is measured); where the route keeps a single call of their total work on the
// cores (OpenCL is not opened); where no device opens, the rule found dealing failing (0), or the
// largest lies below the edge (no plan is made); where the rule keeps this many products of the
// largest's size on the cores (profile::batch_side_at); and, but where that rule was measured
// for tandem_malloc memory and the operands lie there, where that single call would not use a
// device (batch_uses_devices).
template <class T>
std::optional<int64_t> deal_from(Problems<T> products, const Options& options);

// The threads the cores run these problems on: the caller's (Options::cpu_threads) where set;
// else one, the calling thread, where they add up to fewer multiply-adds (m n for C = beta C) than
// database/defaults.json's batch.cpu_parallel_from (waking the other threads would cost more
// than the batch); else every core.
template <class T>
int batch_cpu_threads(Problems<T> problems, const Options& options);

// The same for a batch of `work` multiply-adds.
int batch_cpu_threads(double work, const Options& options);

// The cores' batch (cpu_batch) of `count` problems on `threads` threads, the products within
// database/defaults.json's cores_small edge for the precision and thread count on the cores' small
// kernel (profile::cores_small_edge).
template <class T>
void cores_batch(const Problem<T>* problems, int64_t count, int threads);

// Puts the products with m n k at least `edge` cubed first, in place; returns how many they are.
// `one_shape` (Problems::one_shape): all of them or none, nothing moved.
template <class T>
int64_t large_first(Problem<T>* products, int64_t count, int64_t edge, bool one_shape);

}  // namespace tandem::detail
