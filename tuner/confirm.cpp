// tuner::confirm_split: the interleaved rounds' verdict on what a bucket's search found best,
// judged by the rule tandem compare judges its speedups by (tuner::separate).
#include "confirm.hpp"

#include <algorithm>
#include <cstdio>

#include "measure.hpp"

namespace tandem::tuner {
namespace {

// One comparison of the candidate (or the GPU alone) against one single side.
struct Beat {
  Verdict verdict = Verdict::Faster;
  std::string words;  // "" where there was nothing to beat
};

std::string ratio_text(double r) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", r);
  return text;
}

// Whether `x` runs faster than `base` by `margin` of base's median time, beyond the noise.
Beat beats(const std::vector<double>& x, const std::vector<double>& base, double margin,
           double confidence, const std::string& x_name, const std::string& base_name) {
  if (base.empty()) return {};
  if (x.empty()) return {Verdict::NotFaster, x_name + " did not run"};
  const double mx = summarize(x).median, mb = summarize(base).median;
  const std::string speed = x_name + " " + ratio_text(mb / mx) + " " + base_name + "'s speed";
  if (!(mx < mb * (1 - margin)))
    return {Verdict::NotFaster,
            speed + (margin > 0 ? ", not " + ratio_text(1 / (1 - margin)) + " or more" : "")};
  switch (separate(x, base, confidence)) {
    case Separation::Apart:
      return {Verdict::Faster, speed + ", ranges apart"};
    case Separation::TooFew:
      return {Verdict::TooNoisy, speed + " by medians, ranges apart but too few rounds to tell"};
    case Separation::None:
    case Separation::Overlap:
      break;
  }
  return {Verdict::TooNoisy, speed + " by medians, but their ranges overlap"};
}

std::string joined(const std::vector<Beat>& beats) {
  std::string s;
  for (const Beat& b : beats)
    if (!b.words.empty()) s += (s.empty() ? "" : "; ") + b.words;
  return s;
}

bool any(const std::vector<Beat>& beats, Verdict v) {
  return std::any_of(beats.begin(), beats.end(), [v](const Beat& b) { return b.verdict == v; });
}

// Whether the devices alone or dealt ran faster than the cores by medians: the only doubt a
// further set of rounds can settle (where both lost to the cores, a "too noisy" comes from dealt
// against the devices alone, and the cores stay whatever that shows).
bool a_device_side_led(const Rounds& r) {
  if (r.cpu.empty()) return false;
  const double cores = summarize(r.cpu).median;
  const auto led = [cores](const std::vector<double>& x) {
    return !x.empty() && summarize(x).median < cores;
  };
  return led(r.gpu) || led(r.candidate);
}

}  // namespace

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Faster:
      return "faster";
    case Verdict::NotFaster:
      return "not faster";
    case Verdict::TooNoisy:
      return "too noisy";
  }
  return "?";
}

Confirmed confirm_faster(const std::vector<double>& candidate, const std::vector<double>& base,
                         double margin, double confidence, const std::string& name,
                         const std::string& base_name) {
  if (base.empty()) return {0, Verdict::NotFaster, base_name + " did not run"};
  const Beat b = beats(candidate, base, margin, confidence, name, base_name);
  return {b.verdict == Verdict::Faster ? 1 : 0, b.verdict,
          b.words + " (" + std::to_string(candidate.size()) + " rounds)"};
}

Confirmed confirm_split(const Rounds& r, int split, int parts, double margin, double confidence,
                        const std::string& called) {
  const std::string rounds = " (" + std::to_string(r.candidate.size()) + " rounds)";
  std::vector<Beat> seen;
  if (split > 0 && split < parts) {
    const std::string name =
        !called.empty() ? called : "split " + std::to_string(split) + "/" + std::to_string(parts);
    const Beat cpu = beats(r.candidate, r.cpu, margin, confidence, name, "the CPU alone");
    const Beat gpu = beats(r.candidate, r.gpu, margin, confidence, name, "the GPU alone");
    seen = {cpu, gpu};
    if (cpu.verdict == Verdict::Faster && gpu.verdict == Verdict::Faster)
      return {split, Verdict::Faster, joined(seen) + rounds};
  }
  // The GPU alone: the candidate itself, or what a split that failed falls back to.
  const std::vector<double>& gpu_alone = split == parts ? r.candidate : r.gpu;
  if (split == parts || !gpu_alone.empty()) {
    const Beat gpu = beats(gpu_alone, r.cpu, 0, confidence, "the GPU alone", "the CPU alone");
    seen.push_back(gpu);
    if (gpu.verdict == Verdict::Faster)
      return {parts, Verdict::Faster, joined(seen) + rounds + "; the GPU alone kept"};
  }
  const Verdict v = any(seen, Verdict::TooNoisy) ? Verdict::TooNoisy : Verdict::NotFaster;
  return {0, v,
          (v == Verdict::TooNoisy ? "too noisy to decide: " : "") + joined(seen) + rounds +
              "; the CPU alone kept"};
}

Confirmed batch_side(const Rounds& r, double margin, double confidence) {
  // Dealt is a split of 1 in 2 parts to confirm_split, the devices alone its 2 of 2.
  const Confirmed c = confirm_split(r, 1, 2, margin, confidence, "dealt");
  if (c.keep != 0) return c;
  // Dealt beat the cores but not the devices alone, whose own rounds could not be told from the
  // cores': both device sides beat the cores by medians, and dealing did beyond the noise.
  const Confirmed dealt =
      confirm_faster(r.candidate, r.cpu, margin, confidence, "dealt", "the CPU alone");
  if (dealt.verdict != Verdict::Faster) return c;
  return {1, Verdict::Faster, c.note + "; dealt kept: " + dealt.note};
}

Confirmed batch_side_sets(Rounds& rounds, int sets,
                          const std::function<std::optional<Rounds>()>& again, double margin,
                          double confidence) {
  return judged_in_sets(rounds, sets, again,
                        [&](const Rounds& r) { return batch_side(r, margin, confidence); });
}

Confirmed few_side(const Rounds& r, double confidence) {
  const Confirmed c =
      confirm_faster(r.gpu, r.cpu, 0.0, confidence, "the GPU alone", "the CPU alone");
  return {c.keep, c.verdict,
          c.note + (c.keep == 1 ? "; the devices alone kept" : "; the cores kept")};
}

Confirmed judged_in_sets(Rounds& rounds, int sets,
                         const std::function<std::optional<Rounds>()>& again,
                         const std::function<Confirmed(const Rounds&)>& judge) {
  Confirmed c = judge(rounds);
  std::string before;
  int set = 1;
  while (set < sets && c.verdict == Verdict::TooNoisy && a_device_side_led(rounds)) {
    std::optional<Rounds> more = again();
    if (!more) break;
    before += "set " + std::to_string(set) + ": " + c.note + "; ";
    ++set;
    rounds = std::move(*more);
    c = judge(rounds);
  }
  if (!before.empty()) c.note = before + "set " + std::to_string(set) + ": " + c.note;
  return c;
}

}  // namespace tandem::tuner
