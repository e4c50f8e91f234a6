// The search strategies on synthetic objectives with known optima (deterministic with seeds):
// budgets, memoisation, pruning, failures and resumption, and how close each comes to the
// exhaustive best on a tenth of its evaluations.
#include "search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <thread>

namespace tandem::tuner {
namespace {

// Five parameters, 3,136 points, 2,752 of them valid (A * B <= 512, like a work-group limit).
Space synthetic_space() {
  Space s;
  s.parameters = {{"A", {1, 2, 4, 8, 16, 32, 64}, 0},
                  {"B", {1, 2, 4, 8, 16, 32, 64}, 0},
                  {"C", {1, 2, 3, 4, 5, 6, 7, 8}, 1},
                  {"D", {0, 1}, 1},
                  {"E", {1, 2, 4, 8}, 1}};
  s.constraints = {{"A*B<=512", [](const std::map<std::string, int>& v) {
                      return v.at("A") * v.at("B") <= 512;
                    }}};
  return s;
}

// A bowl with an interaction between A and B; minimum 1.1 at A=8, B=16, C=6, D=0, E=4... and
// A=8, B=16 trades 0.1 of interaction against the separable terms.
double bowl(const std::map<std::string, int>& v) {
  const double a = std::log2(v.at("A")), b = std::log2(v.at("B")), e = std::log2(v.at("E"));
  return 1.0 + (a - 3) * (a - 3) + 0.5 * (b - 4) * (b - 4) +
         0.3 * (v.at("C") - 6) * (v.at("C") - 6) + 0.7 * v.at("D") + 0.1 * (a - b) * (a - b) +
         0.2 * (e - 2) * (e - 2);
}

struct Counting {
  explicit Counting(const Space& s) : space(s) {}
  const Space& space;
  std::map<Point, int> calls;
  bool invalid_seen = false;
  Objective objective() {
    return [this](const Point& p) {
      ++calls[p];
      if (space.violated(p)) invalid_seen = true;
      return Outcome{bowl(space.values(p)), ""};
    };
  }
};

double exhaustive_best(const Space& s, int* valid = nullptr) {
  Counting counting{s};
  Evaluator ev(s, counting.objective(), Budget{1 << 30, 1e9});
  auto r = search("exhaustive", ev, 1);
  if (valid) *valid = r.evaluations;
  return r.cost;
}

TEST(Search, ExhaustiveVisitsEveryValidPointOnce) {
  const Space s = synthetic_space();
  Counting counting{s};
  Evaluator ev(s, counting.objective(), Budget{1 << 30, 1e9});
  auto r = search("exhaustive", ev, 1);
  EXPECT_EQ(r.evaluations, 2752);
  EXPECT_EQ(counting.calls.size(), 2752u);
  for (const auto& [p, n] : counting.calls) ASSERT_EQ(n, 1);
  EXPECT_FALSE(counting.invalid_seen);
  EXPECT_NEAR(r.cost, 1.1, 1e-12);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(s.describe(*r.best), "A=8 B=16 C=6 D=0 E=4");
}

TEST(Search, EveryStrategyRespectsBudgetMemoAndConstraints) {
  const Space s = synthetic_space();
  for (const auto& name : strategy_names()) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      Counting counting{s};
      Evaluator ev(s, counting.objective(), Budget{200, 1e9});
      auto r = search(name, ev, seed);
      EXPECT_LE(r.evaluations, 200) << name;
      EXPECT_EQ(static_cast<size_t>(r.evaluations), counting.calls.size()) << name;
      for (const auto& [p, n] : counting.calls)
        ASSERT_EQ(n, 1) << name << " measured a point twice";
      EXPECT_FALSE(counting.invalid_seen) << name << " measured a pruned point";
      ASSERT_TRUE(r.best.has_value()) << name;
      EXPECT_FALSE(s.violated(*r.best)) << name;
    }
  }
}

// The target: 95% of the exhaustive best within 10% of its evaluations.
TEST(Search, GuidedStrategiesReachNinetyFivePercentOnATenthOfTheEvaluations) {
  const Space s = synthetic_space();
  int valid = 0;
  const double best = exhaustive_best(s, &valid);
  const int budget = valid / 10;
  for (const std::string name : {"alternating", "phased", "annealing"}) {
    for (uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
      Counting counting{s};
      Evaluator ev(s, counting.objective(), Budget{budget, 1e9});
      auto r = search(name, ev, seed);
      // Cost is time: "95% of the best's speed" means cost <= best / 0.95.
      EXPECT_LE(r.cost, best / 0.95) << name << " seed " << seed << ": " << s.describe(*r.best);
    }
  }
}

TEST(Search, DeterministicForASeed) {
  const Space s = synthetic_space();
  for (const auto& name : strategy_names()) {
    std::vector<Point> order[2];
    for (int run = 0; run < 2; ++run) {
      Evaluator ev(
          s,
          [&, run](const Point& p) {
            order[run].push_back(p);
            return Outcome{bowl(s.values(p)), ""};
          },
          Budget{60, 1e9});
      search(name, ev, 42);
    }
    EXPECT_EQ(order[0], order[1]) << name;
  }
}

TEST(Search, FailedPointsAreExcluded) {
  const Space s = synthetic_space();
  for (const auto& name : strategy_names()) {
    // D = 0 "fails to compile": the best must be found among D = 1.
    Evaluator ev(
        s,
        [&](const Point& p) {
          auto v = s.values(p);
          if (v.at("D") == 0) return Outcome{std::nullopt, "build failed"};
          return Outcome{bowl(v), ""};
        },
        Budget{name == "exhaustive" ? 1 << 30 : 300, 1e9});  // exhaustive's order meets D=1 late
    auto r = search(name, ev, 7);
    ASSERT_TRUE(r.best.has_value()) << name;
    EXPECT_EQ(s.values(*r.best).at("D"), 1) << name;
  }
}

TEST(Search, PreloadedResultsAreNotMeasuredAgain) {
  const Space s = synthetic_space();
  Counting first{s};
  Evaluator ev1(s, first.objective(), Budget{50, 1e9});
  search("random", ev1, 5);
  Counting second{s};
  Evaluator ev2(s, second.objective(), Budget{1 << 30, 1e9});
  for (const auto& [p, n] : first.calls) ev2.preload(p, Outcome{bowl(s.values(p)), ""});
  search("exhaustive", ev2, 5);
  EXPECT_EQ(second.calls.size(), 2752u - first.calls.size());
  // A resumed run continues the interrupted one's budget.
  Counting third{s};
  Evaluator ev3(s, third.objective(), Budget{60, 1e9});
  for (const auto& [p, n] : first.calls) ev3.preload(p, Outcome{bowl(s.values(p)), ""});
  search("random", ev3, 5);
  EXPECT_EQ(third.calls.size(), 10u);
  for (const auto& [p, n] : first.calls) EXPECT_EQ(second.calls.count(p), 0u);
  EXPECT_NEAR(ev2.best_cost(), 1.1, 1e-12);
}

TEST(Search, WallTimeBudgetStopsTheSearch) {
  const Space s = synthetic_space();
  Evaluator ev(
      s,
      [&](const Point& p) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return Outcome{bowl(s.values(p)), ""};
      },
      Budget{1 << 30, 0.1});
  auto r = search("exhaustive", ev, 1);
  EXPECT_GE(r.evaluations, 1);
  EXPECT_LE(r.evaluations, 15);
}

TEST(Search, UnknownStrategyIsAnError) {
  const Space s = synthetic_space();
  Evaluator ev(
      s,
      [](const Point&) {
        return Outcome{1.0, ""};
      },
      Budget{});
  EXPECT_THROW(search("gradient", ev, 1), std::invalid_argument);
}

// A split is kept only when it beats the better single strategy by more than the margin.
TEST(Search, ASplitMustBeatTheBetterSingleStrategyByTheMargin) {
  // cpu 10 s, gpu 1 s: a split at 0.96 s is 4% faster than the GPU alone.
  EXPECT_EQ(keep_split(10, 1, 60, 0.96, 64, 0.0), 60);
  EXPECT_EQ(keep_split(10, 1, 60, 0.96, 64, 0.03), 60);
  EXPECT_EQ(keep_split(10, 1, 60, 0.96, 64, 0.05), 64) << "4% is under a 5% margin";
  EXPECT_EQ(keep_split(10, 1, 60, 1.5, 64, 0.0), 64) << "a slower split";
  EXPECT_EQ(keep_split(1, 10, 4, 0.9, 64, 0.05), 4);
  EXPECT_EQ(keep_split(1, 10, 4, 0.99, 64, 0.05), 0)
      << "the CPU alone, when it is the better single";
  EXPECT_EQ(keep_split(2, 2, 30, 2.5, 64, 0.05), 0) << "a tie between singles keeps the CPU";
  // The ends themselves are single strategies whatever their cost.
  EXPECT_EQ(keep_split(10, 1, 64, 0.5, 64, 0.05), 64);
  EXPECT_EQ(keep_split(1, 10, 0, 0.5, 64, 0.05), 0);
}

TEST(Search, UnimodalMinimisation) {
  for (int target : {0, 1, 17, 37, 63, 64}) {
    int calls = 0;
    std::set<int> seen;
    const int x = minimize_unimodal(
        [&](int v) {
          ++calls;
          EXPECT_TRUE(seen.insert(v).second) << "evaluated twice: " << v;
          return double((v - target) * (v - target));
        },
        0, 64);
    EXPECT_EQ(x, target);
    EXPECT_LE(calls, 16) << target;
  }
  // A hybrid split's time: the slower of the two sides.
  EXPECT_EQ(
      minimize_unimodal([](int v) { return std::max(double(v), double(2 * (64 - v))); }, 0, 64),
      43);
  EXPECT_EQ(minimize_unimodal([](int v) { return double(v); }, 0, 64), 0);
  EXPECT_EQ(minimize_unimodal([](int v) { return double(64 - v); }, 0, 64), 64);
  EXPECT_EQ(minimize_unimodal([](int v) { return double(v); }, 5, 5), 5);
  EXPECT_EQ(minimize_unimodal([](int v) { return double(-v); }, 3, 5), 5);
}

TEST(Search, TinySpacesAndBudgetsLargerThanTheSpace) {
  Space one;
  one.parameters = {{"A", {7}, 0}, {"B", {1, 2}, 0}};
  one.constraints = {
      {"B == 2", [](const std::map<std::string, int>& v) { return v.at("B") == 2; }}};
  Space none = one;
  none.constraints.push_back({"never", [](const std::map<std::string, int>&) { return false; }});
  for (const auto& name : strategy_names()) {
    int calls = 0;
    Evaluator ev(
        one,
        [&](const Point&) {
          ++calls;
          return Outcome{1.0, ""};
        },
        Budget{1000, 5});
    auto r = search(name, ev, 3);
    EXPECT_EQ(calls, 1) << name;
    ASSERT_TRUE(r.best.has_value()) << name;
    Evaluator empty(
        none,
        [&](const Point&) {
          ++calls;
          return Outcome{1.0, ""};
        },
        Budget{1000, 5});
    EXPECT_FALSE(search(name, empty, 3).best.has_value()) << name;
    EXPECT_EQ(calls, 1) << name << " measured a point of an empty space";
    // No parameters at all, or one with no values: nothing to measure, no crash.
    Space nothing;
    Evaluator e0(
        nothing,
        [&](const Point&) {
          ++calls;
          return Outcome{1.0, ""};
        },
        Budget{10, 5});
    EXPECT_FALSE(search(name, e0, 3).best.has_value()) << name;
    Space hollow;
    hollow.parameters = {{"A", {1, 2}, 0}, {"B", {}, 0}};
    Evaluator e1(
        hollow,
        [&](const Point&) {
          ++calls;
          return Outcome{1.0, ""};
        },
        Budget{10, 5});
    EXPECT_FALSE(search(name, e1, 3).best.has_value()) << name;
    EXPECT_EQ(calls, 1) << name;
  }
}

}  // namespace
}  // namespace tandem::tuner
