// tandem::Plan (include/tandem/plan.hpp, issue 44): a GEMM planned once and run many times.
// - Runs of one plan on different operands against a double-precision reference: both storage
//   orders, every transpose (and conjugation), awkward sizes, padded leading dimensions, alpha and
//   beta in {1, 0, -1.5} with NaN in C where beta is 0; under auto, gpu and hybrid, on a unified
//   device and on a discrete one (played by PoCL) from ordinary and tandem_malloc memory.
// - Bad shapes and options refused at creation, naming the argument; a run's NULL operand refused
//   with C untouched.
// - run_async from eight threads, plans made and dropped while their runs are in flight.
// - A device that fails in a plan's run leaves its rows to the CPU, C right; one retired after a
//   failure is planned out of the next run.
// - One plan kept for each memory and beta the runs meet, used again, made again after profiles
//   are read again; a moved-from plan refused.
#include "tandem/plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/seams.hpp"
#include "profile/store.hpp"
#include "reference.hpp"
#include "support/seam_values.hpp"
#include "tandem/tandem.hpp"

namespace tandem {
namespace {

const std::vector<test::Extents> kSizes = {{1, 1, 1}, {17, 33, 9}, {70, 45, 129}};

// One plan per call of the walk, run twice on fresh B and C, each run checked against the
// reference; `pinned`: the operands in tandem_malloc memory, else copies in ordinary memory.
template <class T>
void walk_plans(const Options& o, const std::string& name, bool pinned = false) {
  uint64_t seed = 41;
  int combo = 0;
  test::walk_calls<T>(
      kSizes, seed, combo,
      [&](Layout layout, Op op_a, Op op_b, const test::Extents& e, std::complex<double> alpha,
          std::complex<double> beta, int64_t pad, uint64_t s) {
        std::mt19937_64 rng(s);
        const bool ta = op_a != Op::NoTrans, tb = op_b != Op::NoTrans;
        const T sentinel = static_cast<T>(-777.25);
        auto a = test::make_matrix<T>(layout, ta, e.m, e.k, pad, rng, sentinel);
        a.conj = test::kComplex<T> && op_a == Op::ConjTrans;
        std::unique_ptr<Plan<T>> plan;
        for (int run = 0; run < 2; ++run) {
          auto b = test::make_matrix<T>(layout, tb, e.k, e.n, pad + 2, rng, sentinel);
          auto c = test::make_matrix<T>(layout, false, e.m, e.n, pad, rng, sentinel);
          b.conj = test::kComplex<T> && op_b == Op::ConjTrans;
          if (beta == 0.0)
            for (int64_t i = 0; i < e.m; ++i)
              for (int64_t j = 0; j < e.n; ++j) c.at(i, j) = std::numeric_limits<T>::quiet_NaN();
          const auto before = c;
          const test::Reference ref = test::reference(a, b, c, alpha, beta);
          if (!plan)
            plan =
                std::make_unique<Plan<T>>(layout, op_a, op_b, e.m, e.n, e.k, a.ld, b.ld, c.ld, o);
          const std::string what = name + (pinned ? " pinned" : "") + " m=" + std::to_string(e.m) +
                                   " n=" + std::to_string(e.n) + " k=" + std::to_string(e.k) +
                                   " run " + std::to_string(run) + " seed " + std::to_string(s);
          Report r;
          if (pinned) {
            // test::Matrix's storage is tandem_malloc memory.
            plan->run(test::scalar<T>(alpha), a.ptr(), b.ptr(), test::scalar<T>(beta), c.ptr(), &r);
          } else {
            // Copies in the caller's ordinary memory, run there, copied back.
            std::vector<T> oa(a.data.begin(), a.data.end()), ob(b.data.begin(), b.data.end()),
                oc(c.data.begin(), c.data.end());
            plan->run(test::scalar<T>(alpha), oa.data(), ob.data(), test::scalar<T>(beta),
                      oc.data(), &r);
            std::copy(oc.begin(), oc.end(), c.data.begin());
          }
          test::expect_matches(c, before, ref, e.k, what);
          // Under gpu every row of C (of its row-major view) is the device's.
          if (o.strategy == Strategy::Gpu && alpha != 0.0) {
            EXPECT_EQ(r.gpu_rows, layout == Layout::RowMajor ? e.m : e.n) << what;
          }
        }
      });
}

Options with(Strategy s) {
  Options o;
  o.strategy = s;
  if (s == Strategy::Hybrid) o.gpu_fraction = 0.5;
  return o;
}

TEST(Plan, RunsMatchTheReferenceOnAUnifiedDevice) {
  for (Strategy s : {Strategy::Auto, Strategy::Gpu, Strategy::Hybrid}) {
    walk_plans<float>(with(s), std::string("s ") + to_string(s));
    walk_plans<double>(with(s), std::string("d ") + to_string(s));
  }
  walk_plans<std::complex<float>>(with(Strategy::Hybrid), "c hybrid");
  walk_plans<std::complex<double>>(with(Strategy::Gpu), "z gpu");
}

TEST(Plan, RunsMatchTheReferenceOnADiscreteDeviceFromBothMemories) {
  const detail::seams::Override discrete(test::discrete(false, /*pin_every_block=*/true));
  for (bool pinned : {false, true}) {
    walk_plans<float>(with(Strategy::Hybrid), "s hybrid discrete", pinned);
    walk_plans<double>(with(Strategy::Gpu), "d gpu discrete", pinned);
  }
}

TEST(Plan, CreationRefusesAShapeOrOptionNamingTheArgument) {
  const auto refused = [](auto make, int argument, const std::string& words) {
    try {
      make();
      ADD_FAILURE() << "accepted: " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::InvalidArgument) << e.what();
      EXPECT_EQ(e.argument(), argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("sgemm plan"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  using P = Plan<float>;
  const Layout row = Layout::RowMajor;
  const Op no = Op::NoTrans;
  refused([&] { P(row, no, no, -1, 4, 4, 4, 4, 4); }, 4, "m");
  refused([&] { P(row, no, no, 4, 4, -2, 4, 4, 4); }, 6, "k");
  refused([&] { P(row, no, no, 4, 4, 8, 4, 8, 4); }, 7, "lda");
  refused([&] { P(row, no, no, 4, 8, 4, 4, 4, 8); }, 8, "ldb");
  refused([&] { P(Layout::ColMajor, no, no, 8, 4, 4, 8, 4, 4); }, 9, "ldc");
  refused([&] { P(row, static_cast<Op>(7), no, 4, 4, 4, 4, 4, 4); }, 2, "trans_a");
  Options bad;
  bad.cpu_threads = 0;
  try {
    P(row, no, no, 4, 4, 4, 4, 4, 4, bad);
    ADD_FAILURE() << "cpu_threads = 0 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cpu_threads"), std::string::npos) << e.what();
  }
  // An empty shape is a plan too: its runs check their operands and write nothing.
  const P empty(row, no, no, 0, 5, 3, 3, 5, 5);
  EXPECT_EQ(empty.m(), 0);
  EXPECT_EQ(empty.n(), 5);
  EXPECT_EQ(empty.k(), 3);
}

TEST(Plan, ARunRefusesANullOperandAndLeavesCUntouched) {
  const int64_t n = 24;
  const Plan<double> plan(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, n, n, n);
  std::vector<double> a(n * n, 1.0), b(n * n, 2.0), c(n * n, 5.0);
  for (const auto& [pa, pb, pc, argument, name] :
       {std::tuple{static_cast<const double*>(nullptr), b.data(), c.data(), 2, "(a)"},
        std::tuple{static_cast<const double*>(a.data()), static_cast<double*>(nullptr), c.data(), 3,
                   "(b)"},
        std::tuple{static_cast<const double*>(a.data()), b.data(), static_cast<double*>(nullptr), 5,
                   "(c)"}}) {
    try {
      plan.run(1.0, pa, pb, 0.0, pc);
      ADD_FAILURE() << name << " NULL accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.argument(), argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("dgemm plan"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](double x) { return x == 5.0; }));
  // And then runs as asked: C = 1 * A B + 0.5 C.
  plan.run(1.0, a.data(), b.data(), 0.5, c.data());
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](double x) { return x == 2.0 * n + 2.5; }));
  // alpha = 0 reads neither A nor B: C = beta C.
  plan.run(0.0, nullptr, nullptr, 2.0, c.data());
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](double x) { return x == 4.0 * n + 5.0; }));
}

// Eight threads, each making plans of its own sizes and strategies, starting three runs on each
// and dropping the plan before waiting on them: every C right, every future's report filled.
TEST(Plan, RunsAsyncFromEightThreadsWhilePlansAreMadeAndDropped) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t] {
      for (int rep = 0; rep < 3; ++rep) {
        const int64_t m = 40 + 11 * t, n = 33 + 5 * rep, k = 20 + t;
        const Strategy s = (t + rep) % 3 == 0   ? Strategy::Cpu
                           : (t + rep) % 3 == 1 ? Strategy::Gpu
                                                : Strategy::Hybrid;
        std::vector<float> a(m * k, 0.5f), b(k * n, 0.5f);
        std::vector<std::vector<float>> cs(3, std::vector<float>(m * n, -1.0f));
        std::vector<std::future<Report>> runs;
        {
          const Plan<float> plan(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, k, n, n,
                                 with(s));
          for (auto& c : cs)
            runs.push_back(plan.run_async(2.0f, a.data(), b.data(), 0.0f, c.data()));
        }  // the plan goes; its runs hold what they need
        for (auto& run : runs) {
          const Report r = run.get();
          EXPECT_EQ(r.m, m);
          EXPECT_GT(r.seconds(), 0.0);
        }
        const float want = 0.5f * static_cast<float>(k);
        for (const auto& c : cs)
          EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](float x) { return x == want; }))
              << "thread " << t << " rep " << rep << " " << to_string(s);
      }
    });
  for (auto& th : threads) th.join();
}

TEST(Plan, AnAsyncRunsErrorComesOutOfItsFuture) {
  const Plan<float> plan(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 8, 8, 8, 8, 8, 8);
  std::vector<float> b(64, 1.0f), c(64, 3.0f);
  std::future<Report> run = plan.run_async(1.0f, nullptr, b.data(), 0.0f, c.data());
  EXPECT_THROW(run.get(), Error);
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](float x) { return x == 3.0f; }));
}

// A device lost in a plan's run: its rows go to the CPU, with the executor's warning, and C is
// right; the plan's next run tries the device again, as tandem::gemm's next call would.
TEST(Plan, ADeviceThatFailsInARunLeavesItsRowsToTheCpu) {
  const int64_t n = 96;
  detail::seams::Values fail = test::discrete();
  fail.fail_device = 0;
  fail.fail_after_rows = 0;
  const detail::seams::Override seams(fail);
  const Plan<float> plan(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, n, n, n,
                         with(Strategy::Hybrid));
  std::vector<float> a(n * n, 0.25f), b(n * n, 2.0f);
  for (int run = 0; run < 2; ++run) {
    std::vector<float> c(n * n, std::numeric_limits<float>::quiet_NaN());
    ::testing::internal::CaptureStderr();
    Report r;
    plan.run(1.0f, a.data(), b.data(), 0.0f, c.data(), &r);
    const std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](float x) { return x == 0.5f * n; }))
        << "run " << run;
    EXPECT_TRUE(r.fell_back) << "run " << run << ": the CPU took the failed device's rows";
    if (run == 0) {
      EXPECT_NE(said, "") << "one warning";
    }
  }
}

// A plan keeps one plan for each memory and beta its runs meet, and uses it again: beta != 0 and
// tandem_malloc memory (pinned on a discrete device, played by PoCL) each add one, a second run
// of either adds none; profiles read again make them again, from the run that needs one.
TEST(Plan, KeepsOnePlanForEachMemoryAndBetaItsRunsMeet) {
  const detail::seams::Override discrete(test::discrete(false, /*pin_every_block=*/true));
  const int64_t n = 80;
  const Plan<float> plan(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, n, n, n,
                         with(Strategy::Hybrid));
  EXPECT_EQ(plan.plans_kept(), 1u) << "the creation's: ordinary memory, beta 0";
  std::vector<float> a(n * n, 1.0f), b(n * n, 0.5f), c(n * n, 2.0f);
  std::vector<float, Allocator<float>> pa(a.begin(), a.end()), pb(b.begin(), b.end()),
      pc(c.begin(), c.end());
  const auto all = [&](const auto& v, float want) {
    return std::all_of(v.begin(), v.end(), [&](float x) { return x == want; });
  };
  plan.run(1.0f, a.data(), b.data(), 0.0f, c.data());
  EXPECT_TRUE(all(c, 0.5f * n));
  EXPECT_EQ(plan.plans_kept(), 1u) << "ordinary memory, beta 0: the creation's plan";
  plan.run(1.0f, a.data(), b.data(), 1.0f, c.data());
  EXPECT_TRUE(all(c, 1.0f * n));
  EXPECT_EQ(plan.plans_kept(), 2u) << "beta != 0 reads C: a plan of its own";
  plan.run(1.0f, a.data(), b.data(), 2.0f, c.data());
  EXPECT_TRUE(all(c, 2.5f * n));
  EXPECT_EQ(plan.plans_kept(), 2u) << "another beta != 0: the same plan";
  plan.run(1.0f, pa.data(), pb.data(), 0.0f, pc.data());
  EXPECT_TRUE(all(pc, 0.5f * n));
  EXPECT_EQ(plan.plans_kept(), 3u) << "operands in the device's pinned memory: a plan of their own";
  plan.run(1.0f, pa.data(), pb.data(), 0.0f, pc.data());
  EXPECT_EQ(plan.plans_kept(), 3u);
  detail::profile::forget();
  plan.run(1.0f, a.data(), b.data(), 0.0f, c.data());
  EXPECT_TRUE(all(c, 0.5f * n));
  EXPECT_EQ(plan.plans_kept(), 1u) << "profiles read again: the plans are made again";
  Plan<float> moved = plan;
  const Plan<float> taken = std::move(moved);
  EXPECT_EQ(taken.plans_kept(), 1u) << "copies share the plans";
  EXPECT_THROW((void)moved.m(), Error) << "a moved-from plan is refused, not a crash";
}

// A device whose queues could not be drained after a failure is retired (gpu::retire): the kept
// plan that gave it rows is made again without it, so the next run gives it nothing, as
// tandem::gemm's next call would not.
TEST(Plan, ADeviceRetiredAfterAFailureGetsNoRowsFromTheNextRun) {
  const int64_t n = 96;
  detail::seams::Values fail = test::discrete();
  fail.fail_device = 0;
  fail.fail_after_rows = 0;
  fail.fail_drain = 0;
  const detail::seams::Override seams(fail);
  const Plan<float> plan(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, n, n, n,
                         with(Strategy::Hybrid));
  std::vector<float> a(n * n, 0.25f), b(n * n, 2.0f), c(n * n, 1.0f);
  ::testing::internal::CaptureStderr();
  Report first, next;
  plan.run(1.0f, a.data(), b.data(), 0.0f, c.data(), &first);
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](float x) { return x == 0.5f * n; }));
  EXPECT_TRUE(first.fell_back);
  EXPECT_FALSE(first.devices.empty()) << "the device took part, and failed";
  std::fill(c.begin(), c.end(), 1.0f);
  plan.run(1.0f, a.data(), b.data(), 0.0f, c.data(), &next);
  (void)::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](float x) { return x == 0.5f * n; }));
  EXPECT_TRUE(next.devices.empty()) << "the retired device is planned out";
  EXPECT_EQ(next.cpu_rows, n);
}

}  // namespace
}  // namespace tandem
