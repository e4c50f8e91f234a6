// The search strategies: exhaustive, random sampling, GATLAS's alternating search, Jiang and
// Snir's phased search, and simulated annealing, all over tuner::Space through a memoising,
// budgeted Evaluator.
#include "search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>

namespace tandem::tuner {

// ---- Space --------------------------------------------------------------------------------------

uint64_t Space::cardinality() const {
  uint64_t n = 1;
  for (const auto& p : parameters) n *= std::max<uint64_t>(1, p.values.size());
  return n;
}

std::map<std::string, int> Space::values(const Point& p) const {
  std::map<std::string, int> v;
  for (size_t i = 0; i < parameters.size(); ++i)
    v[parameters[i].name] = parameters[i].values[static_cast<size_t>(p[i])];
  return v;
}

std::optional<std::string> Space::violated(const Point& p) const {
  if (p.size() != parameters.size()) return std::string("dimension");
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] < 0 || static_cast<size_t>(p[i]) >= parameters[i].values.size())
      return "range of " + parameters[i].name;
  const auto v = values(p);
  for (const auto& c : constraints)
    if (!c.holds(v)) return c.name;
  return std::nullopt;
}

std::string Space::describe(const Point& p) const {
  std::string s;
  for (size_t i = 0; i < parameters.size(); ++i)
    s += (i ? " " : "") + parameters[i].name + "=" +
         std::to_string(parameters[i].values[static_cast<size_t>(p[i])]);
  return s;
}

// ---- Evaluator ----------------------------------------------------------------------------------

Evaluator::Evaluator(const Space& space, Objective objective, Budget budget, Observer observer)
    : space_(space),
      objective_(std::move(objective)),
      budget_(budget),
      observer_(std::move(observer)) {}

double Evaluator::elapsed_seconds() const { return started_.seconds(); }

bool Evaluator::exhausted() const {
  return evaluations_ + preloaded_ >= budget_.max_evaluations ||
         elapsed_seconds() >= budget_.max_seconds;
}

void Evaluator::preload(const Point& p, const Outcome& o) {
  if (memo_.count(p) == 0) ++preloaded_;
  memo_[p] = o;
  if (o.cost && (!best_ || *o.cost < best_cost_)) {
    best_ = p;
    best_cost_ = *o.cost;
  }
}

std::optional<double> Evaluator::operator()(const Point& p) {
  auto it = memo_.find(p);
  if (it != memo_.end()) return it->second.cost;
  if (space_.violated(p)) return std::nullopt;  // pruned: never measured, never counted
  if (exhausted()) return std::nullopt;
  Outcome o = objective_(p);
  ++evaluations_;
  memo_[p] = o;
  if (o.cost && (!best_ || *o.cost < best_cost_)) {
    best_ = p;
    best_cost_ = *o.cost;
  }
  if (observer_) observer_(p, o, *this);
  return o.cost;
}

// ---- helpers ------------------------------------------------------------------------------------

namespace {

// Advances p like an odometer over the given per-parameter index lists; false after the last.
bool next(Point& p, const std::vector<std::vector<int>>& choices, std::vector<size_t>& at) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (++at[i] < choices[i].size()) {
      p[i] = choices[i][at[i]];
      return true;
    }
    at[i] = 0;
    p[i] = choices[i][0];
  }
  return false;
}

// Every valid point of the subspace where parameter i takes the indices choices[i].
std::vector<Point> enumerate(const Space& s, const std::vector<std::vector<int>>& choices) {
  std::vector<Point> out;
  for (const auto& c : choices)
    if (c.empty()) return out;
  Point p(s.dimension());
  std::vector<size_t> at(s.dimension(), 0);
  for (size_t i = 0; i < p.size(); ++i) p[i] = choices[i][0];
  do {
    if (!s.violated(p)) out.push_back(p);
  } while (next(p, choices, at));
  return out;
}

std::vector<std::vector<int>> all_indices(const Space& s) {
  std::vector<std::vector<int>> c(s.dimension());
  for (size_t i = 0; i < c.size(); ++i)
    for (int j = 0; j < static_cast<int>(s.parameters[i].values.size()); ++j) c[i].push_back(j);
  return c;
}

// A uniformly random valid point (rejection sampling), or nullopt if none was found.
std::optional<Point> random_valid(const Space& s, std::mt19937_64& rng, int tries = 100000) {
  Point p(s.dimension());
  for (int t = 0; t < tries; ++t) {
    for (size_t i = 0; i < p.size(); ++i)
      p[i] = std::uniform_int_distribution<int>(
          0, static_cast<int>(s.parameters[i].values.size()) - 1)(rng);
    if (!s.violated(p)) return p;
  }
  return std::nullopt;
}

std::optional<Point> start_point(const Space& s, std::mt19937_64& rng) {
  if (s.start && !s.violated(*s.start)) return s.start;
  return random_valid(s, rng);
}

// Small spaces are enumerated; large ones sampled.
constexpr uint64_t kEnumerable = 2'000'000;

void exhaustive(Evaluator& ev) {
  const Space& s = ev.space();
  Point p(s.dimension(), 0);
  const auto choices = all_indices(s);
  std::vector<size_t> at(s.dimension(), 0);
  do {
    if (ev.exhausted()) return;
    if (!s.violated(p)) ev(p);
  } while (next(p, choices, at));
}

void random_sample(Evaluator& ev, std::mt19937_64& rng) {
  const Space& s = ev.space();
  if (s.cardinality() <= kEnumerable) {
    auto points = enumerate(s, all_indices(s));
    std::shuffle(points.begin(), points.end(), rng);
    for (const auto& p : points) {
      if (ev.exhausted()) return;
      ev(p);
    }
    return;
  }
  for (int misses = 0; !ev.exhausted() && misses < 1000;) {
    auto p = random_valid(s, rng);
    if (!p) return;
    if (ev.known(*p)) {
      ++misses;
      continue;
    }
    ev(*p);
  }
}

// Evaluates the candidates and returns the best (with its cost), keeping `current` on ties.
std::pair<Point, double> best_of(Evaluator& ev, const std::vector<Point>& candidates, Point current,
                                 double current_cost) {
  for (const auto& c : candidates) {
    if (ev.exhausted()) break;
    auto cost = ev(c);
    if (cost && *cost < current_cost) {
      current = c;
      current_cost = *cost;
    }
  }
  return {current, current_cost};
}

// GATLAS: hold one group of parameters fixed while searching the other exhaustively, then swap,
// until a whole round improves nothing (an EM-like alternation).
void alternating(Evaluator& ev, std::mt19937_64& rng) {
  const Space& s = ev.space();
  std::set<int> groups;
  for (const auto& p : s.parameters) groups.insert(p.group);
  // A space with a single group alternates between its two halves.
  std::vector<int> group_of(s.dimension());
  for (size_t i = 0; i < s.dimension(); ++i)
    group_of[i] = groups.size() > 1 ? s.parameters[i].group : (i < s.dimension() / 2 ? 0 : 1);
  std::set<int> ids(group_of.begin(), group_of.end());
  const auto all = all_indices(s);

  auto current = start_point(s, rng);
  for (int restart = 0; !ev.exhausted(); ++restart) {
    if (!current) return;
    double cost = ev(*current).value_or(std::numeric_limits<double>::infinity());
    bool improved = true;
    while (improved && !ev.exhausted()) {
      improved = false;
      for (int g : ids) {
        std::vector<std::vector<int>> choices(s.dimension());
        for (size_t i = 0; i < s.dimension(); ++i)
          choices[i] = group_of[i] == g ? all[i] : std::vector<int>{(*current)[i]};
        auto [best, best_cost] = best_of(ev, enumerate(s, choices), *current, cost);
        if (best_cost < cost) {
          improved = true;
          current = best;
          cost = best_cost;
        }
      }
    }
    // Converged: spend what is left of the budget from a fresh random start.
    current = random_valid(s, rng);
    if (restart > 1000) return;
  }
}

// Neighbours of p: each parameter one index up or down.
std::vector<Point> neighbours(const Space& s, const Point& p) {
  std::vector<Point> out;
  for (size_t i = 0; i < p.size(); ++i)
    for (int d : {-1, 1}) {
      Point q = p;
      q[i] += d;
      if (q[i] >= 0 && q[i] < static_cast<int>(s.parameters[i].values.size()) && !s.violated(q))
        out.push_back(q);
    }
  return out;
}

// Jiang and Snir: search a coarse subspace first (powers of two, or every other value of a
// parameter whose values already are), then refine around the best by hill climbing.
void phased(Evaluator& ev, std::mt19937_64& rng) {
  const Space& s = ev.space();
  std::vector<std::vector<int>> coarse(s.dimension());
  for (size_t i = 0; i < s.dimension(); ++i) {
    const auto& v = s.parameters[i].values;
    const bool all_pow2 =
        std::all_of(v.begin(), v.end(), [](int x) { return x > 0 && (x & (x - 1)) == 0; });
    for (int j = 0; j < static_cast<int>(v.size()); ++j) {
      const bool pow2 = v[static_cast<size_t>(j)] > 0 &&
                        (v[static_cast<size_t>(j)] & (v[static_cast<size_t>(j)] - 1)) == 0;
      if (all_pow2 ? (j % 2 == 0 || j + 1 == static_cast<int>(v.size())) : pow2 || v.size() <= 2)
        coarse[i].push_back(j);
    }
    if (coarse[i].empty()) coarse[i].push_back(0);
  }
  auto points = enumerate(s, coarse);
  std::shuffle(points.begin(), points.end(), rng);
  // Phase 1 takes at most half the evaluations, so refinement always gets its turn.
  const int phase1 = std::max(1, ev.budget().max_evaluations / 2);
  Point best;
  double best_cost = std::numeric_limits<double>::infinity();
  int used = 0;
  for (const auto& p : points) {
    if (ev.exhausted() || used >= phase1) break;
    const bool fresh = !ev.known(p);
    auto c = ev(p);
    used += fresh ? 1 : 0;
    if (c && *c < best_cost) {
      best = p;
      best_cost = *c;
    }
  }
  if (best.empty()) {
    auto start = start_point(s, rng);
    if (!start) return;
    best = *start;
    best_cost = ev(best).value_or(std::numeric_limits<double>::infinity());
  }
  // Phase 2: steepest descent over single-parameter neighbours.
  for (bool improved = true; improved && !ev.exhausted();) {
    improved = false;
    auto [p, c] = best_of(ev, neighbours(s, best), best, best_cost);
    if (c < best_cost) {
      best = p;
      best_cost = c;
      improved = true;
    }
  }
  random_sample(ev, rng);  // anything left of the budget
}

// Simulated annealing on log(cost), with moves of one parameter to a neighbouring or random
// value, cooling geometrically over the evaluation budget.
void annealing(Evaluator& ev, std::mt19937_64& rng) {
  const Space& s = ev.space();
  auto current = start_point(s, rng);
  if (!current) return;
  double cost = ev(*current).value_or(std::numeric_limits<double>::infinity());
  const double t0 = 0.3, t1 = 0.005;
  std::uniform_real_distribution<double> u(0, 1);
  int stuck = 0;
  while (!ev.exhausted() && stuck < 10000) {
    const double progress = std::min(1.0, double(ev.evaluations()) / ev.budget().max_evaluations);
    const double temperature = t0 * std::pow(t1 / t0, progress);
    Point q = *current;
    const size_t i = std::uniform_int_distribution<size_t>(0, s.dimension() - 1)(rng);
    const int n = static_cast<int>(s.parameters[i].values.size());
    if (n < 2) {
      ++stuck;
      continue;
    }
    if (u(rng) < 0.25)
      q[i] = std::uniform_int_distribution<int>(0, n - 1)(rng);
    else
      q[i] = std::clamp(q[i] + (u(rng) < 0.5 ? -1 : 1), 0, n - 1);
    if (q == *current || s.violated(q)) {
      ++stuck;
      continue;
    }
    const bool fresh = !ev.known(q);
    auto c = ev(q);
    stuck = fresh ? 0 : stuck + 1;
    if (!c) continue;
    const double delta = std::log(*c) - std::log(cost);
    if (delta <= 0 || u(rng) < std::exp(-delta / temperature)) {
      current = q;
      cost = *c;
    }
  }
  random_sample(ev, rng);  // the walk got stuck in known points: spend the rest on new ones
}

}  // namespace

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names{"exhaustive", "random", "alternating", "phased",
                                              "annealing"};
  return names;
}

Result search(const std::string& strategy, Evaluator& ev, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto& names = strategy_names();
  if (std::find(names.begin(), names.end(), strategy) == names.end())
    throw std::invalid_argument("unknown search strategy '" + strategy +
                                "' (exhaustive, random, alternating, phased, annealing)");
  // A space with no parameters, or a parameter with no values, has no point to measure.
  const auto& params = ev.space().parameters;
  const bool empty =
      params.empty() || std::any_of(params.begin(), params.end(),
                                    [](const Parameter& p) { return p.values.empty(); });
  // A known-good start (the device's defaults) is measured first, so no search ends worse.
  if (!empty && ev.space().start && !ev.space().violated(*ev.space().start)) ev(*ev.space().start);
  if (empty)
    ;
  else if (strategy == "exhaustive")
    exhaustive(ev);
  else if (strategy == "random")
    random_sample(ev, rng);
  else if (strategy == "alternating")
    alternating(ev, rng);
  else if (strategy == "phased")
    phased(ev, rng);
  else
    annealing(ev, rng);
  Result r;
  r.strategy = strategy;
  r.best = ev.best();
  r.cost = ev.best_cost();
  r.evaluations = ev.evaluations();
  r.seconds = ev.elapsed_seconds();
  return r;
}

int minimize_unimodal(const std::function<double(int)>& f, int lo, int hi) {
  std::map<int, double> seen;
  auto at = [&](int x) {
    auto it = seen.find(x);
    if (it != seen.end()) return it->second;
    return seen[x] = f(x);
  };
  at(lo);
  at(hi);
  int a = lo, b = hi;
  while (b - a > 2) {
    const int m1 = a + (b - a) / 3, m2 = b - (b - a) / 3;
    if (at(m1) <= at(m2))
      b = m2;
    else
      a = m1;
  }
  for (int x = a; x <= b; ++x) at(x);
  return std::min_element(seen.begin(), seen.end(),
                          [](const auto& l, const auto& r) { return l.second < r.second; })
      ->first;
}

int keep_split(double cpu_cost, double gpu_cost, int split, double split_cost, int parts,
               double margin) {
  const bool gpu_better = gpu_cost < cpu_cost;
  const double single = gpu_better ? gpu_cost : cpu_cost;
  if (split > 0 && split < parts && split_cost < single * (1.0 - margin)) return split;
  return gpu_better ? parts : 0;
}

}  // namespace tandem::tuner
