// compare.hpp on synthetic measurements: the rule that tells a speedup from noise (the issue's
// 5.99x of auto running the CPU path on 2 repetitions among them), and the plot for one size and
// several, each precision and both, with and without power: bars or lines as the sizes call for,
// every strategy's colour, the legend, the units and round ticks, in the SVG and in the PNG that
// librsvg renders of it (tests/plot_check.py, run by Debian's python3, which python3-pil belongs
// to). TANDEM_PLOT_DIR keeps the pictures to look at.
#include "compare.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <tuple>

namespace tandem::tuner {
namespace {

namespace fs = std::filesystem;
using V = CompareRow::Verdict;

TEST(Speedup, SameConfigurationIsNoiseWhateverTheRatio) {
  // The issue: 2 repetitions on a busy machine, auto ran the CPU path, printed as 5.99x.
  const SpeedupCheck c = check_speedup({59.9, 60.1}, {9.9, 10.1}, true);
  EXPECT_EQ(c.verdict, V::SameConfiguration);
  EXPECT_NEAR(c.ratio, 6.0, 1e-9) << "the raw ratio is kept";
  EXPECT_NE(c.note.find("same configuration"), std::string::npos) << c.note;
}

TEST(Speedup, OverlappingRangesAreNoise) {
  const SpeedupCheck c = check_speedup({10, 12, 30}, {11, 20, 21}, false);
  EXPECT_EQ(c.verdict, V::Noise);
  EXPECT_NEAR(c.ratio, 12.0 / 20.0, 1e-12);
  // One slow outlier among the baseline's runs reaches down to the other's range: 3 against 3
  // cannot tell them apart (a rank test gives p = 0.2).
  EXPECT_EQ(check_speedup({1.1, 2.0, 2.2}, {1.2, 29.7, 36.1}, false).verdict, V::Noise);
  // Touching ends overlap.
  EXPECT_EQ(check_speedup({20, 21, 22}, {18, 19, 20}, false).verdict, V::Noise);
}

TEST(Speedup, RangesApartNeedEnoughRepetitions) {
  const SpeedupCheck two = check_speedup({59.9, 60.1}, {9.9, 10.1}, false);
  EXPECT_EQ(two.verdict, V::TooFewRuns);
  EXPECT_NE(two.note.find("2 repetitions"), std::string::npos) << two.note;
  EXPECT_EQ(check_speedup({60}, {10, 10.5, 11}, false).verdict, V::TooFewRuns);
  const SpeedupCheck three = check_speedup({20, 21, 22}, {10, 11, 12}, false);
  EXPECT_EQ(three.verdict, V::Significant);
  EXPECT_NEAR(three.ratio, 21.0 / 11.0, 1e-12);
  // Slower counts as well as faster.
  EXPECT_EQ(check_speedup({5, 6, 7, 8}, {10, 11, 12}, false).verdict, V::Significant);
  EXPECT_EQ(check_speedup({}, {10, 11, 12}, false).verdict, V::None);
}

TEST(Speedup, TheTableSaysWhichItIs) {
  CompareRow row;
  row.speedup = 5.99;
  EXPECT_EQ(speedup_text(row), "-");
  row.speedup_verdict = V::Significant;
  EXPECT_EQ(speedup_text(row), "5.99x");
  row.speedup_verdict = V::Noise;
  EXPECT_EQ(speedup_text(row), "~1.0x (within noise)");
  row.speedup_verdict = V::SameConfiguration;
  EXPECT_EQ(speedup_text(row), "~1.0x (same config)");
  row.speedup_verdict = V::TooFewRuns;
  EXPECT_EQ(speedup_text(row), "5.99x (untested)");
  row.speedup_verdict = V::Baseline;
  EXPECT_EQ(speedup_text(row), "1.00x (baseline)");
}

// Rows for every precision, size and strategy: the largest error bar end is 72 GFLOPS (the issue's
// axis, labelled 18/36/54/72), and GFLOPS/W reach 1.4.
CompareResult synthetic(const std::vector<detail::Precision>& precisions,
                        const std::vector<int64_t>& sizes, bool power, bool tall_and_wide = false) {
  const std::vector<std::pair<std::string, double>> strategies{
      {"cpu", 30}, {"gpu", 60}, {"hybrid", 72 / 1.05}, {"auto", 50}};
  CompareResult r;
  r.power = power;
  for (detail::Precision p : precisions)
    for (int64_t s : sizes)
      for (const auto& shape : tall_and_wide ? shapes_for("tall", {s}) : shapes_for("square", {s}))
        for (size_t i = 0; i < strategies.size(); ++i) {
          // Largest at the largest size, smaller for dgemm and smaller sizes.
          const double scale = (p == detail::Precision::s ? 1.0 : 0.5) * static_cast<double>(s) /
                               static_cast<double>(sizes.back());
          CompareRow x;
          x.precision = p;
          std::tie(x.m, x.n, x.k) = std::tie(shape[0], shape[1], shape[2]);
          x.strategy = strategies[i].first;
          x.gflops = strategies[i].second * scale;
          x.gflops_min = 0.9 * x.gflops;
          x.gflops_max = 1.05 * x.gflops;
          x.gflops_samples = {x.gflops_min, x.gflops, x.gflops_max};
          x.power = power;
          x.gflops_per_watt = power ? 0.35 * static_cast<double>(i + 1) * scale : 0;
          r.rows.push_back(x);
        }
  // Tall and wide shapes of the same size: bars, one group per shape.
  if (tall_and_wide) {
    const size_t n = r.rows.size();
    for (size_t i = 0; i < n; ++i) {
      CompareRow wide = r.rows[i];
      std::swap(wide.m, wide.n);
      r.rows.push_back(wide);
    }
  }
  return r;
}

// Writes the plot of `r` as NAME.svg, renders NAME.png, and checks both: an error bar for every
// row whose runs spread.
void expect_plot(const CompareResult& r, const std::string& name, const std::string& kind,
                 const std::string& labels, const std::string& numbers) {
  const char* keep = std::getenv("TANDEM_PLOT_DIR");
  const fs::path dir = keep ? fs::path(keep) : fs::temp_directory_path();
  fs::create_directories(dir);
  const fs::path svg = dir / (name + ".svg"), png = dir / (name + ".png");
  std::ofstream(svg) << to_svg(r);
  const auto spread = std::count_if(r.rows.begin(), r.rows.end(), [](const CompareRow& x) {
    return x.gflops_max > x.gflops_min;
  });
  const std::string command = std::string("/usr/bin/python3 ") + TANDEM_SOURCE_DIR +
                              "/tests/plot_check.py '" + svg.string() + "' '" + png.string() +
                              "' --kind " + kind + " --colours 1f77b4,d62728,2ca02c,9467bd" +
                              " --labels '" + labels + "' --numbers " + numbers + " --error-bars " +
                              std::to_string(spread);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

const std::string kStrategies = "cpu|gpu|hybrid|auto";
const std::string kThroughputTicks = "0,20,40,60,80";

// Complex precisions are compared as the real ones are: each strategy's row checked against the
// CPU BLAS in double (complex double), its rate counted at 8 flops a multiply-add: the CPU row's
// GFLOPS times its seconds is 8 m n k.
// One quick timed round of `strategies` on one shape, no power read.
CompareOptions quick(std::vector<detail::Precision> precisions, std::array<int64_t, 3> shape,
                     std::vector<std::string> strategies) {
  CompareOptions o;
  o.precisions = std::move(precisions);
  o.shapes = {shape};
  o.strategies = std::move(strategies);
  o.reps = 1;
  o.settle_seconds = 0;
  o.power = false;
  return o;
}

TEST(Compare, ComplexRowsAreCheckedAndCountEightFlops) {
  const CompareResult r =
      compare(quick({detail::Precision::c, detail::Precision::z}, {67, 45, 33}, {"cpu", "gpu"}));
  ASSERT_EQ(r.rows.size(), 4u);
  for (const CompareRow& row : r.rows) {
    const double eps = row.precision == detail::Precision::c ? 1e-5 : 1e-13;
    EXPECT_LT(row.max_error, eps) << row.strategy << " " << row.precision;
    EXPECT_EQ(row.ran, row.strategy);
    ASSERT_EQ(row.gflops_samples.size(), 1u);
    EXPECT_NEAR(row.gflops_samples[0] * row.seconds * 1e9, 8.0 * 67 * 45 * 33,
                1e-6 * 8 * 67 * 45 * 33)
        << row.strategy;
  }
}

// --batch: each row one strided batch call of `batch` products, checked product by product
// against the CPU in double; its rate counts every product; cpu's problems are all on the cores,
// gpu's all on the device; the CSV carries the count.
TEST(Compare, BatchRowsRunOneBatchCallOfEveryProduct) {
  CompareOptions o = quick({detail::Precision::d}, {19, 23, 17}, {"cpu", "gpu", "hybrid"});
  o.batch = 150;
  const CompareResult r = compare(o);
  ASSERT_EQ(r.rows.size(), 3u);
  for (const CompareRow& row : r.rows) {
    EXPECT_EQ(row.batch, 150);
    EXPECT_LT(row.max_error, 1e-13) << row.strategy;
    EXPECT_EQ(row.gpu_rows + row.cpu_rows, 150) << row.strategy << ": " << row.configuration;
    ASSERT_EQ(row.gflops_samples.size(), 1u);
    EXPECT_NEAR(row.gflops_samples[0] * row.seconds * 1e9, 150 * 2.0 * 19 * 23 * 17,
                1e-6 * 150 * 2 * 19 * 23 * 17)
        << row.strategy;
  }
  EXPECT_EQ(r.rows[0].ran, "cpu");
  EXPECT_EQ(r.rows[0].cpu_rows, 150);
  EXPECT_EQ(r.rows[1].ran, "gpu");
  EXPECT_EQ(r.rows[1].gpu_rows, 150);
  EXPECT_NE(r.rows[1].configuration.find("device 0 150 problems"), std::string::npos)
      << r.rows[1].configuration;
  const std::string csv = to_csv(r);
  EXPECT_EQ(csv.rfind("precision,m,n,k,batch,strategy", 0), 0u) << csv;
  EXPECT_NE(csv.find("d,19,23,17,150,cpu,cpu,"), std::string::npos) << csv;
}

TEST(ComparePlot, OneSizeDrawsBars) {
  expect_plot(synthetic({detail::Precision::s}, {1024}, false), "one-size-s", "bars",
              kStrategies + "|GFLOPS|sgemm 1024³", kThroughputTicks);
  expect_plot(synthetic({detail::Precision::d}, {1024}, false), "one-size-d", "bars",
              kStrategies + "|GFLOPS|dgemm 1024³", "0,10,20,30,40");
  expect_plot(synthetic({detail::Precision::s, detail::Precision::d}, {1024}, false),
              "one-size-both", "bars", kStrategies + "|GFLOPS|sgemm 1024³|dgemm 1024³",
              kThroughputTicks);
}

TEST(ComparePlot, OneSizeWithPowerAddsAnEnergyPanel) {
  expect_plot(synthetic({detail::Precision::s, detail::Precision::d}, {1024}, true),
              "one-size-both-power", "bars", kStrategies + "|GFLOPS|GFLOPS per watt",
              kThroughputTicks + ",0.0,0.5,1.0,1.5");
}

TEST(ComparePlot, ShapesOfOneSizeDrawBarsPerShape) {
  expect_plot(synthetic({detail::Precision::s}, {1024}, false, true), "tall-and-wide", "bars",
              kStrategies + "|sgemm 4096x256x1024|sgemm 256x4096x1024", kThroughputTicks);
}

TEST(ComparePlot, SeveralSizesDrawLines) {
  const std::string sizes = "size: cube root of m·n·k (logarithmic)";
  expect_plot(synthetic({detail::Precision::s}, {256, 512, 1024, 2048}, false), "sizes-s", "lines",
              "sgemm cpu|sgemm auto|GFLOPS|" + sizes, kThroughputTicks + ",500,1000,2000");
  expect_plot(synthetic({detail::Precision::d}, {256, 512, 1024, 2048}, false), "sizes-d", "lines",
              "dgemm cpu|dgemm auto|GFLOPS|" + sizes, "0,10,20,30,40,500,1000,2000");
  expect_plot(synthetic({detail::Precision::s, detail::Precision::d}, {32, 48}, false),
              "sizes-both-tiny", "lines", "sgemm gpu|dgemm gpu|GFLOPS",
              kThroughputTicks + ",30,40,50");
}

TEST(ComparePlot, SeveralSizesWithPower) {
  expect_plot(synthetic({detail::Precision::s, detail::Precision::d}, {256, 512, 1024, 2048}, true),
              "sizes-both-power", "lines", "sgemm hybrid|dgemm hybrid|GFLOPS|GFLOPS per watt",
              kThroughputTicks + ",500,1000,2000,0.0,0.5,1.0,1.5");
}

}  // namespace
}  // namespace tandem::tuner
