// PLplot behind plot.hpp: its SVG driver writes into a memory stream, one chart at a time (PLplot
// keeps its state in globals). Axes get round ticks: PLplot's own for the linear y axis, labelled
// by a function of ours so that large numbers are not scaled to "x10^4"; ours, drawn as grid
// lines, for the logarithmic x axis, whose own ticks PLplot labels at decades only.
#include "plot.hpp"

#include <plplot.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

namespace tandem::tuner::plot {
namespace {

// cmap0 slots: 0 the background, then black, the grid's grey, and the series from kFirstSeries.
constexpr PLINT kBlack = 1, kGrid = 2, kFirstSeries = 3;
constexpr PLINT kSolid = 1, kDashed = 3;  // PLplot's line styles

// Room around the plotting area, as fractions of the page: the legend sits to the right.
constexpr double kLeft = 0.1, kRight = 0.70, kTopMargin = 0.09, kBottomMargin = 0.16;
// Characters and markers in millimetres, whatever the page's size (PLplot's default scales with
// it, and a page of two panels had its labels cut at the left edge).
constexpr double kTextMm = 4.2, kMarkerMm = 3.0;

double step_decimals(double step) { return std::max(0.0, -std::floor(std::log10(step) + 1e-9)); }

// The y axis's labels: as many decimals as the step needs, never an exponent.
void label_y(PLINT, PLFLT value, char* label, PLINT length, PLPointer data) {
  const double step = *static_cast<const double*>(data);
  std::snprintf(label, static_cast<size_t>(length), "%.*f", static_cast<int>(step_decimals(step)),
                std::fabs(value) < step * 1e-6 ? 0.0 : value);
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

void set_colour(PLINT slot, uint32_t rgb) {
  plscol0(slot, static_cast<PLINT>((rgb >> 16) & 0xff), static_cast<PLINT>((rgb >> 8) & 0xff),
          static_cast<PLINT>(rgb & 0xff));
}

double highest(const Panel& p) {
  double top = 0;
  for (const auto& s : p.series)
    for (const auto& pt : s.points) top = std::max({top, pt.y, pt.hi});
  return top;
}

void error_bar(double x, double lo, double hi) {
  if (hi > lo) plerry(1, &x, &lo, &hi);
}

// Bars: category c spans [c, c + 1], its bars side by side in the middle 80%.
void draw_bars(const Panel& p) {
  const double width = 0.8 / static_cast<double>(std::max<size_t>(1, p.series.size()));
  for (size_t s = 0; s < p.series.size(); ++s)
    for (const auto& pt : p.series[s].points) {
      const double x0 = pt.x + 0.1 + width * static_cast<double>(s), x1 = x0 + width;
      PLFLT xs[4] = {x0, x1, x1, x0}, ys[4] = {0, 0, pt.y, pt.y};
      plcol0(kFirstSeries + static_cast<PLINT>(s));
      plfill(4, xs, ys);
      plcol0(kBlack);
      plwidth(1.5);
      error_bar((x0 + x1) / 2, pt.lo, pt.hi);
    }
  const auto count = static_cast<double>(p.categories.size());
  for (size_t c = 0; c < p.categories.size(); ++c)
    plmtex("b", 1.6, (static_cast<double>(c) + 0.5) / count, 0.5, p.categories[c].c_str());
}

// Lines over log10(x), each point with its error bar in the series' colour.
void draw_lines(const Panel& p, const LogAxis& axis, double top) {
  const double l0 = std::log10(axis.lo), l1 = std::log10(axis.hi);
  for (double t : axis.ticks) {
    plcol0(kGrid);
    pljoin(std::log10(t), 0, std::log10(t), top);
    plcol0(kBlack);
    plmtex("b", 1.6, (std::log10(t) - l0) / (l1 - l0), 0.5, number(t).c_str());
  }
  // Short unlabelled marks at every whole multiple of each power of ten, as on log paper, to read
  // sizes between the labels by.
  plcol0(kBlack);
  for (double decade = std::pow(10.0, std::floor(l0)); decade <= axis.hi; decade *= 10)
    for (int k = 1; k <= 9; ++k)
      if (const double x = std::log10(k * decade); x >= l0 && x <= l1) pljoin(x, 0, x, top * 0.015);
  for (size_t s = 0; s < p.series.size(); ++s) {
    std::vector<PLFLT> x, y;
    for (const auto& pt : p.series[s].points) {
      x.push_back(std::log10(pt.x));
      y.push_back(pt.y);
    }
    plcol0(kFirstSeries + static_cast<PLINT>(s));
    plwidth(2);
    pllsty(p.series[s].dashed ? kDashed : kSolid);
    plline(static_cast<PLINT>(x.size()), x.data(), y.data());
    pllsty(kSolid);
    plwidth(1.5);
    for (const auto& pt : p.series[s].points) error_bar(std::log10(pt.x), pt.lo, pt.hi);
    plschr(kMarkerMm, 1.0);
    plstring(static_cast<PLINT>(x.size()), x.data(), y.data(), p.series[s].marker.c_str());
    plschr(kTextMm, 1.0);
  }
}

void legend(const Panel& p, bool bars) {
  const auto n = static_cast<PLINT>(p.series.size());
  std::vector<PLINT> opt(n, bars ? PL_LEGEND_COLOR_BOX : PL_LEGEND_LINE | PL_LEGEND_SYMBOL);
  std::vector<PLINT> colours(n), styles(n), patterns(n, 0), text_colours(n, kBlack);
  std::vector<PLFLT> widths(n, 2), scales(n, kMarkerMm / kTextMm), box_scales(n, 0.8),
      box_widths(n, 1);
  std::vector<PLINT> symbol_numbers(n, 1);
  std::vector<const char*> text(n), symbols(n);
  for (PLINT i = 0; i < n; ++i) {
    colours[i] = kFirstSeries + i;
    styles[i] = p.series[i].dashed ? kDashed : kSolid;
    text[i] = p.series[i].label.c_str();
    symbols[i] = p.series[i].marker.c_str();
  }
  PLFLT w = 0, h = 0;
  pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.03, 0, 0.08, 0, kBlack, kSolid, 0, 0, n,
           opt.data(), 1.0, 0.9, 2.0, 0.0, text_colours.data(), text.data(), colours.data(),
           patterns.data(), box_scales.data(), box_widths.data(), colours.data(), styles.data(),
           widths.data(), colours.data(), scales.data(), symbol_numbers.data(), symbols.data());
}

// One panel in the page's band [y0, y1] (normalised, from the bottom).
void draw_panel(const Panel& p, double y0, double y1) {
  const bool bars = !p.categories.empty();
  for (size_t s = 0; s < p.series.size(); ++s)
    set_colour(kFirstSeries + static_cast<PLINT>(s), p.series[s].rgb);
  double step = linear_step(highest(p));
  const double top = std::max(step, std::ceil(highest(p) / step) * step);
  LogAxis axis;
  if (!bars) {
    double lo = 1e300, hi = 0;
    for (const auto& s : p.series)
      for (const auto& pt : s.points) {
        lo = std::min(lo, pt.x);
        hi = std::max(hi, pt.x);
      }
    axis = log_axis(lo, hi);
  }
  const double h = y1 - y0;
  plvpor(kLeft, kRight, y0 + kBottomMargin * h, y1 - kTopMargin * h);
  if (bars)
    plwind(0, static_cast<double>(p.categories.size()), 0, top);
  else
    plwind(std::log10(axis.lo), std::log10(axis.hi), 0, top);
  plcol0(kGrid);
  plwidth(1);
  plbox("", 0, 0, "g", step, 0);  // horizontal grid lines at the y ticks
  plslabelfunc(label_y, &step);
  plcol0(kBlack);
  plbox("bc", 0, 0, "bcnostv", step, 0);
  plslabelfunc(nullptr, nullptr);
  if (bars)
    draw_bars(p);
  else
    draw_lines(p, axis, top);
  plcol0(kBlack);
  plmtex("b", 3.4, 0.5, 0.5, p.x_label.c_str());
  plmtex("l", 4.0, 0.5, 0.5, p.y_label.c_str());
  plmtex("t", 1.2, 0.5, 0.5, p.title.c_str());
  legend(p, bars);
}

bool has_svg_driver() {
  std::vector<const char*> menus(128), names(128);
  int count = static_cast<int>(names.size());
  const char** m = menus.data();
  const char** n = names.data();
  plgDevs(&m, &n, &count);
  return std::any_of(names.begin(), names.begin() + count,
                     [](const char* d) { return d && std::string(d) == "svg"; });
}

}  // namespace

double linear_step(double top, int most) {
  if (!(top > 0) || !std::isfinite(top)) return 1;
  const double decade = std::pow(10.0, std::floor(std::log10(top / most)));
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (top / (f * decade) <= most + 1e-9) return f * decade;
  return 10 * decade;
}

namespace {

// Multiples of each power of ten, from below lo to at least hi: 1, 2 and 5 times, or every whole
// multiple 1 to 9 times (dense).
std::vector<double> round_numbers(double lo, double hi, bool dense) {
  static const std::vector<double> kSparse{1, 2, 5}, kDense{1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<double> all;
  for (double decade = std::pow(10.0, std::floor(std::log10(lo)) - 1);; decade *= 10) {
    for (double f : dense ? kDense : kSparse) all.push_back(f * decade);
    if (all.back() >= hi) return all;
  }
}

}  // namespace

LogAxis log_axis(double lo, double hi) {
  LogAxis axis;
  if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi)) {
    axis.ticks = {1, 2, 5, 10};
    return axis;
  }
  axis.lo = lo / 1.2;
  axis.hi = hi * 1.2;
  for (bool dense : {false, true}) {
    axis.ticks.clear();
    for (double t : round_numbers(axis.lo, axis.hi, dense))
      if (t >= axis.lo && t <= axis.hi) axis.ticks.push_back(t);
    if (axis.ticks.size() >= 2) return axis;
  }
  // The last whole multiple at or below lo, through the first at or above hi.
  const std::vector<double> all = round_numbers(lo, hi, true);
  auto first = std::upper_bound(all.begin(), all.end(), lo * (1 + 1e-9)) - 1;
  auto last = std::lower_bound(all.begin(), all.end(), hi * (1 - 1e-9));
  if (last == first) ++last;  // lo == hi, on a tick: still a range
  axis.ticks.assign(first, last + 1);
  axis.lo = axis.ticks.front();
  axis.hi = axis.ticks.back();
  return axis;
}

std::string svg(const std::vector<Panel>& panels, int width, int panel_height) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (!has_svg_driver())
    throw std::runtime_error("PLplot has no svg driver (libplplot17 installs it)");
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  if (!out) throw std::runtime_error("plot: cannot open a memory stream");
  const int height = panel_height * static_cast<int>(std::max<size_t>(1, panels.size()));
  plsdev("svg");
  plsfile(out);  // plend closes it
  plspage(0, 0, width, height, 0, 0);
  plscolbg(255, 255, 255);
  size_t series = 0;
  for (const auto& p : panels) series = std::max(series, p.series.size());
  plscmap0n(kFirstSeries + static_cast<PLINT>(series));
  set_colour(kBlack, 0x000000);
  set_colour(kGrid, 0xdddddd);
  plinit();
  pladv(0);
  plschr(kTextMm, 1.0);
  for (size_t i = 0; i < panels.size(); ++i) {
    const double band = 1.0 / static_cast<double>(panels.size());
    draw_panel(panels[i], 1.0 - band * static_cast<double>(i + 1),
               1.0 - band * static_cast<double>(i));
  }
  plend();
  std::string svg_text(text, size);
  std::free(text);
  return svg_text;
}

}  // namespace tandem::tuner::plot
