// The tune's last word on a bucket: what its search found best there (a split of C's rows, or the
// GPU alone) is kept only where interleaved rounds show it faster than each single side, the CPU
// alone and the GPU alone, beyond the run-to-run noise; otherwise the safe choice, the CPU alone.
// A search keeps the fastest median it sees, and on a busy machine that is often luck: issue 39's
// quick tune kept a dgemm 1024 split that then ran at 0.66 of the CPU alone.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tandem::tuner {

// Each side's timed seconds, one per round, the sides interleaved. A side outside the split
// search's range (--split-min above 0 leaves out the CPU alone, --split-max below P the GPU
// alone) has none, and the candidate need not beat it. Where the candidate is the GPU alone,
// `gpu` is empty.
struct Rounds {
  std::vector<double> cpu, gpu, candidate;
};

enum class Verdict {
  Faster,     // kept: faster than each single side in range, beyond the noise
  NotFaster,  // its medians say it is not faster (by the margin, for a split): the CPU alone
  TooNoisy,   // its medians say faster, but the rounds cannot tell it from noise: the CPU alone
};
const char* to_string(Verdict v);  // "faster", "not faster", "too noisy"

struct Confirmed {
  int keep = 0;  // p_g of what is kept: the split, P (the GPU alone) or 0 (the CPU alone)
  Verdict verdict = Verdict::NotFaster;
  std::string note;  // what the rounds showed, in words
};

// Whether `candidate` (called `name` in the note) runs faster than `base` by `margin` of base's
// median time and beyond the noise (tuner::separate at `confidence`): Faster; else TooNoisy where
// the medians say faster but the rounds cannot tell, else NotFaster. keep is 1 for Faster, else 0.
// The coalesced search's verdict on a kernel against the direct kernel, and the batch phase's on
// dealing against the cores alone where confirm_split keeps neither (cotuner.hpp's batch_side).
Confirmed confirm_faster(const std::vector<double>& candidate, const std::vector<double>& base,
                         double margin, double confidence, const std::string& name,
                         const std::string& base_name);

// What to keep of the candidate `split` (0 < split < parts: a split; parts: the GPU alone). A
// split must beat each single side's median by `margin` (the split margin) and the GPU alone the
// CPU alone's, and each must do it beyond the noise as `tandem compare` judges a speedup
// (tuner::separate at `confidence`). A split that fails falls back to the GPU alone where that
// passes against the CPU alone. The verdict is the kept side's: Faster, or for the CPU alone,
// TooNoisy where a comparison's medians said faster but its rounds could not tell, else
// NotFaster. `name` names the candidate in the note ("split g/P" where empty; the batch phase's
// "dealt", with split 1 of 2 parts).
Confirmed confirm_split(const Rounds& rounds, int split, int parts, double margin,
                        double confidence, const std::string& name = "");

// The side one size's batch rounds keep (Confirmed::keep 1: dealt, 2: the devices alone, 0: the
// cores; rounds.candidate are the dealt ones): confirm_split's choice of a split of 1 in 2 parts
// (dealt where it beats both single sides, else the devices alone where they beat the cores),
// and dealt where it beat the cores though not the devices alone, whose rounds could not be told
// from the cores'.
Confirmed batch_side(const Rounds& rounds, double margin, double confidence);

// batch_side on `rounds`, and where its verdict is TooNoisy with the devices alone or dealt
// ahead of the cores by medians, on a further set of rounds from `again`, up to `sets` sets in all
// (again gives nullopt where it could measure none: out of time, or the cores failed). Each set is
// judged on its own, so a false "faster" happens at most `sets` times as often as with one set. The
// last set judged stands: `rounds` becomes it, and its note begins with what each set before it
// showed.
Confirmed batch_side_sets(Rounds& rounds, int sets,
                          const std::function<std::optional<Rounds>()>& again, double margin,
                          double confidence);
// The side a batch of few products keeps (a batch rule point's FewProducts, never dealt): the
// devices alone (keep 1) where their rounds beat the cores' beyond the noise, else the cores.
Confirmed few_side(const Rounds& rounds, double confidence);
// `judge` on `rounds`, and where its verdict is TooNoisy with a device side ahead of the cores by
// medians, on further sets from `again` as batch_side_sets does (which is this with batch_side).
Confirmed judged_in_sets(Rounds& rounds, int sets,
                         const std::function<std::optional<Rounds>()>& again,
                         const std::function<Confirmed(const Rounds&)>& judge);

}  // namespace tandem::tuner
