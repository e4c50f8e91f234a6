// Resident operands (tandem::Resident, include/tandem/plan.hpp, issue 44): a plan's operand kept on
// its discrete devices between runs.
// - Runs from a resident A or B against a double-precision reference: both storage orders, every
//   transpose (and conjugation), awkward sizes, padded leading dimensions, alpha and beta in
//   {1, 0, -1.5}; under gpu and hybrid, static and dynamic balance, the direct kernel; on a
//   discrete device played by PoCL, the handle made from ordinary and from tandem_malloc memory.
//   Each run reports B (the row-major view's) as resident on every device.
// - Runs whose plan is not the creation's (another memory, beta != 0) compute from a copy too.
// - The copy is what the host held at creation or update(): a run after the host changed without
//   update() computes from the old values (under gpu, every row on the device), after it from
//   the new; a unified device reads the host in place and keeps nothing.
// - The operand whose rows are divided among the sides (A of a row-major plan) is kept whole on
//   each device; a share computes from its band.
// - Refusals naming the argument: NULL, another plan's handle, the other operand's handle, a
//   moved-from handle; a copy larger than the device's memory (TooLarge), nothing kept.
// - A device that fails to take its copy keeps none, with one warning, and runs stay right; a
//   device failing in a run with a copy leaves its rows to the CPU.
// - Eight threads run asynchronously from handles they drop, update and make again among their
//   runs: every C right, and the device memory the copies held is all given back.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/seams.hpp"
#include "gpu/device.hpp"
#include "reference.hpp"
#include "support/seam_values.hpp"
#include "tandem/plan.hpp"
#include "tandem/tandem.hpp"

namespace tandem {
namespace {

const std::vector<test::Extents> kSizes = {{1, 1, 1}, {17, 33, 9}, {70, 45, 129}};

Options with(Strategy s, Balance balance = Balance::Static) {
  Options o;
  o.strategy = s;
  o.balance = balance;
  if (s == Strategy::Hybrid) o.gpu_fraction = 0.5;
  return o;
}

// The device memory resident copies hold on the default device.
int64_t held_on_device() { return detail::gpu::resident_bytes(*detail::gpu::open_device("")); }

// The default device's index, as the failure seams name it.
int default_index() { return detail::gpu::info(*detail::gpu::open_device("")).index; }

// One plan per call of the walk, with a resident operand for the call's A (`which` 'A') or B
// ('B'), run twice with fresh other operands and C, each run checked against the reference.
// `pinned`: the kept operand in tandem_malloc memory, else a copy in ordinary memory. Under gpu
// (every row on the device), each run reports the operand resident: op(B) of the row-major view
// (B of a row-major call, A of a column-major one) on every device, and op(A) on a device whose
// rows begin where its kernel can read the kept A (the first device's do).
template <class T>
void walk_resident(const Options& o, const std::string& name, char which, bool pinned = false) {
  uint64_t seed = 7;
  int combo = 0;
  test::walk_calls<T>(
      kSizes, seed, combo,
      [&](Layout layout, Op op_a, Op op_b, const test::Extents& e, std::complex<double> alpha,
          std::complex<double> beta, int64_t pad, uint64_t s) {
        std::mt19937_64 rng(s);
        const bool ta = op_a != Op::NoTrans, tb = op_b != Op::NoTrans;
        const bool keep_a = which == 'A';
        const bool row_major_b = keep_a == (layout == Layout::ColMajor);
        const T sentinel = static_cast<T>(-777.25);
        auto kept = keep_a ? test::make_matrix<T>(layout, ta, e.m, e.k, pad, rng, sentinel)
                           : test::make_matrix<T>(layout, tb, e.k, e.n, pad + 2, rng, sentinel);
        kept.conj = test::kComplex<T> && (keep_a ? op_a : op_b) == Op::ConjTrans;
        std::vector<T> ordinary(kept.data.begin(), kept.data.end());
        const T* host = pinned ? kept.ptr() : ordinary.data();
        std::unique_ptr<Plan<T>> plan;
        std::unique_ptr<Resident<T>> resident;
        for (int run = 0; run < 2; ++run) {
          auto other = keep_a ? test::make_matrix<T>(layout, tb, e.k, e.n, pad + 2, rng, sentinel)
                              : test::make_matrix<T>(layout, ta, e.m, e.k, pad, rng, sentinel);
          other.conj = test::kComplex<T> && (keep_a ? op_b : op_a) == Op::ConjTrans;
          auto c = test::make_matrix<T>(layout, false, e.m, e.n, pad, rng, sentinel);
          if (beta == 0.0)
            for (int64_t i = 0; i < e.m; ++i)
              for (int64_t j = 0; j < e.n; ++j) c.at(i, j) = std::numeric_limits<T>::quiet_NaN();
          const auto before = c;
          const auto& a = keep_a ? kept : other;
          const auto& b = keep_a ? other : kept;
          const test::Reference ref = test::reference(a, b, c, alpha, beta);
          if (!plan) {
            plan =
                std::make_unique<Plan<T>>(layout, op_a, op_b, e.m, e.n, e.k, a.ld, b.ld, c.ld, o);
            resident = std::make_unique<Resident<T>>(keep_a ? plan->resident_a(host)
                                                            : plan->resident_b(host));
          }
          const std::string what = name + " " + which + (pinned ? " pinned" : "") +
                                   " m=" + std::to_string(e.m) + " n=" + std::to_string(e.n) +
                                   " k=" + std::to_string(e.k) + " run " + std::to_string(run) +
                                   " seed " + std::to_string(s);
          std::vector<T> oo(other.data.begin(), other.data.end()), oc(c.data.begin(), c.data.end());
          const T al = test::scalar<T>(alpha), be = test::scalar<T>(beta);
          Report r;
          if (keep_a)
            plan->run(al, *resident, oo.data() + other.offset, be, oc.data(), &r);
          else
            plan->run(al, oo.data() + other.offset, *resident, be, oc.data(), &r);
          std::copy(oc.begin(), oc.end(), c.data.begin());
          test::expect_matches(c, before, ref, e.k, what);
          if (alpha == 0.0) continue;
          EXPECT_GT(resident->device_bytes(), 0) << what;
          for (const Report::Device& d : r.devices) {
            if (d.rows > 0 && (row_major_b || d.row0 == 0) && o.strategy == Strategy::Gpu) {
              const Report::Buffer path = row_major_b ? d.b : d.a;
              EXPECT_EQ(path, Report::Buffer::Resident) << what << ": " << to_string(path);
            }
          }
          if (o.strategy == Strategy::Gpu) {
            EXPECT_EQ(r.gpu_rows, layout == Layout::RowMajor ? e.m : e.n) << what;
          }
        }
      });
}

TEST(Resident, RunsMatchTheReferenceOnADiscreteDevice) {
  const detail::seams::Override discrete(test::discrete(false, /*pin_every_block=*/true));
  for (char which : {'A', 'B'}) {
    for (bool pinned : {false, true}) {
      walk_resident<float>(with(Strategy::Gpu), "s gpu", which, pinned);
      walk_resident<double>(with(Strategy::Hybrid), "d hybrid", which, pinned);
    }
    walk_resident<std::complex<float>>(with(Strategy::Hybrid, Balance::Dynamic), "c dynamic",
                                       which);
    walk_resident<std::complex<double>>(with(Strategy::Gpu), "z gpu", which);
    Options direct = with(Strategy::Gpu);
    direct.direct = true;
    walk_resident<float>(direct, "s direct", which);
  }
}

TEST(Resident, RunsMatchTheReferenceWithThePipelinesChunks) {
  const detail::seams::Override chunked(test::discrete(/*chunk_every_share=*/true));
  for (char which : {'A', 'B'}) {
    walk_resident<float>(with(Strategy::Gpu), "s gpu chunked", which);
    walk_resident<double>(with(Strategy::Hybrid, Balance::Dynamic), "d dynamic chunked", which);
  }
}

// A row-major plan, n x n, every element of A 1 and of B `b`: each element of C is n * b.
struct Square {
  static constexpr int64_t n = 64;
  std::vector<float> a = std::vector<float>(n * n, 1.0f), b = std::vector<float>(n * n, 2.0f),
                     c = std::vector<float>(n * n, 0.0f);
  Plan<float> plan;
  explicit Square(const Options& o)
      : plan(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, n, n, n, o) {}
  bool all(float want) const {
    return std::all_of(c.begin(), c.end(), [&](float x) { return x == want; });
  }
};

TEST(Resident, TheCopyIsTheHostsAsOfItsCreationOrUpdate) {
  const detail::seams::Override discrete(test::discrete());
  Square sq(with(Strategy::Gpu));
  Resident<float> b = sq.plan.resident_b(sq.b.data());
  EXPECT_EQ(b.operand(), 'B');
  EXPECT_EQ(b.host(), sq.b.data());
  EXPECT_GE(b.device_bytes(), static_cast<int64_t>(sq.b.size() * sizeof(float)));
  Report r;
  sq.plan.run(1.0f, sq.a.data(), b, 0.0f, sq.c.data(), &r);
  EXPECT_TRUE(sq.all(2.0f * Square::n));
  ASSERT_FALSE(r.devices.empty());
  int64_t bytes_in = 0;
  for (const Report::Device& d : r.devices) {
    if (d.rows > 0) {
      EXPECT_EQ(d.b, Report::Buffer::Resident);
    }
    bytes_in += d.bytes_in;
  }
  EXPECT_EQ(bytes_in, static_cast<int64_t>(sq.a.size() * sizeof(float)))
      << "only A crosses the bus";
  std::fill(sq.b.begin(), sq.b.end(), 3.0f);
  sq.plan.run(1.0f, sq.a.data(), b, 0.0f, sq.c.data());
  EXPECT_TRUE(sq.all(2.0f * Square::n)) << "the device computes from the copy it keeps";
  b.update();
  sq.plan.run(1.0f, sq.a.data(), b, 0.0f, sq.c.data());
  EXPECT_TRUE(sq.all(3.0f * Square::n)) << "update() sent the host's new values";
}

// Runs whose plan differs from the creation's (beta != 0; A and C in tandem_malloc memory, pinned
// on the discrete device) compute from a copy too: the creation's where their kernel reads it as
// it is, else one made at their first run.
TEST(Resident, RunsOfEveryKeptPlanComputeFromACopy) {
  const detail::seams::Override discrete(test::discrete(false, /*pin_every_block=*/true));
  Square sq(with(Strategy::Gpu));
  std::vector<float, Allocator<float>> pa(sq.a.begin(), sq.a.end()), pc(sq.c.size(), 1.0f);
  Resident<float> b = sq.plan.resident_b(sq.b.data());
  const int64_t made = b.device_bytes();
  for (int run = 0; run < 2; ++run) {
    Report r;
    std::fill(pc.begin(), pc.end(), 1.0f);
    sq.plan.run(1.0f, pa.data(), b, 0.5f, pc.data(), &r);
    EXPECT_TRUE(std::all_of(pc.begin(), pc.end(), [](float x) { return x == 0.5f + 2.0f * 64; }));
    ASSERT_FALSE(r.devices.empty());
    for (const Report::Device& d : r.devices) {
      if (d.rows > 0) {
        EXPECT_EQ(d.b, Report::Buffer::Resident) << "run " << run;
      }
    }
  }
  EXPECT_EQ(sq.plan.plans_kept(), 2u) << "the creation's plan and the pinned one with beta";
  EXPECT_GE(b.device_bytes(), made) << "the creation's copy, and one more if the kernel differs";
}

TEST(Resident, AUnifiedDeviceReadsTheHostInPlaceAndKeepsNothing) {
  detail::seams::Values in_place;
  in_place.assume_unified = true;  // as an APU (on the GPU host, the H100 played as one)
  const detail::seams::Override unified(in_place);
  Square sq(with(Strategy::Gpu));
  Resident<float> b = sq.plan.resident_b(sq.b.data());
  EXPECT_EQ(b.device_bytes(), 0);
  std::fill(sq.b.begin(), sq.b.end(), 3.0f);
  sq.plan.run(1.0f, sq.a.data(), b, 0.0f, sq.c.data());
  EXPECT_TRUE(sq.all(3.0f * Square::n)) << "no copy: the host's values as they are";
}

// A of a row-major plan, whose rows are divided among the sides: each device keeps all of it, and
// its share computes from its own band; the CPU's rows read the host.
TEST(Resident, TheOperandDividedAmongTheSidesIsKeptWholeOnEachDevice) {
  const detail::seams::Override discrete(test::discrete());
  Square sq(with(Strategy::Gpu));
  Resident<float> a = sq.plan.resident_a(sq.a.data());
  EXPECT_EQ(a.operand(), 'A');
  EXPECT_GE(a.device_bytes(), static_cast<int64_t>(sq.a.size() * sizeof(float)));
  Report r;
  sq.plan.run(1.0f, a, sq.b.data(), 0.0f, sq.c.data(), &r);
  EXPECT_TRUE(sq.all(2.0f * Square::n));
  for (const Report::Device& d : r.devices) {
    if (d.rows > 0) {
      EXPECT_EQ(d.a, Report::Buffer::Resident) << d.name << " from row " << d.row0;
      EXPECT_EQ(d.bytes_in, static_cast<int64_t>(sq.b.size() * sizeof(float)))
          << "B crosses the bus, not A";
    }
  }
  std::fill(sq.a.begin(), sq.a.end(), 0.5f);
  sq.plan.run(1.0f, a, sq.b.data(), 0.0f, sq.c.data());
  EXPECT_TRUE(sq.all(2.0f * Square::n)) << "the copy, until an update";
  a.update();
  sq.plan.run(1.0f, a, sq.b.data(), 0.0f, sq.c.data());
  EXPECT_TRUE(sq.all(1.0f * Square::n)) << "the host's new values";
  Square hybrid(with(Strategy::Hybrid));
  Resident<float> ha = hybrid.plan.resident_a(hybrid.a.data());
  hybrid.plan.run(1.0f, ha, hybrid.b.data(), 0.0f, hybrid.c.data());
  EXPECT_TRUE(hybrid.all(2.0f * Square::n)) << "the CPU's rows from the host, the device's kept";
}

TEST(Resident, RefusalsNameTheArgument) {
  const detail::seams::Override discrete(test::discrete());
  Square sq(with(Strategy::Gpu)), other(with(Strategy::Gpu));
  const auto refused = [](auto f, Error::Kind kind, int argument, const std::string& words) {
    try {
      f();
      ADD_FAILURE() << "accepted: " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_EQ(e.argument(), argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  const auto invalid = Error::Kind::InvalidArgument;
  refused([&] { (void)sq.plan.resident_b(nullptr); }, invalid, 1, "argument 1 (b) is NULL");
  Resident<float> theirs = other.plan.resident_b(other.b.data());
  Resident<float> b = sq.plan.resident_b(sq.b.data());
  Resident<float> a = sq.plan.resident_a(sq.a.data());
  std::fill(sq.c.begin(), sq.c.end(), 5.0f);
  refused([&] { sq.plan.run(1.0f, sq.a.data(), theirs, 0.0f, sq.c.data()); }, invalid, 3,
          "another plan");
  refused([&] { sq.plan.run(1.0f, sq.a.data(), a, 0.0f, sq.c.data()); }, invalid, 3,
          "is a resident A, not B");
  refused([&] { (void)sq.plan.run_async(1.0f, b, sq.b.data(), 0.0f, sq.c.data()); }, invalid, 2,
          "is a resident B, not A");
  Resident<float> moved = std::move(b);
  refused([&] { sq.plan.run(1.0f, sq.a.data(), b, 0.0f, sq.c.data()); }, invalid, 3, "moved from");
  refused([&] { b.update(); }, invalid, 0, "moved from");
  EXPECT_TRUE(sq.all(5.0f)) << "C untouched";
  sq.plan.run(1.0f, sq.a.data(), moved, 0.0f, sq.c.data());
  EXPECT_TRUE(sq.all(2.0f * Square::n)) << "the handle it moved to runs";

  // B of 2^36 floats is more than the device has: refused before any of it is read or sent.
  const int64_t big = int64_t{1} << 18;
  const Plan<float> huge(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 16, big, big, big, big, big,
                         with(Strategy::Gpu));
  const int64_t before = held_on_device();
  refused([&] { (void)huge.resident_b(sq.b.data()); }, Error::Kind::TooLarge, 1,
          "cannot be kept on the devices: its copy needs");
  EXPECT_EQ(held_on_device(), before) << "nothing kept";
}

TEST(Resident, ADeviceThatFailsToTakeItsCopyKeepsNoneAndRunsStayRight) {
  detail::seams::Values fail = test::discrete();
  fail.fail_device = default_index();
  fail.fail_b_piece = 0;
  const detail::seams::Override seams(fail);
  Options o = with(Strategy::Hybrid);
  o.device = std::to_string(default_index());  // alone: another device would keep its copy
  Square sq(o);
  ::testing::internal::CaptureStderr();
  Resident<float> b = sq.plan.resident_b(sq.b.data());
  sq.plan.run(1.0f, sq.a.data(), b, 0.0f, sq.c.data());
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(b.device_bytes(), 0);
  EXPECT_NE(said.find("keeps no copy of B"), std::string::npos) << said;
  EXPECT_TRUE(sq.all(2.0f * Square::n));
}

// The same where the device's queues then cannot be drained (the seam fail_drain): it may still
// use what the copy was sent through, so it is retired as a call's share would retire it (a
// device that only declined a copy stays in use, above), and the runs are the CPU's.
TEST(Resident, ADeviceThatFailsToTakeItsCopyAndCannotBeDrainedIsRetired) {
  detail::seams::Values fail = test::discrete();
  fail.fail_device = default_index();
  fail.fail_b_piece = 0;
  fail.fail_drain = default_index();
  const detail::seams::Override seams(fail);
  Options o = with(Strategy::Hybrid);
  o.device = std::to_string(default_index());
  Square sq(o);
  ::testing::internal::CaptureStderr();
  Resident<float> b = sq.plan.resident_b(sq.b.data());
  EXPECT_THROW((void)detail::gpu::open_device(*o.device), Error) << "taken out of use";
  Report r;
  sq.plan.run(1.0f, sq.a.data(), b, 0.0f, sq.c.data(), &r);
  (void)::testing::internal::GetCapturedStderr();
  EXPECT_EQ(b.device_bytes(), 0);
  EXPECT_EQ(r.cpu_rows, Square::n);
  EXPECT_TRUE(sq.all(2.0f * Square::n));
}

TEST(Resident, ADeviceFailingInARunWithACopyLeavesItsRowsToTheCpu) {
  const detail::seams::Override discrete(test::discrete());
  Square sq(with(Strategy::Hybrid));
  Resident<float> b = sq.plan.resident_b(sq.b.data());
  ASSERT_GT(b.device_bytes(), 0);
  detail::seams::Values fail = test::discrete();
  fail.fail_device = default_index();
  fail.fail_after_rows = 0;
  const detail::seams::Override failing(fail);
  for (int run = 0; run < 2; ++run) {
    std::fill(sq.c.begin(), sq.c.end(), std::numeric_limits<float>::quiet_NaN());
    ::testing::internal::CaptureStderr();
    Report r;
    sq.plan.run(1.0f, sq.a.data(), b, 0.0f, sq.c.data(), &r);
    (void)::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(sq.all(2.0f * Square::n)) << "run " << run;
    EXPECT_TRUE(r.fell_back) << "run " << run;
  }
}

// Eight threads, each with its own plan and a resident operand, start runs, drop the handle (or
// update it, or make another) while they are in flight, and check every C; at the end the copies'
// device memory is all given back.
TEST(Resident, AsyncRunsFromEightThreadsOutliveTheirHandles) {
  const detail::seams::Override discrete(test::discrete());
  const int64_t held = held_on_device();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t] {
      const int64_t m = 30 + 7 * t, n = 41 + t, k = 25 + 3 * t;
      const Strategy s = t % 2 == 0 ? Strategy::Gpu : Strategy::Hybrid;
      const Plan<float> plan(Layout::ColMajor, Op::NoTrans, Op::NoTrans, m, n, k, m, k, m, with(s));
      std::vector<float> a(m * k, 0.5f), b(k * n, 2.0f);
      for (int rep = 0; rep < 3; ++rep) {
        std::vector<std::vector<float>> cs(3, std::vector<float>(m * n, -1.0f));
        std::vector<std::future<Report>> runs;
        {
          Resident<float> kept = plan.resident_a(a.data());
          for (auto& c : cs) {
            runs.push_back(plan.run_async(1.0f, kept, b.data(), 0.0f, c.data()));
            if (rep == 1) kept.update();  // the host is unchanged: every run's C is the same
          }
        }  // the handle goes; its runs hold their copies
        for (auto& run : runs) EXPECT_EQ(run.get().m, m);
        const float want = static_cast<float>(k);
        for (const auto& c : cs)
          EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](float x) { return x == want; }))
              << "thread " << t << " rep " << rep;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(held_on_device(), held) << "every copy's memory given back";
}

}  // namespace
}  // namespace tandem
