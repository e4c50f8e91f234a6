// Device profiles: what the co-tuner measured on one machine (kernel parameters, the hybrid split
// per size bucket, each side's rates, the cost model), the identity they are valid for, and their
// text form (JSON). The files beside this one keep them on disk (store.hpp), ship them
// (database.hpp), read what a profile says for one call (choice.hpp), and hold the database's
// global numbers (defaults.hpp) and the tuning log (tune_log.hpp). The files of this folder are
// the library's only users of nlohmann-json (json.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/precision.hpp"
#include "model/cost_model.hpp"

namespace tandem::detail::profile {

// What a profile is valid for: the OpenCL device and driver, and the CPU side.
struct Identity {
  std::string platform, device, driver;
  int compute_units = 0;
  std::string cpu_model, blas, blas_version, blas_core;
  int threads = 0;
  // The device's architecture (profile/architecture.hpp), "" if its driver does not say. Not part
  // of what a local profile must match (the device's name implies it): the built-in database
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

// What auto does with a batch's products of one size: keeps them on the cores, runs them on the
// devices alone, or deals them to both.
enum class BatchSide { Cores, Devices, Dealt };
const char* to_string(BatchSide side);  // "cores", "devices", "dealt"

// A batch of few products (batch.kernel_few of them: fewer than batch.deal_from_count, so auto
// never deals it) at a batch point's size, the cores alone against the devices alone in the
// confirm rule's interleaved rounds. There fixed costs weigh that the point's own count hides: a
// device's first stage, which nothing overlaps, and the cores' threads with a product or less
// each (on an H200, ten d 256^3 products from ordinary memory ran 0.87x as fast on the GPU alone
// as on the cores, where the point's 494 ran 1.31x as fast there). Auto gives a batch of as many
// such products or fewer to the side kept here.
struct FewProducts {
  int64_t count = 0;
  double cpu_gflops = 0, gpu_gflops = 0;  // the rounds' medians (0: that side failed)
  bool devices = false;                   // the devices alone kept, else the cores
  std::string verdict, note;              // the devices alone's against the cores alone
};

// A batch at a count between a point's few products' and its own (profile::middle_count: their
// geometric middle, and no fewer than auto deals), the cores alone, the devices alone and the
// products dealt in the point's kind of rounds, judged as the point's are; measured where the
// point measured few products. Dealing's fixed costs weigh there as the point's count hides them:
// on an H200 from tandem_malloc memory s 128^3 x 5,461 ran dealt 1.24x the GPU alone, where 32-100
// such products ran dealt at 0.68-0.72x it, and s 64^3 x 21,845 ran dealt 1.43x the cores, where
// 32-1,000 ran at 0.21-0.83x them (docs/PERFORMANCE.md, "Batches by their count"). The side for a
// count between it and the point is then the fastest of the lines each side's time draws through
// the two (profile::batch_side_at).
struct MiddleCount {
  int64_t count = 0;
  double cpu_gflops = 0, gpu_gflops = 0, hybrid_gflops = 0;  // the rounds' medians (0: failed)
  BatchSide side = BatchSide::Cores;                         // the side the rounds kept
  std::string verdict, note;
};

// One size the co-tuner's batch phase measured: a strided batch of `count` products of size³,
// the cores alone, the devices alone (strategy gpu) and the products dealt to the devices and the
// CPU (strategy hybrid), in interleaved rounds; the side auto takes at this size, and the rounds'
// verdict on it against the cores alone (a Confirmation's verdict: in profiles older than the
// sides, dealing's against the cores alone).
struct BatchPoint {
  int64_t size = 0, count = 0;
  double cpu_gflops = 0, hybrid_gflops = 0;  // the rounds' medians
  std::string verdict;                       // "faster", "not faster" or "too noisy"
  std::string note;                          // what the rounds showed, in words
  double gpu_gflops = 0;                     // the devices alone (0: not measured)
  // Absent in profiles older than it, which measured no devices-alone side: then dealt where
  // `verdict` is "faster", else the cores (side()).
  std::optional<BatchSide> chosen;
  // Absent where not measured: a point where the cores kept the batch (products below the rule's
  // edge stay there whatever their count), and profiles older than it.
  std::optional<FewProducts> few;
  // Absent where no few products were measured, where the point's count leaves no count between
  // (profile::middle_count), and in profiles older than it.
  std::optional<MiddleCount> middle;
  BatchSide side() const {
    return chosen ? *chosen : verdict == "faster" ? BatchSide::Dealt : BatchSide::Cores;
  }
};

// Where auto sends a batch's products to the devices for operands in one kind of memory, as
// measured (tuner/cotuner_batch.cpp derives it): products with m n k >= devices_from³ go to the
// devices, dealt or to the devices alone as the point nearest in size says (choice.hpp's
// batch_rates), or below a point's count where the counts it measured say (batch_side_at: the
// cores too), smaller ones stay on the cores; 0: the devices failed where measured, every
// product stays on the cores. The points it rests on, ascending by size.
struct BatchRule {
  int64_t devices_from = 0;
  std::vector<BatchPoint> points;
};

// The coalesced kernel's own parameters (kernels/gemm_direct.cl's batched form) for batches of
// `count` products of size³, the device alone, as the co-tuner's batch phase searched them
// (tuner/cotuner_coalesced.cpp): the search's best where the confirm rule's rounds found it faster
// than the direct kernel at that batch (`verdict` "faster"), else the direct kernel itself; the
// rounds' medians of both, and the direct kernel they were timed against (the profile's
// direct_kernel of that run, or the defaults' where it had none): a "faster" bucket applies only
// while the profile's direct kernel is still that one.
struct CoalescedBucket {
  int64_t size = 0, count = 0;
  std::map<std::string, int> kernel;
  double gflops = 0, direct_gflops = 0;
  std::string verdict;  // of the search's best against the direct kernel
  std::string note;     // what the rounds showed, in words
  // Empty in profiles older than this field: such a bucket's kernel never applies.
  std::map<std::string, int> direct_kernel;
  // The memory the batch's operands were in: tandem_malloc memory on a discrete device (true) or
  // ordinary memory; its rates say nothing of the other (none in profiles older than it).
  std::optional<bool> resident;
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
  // Auto's batch rule for operands in ordinary memory, and for operands in tandem_malloc memory
  // on a discrete device; none: database/defaults.json's batch.devices_from.
  std::optional<BatchRule> batch, batch_resident;
  // The coalesced kernel's buckets, ascending by size, then count; none: a batch runs the direct
  // kernel.
  std::vector<CoalescedBucket> coalesced;
  // A section that a tune of one phase (tandem tune --batch-only, --direct-only or --model-only)
  // started from a built-in entry: that entry's origin ("built-in:nvidia-h100", also where the
  // device's own entry borrows the precision from that relative), and the parts of the section
  // measured here since (replaced_parts' names: "batch", "coalesced 512", "direct_below",
  // "model", ...). Every other part is the entry's, measured on the machine it was tuned on.
  // Empty for a section that a whole tune measured here, and for a built-in entry's own (the
  // database reads none).
  std::string based_on;
  std::vector<std::string> measured;
  // Not stored: the built-in entry this section was read from ("built-in:nvidia-h100"), set as
  // the database is read; "" for a local profile's section.
  std::string source;
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
  // By precision, each written under its letter; s and d are tuned today, and a section for c or
  // z reads as theirs do.
  std::map<Precision, PrecisionProfile> precisions;
  Tuning tuning;
  std::string origin;  // where it was read from; not stored
};

std::string to_json(const Profile& p);
// The stored parts of a precision's section that differ between `before` and `after`, named by
// their keys in the profile's JSON ("batch", "direct_kernel", "model", ...), the coalesced
// kernel's buckets by their size ("coalesced 512"); based_on and measured themselves aside.
std::vector<std::string> replaced_parts(const PrecisionProfile& before,
                                        const PrecisionProfile& after);
// The section a tune of one phase starts from: one read from a built-in entry (source) is based
// on that entry, with nothing measured here yet; a local one as it is.
PrecisionProfile based_on_its_entry(PrecisionProfile pp);
// Where `after` is based on an entry, adds the parts replaced since `before` to what it says was
// measured here: a phase that measured nothing (out of time, a fit refused) leaves the entry's
// parts the entry's.
void add_measured(const PrecisionProfile& before, PrecisionProfile& after);
// Throws std::runtime_error naming what is wrong.
Profile from_json(const std::string& text);

// Leaves out each cost model of `p` (with its measurements) whose numbers are outside the
// physical ranges a profile's must lie in (ranges.cpp): a fit gone astray, such as a CPU
// at 1e276 GFLOPS from a quick tune at sizes of 64 on a busy machine, for which every later read
// would refuse the whole profile. Returns why, by precision; the co-tuner's save calls it.
std::map<Precision, std::string> drop_models_out_of_range(Profile& p);
// Whether a profile written by another tandem can be used by this one.
bool compatible(const Profile& p, std::string* why = nullptr);

}  // namespace tandem::detail::profile
