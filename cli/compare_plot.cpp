// compare's plot: which chart fits the sizes measured, and what each series and label says. One
// size (or several shapes of the same size) draws as bars, a group per precision and shape, a bar
// per strategy; several sizes draw as lines against size on a logarithmic axis. Either way each
// value has its min-max error bar and the strategies keep one colour and marker. Drawn by
// plot.hpp.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compare.hpp"
#include "plot.hpp"

namespace tandem::tuner {
namespace {

using Shape = std::array<int64_t, 3>;

// The four strategies keep their colours in every plot; device sets and "all" take the others in
// the order they appear, so that no two strategies in one plot share a colour (up to eight more).
uint32_t colour(const std::vector<std::string>& strategies, size_t index) {
  static const std::map<std::string, uint32_t> kNamed{
      {"cpu", 0x1f77b4}, {"gpu", 0xd62728}, {"hybrid", 0x2ca02c}, {"auto", 0x9467bd}};
  static const uint32_t kOthers[] = {0xff7f0e, 0x8c564b, 0xe377c2, 0x17becf,
                                     0xbcbd22, 0x7f7f7f, 0x000080, 0x808000};
  if (auto it = kNamed.find(strategies[index]); it != kNamed.end()) return it->second;
  size_t other = 0;
  for (size_t i = 0; i < index; ++i) other += kNamed.count(strategies[i]) ? 0 : 1;
  return kOthers[other % (sizeof(kOthers) / sizeof(kOthers[0]))];
}

// Markers differ by strategy too, so that lines on top of each other (auto running the CPU path
// is the cpu line again) still show both.
std::string marker(size_t strategy_index) {
  static const char* const kMarkers[] = {"●", "■", "▲", "◆", "▼", "★", "✚", "⬟"};
  return kMarkers[strategy_index % (sizeof(kMarkers) / sizeof(kMarkers[0]))];
}

double size_of(const Shape& s) {
  return std::cbrt(static_cast<double>(s[0]) * static_cast<double>(s[1]) *
                   static_cast<double>(s[2]));
}

std::string shape_name(const Shape& s) {
  if (s[0] == s[1] && s[1] == s[2]) return std::to_string(s[0]) + "³";
  return std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
}

std::string gemm_name(detail::Precision precision) {
  return detail::routine_name(precision, "gemm").str();
}

// Items in the order they first appear.
template <class T>
void add_once(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

struct Layout {
  std::vector<std::string> strategies;
  std::vector<std::pair<detail::Precision, Shape>> groups;  // bars: (precision, shape)
  bool lines = false;
};

// Lines where the shapes have different sizes, so that size orders them; bars otherwise.
Layout layout_of(const CompareResult& r) {
  Layout l;
  std::vector<Shape> shapes;
  for (const auto& x : r.rows) {
    add_once(l.strategies, x.strategy);
    add_once(l.groups, {x.precision, Shape{x.m, x.n, x.k}});
    add_once(shapes, Shape{x.m, x.n, x.k});
  }
  std::set<long long> sizes;
  for (const auto& s : shapes) sizes.insert(std::llround(size_of(s)));
  l.lines = shapes.size() > 1 && sizes.size() == shapes.size();
  return l;
}

// One panel of `value(row)`, with or without the rows' min-max throughput range as error bars.
plot::Panel panel_of(const CompareResult& r, const Layout& l, const std::string& title,
                     const std::string& unit,
                     const std::function<plot::Point(const CompareRow&)>& value) {
  plot::Panel p;
  p.title = title;
  p.y_label = unit;
  if (!l.lines)
    for (const auto& [prec, shape] : l.groups)
      p.categories.push_back(gemm_name(prec) + " " + shape_name(shape));
  p.x_label = l.lines ? "size: cube root of m·n·k (logarithmic)" : "";
  // (precision, strategy) -> series; bars have no precision of their own.
  std::map<std::pair<std::optional<detail::Precision>, size_t>, size_t> index;
  for (const auto& x : r.rows) {
    const size_t strategy = static_cast<size_t>(
        std::find(l.strategies.begin(), l.strategies.end(), x.strategy) - l.strategies.begin());
    // Bars: one series per strategy; lines: one per strategy and precision.
    const auto key = std::make_pair(
        l.lines ? std::optional<detail::Precision>(x.precision) : std::nullopt, strategy);
    if (!index.count(key)) {
      index[key] = p.series.size();
      plot::Series s;
      s.label = l.lines ? gemm_name(x.precision) + " " + x.strategy : x.strategy;
      s.rgb = colour(l.strategies, strategy);
      s.dashed = l.lines && x.precision == detail::Precision::d;
      s.marker = marker(strategy);
      p.series.push_back(s);
    }
    plot::Point pt = value(x);
    const auto group = std::make_pair(x.precision, Shape{x.m, x.n, x.k});
    pt.x = l.lines ? size_of(group.second)
                   : static_cast<double>(std::find(l.groups.begin(), l.groups.end(), group) -
                                         l.groups.begin());
    p.series[index[key]].points.push_back(pt);
  }
  for (auto& s : p.series)
    std::sort(s.points.begin(), s.points.end(),
              [](const plot::Point& a, const plot::Point& b) { return a.x < b.x; });
  return p;
}

}  // namespace

std::string to_svg(const CompareResult& r) {
  const Layout l = layout_of(r);
  size_t reps = 0;
  for (const auto& x : r.rows) reps = std::max(reps, x.gflops_samples.size());
  std::vector<plot::Panel> panels;
  // Every row of a compare ran batches of one count, or single products.
  const int64_t batch = r.rows.empty() ? 0 : r.rows.front().batch;
  const std::string what =
      batch > 0 ? "Throughput of batches of " + std::to_string(batch) + " products" : "Throughput";
  panels.push_back(panel_of(r, l,
                            what + ": median of " + std::to_string(reps) +
                                (reps == 1 ? " run" : " runs") +
                                (reps > 1 ? " (error bars: min to max)" : ""),
                            "GFLOPS", [](const CompareRow& x) {
                              return plot::Point{0, x.gflops, x.gflops_min, x.gflops_max};
                            }));
  const bool watts = r.power && std::any_of(r.rows.begin(), r.rows.end(), [](const CompareRow& x) {
                       return x.gflops_per_watt > 0;
                     });
  if (watts)
    panels.push_back(panel_of(r, l, "Energy efficiency (each strategy's energy window)",
                              "GFLOPS per watt", [](const CompareRow& x) {
                                return plot::Point{0, x.gflops_per_watt, 0, 0};
                              }));
  return plot::svg(panels);
}

}  // namespace tandem::tuner
