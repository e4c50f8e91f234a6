// plot.hpp's axes: round linear steps (1, 2 or 5 times a power of ten) for any top, including the
// issue's 72 that was labelled 18/36/54/72, and ticks at round numbers on logarithmic axes for any
// range.
#include "plot.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tandem::tuner::plot {
namespace {

// 1, 2 or 5 times a power of ten; with `dense`, any whole multiple of one.
bool round_number(double v, bool dense = false) {
  const double mantissa = v / std::pow(10.0, std::floor(std::log10(v) + 1e-9));
  for (double m : {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0})
    if ((dense || m == 1 || m == 2 || m == 5) && std::fabs(mantissa - m) < 1e-9) return true;
  return false;
}

TEST(Plot, LinearStepsAreRoundAndFew) {
  EXPECT_DOUBLE_EQ(linear_step(72), 20);  // 0, 20, ..., 80: not 18/36/54/72
  EXPECT_DOUBLE_EQ(linear_step(100), 20);
  EXPECT_DOUBLE_EQ(linear_step(101), 20);
  EXPECT_DOUBLE_EQ(linear_step(121), 50);
  EXPECT_DOUBLE_EQ(linear_step(6), 1);
  EXPECT_DOUBLE_EQ(linear_step(0.37), 0.1);
  EXPECT_DOUBLE_EQ(linear_step(39500), 10000);
  EXPECT_DOUBLE_EQ(linear_step(0), 1);  // nothing measured: still an axis
  for (double top = 0.013; top < 1e6; top *= 1.37) {
    const double step = linear_step(top);
    EXPECT_TRUE(round_number(step)) << top << " -> " << step;
    EXPECT_LE(std::ceil(top / step - 1e-9), 6) << top << " -> " << step;
    EXPECT_GE(std::ceil(top / step - 1e-9), 2) << top << " -> " << step;
  }
}

TEST(Plot, LogAxesTickAtRoundNumbers) {
  const LogAxis a = log_axis(256, 8192);
  EXPECT_EQ(a.ticks, (std::vector<double>{500, 1000, 2000, 5000}));
  EXPECT_LE(a.lo, 256);
  EXPECT_GE(a.hi, 8192);
  // Fewer than two 1-2-5 numbers inside the range: every whole multiple of ten, so that sizes 32
  // and 48 are read against 30, 40 and 50 rather than against 20 and 50 at the axis's ends.
  const LogAxis b = log_axis(32, 48);
  EXPECT_EQ(b.ticks, (std::vector<double>{30, 40, 50}));
  EXPECT_LE(b.lo, 32);
  EXPECT_GE(b.hi, 48);
  // Fewer than two even so: the axis widens to the multiples around the data.
  const LogAxis c = log_axis(15, 15);
  EXPECT_EQ(c.ticks, (std::vector<double>{10, 20}));
  EXPECT_DOUBLE_EQ(c.lo, 10);
  EXPECT_DOUBLE_EQ(c.hi, 20);
  for (double lo = 0.7; lo < 1e5; lo *= 1.9)
    for (double ratio : {1.0, 1.1, 1.5, 2.0, 4.0, 100.0}) {
      const LogAxis x = log_axis(lo, lo * ratio);
      ASSERT_GE(x.ticks.size(), 2u) << lo << " " << ratio;
      EXPECT_LE(x.lo, lo * (1 + 1e-9));
      EXPECT_GE(x.hi, lo * ratio * (1 - 1e-9));
      for (double t : x.ticks) {
        EXPECT_TRUE(round_number(t, true)) << t;
        EXPECT_GE(t, x.lo * (1 - 1e-9));
        EXPECT_LE(t, x.hi * (1 + 1e-9));
      }
    }
}

TEST(Plot, DrawsAnSvgDocument) {
  Panel p;
  p.title = "t";
  p.y_label = "units";
  p.categories = {"one"};
  p.series.push_back({"a", 0x1f77b4, false, "●", {{0, 3, 2, 4}}});
  const std::string svg_text = svg({p});
  EXPECT_NE(svg_text.find("<svg"), std::string::npos);
  EXPECT_NE(svg_text.find("</svg>"), std::string::npos);
  EXPECT_NE(svg_text.find("#1F77B4"), std::string::npos) << "the bar's colour";
  // PLplot keeps its state in globals: a second chart in the same process draws as well.
  EXPECT_EQ(svg({p}), svg_text);
}

}  // namespace
}  // namespace tandem::tuner::plot
