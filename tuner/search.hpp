// Search strategies over a space that describes itself as data. Nothing here knows about GEMM:
// a point is a vector of integers (one value index per parameter), the objective a cost to
// minimise, and the space's constraints prune points before anything is measured (GATLAS's
// separation of generator, evaluator and search engine; Jiang and Snir's pruning).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"

namespace tandem::tuner {

// One value index per parameter.
using Point = std::vector<int>;

struct Parameter {
  std::string name;
  std::vector<int> values;
  int group = 0;  // the alternating search optimises one group at a time
};

struct Constraint {
  std::string name;
  std::function<bool(const std::map<std::string, int>&)> holds;  // on parameter values
};

struct Space {
  std::vector<Parameter> parameters;
  std::vector<Constraint> constraints;
  std::optional<Point> start;  // a known-good point (e.g. the device's defaults)

  size_t dimension() const { return parameters.size(); }
  uint64_t cardinality() const;  // all points, valid or not
  std::map<std::string, int> values(const Point& p) const;
  // The first constraint p violates, or nullopt when it is valid.
  std::optional<std::string> violated(const Point& p) const;
  std::string describe(const Point& p) const;  // "NAME=v NAME=v ..."
};

// The objective: a cost to minimise, or a failure with its reason (excluded from the search).
struct Outcome {
  std::optional<double> cost;
  std::string failure;
};
using Objective = std::function<Outcome(const Point&)>;

struct Budget {
  int max_evaluations = 100;
  double max_seconds = 60;
};

// Calls the objective at most once per point (memoised), never on a point the constraints
// reject, and stops once the budget is spent. Observers see every new evaluation.
class Evaluator {
 public:
  using Observer = std::function<void(const Point&, const Outcome&, const Evaluator&)>;

  Evaluator(const Space& space, Objective objective, Budget budget, Observer observer = nullptr);

  // The point's cost; nullopt if it is invalid, failed, or the budget ran out before it.
  std::optional<double> operator()(const Point& p);
  // Records a result measured earlier by an interrupted run: it counts toward the evaluation
  // budget (the run goes on where it stopped), not toward the time budget.
  void preload(const Point& p, const Outcome& o);

  bool exhausted() const;
  bool known(const Point& p) const { return memo_.count(p) != 0; }
  int evaluations() const { return evaluations_; }  // new measurements in this run
  double elapsed_seconds() const;
  const Budget& budget() const { return budget_; }
  const Space& space() const { return space_; }
  std::optional<Point> best() const { return best_; }
  double best_cost() const { return best_cost_; }

 private:
  const Space& space_;
  Objective objective_;
  Budget budget_;
  Observer observer_;
  std::map<Point, Outcome> memo_;
  int evaluations_ = 0;
  int preloaded_ = 0;
  std::optional<Point> best_;
  double best_cost_ = 0;
  detail::clock::Stopwatch started_;
};

struct Result {
  std::string strategy;
  std::optional<Point> best;
  double cost = 0;
  int evaluations = 0;
  double seconds = 0;
};

// "exhaustive", "random", "alternating", "phased", "annealing".
const std::vector<std::string>& strategy_names();

// Runs one strategy until it finishes or the evaluator's budget is spent, after measuring the
// space's start point if it has one. Deterministic for a given seed and objective. Throws
// std::invalid_argument for an unknown name.
Result search(const std::string& strategy, Evaluator& evaluator, uint64_t seed);

// Minimises f over the integers [lo, hi], assuming it is nearly unimodal (the split p_g of a
// hybrid GEMM): both ends first, then a ternary search that keeps the best point seen. f is
// called at most once per integer.
int minimize_unimodal(const std::function<double(int)>& f, int lo, int hi);

// The split to keep, of the CPU alone (0), the GPU alone (`parts`) and `split` (cost
// `split_cost`): the split only when its cost is below the better single strategy's by more than
// `margin` (a fraction), else that single strategy (the CPU on a tie).
int keep_split(double cpu_cost, double gpu_cost, int split, double split_cost, int parts,
               double margin);

}  // namespace tandem::tuner
