// Charts as SVG, drawn by PLplot (plot.cpp is the one file that includes it). They know nothing
// of GEMM: panels of series, as bars over categories or as lines over a logarithmic axis, each
// value with a min-max error bar, ticks at round numbers, a legend, and the units in the labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::tuner::plot {

struct Point {
  double x = 0;  // lines: the value on the (logarithmic) x axis; bars: the category's index
  double y = 0;
  double lo = 0, hi = 0;  // the error bar; none where lo == hi
};

struct Series {
  std::string label;  // in the legend
  uint32_t rgb = 0;   // 0xRRGGBB
  bool dashed = false;
  std::string marker = "●";  // lines: the text drawn at each point
  std::vector<Point> points;
};

struct Panel {
  std::string title, x_label, y_label;
  // Bars, one group per category and a bar per series, where categories are given; else lines.
  std::vector<std::string> categories;
  std::vector<Series> series;
};

// A round step for a linear axis from 0 to at least `top`: 1, 2 or 5 times a power of ten, the
// smallest that needs at most `most` steps.
double linear_step(double top, int most = 6);
// A logarithmic axis over [lo, hi]: the data's range widened by a fifth each way, with ticks at
// the numbers 1, 2 and 5 times a power of ten inside it; where fewer than two fall inside, at every
// whole multiple of a power of ten inside it (30, 40, 50); where still fewer than two, the axis
// runs from the largest such multiple at or below lo to the smallest at or above hi.
struct LogAxis {
  double lo = 1, hi = 10;
  std::vector<double> ticks;
};
LogAxis log_axis(double lo, double hi);

// The panels stacked top to bottom, `width` by `panel_height` points each. Throws
// std::runtime_error where PLplot has no SVG driver.
std::string svg(const std::vector<Panel>& panels, int width = 900, int panel_height = 430);

}  // namespace tandem::tuner::plot
