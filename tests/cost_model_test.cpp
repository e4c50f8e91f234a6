// The cost model's arithmetic: the fit recovers a model from what it predicts, the plan is the
// best division of the rows a search over every division finds, and on figures measured on the
// H100 host it plans the shapes those measurements showed (docs/PERFORMANCE.md).
#include "model/cost_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace cost = tandem::detail::cost;

namespace {

// An H100 host's figures (sgemm, docs/PERFORMANCE.md): 16 cores of OpenBLAS at about 1.2 TFLOPS,
// a kernel at about 46 TFLOPS, a bus of about 50 GB/s each way, packing at about 8 GB/s per
// thread up to the memory's 60 GB/s.
cost::Model h100_like() {
  cost::Model m;
  m.cpu.gflops_by_threads = {{1, 80}, {2, 160}, {4, 320}, {8, 640}, {16, 1250}};
  m.cpu.half_m = 30;
  m.cpu.half_n = 200;
  m.cpu.half_k = 20;
  m.device.discrete = true;
  m.device.kernel_gflops = 46000;
  m.device.launch = 20e-6;
  m.device.tile_m = 128;
  m.device.tile_n = 256;
  m.device.compute_units = 132;
  m.device.chunk_fill = 1;
  m.device.chunk_from = 16 << 20;
  m.device.bus_in = 50e9;
  m.device.bus_out = 50e9;
  m.device.pack_by_threads = {{1, 8e9}, {2, 16e9}, {4, 30e9}, {8, 50e9}, {16, 60e9}};
  m.device.latency = 200e-6;
  m.device.overlap = 0.1;
  m.both_busy = 0.95;
  m.cpu_busy = 0.9;
  return m;
}

cost::Shape shape(int64_t m, int64_t n, int64_t k, bool reads_c, bool pinned, int bytes = 4,
                  int flops_per_multiply_add = 2) {
  cost::Shape s{m, n, k, bytes, reads_c, pinned};
  s.flops_per_multiply_add = flops_per_multiply_add;
  return s;
}

// Every division of the rows in whole tiles, on every thread count, as best_plan would choose.
cost::Plan brute_force(const cost::Model& m, const cost::Shape& s, int cores, int64_t tile) {
  const cost::Side side{&m.device, tile, m.both_busy, m.cpu_busy};
  cost::Plan best{{0}, s.m, cores, 0, m.cpu.seconds(s, s.m, cores)};
  cost::Plan split{{0}, 0, 0, 0, std::numeric_limits<double>::infinity()};
  const int packing = m.device.discrete && m.device.feeds(s) ? 1 : 0;
  const double alone = cost::predict(m.cpu, {side}, s, {s.m}, 0, packing ? cores : 0);
  if (alone < best.seconds) best = cost::Plan{{s.m}, 0, 0, packing ? cores : 0, alone};
  for (int threads = 1; threads <= cores - (m.device.discrete ? 1 : 0); ++threads)
    for (int64_t rows = tile; rows < s.m; rows += tile) {
      const int feeders = packing ? cores - threads : 0;
      const double t = cost::predict(m.cpu, {side}, s, {rows}, threads, feeders);
      if (t < split.seconds) split = cost::Plan{{rows}, s.m - rows, threads, feeders, t};
    }
  return split.seconds * (1 + m.split_margin) < best.seconds ? split : best;
}

}  // namespace

TEST(CostModel, InterpolatesRateTables) {
  const std::vector<cost::Sample> t{{2, 100}, {4, 180}, {8, 300}};
  EXPECT_DOUBLE_EQ(cost::interpolate(t, 1), 50) << "below the first sample: proportional";
  EXPECT_DOUBLE_EQ(cost::interpolate(t, 3), 140);
  EXPECT_DOUBLE_EQ(cost::interpolate(t, 8), 300);
  EXPECT_DOUBLE_EQ(cost::interpolate(t, 16), 300) << "no gain beyond the last sample";
  EXPECT_DOUBLE_EQ(cost::interpolate({}, 4), 0);
}

TEST(CostModel, FitsLinesWithNonNegativeCoefficients) {
  const cost::Line l = cost::fit_line({{1, 3}, {2, 5}, {4, 9}});
  EXPECT_NEAR(l.a, 1, 1e-12);
  EXPECT_NEAR(l.b, 2, 1e-12);
  const cost::Line origin = cost::fit_line({{1, 1}, {2, 3}});  // would cross at -1
  EXPECT_EQ(origin.a, 0);
  EXPECT_NEAR(origin.b, 1.4, 1e-12);
  const cost::Line flat = cost::fit_line({{1, 4}, {2, 2}});  // falling: no dependence
  EXPECT_EQ(flat.b, 0);
  EXPECT_NEAR(flat.a, 3, 1e-12);
}

// Observations made by a known model are fitted back to that model, part by part.
// What the co-tuner would observe on a machine that behaves exactly as `truth` says, for a
// precision of `element_bytes` bytes an element and `flops` flops a multiply-add.
std::vector<cost::Observation> observations_of(const cost::Model& truth, int element_bytes = 4,
                                               int flops = 2) {
  const auto shape = [&](int64_t m, int64_t n, int64_t k, bool reads_c, bool pinned) {
    return ::shape(m, n, k, reads_c, pinned, element_bytes, flops);
  };
  std::vector<cost::Observation> obs;
  const int64_t s = 2048, small = 256;
  for (const cost::Sample& t : truth.cpu.gflops_by_threads) {
    const int threads = static_cast<int>(t.x);
    obs.push_back({"cpu", s, s, s, 0, threads, 0, false, false, 0,
                   truth.cpu.seconds(shape(s, s, s, false, false), s, threads)});
  }
  const int64_t big = 5792;  // the work of s^3 with one dimension s / 8
  for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{small, big, big},
                                {big, small, big},
                                {big, big, small},
                                {512, 512, 512}})
    obs.push_back({"cpu", m, n, k, 0, 16, 0, false, false, 0,
                   truth.cpu.seconds(shape(m, n, k, false, false), m, 16)});
  const double bytes = 64 << 20;
  obs.push_back({"bus_in", 0, 0, 0, 0, 0, 0, false, false, bytes, bytes / truth.device.bus_in});
  obs.push_back({"bus_out", 0, 0, 0, 0, 0, 0, false, false, bytes, bytes / truth.device.bus_out});
  for (const cost::Sample& p : truth.device.pack_by_threads)
    obs.push_back({"pack", 0, 0, 0, 0, static_cast<int>(p.x), 0, false, false, bytes, bytes / p.y});
  for (bool pinned : {true, false})
    for (const cost::Shape& sh :
         {shape(4096, 4096, 4096, false, pinned), shape(8192, 8192, 8192, false, pinned),
          shape(8192, 8192, 512, true, pinned)}) {
      obs.push_back({"device", sh.m, sh.n, sh.k, sh.m, 0, 16, pinned, sh.reads_c, 0,
                     truth.device.seconds(sh, sh.m, 16)});
      if (pinned)
        obs.push_back({"kernel", sh.m, sh.n, sh.k, sh.m, 0, 16, pinned, sh.reads_c, 0,
                       truth.device.parts(sh, sh.m, 16).kernel});
    }
  const cost::Shape hs = shape(8192, 8192, 512, true, false);
  const cost::Side side{&truth.device, 1, truth.both_busy, truth.cpu_busy};
  cost::Observation h{"hybrid",
                      hs.m,
                      hs.n,
                      hs.k,
                      6144,
                      8,
                      8,
                      false,
                      true,
                      0,
                      cost::predict(truth.cpu, {side}, hs, {6144}, 8, 8)};
  h.device_seconds = truth.device.seconds(hs, 6144, 8) / truth.both_busy;
  h.cpu_seconds = truth.cpu.seconds(hs, 2048, 8) / truth.cpu_busy;
  obs.push_back(h);
  return obs;
}

const cost::DeviceConstants kH100Constants{true, 128, 256, 132, 1, 16 << 20, 4};

TEST(CostModel, FitRecoversTheModelThatMadeTheObservations) {
  cost::Model truth = h100_like();
  truth.cpu.latency = 30e-6;
  std::vector<cost::Observation> obs = observations_of(truth);
  const cost::Model fitted = cost::fit(obs, kH100Constants, 0.05);
  ASSERT_TRUE(fitted.usable()) << fitted.problem();
  ASSERT_EQ(fitted.cpu.gflops_by_threads.size(), truth.cpu.gflops_by_threads.size());
  for (size_t i = 0; i < truth.cpu.gflops_by_threads.size(); ++i)
    EXPECT_NEAR(fitted.cpu.gflops_by_threads[i].y, truth.cpu.gflops_by_threads[i].y, 1e-6) << i;
  EXPECT_NEAR(fitted.cpu.half_m, truth.cpu.half_m, 1e-6);
  EXPECT_NEAR(fitted.cpu.half_n, truth.cpu.half_n, 1e-6);
  EXPECT_NEAR(fitted.cpu.half_k, truth.cpu.half_k, 1e-6);
  EXPECT_NEAR(fitted.cpu.latency, truth.cpu.latency, 1e-9);
  EXPECT_NEAR(fitted.device.kernel_gflops, truth.device.kernel_gflops, 1e-3);
  EXPECT_NEAR(fitted.device.launch, truth.device.launch, 1e-9);
  EXPECT_NEAR(fitted.device.bus_in, truth.device.bus_in, 1);
  EXPECT_NEAR(fitted.device.bus_out, truth.device.bus_out, 1);
  EXPECT_NEAR(cost::interpolate(fitted.device.pack_by_threads, 4), 30e9, 1);
  EXPECT_NEAR(fitted.device.latency, truth.device.latency, 1e-9);
  EXPECT_NEAR(fitted.device.overlap, truth.device.overlap, 1e-9);
  EXPECT_NEAR(fitted.both_busy, truth.both_busy, 1e-9);
  EXPECT_NEAR(fitted.cpu_busy, truth.cpu_busy, 1e-9);
  for (const cost::Observation& o : obs)
    EXPECT_NEAR(o.predicted / o.seconds, 1.0, 1e-6)
        << o.what << " " << o.m << "x" << o.n << "x" << o.k;
  EXPECT_NEAR(fitted.split_margin, 0.05, 1e-12) << "a model that missed nothing keeps the margin";
}

// A noisy machine (another job on the cores while the tuner measured the small square call)
// makes that call look slower than the square calls themselves. The fit must not read the excess
// as a fixed cost larger than the calls it is taken from: the rates stay within a small factor of
// those the square calls measured (the cap allows at most twice), and the model stays usable
// (ModelPlan's tune once stored 2.4e71 GFLOPS so, refused).
TEST(CostModel, ASlowSmallCallCannotTurnTheLatencyIntoTheWholeCall) {
  cost::Model truth = h100_like();
  truth.cpu.latency = 30e-6;
  std::vector<cost::Observation> obs = observations_of(truth);
  for (cost::Observation& o : obs)
    if (o.what == "cpu" && o.m == 512 && o.n == 512 && o.k == 512) o.seconds *= 400;
  const cost::Model fitted = cost::fit(obs, kH100Constants, 0.05);
  EXPECT_TRUE(fitted.usable()) << fitted.problem();
  ASSERT_EQ(fitted.cpu.gflops_by_threads.size(), truth.cpu.gflops_by_threads.size());
  for (size_t i = 0; i < truth.cpu.gflops_by_threads.size(); ++i) {
    const double ratio = fitted.cpu.gflops_by_threads[i].y / truth.cpu.gflops_by_threads[i].y;
    EXPECT_GT(ratio, 0.9) << i;
    EXPECT_LT(ratio, 2.5) << i;
  }
}

// The same with a thin call (one dimension small) measured slow: read as its small dimension's
// cost, it would give a half-dimension far above every size measured, which shrinks the square
// calls' shape part and lifts their rates, round after round (ModelPlan's tune under load once
// stored 8.9e48 GFLOPS so, refused). A half-dimension is at most the square calls' size.
TEST(CostModel, ASlowThinCallCannotTurnTheShapeIntoTheWholeRate) {
  cost::Model truth = h100_like();
  truth.cpu.latency = 30e-6;
  std::vector<cost::Observation> obs = observations_of(truth);
  int64_t square = 0;
  for (const cost::Observation& o : obs)
    if (o.what == "cpu" && o.m == o.n && o.n == o.k) square = std::max(square, o.m);
  bool slowed = false;
  for (cost::Observation& o : obs)
    if (o.what == "cpu" && !(o.m == o.n && o.n == o.k) && !slowed) {
      o.seconds *= 400;
      slowed = true;
    }
  ASSERT_TRUE(slowed) << "a thin CPU call to slow";
  const cost::Model fitted = cost::fit(obs, kH100Constants, 0.05);
  EXPECT_TRUE(fitted.usable()) << fitted.problem();
  for (const double half : {fitted.cpu.half_m, fitted.cpu.half_n, fitted.cpu.half_k})
    EXPECT_LE(half, static_cast<double>(square));
  for (size_t i = 0; i < fitted.cpu.gflops_by_threads.size(); ++i) {
    const double ratio = fitted.cpu.gflops_by_threads[i].y / truth.cpu.gflops_by_threads[i].y;
    EXPECT_GT(ratio, 0.9) << i;
    EXPECT_LT(ratio, 10) << i;
  }
}

// A complex multiply-add is four real ones (8 flops): the model counts a complex call's flops so,
// and its rates are GFLOPS of that count, the figures the tuner and the planner's launch bound
// read beside the real types'. A machine that runs complex calls as `truth` says is fitted back
// to `truth`'s rates, and a complex call does four times the real work of its shape.
TEST(CostModel, ComplexCallsCountEightFlopsAMultiplyAdd) {
  cost::Model truth = h100_like();
  truth.cpu.latency = 30e-6;
  std::vector<cost::Observation> obs = observations_of(truth, 16, 8);
  cost::DeviceConstants z = kH100Constants;
  z.element_bytes = 16;
  z.flops_per_multiply_add = 8;
  const cost::Model fitted = cost::fit(obs, z, 0.05);
  ASSERT_TRUE(fitted.usable()) << fitted.problem();
  for (size_t i = 0; i < truth.cpu.gflops_by_threads.size(); ++i)
    EXPECT_NEAR(fitted.cpu.gflops_by_threads[i].y, truth.cpu.gflops_by_threads[i].y, 1e-6) << i;
  EXPECT_NEAR(fitted.device.kernel_gflops, truth.device.kernel_gflops, 1e-3);
  for (const cost::Observation& o : obs) EXPECT_NEAR(o.predicted / o.seconds, 1.0, 1e-6) << o.what;

  const cost::Shape real = shape(4096, 4096, 4096, false, true, 16, 2);
  const cost::Shape complex = shape(4096, 4096, 4096, false, true, 16, 8);
  EXPECT_DOUBLE_EQ(truth.device.kernel_work(complex, 4096).flops,
                   4 * truth.device.kernel_work(real, 4096).flops);
  EXPECT_NEAR(truth.cpu.seconds(complex, 4096, 16) - truth.cpu.latency,
              4 * (truth.cpu.seconds(real, 4096, 16) - truth.cpu.latency), 1e-12);
}

// A split is planned only when it beats the better single side by more than the model missed
// the splits it was fitted to: a hybrid call that took 1.4x the model's time raises the margin
// to that miss (2/7), and a split the model gains 10% on is then not planned.
TEST(CostModel, TheSplitMarginCoversTheModelsMissOnSplits) {
  const cost::Model truth = h100_like();
  std::vector<cost::Observation> obs = observations_of(truth);
  cost::Observation slow = obs.back();
  slow.rows = 7168;
  const cost::Shape hs = shape(slow.m, slow.n, slow.k, true, false);
  const cost::Side side{&truth.device, 1, truth.both_busy, truth.cpu_busy};
  slow.seconds = 1.4 * cost::predict(truth.cpu, {side}, hs, {7168}, 8, 8);
  slow.device_seconds = truth.device.seconds(hs, 7168, 8) / truth.both_busy;
  slow.cpu_seconds = truth.cpu.seconds(hs, slow.m - 7168, 8) / truth.cpu_busy;
  obs.push_back(slow);
  const cost::Model fitted = cost::fit(obs, kH100Constants, 0.05);
  ASSERT_TRUE(fitted.usable()) << fitted.problem();
  EXPECT_NEAR(fitted.split_margin, 1 - 1 / 1.4, 1e-6);
  EXPECT_NEAR(cost::fit(obs, kH100Constants, 0.5).split_margin, 0.5, 1e-12)
      << "a larger margin asked for stays";
}

// The kernel's launches follow the pipeline's chunks and its waves are whole: on 132 compute
// units a 128 x 256 tile runs 8192^2 as 8 chunks of 2 waves, and 4096^2 as a few launches with a
// part-empty last wave each.
TEST(CostModel, KernelWorkCountsChunksAndWholeWaves) {
  const cost::Model m = h100_like();
  const auto big = m.device.kernel_work(shape(8192, 8192, 8192, false, true), 8192);
  EXPECT_EQ(big.launches, 8);
  EXPECT_DOUBLE_EQ(big.flops, 8 * 264 * 2.0 * 128 * 256 * 8192);
  const auto small = m.device.kernel_work(shape(1024, 1024, 1024, false, true), 1024);
  EXPECT_EQ(small.launches, 1) << "below 16 MiB of copies: one chunk";
  EXPECT_DOUBLE_EQ(small.flops, 132 * 2.0 * 128 * 256 * 1024) << "32 groups fill one wave";
}

// The plan is the best division a search over every tile and thread count finds.
TEST(CostModel, PlanIsTheBestDivisionOfTheRows) {
  cost::Model m = h100_like();
  m.cpu.gflops_by_threads = {{1, 80}, {2, 150}, {4, 280}, {8, 500}};
  m.device.pack_by_threads = {{1, 8e9}, {2, 15e9}, {4, 25e9}, {8, 30e9}};
  const int cores = 8;
  for (bool pinned : {false, true})
    for (const cost::Shape& s :
         {shape(4096, 4096, 4096, false, pinned), shape(16384, 16384, 256, true, pinned),
          shape(8128, 8128, 64, true, pinned), shape(100, 8192, 8192, false, pinned),
          shape(1000, 1000, 1000, false, pinned), shape(5000, 64, 4000, false, pinned)}) {
      const cost::Side side{&m.device, 128, m.both_busy, m.cpu_busy};
      const cost::Plan plan = cost::best_plan(m.cpu, {side}, s, cores, m.split_margin);
      const cost::Plan brute = brute_force(m, s, cores, 128);
      EXPECT_NEAR(plan.seconds / brute.seconds, 1.0, 1e-9)
          << s.m << "x" << s.n << "x" << s.k << (pinned ? " pinned" : "") << ": plan "
          << plan.rows[0] << " rows, " << plan.cpu_threads << " threads; search " << brute.rows[0]
          << " rows, " << brute.cpu_threads << " threads";
      EXPECT_NEAR(plan.seconds,
                  cost::predict(m.cpu, {side}, s, plan.rows, plan.cpu_threads, plan.feeders),
                  1e-15);
      if (plan.cpu_rows > 0 && plan.rows[0] > 0) {
        EXPECT_GE(plan.feeders, pinned ? 0 : 1) << "no split starves the feeder";
        EXPECT_LE(plan.cpu_threads + plan.feeders, cores);
        EXPECT_EQ(plan.rows[0] % 128, 0);
      }
    }
}

// What the H100 host showed, planned from its figures: a rank-64 update with beta = 1 moves C
// across the bus twice for 128 flops an element and stays on the CPU; 100 rows over K = 8192
// copy all of B and stay whole on one side; a square call is the GPU's; the small-k call with
// beta = 1 from tandem_malloc memory splits near the balance point docs/PERFORMANCE.md worked out
// (about 82% of the rows on the GPU, 1.2x at best).
TEST(CostModel, PlansTheShapesTheH100HostShowed) {
  const cost::Model m = h100_like();
  const cost::Side side{&m.device, 128, m.both_busy, m.cpu_busy};
  auto plan = [&](const cost::Shape& s) {
    return cost::best_plan(m.cpu, {side}, s, 16, m.split_margin);
  };
  const cost::Plan update = plan(shape(8128, 8128, 64, true, false, 8));
  EXPECT_EQ(update.rows[0], 0) << "dgetrf's trailing update stays on the CPU";
  const cost::Plan thin = plan(shape(100, 8192, 8192, false, false));
  EXPECT_TRUE(thin.rows[0] == 0 || thin.cpu_rows == 0) << "no split of 100 rows";
  const cost::Plan square = plan(shape(8192, 8192, 8192, false, false));
  EXPECT_EQ(square.rows[0], 8192);
  const cost::Shape small_k = shape(16384, 16384, 256, true, true);
  const cost::Plan split = plan(small_k);
  const double f = static_cast<double>(split.rows[0]) / 16384;
  EXPECT_GT(f, 0.7);
  EXPECT_LT(f, 0.9);
  const double gpu = cost::predict(m.cpu, {side}, small_k, {16384}, 0, 0);
  EXPECT_GT(gpu / split.seconds, 1.1);
}

// Two equal devices beside the CPU share their rows evenly and finish together.
TEST(CostModel, EqualDevicesShareEvenly) {
  cost::Model m = h100_like();
  const cost::Side a{&m.device, 128, 1.0}, b{&m.device, 128, 1.0};
  const cost::Shape s = shape(16384, 16384, 16384, false, true);
  const cost::Plan p = cost::best_plan(m.cpu, {a, b}, s, 32, 0.05);
  ASSERT_EQ(p.rows.size(), 2u);
  EXPECT_LE(std::abs(p.rows[0] - p.rows[1]), 128);
  const double one = cost::predict(m.cpu, {a}, s, {16384}, 0, 0);
  EXPECT_NEAR(one / p.seconds, 2.0, 0.1) << "two devices, about twice the rate of one";
}

// B is packed once for the devices of one platform (src/gpu/discrete_b.cpp): two of them each pack
// half of it, while each still copies all of it across its own bus; devices of two platforms each
// pack all of it, and a device with no rows packs none. From pinned memory nothing is packed.
TEST(CostModel, DevicesOfOnePlatformPackBOnce) {
  const cost::Model m = h100_like();
  const cost::Side a{&m.device, 128, 1.0, 1.0, 0}, b{&m.device, 128, 1.0, 1.0, 0},
      other{&m.device, 128, 1.0, 1.0, 1};
  const cost::Shape s = shape(16384, 16384, 16384, false, false);
  const double b_bytes = 4.0 * 16384 * 16384;
  const auto whole = m.device.parts(s, 8192, 8, 1.0), half = m.device.parts(s, 8192, 8, 0.5);
  EXPECT_NEAR(whole.pack - half.pack,
              0.5 * b_bytes / cost::interpolate(m.device.pack_by_threads, 8), 1e-12);
  EXPECT_EQ(whole.in, half.in) << "each device copies all of B across its bus";
  const double shared = cost::predict(m.cpu, {a, b}, s, {8192, 8192}, 0, 8);
  EXPECT_DOUBLE_EQ(shared, m.device.seconds(s, 8192, 8, 0.5));
  const double apart = cost::predict(m.cpu, {a, other}, s, {8192, 8192}, 0, 8);
  EXPECT_DOUBLE_EQ(apart, m.device.seconds(s, 8192, 8, 1.0));
  EXPECT_LT(shared, apart);
  EXPECT_DOUBLE_EQ(cost::predict(m.cpu, {a, b}, s, {16384, 0}, 0, 8),
                   m.device.seconds(s, 16384, 8, 1.0))
      << "a device with no rows packs none of B";
  const cost::Shape pinned = shape(16384, 16384, 16384, false, true);
  EXPECT_DOUBLE_EQ(cost::predict(m.cpu, {a, b}, pinned, {8192, 8192}, 0, 8),
                   m.device.seconds(pinned, 8192, 8, 1.0));
  // The plan over the pair sees the shared packing too.
  const cost::Plan p = cost::best_plan(m.cpu, {a, b}, s, 16, 0.05);
  EXPECT_NEAR(p.seconds, cost::predict(m.cpu, {a, b}, s, p.rows, p.cpu_threads, p.feeders), 1e-15);
}

// Two devices fed from ordinary memory share the host's memory: a pair's time is no less than
// their traffic's times added, so a call bound by that memory gains little from a second device,
// while a call bound by the kernels still takes about half the time.
TEST(CostModel, DevicesShareTheHostsMemory) {
  const cost::Model m = h100_like();
  const cost::Side a{&m.device, 128, 1.0, 1.0, 0}, b{&m.device, 128, 1.0, 1.0, 0};
  const cost::Shape small_k = shape(16384, 16384, 256, true, false);
  const double one = cost::predict(m.cpu, {a}, small_k, {16384}, 0, 16);
  EXPECT_DOUBLE_EQ(one, m.device.seconds(small_k, 16384, 16)) << "one device: its own time";
  const double pair = cost::predict(m.cpu, {a, b}, small_k, {8192, 8192}, 0, 8);
  const auto half = m.device.parts(small_k, 8192, 8, 0.5);
  EXPECT_LT(m.device.seconds(small_k, 8192, 8, 0.5), 0.6 * one)
      << "each device on its own would take about half";
  EXPECT_DOUBLE_EQ(pair, 2 * half.memory);
  EXPECT_GT(pair, 0.8 * one);
  const cost::Shape square = shape(16384, 16384, 16384, false, false);
  EXPECT_LT(cost::predict(m.cpu, {a, b}, square, {8192, 8192}, 0, 8),
            0.6 * cost::predict(m.cpu, {a}, square, {16384}, 0, 16));
}

// With two devices the plan is still the best division the model sees, the shared memory's floor
// included: every pair of whole-tile device shares and every CPU thread count the plan weighs
// (16 cores; the devices alone feed on 8 threads each), within 0.1%.
TEST(CostModel, PlanOverTwoDevicesIsTheBestDivision) {
  const cost::Model m = h100_like();
  const cost::Side a{&m.device, 128, m.both_busy, m.cpu_busy, 0};
  const std::vector<cost::Side> pair{a, a};
  const int cores = 16;
  for (const cost::Shape& s :
       {shape(16384, 16384, 256, true, false), shape(16384, 16384, 256, true, true),
        shape(8192, 8192, 8192, false, false), shape(4096, 16384, 512, false, false)}) {
    const int64_t tile = 128, units = s.m / tile;
    const double inf = std::numeric_limits<double>::infinity();
    double alone = inf, split = inf;
    const int packing = m.device.feeds(s) ? 2 : 0;
    for (int threads : {0, 1, 2, 4, 8, 12, 13, 14}) {
      const int feeders = packing ? std::max(1, (cores - threads) / packing) : 0;
      for (int64_t u0 = 0; u0 <= units; ++u0)
        for (int64_t u1 = 0; u0 + u1 <= units; ++u1) {
          const int64_t cpu_rows = s.m - (u0 + u1) * tile;
          if ((threads == 0) != (cpu_rows == 0) || u0 + u1 == 0) continue;
          const double t = cost::predict(m.cpu, pair, s, {u0 * tile, u1 * tile}, threads, feeders);
          double& kind = threads == 0 ? alone : split;
          kind = std::min(kind, t);
        }
    }
    const double cpu_alone = m.cpu.seconds(s, s.m, cores);
    const double single = std::min(alone, cpu_alone);
    const double best = split * (1 + m.split_margin) < single ? split : single;
    const cost::Plan p = cost::best_plan(m.cpu, pair, s, cores, m.split_margin);
    EXPECT_LE(p.seconds, best * 1.001) << s.m << "x" << s.n << "x" << s.k << " pinned " << s.pinned;
    EXPECT_NEAR(p.seconds, cost::predict(m.cpu, pair, s, p.rows, p.cpu_threads, p.feeders), 1e-12);
  }
}

// Where only some operands lie in pinned memory, only the others are packed: C pinned beside
// ordinary A and B is copied as it is (its old values across the bus, none added on the host).
TEST(CostModel, MixedMemoryPacksOnlyOrdinaryOperands) {
  const cost::Model m = h100_like();
  const int64_t r = 4096, n = 8192, k = 256;
  const double e = 4, rate = cost::interpolate(m.device.pack_by_threads, 8);
  cost::Shape c_only = shape(r, n, k, true, false);
  c_only.c_pinned = true;
  EXPECT_TRUE(m.device.feeds(c_only));
  const auto c_pinned = m.device.parts(c_only, r, 8);
  EXPECT_DOUBLE_EQ(c_pinned.in, e * (r * k + k * n + r * n) / m.device.bus_in);
  EXPECT_DOUBLE_EQ(c_pinned.pack, e * (r * k + k * n) / rate);
  cost::Shape a_only = shape(r, n, k, true, false);
  a_only.a_pinned = true;
  EXPECT_DOUBLE_EQ(m.device.parts(a_only, r, 8).pack, e * (k * n + 1.5 * r * n) / rate);
  cost::Shape every = a_only;
  every.b_pinned = every.c_pinned = true;
  EXPECT_FALSE(m.device.feeds(every));
  EXPECT_EQ(m.device.parts(every, r, 8).pack, 0);
  EXPECT_DOUBLE_EQ(m.device.seconds(every, r, 8),
                   m.device.seconds(shape(r, n, k, true, true), r, 8));
}

// A device of another platform sees the caller's tandem_malloc memory as ordinary (pinned in the
// first platform's context): it packs every operand, as a plan with nothing pinned has it, while
// the first device beside it copies them as they are; so the plan gives it fewer rows than the
// first, and fewer than it would have if it saw the memory as pinned too.
TEST(CostModel, ADeviceOfAnotherPlatformPacksWhatTheFirstHasPinned) {
  const cost::Model m = h100_like();
  const cost::Side first{&m.device, 128, 1.0, 1.0, 0};
  cost::Side other{&m.device, 128, 1.0, 1.0, 1};
  other.pinning = cost::Pinning{};
  for (const cost::Shape& s :
       {shape(16384, 16384, 256, true, true), shape(8192, 8192, 8192, false, true)}) {
    cost::Shape ordinary = s;
    ordinary.pinned = false;
    EXPECT_TRUE(other.seen(s).packs_a() && other.seen(s).packs_c());
    EXPECT_DOUBLE_EQ(cost::predict(m.cpu, {first, other}, s, {0, s.m}, 0, 16),
                     cost::predict(m.cpu, {first}, ordinary, {s.m}, 0, 16))
        << "the other device alone: the call from ordinary memory";
    EXPECT_DOUBLE_EQ(cost::predict(m.cpu, {first, other}, s, {s.m, 0}, 0, 16),
                     cost::predict(m.cpu, {first}, s, {s.m}, 0, 16))
        << "the first alone: the call as pinned";
    const cost::Plan mixed = cost::best_plan(m.cpu, {first, other}, s, 16, 0.0);
    ASSERT_EQ(mixed.rows.size(), 2u);
    EXPECT_GT(mixed.rows[0], mixed.rows[1]) << s.m << "x" << s.n << "x" << s.k;
    const cost::Side pinned_too{&m.device, 128, 1.0, 1.0, 1};
    const cost::Plan both = cost::best_plan(m.cpu, {first, pinned_too}, s, 16, 0.0);
    EXPECT_LT(mixed.rows[1], both.rows[1]) << s.m << "x" << s.n << "x" << s.k;
    EXPECT_GT(mixed.seconds, both.seconds) << s.m << "x" << s.n << "x" << s.k;
  }
}

// With beta != 0, C's old values cross the bus only from pinned memory; from ordinary memory a
// discrete device's host adds them as it unpacks, reading C once more (half a copy per byte).
TEST(CostModel, OrdinaryMemoryAddsCOnTheHost) {
  const cost::Model m = h100_like();
  const int64_t r = 4096, n = 8192, k = 256;
  const double e = 4, rate = cost::interpolate(m.device.pack_by_threads, 8);
  const auto ordinary = m.device.parts(shape(r, n, k, true, false), r, 8);
  EXPECT_DOUBLE_EQ(ordinary.in, e * (r * k + k * n) / m.device.bus_in);
  EXPECT_DOUBLE_EQ(ordinary.pack, e * (r * k + k * n + 1.5 * r * n) / rate);
  const auto pinned = m.device.parts(shape(r, n, k, true, true), r, 8);
  EXPECT_DOUBLE_EQ(pinned.in, e * (r * k + k * n + r * n) / m.device.bus_in);
  EXPECT_EQ(pinned.pack, 0);
  const auto no_c = m.device.parts(shape(r, n, k, false, false), r, 8);
  EXPECT_DOUBLE_EQ(no_c.in, ordinary.in);
  EXPECT_DOUBLE_EQ(no_c.pack, e * (r * k + k * n + r * n) / rate);
}
