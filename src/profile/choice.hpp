// What a profile says for one call: the bucket nearest the call's size with its split, kernels and
// CPU threads for the call's kind of memory, and the direct kernel with its threshold.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "profile/defaults.hpp"
#include "profile/profile.hpp"

namespace tandem::detail::profile {

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
Choice choose(const Profile& p, Precision precision, int64_t m, int64_t n, int64_t k,
              bool resident = false);

// The direct kernel and its threshold for this precision: `p`'s (may be null) where it has them,
// each on its own, else the defaults for this kind of device.
Direct direct_for(const Profile* p, Precision precision, bool is_gpu);
// The same from one precision's profile (may be null).
Direct direct_for(const PrecisionProfile* pp, bool is_gpu);

// The coalesced kernel for a batch of `count` products of about edge³: `p`'s (may be null) bucket
// nearest in size on a log scale, and of that size's buckets the nearest in count; null where it
// has none for this precision, where that bucket's search did not beat the direct kernel, or
// where the direct kernel it beat is no longer the profile's (a later tune --direct-only changed
// it): the batch runs the direct kernel, direct_for's.
const std::map<std::string, int>* coalesced_for(const Profile* p, Precision precision, bool is_gpu,
                                                double edge, int64_t count);
// The same from one precision's profile.
const std::map<std::string, int>* coalesced_for(const PrecisionProfile& pp, bool is_gpu,
                                                double edge, int64_t count);

// What the tune measured of batches of `count` products of about edge³ (GFLOPS; 0: not
// measured), the rates a batch's shares are weighed by, each only where measured within a
// doubling of the edge and for the operands' memory (tandem_malloc memory on a discrete device,
// `resident`, or ordinary memory): the device alone from the coalesced bucket coalesced_for picks
// (its own kernel's rate where that applies, else the direct kernel's, and nothing where the
// bucket was timed against another direct kernel than the profile's now); the cores alone from
// the batch rule's point nearest in size. And whether that memory's batch rule has the devices
// alone take such products (BatchSide::Devices): its point nearest in size within a doubling
// says so, or its largest point does and the products are larger still (the devices' lead over
// the cores grows with the products' size: on the H100 host the cores ran at 0.71, 0.43 and 0.29
// of the GPU alone at s 256^3, 512^3 and 1024^3, docs/PERFORMANCE.md, Batches).
// And the side for a batch of that many products, batch_side_at's, by that memory's rule.
struct BatchRates {
  double device = 0, cpu = 0;
  bool devices_alone = false;
  std::optional<BatchSide> side_at_count;
};
BatchRates batch_rates(const Profile* p, Precision precision, bool is_gpu, double edge,
                       int64_t count, bool resident);

// The count between a point's few products (`few`) and its own (`count`) where the tune measures
// dealing a second time (MiddleCount): their geometric middle, and no fewer than auto deals
// (batch.deal_from_count); 0 where that leaves no doubling to either side.
int64_t middle_count(int64_t few, int64_t count);

// The side where a batch rule has `count` products of about edge³ run, from what it measured at the
// counts of its point nearest in size within a doubling that measured few products (FewProducts):
// at a measured count, the side its rounds kept; between two, the fastest by the count lines
// (docs/GLOSSARY.md), the line each side's time draws through them: the cores and the devices
// alone, and dealing between the middle count (MiddleCount) and the point's own, where the
// rounds kept it at either. On an H200 from tandem_malloc memory the lines between ten products
// and the point's own put s 128^3 on the GPU alone from 12 products, and s 32^3 and 64^3 on the
// cores, where the GPU alone ran 32-1,000 products at 0.25-0.8x the cores (docs/PERFORMANCE.md,
// "Batches by their count"). A point without a middle count (measured before it, too few
// products for one, or one where the cores or the devices alone failed) has dealing at its own
// count only: between its two counts the lines weigh the
// cores against the devices alone, and the devices take the products as the point has them
// (dealt, or alone). None from the point's count up (its side, BatchSide, applies), where no
// point that near measured few products, or where a side's rate is missing. Batches of few
// products (auto's, never dealt) go to the cores or the devices alone by this side; larger ones
// go where it says.
std::optional<BatchSide> batch_side_at(const BatchRule& rule, double edge, int64_t count);

}  // namespace tandem::detail::profile
