// A simulated APU, for testing the co-tuner and auto against a model whose optimum is known: a CPU
// and a device of given rates that each slow to a fraction of their rate while both are busy
// (RaijinCL measured about 0.75 for both sides of an Ivy Bridge APU sharing its power budget and
// memory). It lives with the tests: the library only offers the seam it hangs on
// (seams::Values::call_ends).
#pragma once

#include <cstdint>
#include <cstdio>

#include "base/seams.hpp"

namespace tandem::detail::simulated_apu {

struct Model {
  double cpu_gflops = 0, gpu_gflops = 0, both_busy = 1;
};

// The model's seconds for a call whose device computes gpu_rows and the CPU cpu_rows of C, each
// row being 2 n k flops: both sides slowed while both run, the one left at its full rate after.
double seconds(const Model& model, int64_t gpu_rows, int64_t cpu_rows, int64_t n, int64_t k);

// `values` with every call lasting as long as `model` says: as it ends, a call waits until its
// start plus the model's seconds for what ran where (its real work must be quicker than that).
// The model is the one of the latest such values, and holds while a seams::Override of them does.
seams::Values on(const Model& model, seams::Values values = {});

// How many calls have ended later than the model says (by over a tenth of its time and over a
// millisecond) since on() or the last take_overruns(): their real work outlasted the model's
// time, or a loaded machine woke them late.
// A timing test's verdict stands on the model only where this is 0.
int64_t take_overruns();

// `run()`'s result from a try whose calls all lasted as long as the model says, as far as `tries`
// tries get: a call that outlasted it makes the measurements the machine's, not the model's.
// Before each further try, `again(result)` undoes what the last one left (a tune's log and
// profile). The last try's result stands whatever it measured, so a test on it can still fail.
template <class Run, class Again>
auto on_the_model(Run run, Again again, int tries = 3) {
  take_overruns();
  for (int t = 1;; ++t) {
    auto result = run();
    const int64_t over = take_overruns();
    if (over == 0 || t >= tries) return result;
    std::fprintf(stderr, "%lld calls outlasted the model: trying again\n",
                 static_cast<long long>(over));
    again(result);
  }
}

}  // namespace tandem::detail::simulated_apu
