// tuner/confirm.hpp: what a tune keeps of the split or the GPU alone its search found, judged on
// synthetic rounds (a split whose rounds overlap the CPU alone's is not kept; a clearly faster
// one is; a noisy one is called too noisy and leaves the bucket to the CPU), the rule it shares
// with tandem compare (tuner::separate), and a whole tune on the simulated APU: a clearly faster
// split kept, and the same tune, resumed from a log whose rounds a busy machine made, reporting
// the bucket as too noisy in its progress, its log and its profile, and keeping the CPU alone.
#include "confirm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cotuner.hpp"
#include "measure.hpp"
#include "profile/defaults.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "seam_values.hpp"
#include "simulated_apu.hpp"

namespace tandem::tuner {
namespace {

namespace fs = std::filesystem;
namespace prof = detail::profile;

constexpr int kParts = 64;
constexpr double kMargin = 0.05, kConfidence = 0.95;

// Five rounds of about `at` seconds, spread by `spread` of it.
std::vector<double> around(double at, double spread = 0.02) {
  return {at, at * (1 + spread), at * (1 - spread), at * (1 + spread / 2), at * (1 - spread / 2)};
}

TEST(Confirm, AClearlyFasterSplitIsKept) {
  const Confirmed c =
      confirm_split({around(10), around(20), around(7)}, 20, kParts, kMargin, kConfidence);
  EXPECT_EQ(c.keep, 20);
  EXPECT_EQ(c.verdict, Verdict::Faster);
  EXPECT_NE(c.note.find("split 20/64 1.43x the CPU alone's speed, ranges apart"), std::string::npos)
      << c.note;
}

TEST(Confirm, ASplitWhoseRoundsOverlapTheCpusIsNotKept) {
  // The case: as fast as the CPU alone by medians, its rounds among the CPU's.
  Confirmed c = confirm_split({around(10), around(20), {9.9, 10.3, 10.1, 9.7, 10.0}}, 8, kParts,
                              kMargin, kConfidence);
  EXPECT_EQ(c.keep, 0);
  EXPECT_EQ(c.verdict, Verdict::NotFaster);
  EXPECT_NE(c.note.find("the CPU alone kept"), std::string::npos) << c.note;
  // Faster by medians beyond the margin, but one round reaches into the CPU's range: the noise
  // could have made it. The machine was too noisy to decide, and the CPU alone stays.
  c = confirm_split({around(10), around(20), {8.0, 8.2, 10.0, 7.9, 8.1}}, 8, kParts, kMargin,
                    kConfidence);
  EXPECT_EQ(c.keep, 0);
  EXPECT_EQ(c.verdict, Verdict::TooNoisy);
  EXPECT_EQ(c.note.rfind("too noisy to decide: ", 0), 0u) << c.note;
  EXPECT_NE(c.note.find("ranges overlap"), std::string::npos) << c.note;
}

TEST(Confirm, ASplitMustBeatTheMarginAsWellAsTheNoise) {
  // Ranges apart, but 3% faster: under the 5% split margin.
  const Confirmed c = confirm_split({around(10, 0.002), around(20), around(9.7, 0.002)}, 8, kParts,
                                    kMargin, kConfidence);
  EXPECT_EQ(c.keep, 0);
  EXPECT_EQ(c.verdict, Verdict::NotFaster);
}

TEST(Confirm, ASplitMustBeatTheGpuAloneToo) {
  // Faster than the CPU, slower than the GPU alone, which beats the CPU: the GPU alone is kept.
  Confirmed c = confirm_split({around(10), around(4), around(6)}, 40, kParts, kMargin, kConfidence);
  EXPECT_EQ(c.keep, kParts);
  EXPECT_EQ(c.verdict, Verdict::Faster);
  // The same with the GPU alone's rounds among the CPU's: the CPU alone.
  c = confirm_split({around(10), {4, 4.1, 10.5, 4.2, 3.9}, around(6)}, 40, kParts, kMargin,
                    kConfidence);
  EXPECT_EQ(c.keep, 0);
  EXPECT_EQ(c.verdict, Verdict::TooNoisy);
}

// The batch phase's three sides (tuner/cotuner_batch.cpp): dealt is a split of 1 in 2 parts,
// named in the note; the devices alone are kept where dealing does not beat them.
TEST(Confirm, ABatchIsDealtOnlyWhereDealingBeatsTheDevicesAlone) {
  Confirmed c =
      confirm_split({around(10), around(4), around(5)}, 1, 2, kMargin, kConfidence, "dealt");
  EXPECT_EQ(c.keep, 2) << "dealt 0.8x the devices alone: the devices alone";
  EXPECT_NE(c.note.find("dealt 2.00x the CPU alone's speed"), std::string::npos) << c.note;
  c = confirm_split({around(10), around(4), around(3)}, 1, 2, kMargin, kConfidence, "dealt");
  EXPECT_EQ(c.keep, 1);
  EXPECT_EQ(c.verdict, Verdict::Faster);
  c = confirm_split({around(3), around(4), around(3.5)}, 1, 2, kMargin, kConfidence, "dealt");
  EXPECT_EQ(c.keep, 0) << "neither beats the cores";
}

// Dealt beat the cores but not the devices alone, whose rounds overlap the cores': dealt is kept
// (both device sides beat the cores by medians), where confirm_split alone keeps the cores.
TEST(Confirm, ABatchDealtFasterThanTheCoresIsKeptWhereTheDevicesAloneAreTooNoisy) {
  const Rounds r{around(10), {6, 6.1, 10.5, 6.2, 5.9}, around(6)};
  EXPECT_EQ(confirm_split(r, 1, 2, kMargin, kConfidence, "dealt").keep, 0);
  const Confirmed c = batch_side(r, kMargin, kConfidence);
  EXPECT_EQ(c.keep, 1);
  EXPECT_EQ(c.verdict, Verdict::Faster);
  EXPECT_NE(c.note.find("dealt kept"), std::string::npos) << c.note;
  EXPECT_EQ(batch_side({around(10), around(4), around(5)}, kMargin, kConfidence).keep, 2)
      << "the devices alone, where they beat dealing";
  EXPECT_EQ(batch_side({around(3), around(4), around(3.5)}, kMargin, kConfidence).keep, 0);
}

// A batch of few products (never dealt) keeps the devices alone only where they beat the cores
// beyond the noise, and a set of rounds too noisy to decide with the devices ahead by medians is
// measured again as a batch point's is.
TEST(Confirm, FewProductsKeepTheDevicesOnlyBeyondTheNoise) {
  const Rounds clear{around(10), around(8), {}};
  const Rounds noisy{around(10), {8, 8.2, 10.5, 7.9, 8.1}, {}};
  const Rounds behind{around(10), around(12), {}};
  Confirmed c = few_side(clear, kConfidence);
  EXPECT_EQ(c.keep, 1);
  EXPECT_EQ(c.verdict, Verdict::Faster);
  EXPECT_NE(c.note.find("the devices alone kept"), std::string::npos) << c.note;
  c = few_side(behind, kConfidence);
  EXPECT_EQ(c.keep, 0);
  EXPECT_EQ(c.verdict, Verdict::NotFaster);
  EXPECT_NE(c.note.find("the cores kept"), std::string::npos) << c.note;
  EXPECT_EQ(few_side(noisy, kConfidence).verdict, Verdict::TooNoisy);
  int asked = 0;
  const auto judge = [](const Rounds& r) { return few_side(r, kConfidence); };
  const auto then = [&asked](const Rounds& next) {
    return [&asked, next]() -> std::optional<Rounds> {
      ++asked;
      return next;
    };
  };
  Rounds r = noisy;
  c = judged_in_sets(r, 2, then(clear), judge);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(c.keep, 1) << c.note;
  EXPECT_EQ(c.note.rfind("set 1: ", 0), 0u) << c.note;
  EXPECT_NE(c.note.find("; set 2: the GPU alone 1.25x"), std::string::npos) << c.note;
  asked = 0;
  r = behind;
  EXPECT_EQ(judged_in_sets(r, 2, then(clear), judge).keep, 0);
  EXPECT_EQ(asked, 0) << "the cores ahead by medians: not measured again";
}

// A batch point too noisy to decide is measured again, each set judged on its own; the last set
// judged stands (tuner/cotuner_batch.cpp, confirm.batch_sets_where_too_noisy). The H200's case of
// 2026-11-28: the devices alone 1.23x the cores by medians, one round among the cores'.
TEST(Confirm, ABatchPointTooNoisyToDecideIsMeasuredAgain) {
  const Rounds noisy{around(10), {8, 8.2, 10.5, 7.9, 8.1}, around(12)};
  const Rounds clear{around(10), around(8), around(12)};
  ASSERT_EQ(batch_side(noisy, kMargin, kConfidence).verdict, Verdict::TooNoisy);
  int asked = 0;
  const auto gives = [&asked](std::optional<Rounds> next) {
    return [&asked, next]() -> std::optional<Rounds> {
      ++asked;
      return next;
    };
  };
  // Too noisy, then clear: the devices alone, on the second set's rounds.
  Rounds r = noisy;
  Confirmed c = batch_side_sets(r, 2, gives(clear), kMargin, kConfidence);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(c.keep, 2);
  EXPECT_EQ(c.verdict, Verdict::Faster);
  EXPECT_EQ(r.gpu, clear.gpu) << "the rounds the verdict rests on";
  EXPECT_EQ(c.note.rfind("set 1: too noisy to decide: ", 0), 0u) << c.note;
  const size_t second = c.note.find("; set 2: ");
  ASSERT_NE(second, std::string::npos) << c.note;
  EXPECT_NE(c.note.find("the GPU alone 1.25x the CPU alone's speed, ranges apart", second),
            std::string::npos)
      << c.note;
  // Too noisy twice: no more sets than asked for, the cores kept.
  asked = 0;
  r = noisy;
  c = batch_side_sets(r, 2, gives(noisy), kMargin, kConfidence);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(c.keep, 0);
  EXPECT_EQ(c.verdict, Verdict::TooNoisy);
  asked = 0;
  c = batch_side_sets(r, 3, gives(noisy), kMargin, kConfidence);
  EXPECT_EQ(asked, 2);
  EXPECT_NE(c.note.find("set 3: too noisy"), std::string::npos) << c.note;
  // Nothing more measured (out of time): the first set's verdict, its note as it was.
  asked = 0;
  r = noisy;
  c = batch_side_sets(r, 2, gives(std::nullopt), kMargin, kConfidence);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(c.verdict, Verdict::TooNoisy);
  EXPECT_EQ(c.note, batch_side(noisy, kMargin, kConfidence).note);
  // A clear first set, or one set asked for: never measured again.
  asked = 0;
  r = clear;
  EXPECT_EQ(batch_side_sets(r, 2, gives(noisy), kMargin, kConfidence).keep, 2);
  r = noisy;
  EXPECT_EQ(batch_side_sets(r, 1, gives(clear), kMargin, kConfidence).keep, 0);
  EXPECT_EQ(asked, 0);
  // A clear "not faster" is not measured again either,
  r = {around(10), around(11), around(12)};
  EXPECT_EQ(batch_side_sets(r, 2, gives(clear), kMargin, kConfidence).verdict, Verdict::NotFaster);
  // nor a "too noisy" from dealt against the devices alone where both lost to the cores.
  r = {around(10), around(12.5), {11, 11.1, 12.6, 10.9, 11.05}};
  ASSERT_EQ(batch_side(r, kMargin, kConfidence).verdict, Verdict::TooNoisy);
  EXPECT_EQ(batch_side_sets(r, 2, gives(clear), kMargin, kConfidence).keep, 0);
  EXPECT_EQ(asked, 0);
}

TEST(Confirm, TheGpuAloneAgainstTheCpuAlone) {
  Confirmed c = confirm_split({around(10), {}, around(5)}, kParts, kParts, kMargin, kConfidence);
  EXPECT_EQ(c.keep, kParts);
  EXPECT_EQ(c.verdict, Verdict::Faster);
  // No margin for the GPU alone, but the noise still counts.
  c = confirm_split({around(10), {}, {9, 9.1, 9.2, 10.4, 9.3}}, kParts, kParts, kMargin,
                    kConfidence);
  EXPECT_EQ(c.keep, 0);
  EXPECT_EQ(c.verdict, Verdict::TooNoisy);
  c = confirm_split({around(10), {}, around(12)}, kParts, kParts, kMargin, kConfidence);
  EXPECT_EQ(c.keep, 0);
  EXPECT_EQ(c.verdict, Verdict::NotFaster);
  // A candidate that failed in its rounds is never kept.
  c = confirm_split({around(10), {}, {}}, kParts, kParts, kMargin, kConfidence);
  EXPECT_EQ(c.keep, 0);
}

TEST(Confirm, TooFewRoundsCannotTell) {
  // Two rounds each, ranges apart: one time in 3 by chance, far from the 95% asked.
  const Confirmed c =
      confirm_split({{10, 10.1}, {20, 20.1}, {5, 5.1}}, 8, kParts, kMargin, kConfidence);
  EXPECT_EQ(c.keep, 0);
  EXPECT_EQ(c.verdict, Verdict::TooNoisy);
  EXPECT_NE(c.note.find("too few rounds"), std::string::npos) << c.note;
}

TEST(Confirm, ASideOutsideTheSearchedRangeNeedNotBeBeaten) {
  // --split-min 1: the CPU alone is no choice; the split need only beat the GPU alone.
  const Confirmed c = confirm_split({{}, around(20), around(12)}, 8, kParts, kMargin, kConfidence);
  EXPECT_EQ(c.keep, 8);
  EXPECT_EQ(c.verdict, Verdict::Faster);
}

// The rule compare judges its speedups by, shared.
TEST(Separate, RangesApartWithEnoughSamples) {
  EXPECT_EQ(separate({1, 2, 3}, {4, 5, 6}, 0.9), Separation::Apart);
  EXPECT_EQ(separate({4, 5, 6}, {1, 2, 3}, 0.9), Separation::Apart) << "either way";
  EXPECT_EQ(separate({1, 2, 4}, {4, 5, 6}, 0.9), Separation::Overlap) << "touching ends";
  EXPECT_EQ(separate({1, 2, 3}, {4, 5, 6}, 0.95), Separation::TooFew) << "one in 10 > 1 in 20";
  EXPECT_EQ(separate({}, {4, 5, 6}, 0.9), Separation::None);
  EXPECT_DOUBLE_EQ(chance_apart(3, 3), 0.1);
  EXPECT_DOUBLE_EQ(chance_apart(5, 5), 2.0 / 252);
  EXPECT_EQ(fewest_samples(0.9), 3u);
  EXPECT_EQ(fewest_samples(0.95), 4u);
}

// The rounds' order: each round a permutation, the same on every run, and over rounds each side
// follows each other one (an order that only turned by one kept auto behind hybrid in every
// round of tandem compare).
TEST(RoundOrder, EachSideFollowsEveryOther) {
  constexpr size_t kSides = 4;
  std::map<std::pair<size_t, size_t>, int> follows;  // (before, after)
  size_t last = kSides;
  for (int round = 0; round < 12; ++round) {
    const std::vector<size_t> order = round_order(kSides, round);
    EXPECT_EQ(order, round_order(kSides, round)) << "drawn the same way every time";
    std::vector<size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted, (std::vector<size_t>{0, 1, 2, 3})) << "round " << round;
    for (size_t i : order) {
      if (last < kSides) ++follows[{last, i}];
      last = i;
    }
  }
  for (size_t a = 0; a < kSides; ++a)
    for (size_t b = 0; b < kSides; ++b)
      if (a != b) {
        EXPECT_GT((follows[{a, b}]), 0) << b << " never ran right after " << a;
      }
  EXPECT_EQ(round_order(1, 3), std::vector<size_t>{0});
}

// defaults.json's numbers: the tune's rounds can meet its confidence (else no split could ever be
// kept), and compare's repetitions stay the 3 its table asks for.
TEST(Separate, TheDefaultsRoundsMeetTheirConfidence) {
  const prof::ConfirmRule& rule = prof::confirm_rule();
  EXPECT_LE(fewest_samples(rule.confidence), static_cast<size_t>(rule.rounds));
  EXPECT_EQ(fewest_samples(rule.compare_confidence), 3u);
  // A batch point's sets of rounds, each judged alone (batch_side_sets): their chances of a false
  // "faster" add up, and must stay within the confidence together.
  const auto rounds = static_cast<size_t>(rule.rounds);
  EXPECT_LE(rule.batch_sets_where_too_noisy * chance_apart(rounds, rounds), 1 - rule.confidence);
}

// The simulated APU (tests/support/simulated_apu.hpp) of simulated_apu_test: a split is 1.25x
// faster than either side alone there, and every call lasts as long as its model says. The rates
// are low enough that a call's real work on PoCL takes under an eighth of the model's time at
// 128^3 here: at 256^3 and eight times the rates it took 0.46 of it, and a loaded CI machine
// (ctest -j2) once overran it enough that the GPU alone measured fastest.
detail::seams::Values apu() { return detail::simulated_apu::on({0.1, 0.15, 0.75}); }

std::vector<nlohmann::json> log_lines(const fs::path& log) {
  std::vector<nlohmann::json> out;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(ConfirmTune, AClearFasterSplitIsKeptAndANoisyOneIsReportedAndLeftToTheCpu) {
  const detail::seams::Override apu_on(apu());
  const fs::path log = fs::path(std::getenv("TANDEM_PROFILE_DIR")) / "tune.jsonl";
  TuneOptions o;
  o.precisions = {detail::Precision::s};
  o.sizes = {128};
  o.kernel_size = 128;
  o.budget_evaluations = 1;
  o.top_kernels = 1;
  o.start = {{"MWG", 16}, {"NWG", 16}, {"KWG", 16}, {"MDIMC", 8}, {"NDIMC", 8}};
  o.reps = 3;
  o.direct = false;
  o.batch = false;  // cotuner_test measures the batch rule
  o.model = false;
  o.log = log;
  std::vector<Progress> said;
  o.on_progress = [&said](const Progress& p) { said.push_back(p); };
  prof::forget();
  const TuneReport clean = detail::simulated_apu::on_the_model([&o] { return tune(o); },
                                                               [](const TuneReport& r) {
                                                                 fs::remove(r.log);
                                                                 fs::remove(r.saved);
                                                                 prof::forget();
                                                               });
  const prof::Bucket& b = clean.profile.precisions.at(detail::Precision::s).buckets.at(0);
  EXPECT_GT(b.gpu_parts, 0);
  EXPECT_LT(b.gpu_parts, b.parts);
  EXPECT_EQ(b.confirmation.verdict, "faster") << b.confirmation.note;

  // Its log holds the rounds; a busy machine's would have put one CPU-alone round below the
  // split's and left the GPU alone far behind.
  std::vector<nlohmann::json> lines = log_lines(log);
  int confirms = 0;
  for (auto& j : lines) {
    if (j.at("kind") != "confirm") continue;
    ++confirms;
    EXPECT_EQ(j.at("verdict"), "faster");
    const auto rounds = static_cast<size_t>(prof::confirm_rule().rounds);
    EXPECT_EQ(j.at("rounds").at("cpu").size(), rounds);
    EXPECT_EQ(j.at("rounds").at("gpu").size(), rounds);
    EXPECT_EQ(j.at("rounds").at("candidate").size(), rounds);
    j["rounds"]["cpu"] = {0.040, 0.041, 0.019, 0.043, 0.044};
    j["rounds"]["gpu"] = {0.080, 0.081, 0.082, 0.083, 0.084};
    j["rounds"]["candidate"] = {0.020, 0.021, 0.022, 0.023, 0.024};
  }
  ASSERT_EQ(confirms, 1);
  {
    std::ofstream out(log, std::ios::trunc);
    for (const auto& j : lines) out << j.dump() << "\n";
  }

  // Resumed from that log, the tune judges those rounds: too noisy to decide, the CPU alone.
  said.clear();
  const TuneReport noisy = tune(o);
  const prof::Bucket& n = noisy.profile.precisions.at(detail::Precision::s).buckets.at(0);
  EXPECT_EQ(n.gpu_parts, 0);
  EXPECT_TRUE(n.kernel.empty());
  EXPECT_EQ(n.confirmation.verdict, "too noisy");
  EXPECT_EQ(n.confirmation.note.rfind("too noisy to decide: ", 0), 0u) << n.confirmation.note;
  EXPECT_EQ(prof::load(noisy.saved)
                .precisions.at(detail::Precision::s)
                .buckets.at(0)
                .confirmation.verdict,
            "too noisy")
      << "the saved profile says so";
  int progress_lines = 0;
  for (const Progress& p : said)
    if (p.phase == "confirm" && p.keep_line &&
        p.last.find("too noisy to decide") != std::string::npos)
      ++progress_lines;
  EXPECT_EQ(progress_lines, 1) << "the progress says so, on a line of its own";
  const std::vector<nlohmann::json> after = log_lines(log);
  ASSERT_GT(after.size(), lines.size());
  EXPECT_EQ(after.back().at("kind"), "confirm");
  EXPECT_EQ(after.back().at("verdict"), "too noisy") << "the log says so";

  // Once more: the same rounds, the same verdict, nothing measured or logged again.
  const TuneReport again = tune(o);
  EXPECT_EQ(again.profile.precisions.at(detail::Precision::s).buckets.at(0).confirmation.verdict,
            "too noisy");
  EXPECT_EQ(log_lines(log).size(), after.size());
}

}  // namespace
}  // namespace tandem::tuner
