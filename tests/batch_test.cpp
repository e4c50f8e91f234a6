// Batches (tandem::gemm_batch, gemm_batch_strided and their C forms; issue 43): random batches in
// every precision, layout, transpose and conjugation, awkward sizes, counts from 1 to hundreds,
// strides of 0 (one A or B for all), tight and gapped, C matrices that are tiles of one matrix,
// alpha 0 over NaN operands and beta 0 over NaN C, run on the CPU's cores and, on PoCL, one call
// per problem under gpu and hybrid; each C against a reference computed in double, and every
// element of the buffers outside the batch's C unchanged. Then the refusals: every invalid argument
// names its position (in the C signature) and group or problem, and leaves every C of the batch
// as it was; C matrices that share an element with each other or with an operand are refused. The
// overlap rule itself (src/base/overlap.hpp) is held to a brute-force count of elements.
#include "plan/batch.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/overlap.hpp"
#include "base/text.hpp"
#include "gpu/device.hpp"
#include "plan/device_profile.hpp"
#include "profile/choice.hpp"
#include "profile/defaults.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "reference.hpp"
#include "seam_override.hpp"
#include "seam_values.hpp"
#include "tandem/tandem.h"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

// Element (i, j) of op(X) for X stored at x with leading dimension ld.
template <class T>
std::complex<double> op_element(Layout layout, Op op, const T* x, int64_t ld, int64_t i,
                                int64_t j) {
  const bool t = op != Op::NoTrans;
  const int64_t r = t ? j : i, c = t ? i : j;
  const std::complex<double> v = widen(x[layout == Layout::RowMajor ? r * ld + c : c * ld + r]);
  return kComplex<T> && op == Op::ConjTrans ? std::conj(v) : v;
}

// Where C's element (i, j) lies from C's start.
int64_t c_index(Layout layout, int64_t ldc, int64_t i, int64_t j) {
  return layout == Layout::RowMajor ? i * ldc + j : j * ldc + i;
}

// One problem of a batch as the test sees it: its operands' offsets into the batch's buffers.
struct Where {
  int64_t a = 0, b = 0, c = 0;
};
struct Shape {
  Op op_a = Op::NoTrans, op_b = Op::NoTrans;
  int64_t m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
  std::complex<double> alpha = 1, beta = 0;
};

// The stored extents of A (rows x cols as stored in `layout`), B and C, in elements spanned.
int64_t spanned(Layout layout, int64_t rows, int64_t cols, int64_t ld) {
  if (rows == 0 || cols == 0) return 0;
  return layout == Layout::RowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}
int64_t a_span(Layout l, const Shape& s) {
  return s.op_a == Op::NoTrans ? spanned(l, s.m, s.k, s.lda) : spanned(l, s.k, s.m, s.lda);
}
int64_t b_span(Layout l, const Shape& s) {
  return s.op_b == Op::NoTrans ? spanned(l, s.k, s.n, s.ldb) : spanned(l, s.n, s.k, s.ldb);
}
int64_t c_span(Layout l, const Shape& s) { return spanned(l, s.m, s.n, s.ldc); }

// Buffers for A, B and C of a batch, random, with C as it was before the call.
template <class T>
struct Buffers {
  std::vector<T> a, b, c, a_before, b_before, c_before;
};

template <class T>
std::vector<T> random_values(int64_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> v(static_cast<size_t>(std::max<int64_t>(count, 1)));
  for (T& x : v) {
    const double re = d(rng);
    x = scalar<T>({re, kComplex<T> ? d(rng) : 0.0});
  }
  return v;
}

// Checks every problem's C against the reference from the buffers before the call, and every
// element of C's buffer no problem writes against its old value.
template <class T>
void expect_batch(Layout layout, const std::vector<Shape>& shapes, const std::vector<Where>& at,
                  const Buffers<T>& x, const std::string& what) {
  std::vector<bool> written(x.c.size(), false);
  const double eps = std::numeric_limits<real_t<T>>::epsilon() * (kComplex<T> ? 2.0 : 1.0);
  int failures = 0;
  for (size_t p = 0; p < at.size(); ++p) {
    const Shape& s = shapes[p];
    const T *a = x.a.data() + at[p].a, *b = x.b.data() + at[p].b;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        std::complex<double> sum = 0;
        double magnitude = 0;
        if (s.alpha != 0.0)
          for (int64_t q = 0; q < s.k; ++q) {
            const std::complex<double> v = op_element(layout, s.op_a, a, s.lda, i, q) *
                                           op_element(layout, s.op_b, b, s.ldb, q, j);
            sum += v;
            magnitude += std::abs(v);
          }
        const auto idx = static_cast<size_t>(at[p].c + c_index(layout, s.ldc, i, j));
        written[idx] = true;
        std::complex<double> want = s.alpha * sum;
        double bound = std::abs(s.alpha) * magnitude;
        if (s.beta != 0.0) {
          want += s.beta * widen(x.c_before[idx]);
          bound += std::abs(s.beta * widen(x.c_before[idx]));
        }
        const double tol = 2.0 * static_cast<double>(s.k + 2) * eps * bound +
                           std::numeric_limits<real_t<T>>::min();
        if (!(std::abs(widen(x.c[idx]) - want) <= tol) && ++failures <= 3)
          ADD_FAILURE() << what << ": problem " << p << " C(" << i << "," << j
                        << ") = " << widen(x.c[idx]) << ", expected " << want;
      }
  }
  for (size_t i = 0; i < x.c.size(); ++i)
    if (!written[i] && !(x.c[i] == x.c_before[i] || (is_nan(x.c[i]) && is_nan(x.c_before[i])))) {
      ADD_FAILURE() << what << ": element " << i << " of C's buffer, in no problem's C, changed";
      break;
    }
  EXPECT_EQ(failures, 0) << what;
  const auto same = [](const std::vector<T>& now, const std::vector<T>& then) {
    for (size_t i = 0; i < now.size(); ++i)
      if (!(now[i] == then[i] || (is_nan(now[i]) && is_nan(then[i])))) return false;
    return true;
  };
  EXPECT_TRUE(same(x.a, x.a_before) && same(x.b, x.b_before)) << what << ": A or B was written";
}

// NaN over every element a problem must not read: A and B where alpha is 0, C where beta is 0.
template <class T>
void poison(Layout layout, const std::vector<Shape>& shapes, const std::vector<Where>& at,
            Buffers<T>& x) {
  const T nan = std::numeric_limits<real_t<T>>::quiet_NaN();
  for (size_t p = 0; p < at.size(); ++p) {
    const Shape& s = shapes[p];
    if (s.beta == 0.0)
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j)
          x.c[static_cast<size_t>(at[p].c + c_index(layout, s.ldc, i, j))] = nan;
  }
  // Only where every problem's alpha is 0 may A and B be NaN throughout (strides of 0 share them).
  if (std::all_of(shapes.begin(), shapes.end(), [](const Shape& s) { return s.alpha == 0.0; })) {
    std::fill(x.a.begin(), x.a.end(), nan);
    std::fill(x.b.begin(), x.b.end(), nan);
  }
  x.a_before = x.a;
  x.b_before = x.b;
  x.c_before = x.c;
}

const std::vector<int64_t> kSizes = {0, 1, 3, 17, 33};
const double kScalars[] = {1.0, 0.0, -1.5};

// A random shape of T in `layout`: operations, sizes from kSizes, leading dimensions at their
// least or up to 2 past it (C's `c_inner` times its least, for tiles side by side), scalars with
// imaginary parts for a complex T.
template <class T, class Pick>
Shape draw_shape(Layout layout, Pick&& pick, int64_t tiles = 1) {
  const std::vector<Op> ops = operations<T>();
  Shape s;
  s.op_a = ops[static_cast<size_t>(pick(0, static_cast<int64_t>(ops.size()) - 1))];
  s.op_b = ops[static_cast<size_t>(pick(0, static_cast<int64_t>(ops.size()) - 1))];
  s.m = kSizes[static_cast<size_t>(pick(0, 4))];
  s.n = kSizes[static_cast<size_t>(pick(0, 4))];
  s.k = kSizes[static_cast<size_t>(pick(0, 4))];
  const bool row = layout == Layout::RowMajor;
  const auto inner = [&](int64_t rows, int64_t cols) {
    return std::max<int64_t>(1, row ? cols : rows);
  };
  s.lda = (s.op_a == Op::NoTrans ? inner(s.m, s.k) : inner(s.k, s.m)) + pick(0, 2);
  s.ldb = (s.op_b == Op::NoTrans ? inner(s.k, s.n) : inner(s.n, s.k)) + pick(0, 2);
  s.ldc = inner(s.m, s.n) * tiles + pick(0, 2);
  s.alpha = {kScalars[pick(0, 2)], kComplex<T> && pick(0, 1) ? 0.5 : 0.0};
  s.beta = {kScalars[pick(0, 2)], kComplex<T> && pick(0, 1) ? -0.25 : 0.0};
  return s;
}

// Where a test's batches keep their operands: the buffers' own (ordinary) memory, or tandem_malloc
// copies of them.
enum class Memory { Ordinary, TandemMalloc };

// A tandem_malloc copy of `v` while it lives (or `v` itself, for ordinary memory); back() copies
// it into `v`.
template <class T>
class Placed {
 public:
  Placed(std::vector<T>& v, Memory memory) : v_(v) {
    if (memory == Memory::TandemMalloc) copy_.assign(v.begin(), v.end());
  }
  T* data() { return copy_.empty() ? v_.data() : copy_.data(); }
  void back() { std::copy(copy_.begin(), copy_.end(), v_.begin()); }

 private:
  std::vector<T>& v_;
  std::vector<T, Allocator<T>> copy_;
};

// What a test asks of each batch's report, beyond its C: nothing by default.
using ReportCheck = std::function<void(const BatchReport&, int64_t products, const std::string&)>;

// The problems of a batch that have a product.
int64_t products_of(const std::vector<Shape>& shapes) {
  return std::count_if(shapes.begin(), shapes.end(), [](const Shape& s) {
    return s.m > 0 && s.n > 0 && s.k > 0 && s.alpha != 0.0;
  });
}

// Random strided batches of T, each checked.
template <class T>
void strided_batches(const Options& o, int batches, uint64_t seed, const ReportCheck& check = {},
                     Memory memory = Memory::Ordinary) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](auto lo, auto hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int t = 0; t < batches; ++t) {
    const Layout layout = pick(0, 1) ? Layout::RowMajor : Layout::ColMajor;
    const Shape s = draw_shape<T>(layout, pick);
    const bool row = layout == Layout::RowMajor;
    const int64_t count = std::vector<int64_t>{1, 2, 7, 40, 300}[static_cast<size_t>(pick(0, 4))];
    // Strides: 0 (one operand for all), tight, or with a gap.
    const auto stride = [&](int64_t span, bool may_share) {
      const int64_t kind = pick(may_share ? 0 : 1, 2);
      return kind == 0 ? 0 : span + (kind == 2 ? pick(1, 9) : 0);
    };
    const int64_t sa = stride(a_span(layout, s), true), sb = stride(b_span(layout, s), true);
    const int64_t sc = stride(c_span(layout, s), false);
    Buffers<T> x;
    x.a = random_values<T>((count - 1) * sa + a_span(layout, s), rng);
    x.b = random_values<T>((count - 1) * sb + b_span(layout, s), rng);
    x.c = random_values<T>((count - 1) * sc + c_span(layout, s) + 3, rng);
    std::vector<Shape> shapes(static_cast<size_t>(count), s);
    std::vector<Where> at;
    for (int64_t i = 0; i < count; ++i) at.push_back({i * sa, i * sb, i * sc});
    poison(layout, shapes, at, x);
    const std::string what =
        std::string(detail::routine_name(detail::precision_of<T>(), "").c_str()) +
        " strided batch " + std::to_string(t) + ": count " + std::to_string(count) + " m " +
        std::to_string(s.m) + " n " + std::to_string(s.n) + " k " + std::to_string(s.k) +
        (row ? " row" : " col") + " strides " + std::to_string(sa) + " " + std::to_string(sb) +
        " " + std::to_string(sc);
    BatchReport r;
    {
      Placed<T> a(x.a, memory), b(x.b, memory), c(x.c, memory);
      gemm_batch_strided<T>(layout, s.op_a, s.op_b, s.m, s.n, s.k, scalar<T>(s.alpha), a.data(),
                            s.lda, sa, b.data(), s.ldb, sb, scalar<T>(s.beta), c.data(), s.ldc, sc,
                            count, o, &r);
      c.back();
    }
    expect_batch(layout, shapes, at, x, what);
    EXPECT_EQ(r.problems, count) << what;
    if (check) check(r, products_of(shapes), what);
    if (::testing::Test::HasFailure()) return;
  }
}

// Random grouped batches of T: up to four groups of their own shapes and scalars, each problem's
// operands at their own places in shared buffers; in half the batches the C of a group are the
// tiles of one matrix (neighbours in one lattice, which share no element).
template <class T>
void grouped_batches(const Options& o, int batches, uint64_t seed, const ReportCheck& check = {},
                     Memory memory = Memory::Ordinary) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](auto lo, auto hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int t = 0; t < batches; ++t) {
    const Layout layout = pick(0, 1) ? Layout::RowMajor : Layout::ColMajor;
    const bool row = layout == Layout::RowMajor;
    const int64_t group_count = pick(0, 4);
    std::vector<GemmGroup<T>> groups(static_cast<size_t>(group_count));
    std::vector<Shape> shapes;
    std::vector<Where> at;
    int64_t a_end = 0, b_end = 0, c_end = 0;
    for (GemmGroup<T>& g : groups) {
      const int64_t size = pick(0, 6);
      // Tiles: the group's C side by side along the leading dimension of one matrix.
      const bool tiles = pick(0, 1) == 1 && size > 1;
      const Shape s = draw_shape<T>(layout, pick, tiles ? size : 1);
      const int64_t c_inner = std::max<int64_t>(1, row ? s.n : s.m);
      const int64_t tile_span =
          spanned(layout, row ? s.m : c_inner * size, row ? c_inner * size : s.n, s.ldc);
      for (int64_t i = 0; i < size; ++i) {
        Where w{a_end, b_end, tiles ? c_end + i * c_inner : c_end};
        a_end += a_span(layout, s) + pick(0, 3);
        b_end += b_span(layout, s) + pick(0, 3);
        if (!tiles) c_end += c_span(layout, s) + pick(0, 3);
        at.push_back(w);
        shapes.push_back(s);
      }
      if (tiles) c_end += tile_span + 1;
      g.op_a = s.op_a, g.op_b = s.op_b, g.m = s.m, g.n = s.n, g.k = s.k;
      g.alpha = scalar<T>(s.alpha), g.beta = scalar<T>(s.beta);
      g.lda = s.lda, g.ldb = s.ldb, g.ldc = s.ldc, g.size = size;
    }
    Buffers<T> x;
    x.a = random_values<T>(a_end, rng);
    x.b = random_values<T>(b_end, rng);
    x.c = random_values<T>(c_end + 3, rng);
    poison(layout, shapes, at, x);
    Placed<T> a(x.a, memory), b(x.b, memory), c(x.c, memory);
    std::vector<const T*> as, bs;
    std::vector<T*> cs;
    for (const Where& w : at) {
      as.push_back(a.data() + w.a);
      bs.push_back(b.data() + w.b);
      cs.push_back(c.data() + w.c);
    }
    size_t first = 0;
    for (GemmGroup<T>& g : groups) {
      g.a = as.data() + first, g.b = bs.data() + first, g.c = cs.data() + first;
      first += static_cast<size_t>(g.size);
    }
    const std::string what =
        std::string(detail::routine_name(detail::precision_of<T>(), "").c_str()) +
        " grouped batch " + std::to_string(t) + ": " + std::to_string(group_count) + " groups, " +
        std::to_string(at.size()) + " problems" + (row ? ", row" : ", col");
    BatchReport r;
    gemm_batch<T>(layout, groups.data(), group_count, o, &r);
    c.back();
    expect_batch(layout, shapes, at, x, what);
    EXPECT_EQ(r.problems, static_cast<int64_t>(at.size())) << what;
    if (check) check(r, products_of(shapes), what);
    if (::testing::Test::HasFailure()) return;
  }
}

Options cpu(int threads) {
  Options o;
  o.strategy = Strategy::Cpu;
  o.cpu_threads = threads;
  return o;
}

TEST(Batch, StridedBatchesOnTheCoresMatchTheReference) {
  strided_batches<float>(cpu(2), 60, 1);
  strided_batches<double>(cpu(2), 60, 2);
  strided_batches<std::complex<float>>(cpu(2), 60, 3);
  strided_batches<std::complex<double>>(cpu(2), 60, 4);
}

TEST(Batch, GroupedBatchesOnTheCoresMatchTheReference) {
  grouped_batches<float>(cpu(2), 60, 5);
  grouped_batches<double>(cpu(2), 60, 6);
  grouped_batches<std::complex<float>>(cpu(2), 60, 7);
  grouped_batches<std::complex<double>>(cpu(2), 60, 8);
}

// Fewer problems than threads: a batch of one as one call on every thread, a few problems cut
// into bands of rows, a band to a thread.
TEST(Batch, FewerProblemsThanThreadsAreCutIntoBands) {
  strided_batches<float>(cpu(8), 30, 15);
  strided_batches<std::complex<double>>(cpu(8), 30, 16);
  grouped_batches<double>(cpu(8), 30, 17);
}

TEST(Batch, AutoRunsOnTheCoresWithTheHostsThreads) {
  strided_batches<double>(Options{}, 10, 9);
  std::vector<float> a(4, 1), b(4, 1), c(8, 0);
  BatchReport r;
  gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 2, 1, 2, 1.0f, a.data(), 2,
                            0, b.data(), 1, 2, 0.0f, c.data(), 1, 4, 2, Options{}, &r);
  EXPECT_EQ(r.strategy, Strategy::Cpu);
  EXPECT_EQ(r.problems, 2);
  EXPECT_EQ(r.products, 2);
  EXPECT_GE(r.cpu_threads, 1);
  EXPECT_EQ(c, (std::vector<float>{2, 2, 0, 0, 2, 2, 0, 0}));
}

// Every product on the devices or the CPU, each counted once, and the devices' problems in few
// launches: the coalesced kernel runs a run of one shape per launch.
void expect_dealt(const BatchReport& r, int64_t products, const std::string& what) {
  int64_t on_devices = 0, launches = 0;
  for (const auto& d : r.devices) {
    on_devices += d.problems;
    launches += d.launches;
    EXPECT_FALSE(d.failed) << what << ": " << d.name << ": " << d.failure;
  }
  EXPECT_EQ(on_devices, r.device_problems) << what;
  EXPECT_EQ(r.cpu_problems + r.device_problems, products) << what;
  if (r.device_problems >= 40) {
    EXPECT_LT(launches, r.device_problems / 4) << what;
  }
}

TEST(Batch, GpuAndHybridDealProblemsToTheCoalescedKernel) {
  Options gpu;
  gpu.strategy = Strategy::Gpu;
  const ReportCheck all_on_devices = [](const BatchReport& r, int64_t products,
                                        const std::string& what) {
    expect_dealt(r, products, what);
    EXPECT_EQ(r.cpu_problems, 0) << what;
    if (products > 0) {
      EXPECT_EQ(r.strategy, Strategy::Gpu) << what;
    }
  };
  strided_batches<float>(gpu, 8, 10, all_on_devices);
  strided_batches<std::complex<double>>(gpu, 6, 18, all_on_devices);
  grouped_batches<std::complex<double>>(gpu, 6, 11, all_on_devices);
  grouped_batches<float>(gpu, 6, 19, all_on_devices);
  Options hybrid;
  hybrid.strategy = Strategy::Hybrid;
  hybrid.gpu_fraction = 0.5;
  strided_batches<std::complex<float>>(hybrid, 6, 12, expect_dealt);
  strided_batches<double>(hybrid, 6, 20, expect_dealt);
  grouped_batches<double>(hybrid, 6, 13, expect_dealt);
}

int device_count() { return static_cast<int>(detail::gpu::list_devices().size()); }

// Every device by index ("0,1"): PoCL's devices are not GPUs.
std::string every_device() {
  std::string s;
  for (int i = 0; i < device_count(); ++i) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

// A strided sgemm batch of `count` problems of 24 x 20 x 16 (awkward for every kernel tile),
// with beta 0.5, checked against the reference.
BatchReport large_batch(const Options& o, int64_t count, const std::string& what,
                        bool malloc_memory = false) {
  const int64_t m = 24, n = 20, k = 16;
  std::mt19937_64 rng(77);
  Buffers<float> x;
  x.a = random_values<float>(count * m * k, rng);
  x.b = random_values<float>(count * k * n, rng);
  x.c = random_values<float>(count * m * n, rng);
  x.a_before = x.a, x.b_before = x.b, x.c_before = x.c;
  Shape s;
  s.m = m, s.n = n, s.k = k, s.lda = k, s.ldb = n, s.ldc = n, s.alpha = 1, s.beta = 0.5;
  std::vector<Shape> shapes(static_cast<size_t>(count), s);
  std::vector<Where> at;
  for (int64_t i = 0; i < count; ++i) at.push_back({i * m * k, i * k * n, i * m * n});
  // From tandem_malloc memory: operands a device takes as stored, with no packing on the host.
  float *a = x.a.data(), *b = x.b.data(), *c = x.c.data();
  std::vector<float*> blocks;
  if (malloc_memory) {
    for (std::vector<float>* v : {&x.a, &x.b, &x.c}) {
      blocks.push_back(static_cast<float*>(tandem_malloc(v->size() * sizeof(float))));
      std::copy(v->begin(), v->end(), blocks.back());
    }
    a = blocks[0], b = blocks[1], c = blocks[2];
  }
  BatchReport r;
  gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0f, a, k, m * k,
                            b, n, k * n, 0.5f, c, n, m * n, count, o, &r);
  if (malloc_memory) {
    std::copy(c, c + x.c.size(), x.c.begin());
    for (float* p : blocks) tandem_free(p);
  }
  expect_batch(Layout::RowMajor, shapes, at, x, what);
  return r;
}

// Every device and the CPU, `fraction` of the problems to the devices.
Options every_device_hybrid(double fraction) {
  Options o;
  o.strategy = Strategy::Hybrid;
  o.device = every_device();
  o.gpu_fraction = fraction;
  return o;
}

// Problems dealt to every device and the CPU (with POCL_DEVICES="basic pthread", two devices:
// ctest batch.two_devices), and from tandem_malloc memory on devices played as discrete.
TEST(Batch, EveryDeviceAndTheCpuReceiveProblems) {
  Options o = every_device_hybrid(0.6);
  const BatchReport r = large_batch(o, 3000, "every device");
  ASSERT_EQ(static_cast<int>(r.devices.size()), device_count());
  for (const auto& d : r.devices) {
    EXPECT_GT(d.problems, 0) << d.name;
    EXPECT_GT(d.bytes_in, 0) << d.name;
    EXPECT_EQ(d.bytes_out, d.problems * 24 * 20 * 4) << d.name << ": C comes back, only C";
  }
  EXPECT_GT(r.cpu_problems, 0);
  EXPECT_EQ(r.strategy, Strategy::Hybrid);
  expect_dealt(r, 3000, "every device");

  detail::seams::Values v;
  v.assume_discrete = true;
  detail::seams::Override seams(v);
  o.gpu_fraction = 1.0;
  o.strategy = Strategy::Gpu;
  const BatchReport pinned = large_batch(o, 700, "tandem_malloc memory", true);
  for (const auto& d : pinned.devices) EXPECT_GT(d.problems, 0) << d.name;
  expect_dealt(pinned, 700, "tandem_malloc memory");
}

detail::Problem<float> cube_problem(int64_t n, const float* ab, float* c);  // below

// A strided sgemm batch of `count` problems of m x n x k (by default 24 x 20 x 16) whose A, B and C
// lie in tandem_malloc memory, with `beta` and C's rows `gap` elements apart beyond n, checked
// against the reference (C's gaps untouched).
BatchReport pinned_batch(const Options& o, int64_t count, double beta, int64_t gap,
                         const std::string& what, int64_t m = 24, int64_t n = 20, int64_t k = 16) {
  const int64_t ldc = n + gap;
  std::mt19937_64 rng(78);
  Buffers<float> x;
  x.a = random_values<float>(count * m * k, rng);
  x.b = random_values<float>(count * k * n, rng);
  x.c = random_values<float>(count * m * ldc, rng);
  Shape s;
  s.m = m, s.n = n, s.k = k, s.lda = k, s.ldb = n, s.ldc = ldc, s.alpha = 1, s.beta = beta;
  const std::vector<Shape> shapes(static_cast<size_t>(count), s);
  std::vector<Where> at;
  for (int64_t i = 0; i < count; ++i) at.push_back({i * m * k, i * k * n, i * m * ldc});
  poison(Layout::RowMajor, shapes, at, x);
  BatchReport r;
  {
    Placed<float> a(x.a, Memory::TandemMalloc), b(x.b, Memory::TandemMalloc),
        c(x.c, Memory::TandemMalloc);
    gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0f, a.data(),
                              k, m * k, b.data(), n, k * n, static_cast<float>(beta), c.data(), ldc,
                              m * ldc, count, o, &r);
    c.back();
  }
  expect_batch(Layout::RowMajor, shapes, at, x, what);
  return r;
}

// On a discrete device (PoCL played as one), a batch whose A, B and C lie in tandem_malloc memory
// with beta 0 and C's rows packed tight needs no host work: A and B go straight from the
// caller's memory and C back into it, nothing through staging, no feeder threads, and
// the plan takes the unstaged stages' rule. With beta != 0, or gaps between C's rows, C comes
// back through staging (the host adds beta C), while A and B still go unstaged. Then random
// batches from tandem_malloc memory, strided and grouped, under gpu and hybrid.
TEST(Batch, TandemMallocOperandsOnADiscreteDeviceGoUnstaged) {
  detail::seams::Values v;
  v.assume_discrete = true;
  detail::seams::Override seams(v);
  Options gpu;
  gpu.strategy = Strategy::Gpu;
  gpu.device = std::to_string(device_count() - 1);  // the GPU on a GPU host
  const int64_t count = 300, c_bytes = count * 24 * 20 * 4;
  for (const double beta : {0.0, 0.5})
    for (const int64_t gap : {0, 3}) {
      const std::string what = "beta " + std::to_string(beta) + ", gap " + std::to_string(gap);
      const BatchReport r = pinned_batch(gpu, count, beta, gap, what);
      ASSERT_EQ(r.devices.size(), 1u) << what;
      const BatchReport::Device& d = r.devices[0];
      EXPECT_EQ(d.problems, count) << what;
      EXPECT_EQ(d.bytes_out, c_bytes) << what;
      const bool unstaged = beta == 0.0 && gap == 0;
      EXPECT_EQ(d.bytes_staged, unstaged ? 0 : c_bytes) << what << ": only C may be staged";
      if (unstaged) {
        EXPECT_EQ(d.feeder_threads, 0) << what;
      }
    }

  // The plan: unstaged where the first problem's operands are all in tandem_malloc memory, beta
  // is 0 and C tight; else the staged rule.
  const size_t cube = 64 * 64;
  std::vector<float, Allocator<float>> pinned_ab(cube, 1.0f), pinned_c(3 * cube, 0.0f);
  std::vector<float> ordinary_c(cube, 0.0f);
  detail::Problem<float> first = cube_problem(64, pinned_ab.data(), pinned_c.data());
  const auto planned = [&](const detail::Problem<float>& p,
                           const detail::Problem<float>* next = nullptr) {
    const detail::BatchPlan plan = detail::plan_batch(p, 100, gpu, 64.0, next);
    EXPECT_EQ(plan.parts.size(), 1u);
    return plan.parts.empty() ? detail::BatchPart{} : plan.parts[0];
  };
  const detail::BatchPart unstaged = planned(first);
  EXPECT_TRUE(unstaged.unstaged);
  EXPECT_EQ(unstaged.stages.products, detail::profile::batch_stage_products_unstaged());
  EXPECT_EQ(unstaged.stages.in_flight, detail::profile::batch_stages_in_flight(true));
  EXPECT_EQ(unstaged.feeders, 0);
  EXPECT_EQ(unstaged.stages.tail, detail::profile::batch_stage_tail_unstaged());
  EXPECT_EQ(unstaged.stages.tail_bytes, detail::profile::batch_stage_tail_bytes_unstaged());
  detail::Problem<float> next = first;
  next.c = first.c + cube;
  EXPECT_TRUE(planned(first, &next).unstaged) << "the next C right after the first";
  next.c = first.c + cube + 16;
  EXPECT_FALSE(planned(first, &next).unstaged) << "a gap between C's (a padded stride_c)";
  first.beta = 0.5f;
  EXPECT_FALSE(planned(first).unstaged) << "beta != 0";
  first.beta = 0.0f;
  first.c = ordinary_c.data();
  const detail::BatchPart staged = planned(first);
  EXPECT_FALSE(staged.unstaged) << "C in ordinary memory";
  EXPECT_EQ(staged.stages.products, detail::profile::batch_stage_products());
  EXPECT_EQ(staged.stages.in_flight, detail::profile::batch_stages_in_flight(false));
  EXPECT_GT(staged.feeders, 0);
  EXPECT_EQ(staged.stages.tail, 0) << "a staged stage keeps its size to the end";

  Options hybrid = every_device_hybrid(0.6);
  strided_batches<float>(gpu, 12, 91, {}, Memory::TandemMalloc);
  strided_batches<std::complex<double>>(hybrid, 8, 92, {}, Memory::TandemMalloc);
  grouped_batches<double>(gpu, 8, 93, {}, Memory::TandemMalloc);
  grouped_batches<std::complex<float>>(hybrid, 8, 94, {}, Memory::TandemMalloc);
}

// A device that fails after its C was read unstaged into the caller's (beta 0; the seam leaves
// NaN there, as a copy cut short might) leaves those problems to the CPU, which computes them
// again: under gpu too, where that C was written, so the call does not fail. Also where the
// device then cannot be drained. Every C right.
TEST(Batch, ADeviceFailingAfterAnUnstagedReadOfCLeavesItsProblemsToTheCpu) {
  const int last = device_count() - 1;
  for (const bool drains : {true, false})
    for (const int64_t after : {int64_t{0}, int64_t{500}}) {
      detail::seams::Values v;
      v.assume_discrete = true;
      v.fail_device = last;
      v.fail_after_rows = after;
      if (!drains) v.fail_drain = last;
      detail::seams::Override seams(v);
      Options o;
      o.strategy = Strategy::Gpu;
      o.device = std::to_string(last);
      const std::string what = std::string(drains ? "drained" : "not drained") +
                               ", failing at problem " + std::to_string(after);
      const BatchReport r = pinned_batch(o, 3000, 0.0, 0, what);
      ASSERT_EQ(r.devices.size(), 1u) << what;
      EXPECT_TRUE(r.devices[0].failed) << what;
      EXPECT_EQ(r.devices[0].bytes_staged, 0) << what;
      EXPECT_GT(r.cpu_problems, 0) << what;
      EXPECT_EQ(r.cpu_problems + r.device_problems, 3000) << what;
    }
}

// A device that fails mid-batch takes no more problems; the CPU computes those it had not
// finished (their C as the caller gave them), with one warning, and every C is right. Under gpu,
// a failure before any C was written is an error that leaves every C as it was.
TEST(Batch, ADeviceFailingMidBatchLeavesItsProblemsToTheCpu) {
  const int last = device_count() - 1;
  // Under gpu the device takes every chunk, so it reaches problem 500 having finished some.
  for (const bool gpu_only : {true, false}) {
    detail::seams::Values v;
    v.fail_device = last;
    v.fail_after_rows = gpu_only ? 500 : 0;
    detail::seams::Override seams(v);
    Options o = every_device_hybrid(0.8);
    if (gpu_only) {
      o.strategy = Strategy::Gpu;
      o.device = std::to_string(last);
    }
    const std::string what = gpu_only ? "gpu, failing at problem 500" : "hybrid, failing at once";
    const BatchReport r = large_batch(o, 3000, what);
    ASSERT_FALSE(r.devices.empty()) << what;
    const auto& d = r.devices.back();
    EXPECT_TRUE(d.failed) << what;
    EXPECT_NE(d.failure.find("fail_device"), std::string::npos) << what << ": " << d.failure;
    EXPECT_EQ(r.cpu_problems + r.device_problems, 3000) << what;
    EXPECT_GT(r.cpu_problems, 0) << what;
    if (gpu_only) {
      EXPECT_GE(d.problems, 500) << what;
      EXPECT_EQ(r.strategy, Strategy::Hybrid) << what;
    }
  }
  detail::seams::Values v;
  v.fail_device = last;
  v.fail_after_rows = 0;
  detail::seams::Override seams(v);
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = std::to_string(last);
  std::vector<float> a(64 * 16, 1), b(64 * 16, 1), c(64 * 4, 7);
  try {
    gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 2, 2, 8, 1.0f, a.data(),
                              8, 16, b.data(), 2, 16, 1.0f, c.data(), 2, 4, 64, o);
    ADD_FAILURE() << "a failure before any C was written under gpu must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fail_device"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](float x) { return x == 7; }));
  // A group without a product (alpha 0, beta 0: C would be zeroed) beside one that fails on the
  // device: its C too is as the caller gave it.
  std::vector<float> c0(4, 7), c1(4, 7);
  const float* a_ptr = a.data();
  const float* b_ptr = b.data();
  float* c0_ptr = c0.data();
  float* c1_ptr = c1.data();
  GemmGroup<float> groups[2];
  for (GemmGroup<float>& g : groups) {
    g.m = g.n = 2, g.k = 8, g.lda = 8, g.ldb = 2, g.ldc = 2, g.size = 1;
    g.a = &a_ptr, g.b = &b_ptr;
  }
  groups[0].alpha = 0, groups[0].beta = 0, groups[0].c = &c0_ptr;
  groups[1].alpha = 1, groups[1].beta = 1, groups[1].c = &c1_ptr;
  EXPECT_THROW(gemm_batch<float>(Layout::RowMajor, groups, 2, o), Error);
  EXPECT_EQ(c0, std::vector<float>(4, 7)) << "C of a problem without a product was written";
  EXPECT_EQ(c1, std::vector<float>(4, 7));
}

// An empty profile directory of its own for one test, TANDEM_PROFILE_DIR as it was afterwards.
// A directory of its own each time (a warning said once per profile file is said again under
// --gtest_repeat).
struct ProfileDirScope {
  explicit ProfileDirScope(const std::string& name)
      : dir(std::filesystem::temp_directory_path() /
            ("tandem-" + name + "-" + std::to_string(getpid()) + "-" + std::to_string(next()))) {
    const char* before = std::getenv("TANDEM_PROFILE_DIR");
    saved = before != nullptr ? before : "";
    std::filesystem::create_directories(dir);
    setenv("TANDEM_PROFILE_DIR", dir.c_str(), 1);
    detail::profile::forget();
  }
  ~ProfileDirScope() {
    if (saved.empty())
      unsetenv("TANDEM_PROFILE_DIR");
    else
      setenv("TANDEM_PROFILE_DIR", saved.c_str(), 1);
    detail::profile::forget();
    std::filesystem::remove_all(dir);
  }
  static int next() {
    static int n = 0;
    return n++;
  }
  std::filesystem::path dir;
  std::string saved;
};

// An empty profile for the first device (PoCL's here), for a test to fill and save.
detail::profile::Profile empty_profile() {
  detail::profile::Profile p;
  p.tandem_version = TANDEM_VERSION;
  p.identity = detail::profile::identity_for(detail::gpu::info(*detail::gpu::open_device("")));
  return p;
}

// A single call's bucket at size³: its split and rates.
detail::profile::Bucket single_call_bucket(int64_t size, int gpu_parts, double gpu_gflops,
                                           double cpu_gflops) {
  detail::profile::Bucket b;
  b.size = size;
  b.parts = 64;
  b.gpu_parts = gpu_parts;
  b.gpu_gflops = gpu_gflops;
  b.cpu_gflops = cpu_gflops;
  return b;
}

// A strided batch of `count` products of n^3 (0.5 everywhere) in ordinary memory, or in
// tandem_malloc memory, under `strategy`: every C checked; the report.
BatchReport square_batch(int64_t n, int64_t count, bool resident = false,
                         Strategy strategy = Strategy::Auto,
                         std::optional<int> cpu_threads = std::nullopt,
                         std::optional<std::string> device = std::nullopt) {
  const auto elements = static_cast<size_t>(n * n * count);
  std::vector<float, Allocator<float>> a_tandem, c_tandem;
  std::vector<float> a_ordinary, c_ordinary;
  if (resident) {
    a_tandem.assign(elements, 0.5f);
    c_tandem.assign(elements, 7.0f);
  } else {
    a_ordinary.assign(elements, 0.5f);
    c_ordinary.assign(elements, 7.0f);
  }
  const float* a = resident ? a_tandem.data() : a_ordinary.data();
  float* c = resident ? c_tandem.data() : c_ordinary.data();
  BatchReport r;
  Options o;
  o.strategy = strategy;
  o.cpu_threads = cpu_threads;
  o.device = device;
  gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a, n, n * n,
                            a, n, n * n, 0.0f, c, n, n * n, count, o, &r);
  const float want = 0.25f * static_cast<float>(n);
  EXPECT_TRUE(std::all_of(c, c + elements, [&](float x) { return x == want; }))
      << n << "^3 x " << count;
  return r;
}

// A group of n^3 products, problem i's C = A A (its A read as B too), over these pointers.
GemmGroup<float> square_group(int64_t n, const std::vector<const float*>& a,
                              const std::vector<float*>& c) {
  GemmGroup<float> g;
  g.m = g.n = g.k = g.lda = g.ldb = g.ldc = n;
  g.a = g.b = a.data();
  g.c = c.data();
  g.size = static_cast<int64_t>(c.size());
  return g;
}

// Auto deals a batch's large products to a device whose profile says a single call of their
// total work pays there (here a profile written for PoCL's first device, giving it every row
// from the smallest bucket on), keeps products under batch.devices_from on the cores where the
// profile has no batch rule, gives a batch of fewer than batch.deal_from_count large products to
// the faster side alone by the rates (the devices, unless the cores' rate is higher), runs a batch
// of one large product as that single call, and follows the profile's batch rule for the batch's
// memory where it has one.
TEST(Batch, AutoDealsLargeProductsWhereTheProfileSaysADevicePays) {
  namespace prof = detail::profile;
  const ProfileDirScope scope("batch");
  prof::Profile p = empty_profile();
  const auto id = p.identity;
  prof::PrecisionProfile pp;
  pp.buckets = {single_call_bucket(64, 64, 50, 10)};
  p.precisions[detail::Precision::s] = pp;
  prof::save(p, prof::path_for(id));

  const int64_t large = detail::profile::batch_devices_from();
  const BatchReport dealt = square_batch(large, 40);
  EXPECT_GT(dealt.device_problems, 0) << "large products, a profile that says the device pays";
  EXPECT_FALSE(dealt.devices.empty());
  const BatchReport small = square_batch(16, 4000);
  EXPECT_EQ(small.device_problems, 0) << "16^3 products stay on the cores";
  EXPECT_EQ(small.strategy, Strategy::Cpu);
  const BatchReport ten = square_batch(large, 10);
  EXPECT_EQ(ten.device_problems, 10) << "fewer products than batch.deal_from_count: no dealing";
  EXPECT_EQ(ten.cpu_problems, 0);
  EXPECT_EQ(ten.strategy, Strategy::Gpu);
  ASSERT_GT(detail::profile::batch_deal_from_count(), 10);
  const BatchReport hybrid_ten = square_batch(large, 10, false, Strategy::Hybrid);
  EXPECT_GT(hybrid_ten.cpu_problems, 0) << "hybrid deals a batch of ten, as asked";
  EXPECT_GT(hybrid_ten.device_problems, 0);
  const BatchReport one = square_batch(large, 1);
  EXPECT_EQ(one.device_problems, 1) << "a batch of one large product is a single call";
  EXPECT_TRUE(one.devices.empty()) << "not the coalesced kernel";

  // A batch rule the tune measured (profile.hpp's BatchRule) takes the place of defaults.json's
  // edge, for the batch's memory: tandem_malloc memory has a rule of its own on a discrete device
  // only (played by PoCL, every tandem_malloc block pinned).
  const auto with_rule = [&](int64_t ordinary, std::optional<int64_t> resident) {
    prof::PrecisionProfile q = pp;
    q.batch = prof::BatchRule{ordinary, {}};
    if (resident) q.batch_resident = prof::BatchRule{*resident, {}};
    p.precisions[detail::Precision::s] = q;
    prof::save(p, prof::path_for(id));
    prof::forget();
  };
  with_rule(32, std::nullopt);
  EXPECT_GT(square_batch(32, 1000).device_problems, 0) << "a rule dealing from 32^3";
  with_rule(16, std::nullopt);
  EXPECT_EQ(square_batch(16, 4000).device_problems, 0)
      << "nothing below batch.tune_sizes' smallest is dealt, whatever the rule says";
  {
    // Nor beside a larger product: one of 64^3 and 400 of 16^3 in one grouped batch.
    std::vector<float> big(64 * 64, 0.5f), big_c(64 * 64, 7.0f), tiny(16 * 16 * 400, 0.5f),
        small_c(tiny.size(), 7.0f);
    std::vector<const float*> big_a{big.data()}, small_a;
    std::vector<float*> big_cs{big_c.data()}, small_cs;
    for (int i = 0; i < 400; ++i) {
      small_a.push_back(tiny.data() + i * 256);
      small_cs.push_back(small_c.data() + i * 256);
    }
    const GemmGroup<float> groups[] = {square_group(64, big_a, big_cs),
                                       square_group(16, small_a, small_cs)};
    BatchReport r;
    gemm_batch<float>(Layout::RowMajor, groups, 2, {}, &r);
    EXPECT_LE(r.device_problems, 1) << "the 16^3 products stay on the cores";
    EXPECT_GE(r.cpu_problems, 400);
    EXPECT_TRUE(std::all_of(small_c.begin(), small_c.end(), [](float x) { return x == 4.0f; }));
    EXPECT_TRUE(std::all_of(big_c.begin(), big_c.end(), [](float x) { return x == 16.0f; }));
  }
  with_rule(0, std::nullopt);
  EXPECT_EQ(square_batch(large, 40).device_problems, 0) << "a rule that found dealing failing";
  EXPECT_EQ(square_batch(large, 1).device_problems, 1) << "a batch of one is still the single call";
  with_rule(0, 16);
  // (On a GPU host the first device is discrete already.)
  if (!detail::gpu::is_discrete(*detail::gpu::open_device(""))) {
    EXPECT_EQ(square_batch(large, 40, true).device_problems, 0)
        << "tandem_malloc memory on a unified device follows the ordinary memory's rule";
  }
  {
    const detail::seams::Override discrete(test::discrete(false, /*pin_every_block=*/true));
    EXPECT_GT(square_batch(large, 40, true).device_problems, 0)
        << "tandem_malloc memory on a discrete device follows its own rule";
    EXPECT_EQ(square_batch(large, 40).device_problems, 0)
        << "ordinary memory there, the ordinary rule";
  }
  // Fewer than batch.deal_from_count products where the rates say the cores are faster (a single
  // call's here: 10 GFLOPS on the device, 50 on the cores): the cores alone.
  prof::PrecisionProfile slow = pp;
  slow.buckets = {single_call_bucket(64, 64, 10, 50)};
  p.precisions[detail::Precision::s] = slow;
  prof::save(p, prof::path_for(id));
  prof::forget();
  ::testing::internal::CaptureStderr();
  const BatchReport cores = square_batch(large, 10);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(cores.device_problems, 0) << "the cores are the faster side";
  EXPECT_EQ(cores.cpu_problems, 10);
  EXPECT_EQ(cores.strategy, Strategy::Cpu);
  EXPECT_TRUE(cores.devices.empty());
  EXPECT_EQ(cores.cpu_threads, detail::host_cores());
  EXPECT_EQ(said, "") << "a choice, not a fallback: nothing to warn of";
  EXPECT_GT(square_batch(large, 10, false, Strategy::Hybrid).device_problems, 0)
      << "hybrid deals a batch of ten, whatever the rates";
  EXPECT_GT(square_batch(large, 40).device_problems, 0) << "40 products are dealt, by their rates";
}

// A batch rule the tune measured for tandem_malloc memory on a discrete device decides alone:
// a single call of the batch's whole work (here a cube of about 437^3, below half the profile's
// only bucket, so unmeasured and the cores') is not asked, as it is for ordinary memory and where
// defaults.json's edge stands in for the rule. Strided and grouped batches alike.
TEST(Batch, AMeasuredRuleForTandemMallocMemoryIsNotOverruledByTheWholeWork) {
  namespace prof = detail::profile;
  const ProfileDirScope scope("resident_rule");
  prof::Profile p = empty_profile();
  prof::PrecisionProfile pp;
  pp.buckets = {single_call_bucket(4096, 64, 50, 10)};
  pp.batch = prof::BatchRule{32, {}};
  const auto save = [&](bool resident_rule) {
    prof::PrecisionProfile q = pp;
    if (resident_rule) q.batch_resident = prof::BatchRule{32, {}};
    p.precisions[detail::Precision::s] = q;
    prof::save(p, prof::path_for(p.identity));
    prof::forget();
  };
  const detail::seams::Override discrete(test::discrete(false, /*pin_every_block=*/true));
  save(true);
  EXPECT_EQ(square_batch(128, 40).device_problems, 0)
      << "ordinary memory: the single call of the whole work keeps the batch on the cores";
  BatchReport r = square_batch(128, 40, true);
  EXPECT_EQ(r.device_problems + r.cpu_problems, 40);
  EXPECT_GT(r.device_problems, 0) << "tandem_malloc memory: the measured rule decides";
  // Grouped: 40 products of 128^3 and 100 of 16^3, all in tandem_malloc memory; the small ones
  // stay on the cores, the large ones follow the rule (batch_uses_devices asks it too).
  std::vector<float, Allocator<float>> a(128 * 128 * 40 + 16 * 16 * 100, 0.5f), c(a.size(), 7.0f);
  std::vector<const float*> large_a, small_a;
  std::vector<float*> large_c, small_c;
  for (int i = 0; i < 40; ++i) {
    large_a.push_back(a.data() + i * 128 * 128);
    large_c.push_back(c.data() + i * 128 * 128);
  }
  for (int i = 0; i < 100; ++i) {
    small_a.push_back(a.data() + 40 * 128 * 128 + i * 256);
    small_c.push_back(c.data() + 40 * 128 * 128 + i * 256);
  }
  const GemmGroup<float> groups[] = {square_group(128, large_a, large_c),
                                     square_group(16, small_a, small_c)};
  const auto run_groups = [&] {
    std::fill(c.begin(), c.end(), 7.0f);
    BatchReport g;
    gemm_batch<float>(Layout::RowMajor, groups, 2, {}, &g);
    EXPECT_TRUE(
        std::all_of(c.begin(), c.begin() + 40 * 128 * 128, [](float x) { return x == 32.0f; }));
    EXPECT_TRUE(
        std::all_of(c.begin() + 40 * 128 * 128, c.end(), [](float x) { return x == 4.0f; }));
    return g;
  };
  r = run_groups();
  EXPECT_GT(r.device_problems, 0) << "grouped, tandem_malloc memory: the measured rule decides";
  EXPECT_GE(r.cpu_problems, 100) << "the 16^3 products stay on the cores";
  save(false);
  EXPECT_EQ(square_batch(128, 40, true).device_problems, 0)
      << "without a measured rule for that memory the single call is asked, as before";
  EXPECT_EQ(run_groups().device_problems, 0);
}

// Where the batch rule's rounds found the devices alone faster than dealing (BatchSide::Devices)
// at the point nearest the batch's products, within a doubling, or at its largest point for
// larger products, auto gives the devices every product; where they found dealing faster, auto
// deals; hybrid deals whatever the rule says.
TEST(Batch, AutoGivesTheDevicesAloneWhereTheRuleFoundDealingSlower) {
  namespace prof = detail::profile;
  const ProfileDirScope scope("alone");
  prof::Profile p = empty_profile();
  prof::PrecisionProfile pp;
  pp.buckets = {single_call_bucket(64, 64, 50, 10)};
  std::optional<prof::FewProducts> few128;  // the point at 128^3's few products
  double gpu128 = 70;                       // and its devices' rate
  const auto rule = [&](prof::BatchSide at32, prof::BatchSide at128) {
    pp.batch =
        prof::BatchRule{32,
                        {{32, 2000, 30, 60, "faster", "", 70, at32, std::nullopt, std::nullopt},
                         {128, 100, 80, 60, "faster", "", gpu128, at128, few128, std::nullopt}}};
    p.precisions[detail::Precision::s] = pp;
    prof::save(p, prof::path_for(p.identity));
    prof::forget();
  };
  using Side = prof::BatchSide;
  rule(Side::Dealt, Side::Devices);
  BatchReport r = square_batch(128, 40);
  EXPECT_EQ(r.device_problems, 40) << "the rule's point at 128^3: the devices alone";
  EXPECT_EQ(r.strategy, Strategy::Gpu);
  r = square_batch(300, 40);
  EXPECT_EQ(r.device_problems, 40)
      << "more than a doubling above the largest point, the largest point's side";
  r = square_batch(32, 1000);
  EXPECT_GT(r.cpu_problems, 0) << "the point at 32^3 deals";
  EXPECT_GT(r.device_problems, 0);
  r = square_batch(128, 40, false, Strategy::Hybrid);
  EXPECT_GT(r.cpu_problems, 0) << "hybrid deals, as asked";
  EXPECT_GT(r.device_problems, 0);
  rule(Side::Devices, Side::Dealt);
  r = square_batch(128, 40);
  EXPECT_GT(r.cpu_problems, 0) << "the point at 128^3 deals";
  EXPECT_GT(r.device_problems, 0);
  r = square_batch(32, 1000);
  EXPECT_EQ(r.device_problems, 1000) << "the point at 32^3: the devices alone";
  EXPECT_EQ(r.cpu_problems, 0);
  // Ten products on 16 threads: the faster side by a single call's rates (the device's 50 GFLOPS
  // against the cores' 10), not the rule point's cores (80, at a hundred products); on 4 threads,
  // a product a thread as the rule's point ran: the point's rate, and the cores.
  r = square_batch(128, 10, false, Strategy::Auto, 16);
  EXPECT_EQ(r.device_problems, 10) << "a single call's rates for fewer products than threads";
  r = square_batch(128, 10, false, Strategy::Auto, 4);
  EXPECT_EQ(r.device_problems, 0) << "the rule point's rate for more products than threads";
  EXPECT_EQ(r.cpu_problems, 10);
  // Where the rule measured few products near these (FewProducts), as many or more, the side it
  // kept decides, whatever the rates say: the cores where the rates had the devices ahead, the
  // devices where they had the cores. Between its count and the point's own, each side's time on
  // the line through the two counts: with the point's devices at 300 GFLOPS against the cores' 80
  // (and 20 against 40 for ten products) the lines cross between 29 and 30 products; at 70 they
  // never do below the point's count, and from it the point's side applies. Beyond a doubling of
  // the point it does not apply.
  const auto went = [](int64_t n, int64_t count, Strategy strategy, int threads) {
    const BatchReport b = square_batch(n, count, false, strategy, threads);
    EXPECT_EQ(b.cpu_problems + b.device_problems, count);
    return b.device_problems;
  };
  few128 = prof::FewProducts{10, 40, 20, false, "not faster", "the cores kept"};
  gpu128 = 300;
  rule(Side::Devices, Side::Dealt);
  EXPECT_EQ(went(128, 10, Strategy::Auto, 16), 0) << "the point's few products kept the cores";
  EXPECT_EQ(went(128, 8, Strategy::Auto, 16), 0) << "fewer products than it had, too";
  EXPECT_EQ(went(128, 12, Strategy::Auto, 16), 0) << "12: the lines keep the cores";
  EXPECT_EQ(went(128, 28, Strategy::Auto, 16), 0) << "28: the lines keep the cores";
  EXPECT_EQ(went(128, 31, Strategy::Auto, 16), 31) << "31: the lines give the devices alone";
  EXPECT_GT(went(128, 40, Strategy::Auto, 16), 0) << "40 products are dealt, as the point says";
  EXPECT_GT(went(128, 10, Strategy::Hybrid, 16), 0) << "hybrid deals a batch of ten, as asked";
  EXPECT_EQ(went(300, 10, Strategy::Auto, 16), 10) << "300^3 is beyond a doubling: the rates";
  gpu128 = 70;
  rule(Side::Devices, Side::Dealt);
  EXPECT_EQ(went(128, 31, Strategy::Auto, 16), 0) << "lines that never cross: the cores";
  EXPECT_EQ(went(128, 60, Strategy::Auto, 16), 0) << "dealt by no rule below the point's count";
  EXPECT_GT(went(128, 100, Strategy::Auto, 16), 0) << "at the point's count, its side (dealt)";
  few128 = prof::FewProducts{10, 20, 40, true, "faster", "the devices alone kept"};
  rule(Side::Devices, Side::Dealt);
  EXPECT_EQ(went(128, 10, Strategy::Auto, 4), 10) << "the point's few products kept the devices";
}

// Where the rule measured dealing at a point's middle count too (MiddleCount), auto weighs it by
// the count lines between that count and the point's: with dealing behind the devices alone at
// the middle count (100 products) and ahead at the point's (1,000), the devices alone take 40 and
// 249 products (the cores' line crosses theirs at 32.5, dealing's at 250.0) and 251 are dealt;
// with the cores ahead at the middle count and dealing at the point's, the cores keep 150 products
// and 250 are dealt (dealing's line crosses the cores' at 196.4), where without the middle count
// the lines, which weigh the devices alone only, kept 250 on the cores.
TEST(Batch, AutoWeighsDealingBetweenTheMiddleCountAndThePoints) {
  namespace prof = detail::profile;
  using Side = prof::BatchSide;
  const ProfileDirScope scope("middle");
  prof::Profile p = empty_profile();
  prof::PrecisionProfile pp;
  pp.buckets = {single_call_bucket(64, 64, 50, 10)};
  const auto rule = [&](prof::FewProducts few, std::optional<prof::MiddleCount> middle, double gpu,
                        double dealt) {
    pp.batch = prof::BatchRule{
        64, {{128, 1000, 80, dealt, "faster", "", gpu, Side::Dealt, few, std::move(middle)}}};
    p.precisions[detail::Precision::s] = pp;
    prof::save(p, prof::path_for(p.identity));
    prof::forget();
  };
  const auto went = [](int64_t count) {
    const BatchReport b = square_batch(128, count, false, Strategy::Auto, 16);
    EXPECT_EQ(b.cpu_problems + b.device_problems, count);
    return std::make_pair(b.device_problems, b.cpu_problems);
  };
  const auto alone = [](int64_t count) { return std::make_pair(count, int64_t{0}); };
  rule({10, 40, 20, false, "not faster", ""},
       prof::MiddleCount{100, 80, 200, 150, Side::Devices, "faster", ""}, 300, 400);
  EXPECT_EQ(went(20), std::make_pair(int64_t{0}, int64_t{20})) << "20: the lines keep the cores";
  EXPECT_EQ(went(40), alone(40)) << "40: the devices alone, dealing not measured below 100";
  EXPECT_EQ(went(100), alone(100)) << "the middle count: the side its rounds kept";
  EXPECT_EQ(went(249), alone(249)) << "249: dealing's line not yet below the devices'";
  auto [device, cpu] = went(251);
  EXPECT_GT(device, 0) << "251: dealt";
  EXPECT_GT(cpu, 0) << "251: dealt";
  rule({10, 40, 10, false, "not faster", ""},
       prof::MiddleCount{100, 80, 40, 50, Side::Cores, "not faster", ""}, 60, 160);
  EXPECT_EQ(went(150), std::make_pair(int64_t{0}, int64_t{150})) << "150: the cores";
  std::tie(device, cpu) = went(250);
  EXPECT_GT(device, 0) << "250: dealt";
  EXPECT_GT(cpu, 0) << "250: dealt";
  rule({10, 40, 10, false, "not faster", ""}, std::nullopt, 60, 160);
  EXPECT_EQ(went(250), std::make_pair(int64_t{0}, int64_t{250}))
      << "without the middle count: the lines of the cores and the devices alone, the cores";
  // A grouped batch of 75 products of 64^3 and 75 of 120^3, where the rule keeps 150 products of
  // 64^3 on the cores and deals 150 of 128^3 (its point's count is 100): auto asks the rule at
  // the largest product's size and deals, and the plan, which weighs the shares at the products'
  // middle size (87.6, nearest 64^3), deals them as asked rather than undo it.
  pp.batch =
      prof::BatchRule{32,
                      {{64, 1000, 80, 160, "faster", "", 60, Side::Dealt,
                        prof::FewProducts{10, 40, 10, false, "not faster", ""},
                        prof::MiddleCount{100, 80, 40, 50, Side::Cores, "not faster", ""}},
                       {128, 100, 80, 60, "faster", "", 300, Side::Dealt,
                        prof::FewProducts{10, 40, 20, false, "not faster", ""}, std::nullopt}}};
  p.precisions[detail::Precision::s] = pp;
  prof::save(p, prof::path_for(p.identity));
  prof::forget();
  EXPECT_EQ(square_batch(64, 150, false, Strategy::Auto, 16).device_problems, 0)
      << "150 products of 64^3 alone: the cores";
  std::vector<float> a(75 * 64 * 64 + 75 * 120 * 120, 0.5f), c(a.size(), 7.0f);
  std::vector<const float*> small_a, large_a;
  std::vector<float*> small_c, large_c;
  for (int i = 0; i < 75; ++i) {
    small_a.push_back(a.data() + i * 64 * 64);
    small_c.push_back(c.data() + i * 64 * 64);
    large_a.push_back(a.data() + 75 * 64 * 64 + i * 120 * 120);
    large_c.push_back(c.data() + 75 * 64 * 64 + i * 120 * 120);
  }
  const GemmGroup<float> groups[] = {square_group(64, small_a, small_c),
                                     square_group(120, large_a, large_c)};
  BatchReport g;
  gemm_batch<float>(Layout::RowMajor, groups, 2, {}, &g);
  EXPECT_GT(g.device_problems, 0) << "dealt";
  EXPECT_GT(g.cpu_problems, 0) << "dealt";
  EXPECT_TRUE(std::all_of(c.begin(), c.begin() + 75 * 64 * 64, [](float x) { return x == 16.0f; }));
  EXPECT_TRUE(std::all_of(c.begin() + 75 * 64 * 64, c.end(), [](float x) { return x == 30.0f; }));
}

// A batch too small to wake the cores' threads (fewer multiply-adds than
// batch.cpu_parallel_from) runs on the calling thread, under cpu and under auto; a larger one on
// every core, and one whose caller set the threads on those; every C right.
TEST(Batch, ATinyBatchRunsOnTheCallingThread) {
  const int64_t least = detail::profile::batch_cpu_parallel_from();
  ASSERT_GT(least, 10 * 16 * 16 * 16) << "ten 16^3 products are a tiny batch";
  for (const Strategy strategy : {Strategy::Cpu, Strategy::Auto}) {
    const BatchReport tiny = square_batch(16, 10, false, strategy);
    EXPECT_EQ(tiny.cpu_threads, 1) << to_string(strategy);
    EXPECT_EQ(tiny.cpu_problems, 10);
  }
  const auto n = static_cast<int64_t>(std::ceil(std::cbrt(static_cast<double>(least))));
  EXPECT_EQ(square_batch(n, 2, false, Strategy::Cpu).cpu_threads, detail::host_cores())
      << n << "^3 x 2";
  std::vector<float> a(16 * 16 * 10, 0.5f), c(a.size(), 7.0f);
  BatchReport r;
  Options o;
  o.strategy = Strategy::Cpu;
  o.cpu_threads = 2;
  gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 16, 16, 16, 1.0f, a.data(),
                            16, 256, a.data(), 16, 256, 0.0f, c.data(), 16, 256, 10, o, &r);
  EXPECT_EQ(r.cpu_threads, 2) << "the caller's threads";
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](float x) { return x == 4.0f; }));
}

// One n^3 product, row-major, alpha 1: A and B are `ab`, C is `c`.
detail::Problem<float> cube_problem(int64_t n, const float* ab, float* c) {
  detail::Problem<float> p;
  p.m = p.n = p.k = p.lda = p.ldb = p.ldc = n;
  p.alpha = 1.0f;
  p.a = p.b = ab;
  p.c = c;
  return p;
}

// Auto remembers its batch rule's edge per product shape and profile state, but not where an
// option names the devices: with two devices whose profiles disagree (POCL_DEVICES="basic
// pthread", ctest batch.two_devices; PoCL and the GPU on a GPU host), a batch on the default
// device (its rule: never) stays on the cores, the same batch with Options::device naming the
// other device (its rule: from 32^3) is dealt to that one though the first was remembered, and the
// first's rule still holds after.
TEST(Batch, AutosRememberedRuleGivesWayToAnOptionNamingTheDevice) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices (ctest batch.two_devices)";
  namespace prof = detail::profile;
  const ProfileDirScope scope("remembered");
  const int by_default = detail::gpu::info(*detail::gpu::open_device("")).index;
  const int other = by_default == 0 ? 1 : 0;
  for (const int i : {0, 1}) {
    prof::Profile p;
    p.tandem_version = TANDEM_VERSION;
    p.identity =
        prof::identity_for(detail::gpu::info(*detail::gpu::open_device(std::to_string(i))));
    prof::PrecisionProfile pp;
    pp.buckets = {single_call_bucket(64, 64, 50, 10)};
    pp.batch = prof::BatchRule{i == by_default ? 0 : 32, {}};
    p.precisions[detail::Precision::s] = pp;
    prof::save(p, prof::path_for(p.identity));
  }
  prof::forget();
  const int64_t large = prof::batch_devices_from();
  for (int round = 0; round < 2; ++round) {
    const std::string what = "round " + std::to_string(round);
    EXPECT_EQ(square_batch(large, 40).device_problems, 0) << what << ": the default device's rule";
    const BatchReport named =
        square_batch(large, 40, false, Strategy::Auto, std::nullopt, std::to_string(other));
    EXPECT_GT(named.device_problems, 0) << what << ": the named device's rule";
    for (const auto& d : named.devices) EXPECT_EQ(d.index, other) << what;
  }
}

// A batch's shares follow what the tune measured of such batches (the coalesced bucket's rate on
// the device alone, the batch rule's point for the cores alone) where the profile has it, else a
// single call's rates at the bucket of the batch's first shape.
TEST(Batch, SharesFollowTheTunesBatchRates) {
  namespace prof = detail::profile;
  const ProfileDirScope scope("rates");
  const bool is_gpu = detail::gpu::info(*detail::gpu::open_device("")).is_gpu;
  prof::Profile p = empty_profile();
  const auto id = p.identity;
  prof::PrecisionProfile pp;
  pp.buckets = {single_call_bucket(64, 32, 50, 10)};  // a single call's rates: 50 against 10
  const auto direct = *prof::direct_for(nullptr, detail::Precision::s, is_gpu).kernel;
  // Batches of 40 products of 64^3: the device alone 10 GFLOPS with the direct kernel, the cores
  // alone 30.
  pp.coalesced = {{64, 40, direct, 10, 10, "not faster", "", direct, false}};
  pp.batch = prof::BatchRule{
      64, {{64, 40, 30, 35, "faster", "", 0, std::nullopt, std::nullopt, std::nullopt}}};
  const auto shares = [&](const prof::PrecisionProfile& q, int64_t count) {
    p.precisions[detail::Precision::s] = q;
    prof::save(p, prof::path_for(id));
    prof::forget();
    std::vector<float> x(64 * 64, 1.0f), y(64 * 64, 0.0f);
    const detail::Problem<float> first = cube_problem(64, x.data(), y.data());
    Options o;
    o.strategy = Strategy::Hybrid;
    const detail::BatchPlan plan = detail::plan_batch(first, count, o, 64.0);
    EXPECT_EQ(plan.parts.size(), 1u);
    return plan.parts.empty() ? int64_t{-1} : plan.parts[0].problems;
  };
  EXPECT_EQ(shares(pp, 40), 10) << "10 against 30: a quarter to the device";
  prof::PrecisionProfile stale = pp;
  stale.coalesced[0].direct_kernel = {{"KERNEL", 2}, {"MWG", 8}};
  EXPECT_EQ(shares(stale, 40), 25) << "a bucket timed against another direct kernel: 50 against 30";
  prof::PrecisionProfile faster = pp;
  faster.coalesced[0].verdict = "faster";
  faster.coalesced[0].gflops = 90;
  EXPECT_EQ(shares(faster, 40), 30) << "the bucket's own kernel: 90 against 30";
  prof::PrecisionProfile single = pp;
  single.coalesced.clear();
  single.batch.reset();
  EXPECT_EQ(shares(single, 40), 33) << "nothing measured for batches: 50 against 10";
}

// A direct kernel's parameters: MWG x NWG tiles of MDIMC x NDIMC work-items.
std::map<std::string, int> direct_params(int mwg, int nwg, int mdimc, int ndimc) {
  return {{"KERNEL", 2},    {"MWG", mwg}, {"NWG", nwg},   {"MDIMC", mdimc},
          {"NDIMC", ndimc}, {"KWG", 8},   {"KUNROLL", 2}, {"VWA", 1},
          {"VWB", 1},       {"PADA", 0},  {"PADB", 1}};
}

// A strided batch of `count` products of n^3 (0.5 everywhere) on the device alone: every C
// checked, every product on the device; the parameters of the kernel that ran.
std::map<std::string, int> square_batch_on_device(int64_t n, int64_t count) {
  std::vector<float> a(static_cast<size_t>(n * n * count), 0.5f), c(a.size(), 7.0f);
  Options o;
  o.strategy = Strategy::Gpu;
  BatchReport r;
  gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n,
                            n * n, a.data(), n, n * n, 0.0f, c.data(), n, n * n, count, o, &r);
  const float exact = 0.25f * static_cast<float>(n);
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](float x) { return x == exact; }))
      << n << "^3 x " << count;
  EXPECT_EQ(r.device_problems, count) << "every product on the device";
  if (r.devices.size() != 1) {
    ADD_FAILURE() << "one device, not " << r.devices.size();
    return {};
  }
  return detail::text::parse_params(r.devices[0].kernel);
}

// The coalesced kernel a batch runs is its device's profile's bucket nearest the batch (in size on
// a log scale, then in count), and the direct kernel where the profile has none, the batch's
// products spread wider than a doubling, or the profile's direct kernel is no longer the one the
// buckets were timed against; every C right with each.
TEST(Batch, TheCoalescedKernelIsTheProfilesBucketNearestTheBatch) {
  namespace prof = detail::profile;
  const ProfileDirScope scope("coalesced");
  const auto kernel = direct_params;
  const auto small = kernel(16, 16, 4, 4), many = kernel(32, 16, 8, 4), few = kernel(8, 8, 2, 2);
  prof::Profile p = empty_profile();
  const auto id = p.identity;
  prof::PrecisionProfile pp;
  pp.direct_kernel = kernel(16, 16, 8, 8);
  pp.coalesced = {{32, 100, small, 1, 1, "faster", "", pp.direct_kernel, false},
                  {128, 10, few, 1, 1, "faster", "", pp.direct_kernel, false},
                  {128, 100, many, 1, 1, "faster", "", pp.direct_kernel, false}};
  p.precisions[detail::Precision::s] = pp;
  prof::PrecisionProfile direct_only;
  direct_only.direct_kernel = kernel(16, 8, 4, 2);
  p.precisions[detail::Precision::d] = direct_only;
  prof::save(p, prof::path_for(id));
  // The kernel that ran: its parameters, checked to be `want`'s.
  const auto ran = [](int64_t n, int64_t count, const std::map<std::string, int>& want) {
    const std::map<std::string, int> got = square_batch_on_device(n, count);
    for (const auto& [name, value] : want)
      EXPECT_EQ(got.count(name) ? got.at(name) : -1, value)
          << name << " at " << n << "^3 x " << count;
  };
  ran(40, 50, small);
  ran(100, 80, many);
  ran(100, 8, few);
  ran(300, 3, few);
  {
    // Products spread wider than a doubling (40^3 and 100^3 in one grouped batch): the direct
    // kernel for all of them, not one bucket's tile.
    std::vector<float> x(40 * 40 * 4, 0.5f), y(100 * 100 * 4, 0.5f), cx(x.size(), 7.0f),
        cy(y.size(), 7.0f);
    std::vector<const float*> xa, ya;
    std::vector<float*> xc, yc;
    for (int i = 0; i < 4; ++i) {
      xa.push_back(x.data() + i * 1600);
      xc.push_back(cx.data() + i * 1600);
      ya.push_back(y.data() + i * 10000);
      yc.push_back(cy.data() + i * 10000);
    }
    GemmGroup<float> groups[2];
    for (int g = 0; g < 2; ++g) {
      const int64_t n = g == 0 ? 40 : 100;
      groups[g].m = groups[g].n = groups[g].k = groups[g].lda = groups[g].ldb = groups[g].ldc = n;
      groups[g].a = groups[g].b = g == 0 ? xa.data() : ya.data();
      groups[g].c = g == 0 ? xc.data() : yc.data();
      groups[g].size = 4;
    }
    Options o;
    o.strategy = Strategy::Gpu;
    BatchReport r;
    gemm_batch<float>(Layout::RowMajor, groups, 2, o, &r);
    EXPECT_TRUE(std::all_of(cx.begin(), cx.end(), [](float v) { return v == 10.0f; }));
    EXPECT_TRUE(std::all_of(cy.begin(), cy.end(), [](float v) { return v == 25.0f; }));
    ASSERT_EQ(r.devices.size(), 1u);
    const auto got = detail::text::parse_params(r.devices[0].kernel);
    for (const auto& [name, value] : pp.direct_kernel)
      EXPECT_EQ(got.count(name) ? got.at(name) : -1, value) << name << ": " << r.devices[0].kernel;
  }
  // Without buckets for the precision: its direct kernel.
  std::vector<double> x(static_cast<size_t>(48 * 48 * 6), 1.0), y(x.size(), 0.0);
  Options o;
  o.strategy = Strategy::Gpu;
  BatchReport r;
  gemm_batch_strided<double>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 48, 48, 48, 1.0, x.data(),
                             48, 48 * 48, x.data(), 48, 48 * 48, 0.0, y.data(), 48, 48 * 48, 6, o,
                             &r);
  EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](double v) { return v == 48.0; }));
  ASSERT_EQ(r.devices.size(), 1u);
  const auto got = detail::text::parse_params(r.devices[0].kernel);
  for (const auto& [name, value] : direct_only.direct_kernel)
    EXPECT_EQ(got.count(name) ? got.at(name) : -1, value) << name << ": " << r.devices[0].kernel;
  // A later tune --direct-only changed the direct kernel: the buckets, timed against the old
  // one, give way to it.
  p.precisions[detail::Precision::s].direct_kernel = kernel(32, 32, 8, 8);
  prof::save(p, prof::path_for(id));
  prof::forget();
  ran(100, 80, p.precisions[detail::Precision::s].direct_kernel);
}

// A bucket's kernel or a direct kernel the device cannot run (here work-groups of 16,384 items,
// or a set that is not the direct kernel's) gives way to the next that fits, down to the defaults'
// direct kernel, with one warning: the batch stays on the device, every C right.
TEST(Batch, AKernelThatDoesNotFitGivesWayToOneThatDoes) {
  namespace prof = detail::profile;
  const ProfileDirScope scope("unfit");
  const auto device = detail::gpu::open_device("");
  const auto fits = direct_params(16, 16, 4, 4), too_wide = direct_params(128, 128, 128, 128);
  ASSERT_GT(128 * 128, static_cast<int>(detail::gpu::info(*device).max_work_group));
  const auto run = [](int64_t count) { return square_batch_on_device(40, count); };
  const auto has = [](const std::map<std::string, int>& got,
                      const std::map<std::string, int>& want) {
    for (const auto& [name, value] : want)
      if (got.count(name) == 0 || got.at(name) != value) return false;
    return true;
  };
  prof::Profile p = empty_profile();
  const auto id = p.identity;
  prof::PrecisionProfile pp;
  pp.direct_kernel = fits;
  pp.coalesced = {{40, 10, too_wide, 1, 1, "faster", "", fits, false}};
  p.precisions[detail::Precision::s] = pp;
  prof::save(p, prof::path_for(id));
  prof::forget();
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(has(run(10), fits)) << "the bucket's kernel does not fit: the direct kernel";
  run(12);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("does not fit"), std::string::npos) << err;
  EXPECT_EQ(err.find("does not fit"), err.rfind("does not fit")) << "one warning: " << err;

  p.precisions[detail::Precision::s].direct_kernel = too_wide;
  p.precisions[detail::Precision::s].coalesced.clear();
  prof::save(p, prof::path_for(id));
  prof::forget();
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(has(run(10), *prof::direct_defaults(detail::gpu::info(*device).is_gpu).kernel))
      << "the direct kernel does not fit either: the defaults'";
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("the default direct kernel"), std::string::npos) << err;

  // A bucket's set without KERNEL 2 would resolve to a tiled kernel, which has no batched form:
  // the direct kernel runs instead.
  std::map<std::string, int> tiled = fits;
  tiled.erase("KERNEL");
  p.precisions[detail::Precision::s].direct_kernel = fits;
  p.precisions[detail::Precision::s].coalesced = {{40, 10, tiled, 1, 1, "faster", "", fits, false}};
  prof::save(p, prof::path_for(id));
  prof::forget();
  EXPECT_TRUE(has(run(10), fits)) << "not the direct kernel: the profile's direct kernel";
}

// Products that batch.stage_bytes holds few of (1024 x 1024 x 8: a 4 MiB C, seven to a 32 MiB
// stage) go in stages of batch.stage_products: a chunk of up to 16 in one launch, where 32 MiB
// stages would have taken two for any chunk of more than seven; every C right.
TEST(Batch, LargeProductsGoInStagesOfSeveralProducts) {
  constexpr int64_t m = 1024, n = 1024, k = 8, count = 24;
  ASSERT_GT(static_cast<int64_t>(detail::profile::batch_stage_products()) * m * n * 4,
            static_cast<int64_t>(detail::profile::batch_stage_bytes()))
      << "the floor applies to these products";
  std::vector<float> a(m * k * count, 0.5f), b(k * n * count, 2.0f), c(m * n * count, 7.0f);
  Options o;
  o.strategy = Strategy::Gpu;
  BatchReport r;
  gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0f, a.data(), k,
                            m * k, b.data(), n, k * n, 0.0f, c.data(), n, m * n, count, o, &r);
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](float x) { return x == 8.0f; }));
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].problems, count);
  const int64_t chunks = r.devices[0].chunks;
  ASSERT_GT(count - 1, 7 * (chunks - 1)) << "some chunk after the first holds more than seven";
  EXPECT_EQ(r.devices[0].launches, chunks) << "each chunk one stage";
}

// An unstaged batch's stages shrink towards the end of its chunk: each takes at most 1/tail of
// what is left, a cap never below tail_bytes, so that the last stage's kernel and copy back, which
// nothing overlaps, are short (on the H100 host ten s 512^3 products went in one stage of nine
// after the first and ran at 0.67-0.75x cuBLAS; shrinking, with the device's side on the caller's
// thread, at 0.98-1.05x). Here the chunk after the first would fit one stage of
// batch.stage_bytes.
TEST(Batch, AnUnstagedBatchsStagesShrinkTowardsItsEnd) {
  detail::seams::Values v;
  v.assume_discrete = true;
  detail::seams::Override seams(v);
  Options gpu;
  gpu.strategy = Strategy::Gpu;
  gpu.device = std::to_string(device_count() - 1);
  constexpr int64_t m = 512, n = 512, k = 8;
  const int64_t staged_bytes = (m * k + k * n + m * n + 96) * 4;  // a product's staging, at most
  ASSERT_GT(detail::profile::batch_stage_tail_unstaged(), 0);
  // Four times tail_bytes and a product: the rule cuts every chunk of more than tail_bytes.
  const int64_t count = 4 * detail::profile::batch_stage_tail_bytes_unstaged() / staged_bytes + 2;
  ASSERT_LE(count * staged_bytes, static_cast<int64_t>(detail::profile::batch_stage_bytes()))
      << "the whole batch fits one stage of batch.stage_bytes";
  const BatchReport r = pinned_batch(gpu, count, 0.0, 0, "shrinking stages", m, n, k);
  ASSERT_EQ(r.devices.size(), 1u);
  const BatchReport::Device& d = r.devices[0];
  EXPECT_EQ(d.problems, count);
  EXPECT_EQ(d.bytes_staged, 0) << "unstaged";
  // Each chunk one stage without the rule (one launch a stage); with it, some chunk in several.
  EXPECT_GT(d.launches, d.chunks);
}

// A device that takes the whole batch fills stages of at least batch.stage_products of its
// largest products; one that shares it, of batch.stage_products_dealt (its chunks must each go
// in stages to overlap copies with kernels).
TEST(Batch, ADeviceSharingTheBatchFillsSmallerStages) {
  ASSERT_GT(detail::profile::batch_stage_products(), detail::profile::batch_stage_products_dealt());
  std::vector<float> x(64 * 64, 1.0f), y(64 * 64, 0.0f);
  const detail::Problem<float> first = cube_problem(64, x.data(), y.data());
  for (const Strategy strategy : {Strategy::Gpu, Strategy::Hybrid}) {
    Options o;
    o.strategy = strategy;
    if (strategy == Strategy::Hybrid) o.gpu_fraction = 0.5;
    const detail::BatchPlan plan = detail::plan_batch(first, 100, o, 64.0);
    ASSERT_FALSE(plan.parts.empty()) << to_string(strategy);
    // Under gpu, two devices (POCL_DEVICES="basic pthread") share the batch too.
    const int64_t want = strategy == Strategy::Gpu && plan.parts.size() == 1
                             ? detail::profile::batch_stage_products()
                             : detail::profile::batch_stage_products_dealt();
    if (strategy == Strategy::Hybrid) {
      EXPECT_GT(plan.cpu_problems, 0);
    }
    for (const detail::BatchPart& part : plan.parts)
      EXPECT_EQ(part.stages.products, want) << to_string(strategy) << ", " << plan.parts.size();
  }
}

// A call that must be refused: the error's kind, position and message, and every C as it was.
template <class F>
void expect_refused(F&& call, int position, const std::vector<std::string>& words,
                    const std::vector<float>& c, const std::vector<float>& c_before) {
  try {
    call();
    ADD_FAILURE() << "not refused (expected position " << position << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::InvalidArgument) << e.what();
    EXPECT_EQ(e.argument(), position) << e.what();
    for (const std::string& w : words)
      EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what() << " lacks " << w;
  }
  EXPECT_EQ(c, c_before) << "a refused batch wrote C";
}

TEST(Batch, StridedRefusalsNameTheArgumentAndTouchNoC) {
  std::vector<float> a(64, 1), b(64, 1), c(64, 7);
  const auto before = c;
  const auto call = [&](int64_t lda, int64_t ldb, const float* bp, int64_t sb, int64_t sc,
                        int64_t count) {
    return [=, &a, &c] {
      gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 2, 2, 2, 1.0f, a.data(),
                                lda, 4, bp, ldb, sb, 1.0f, c.data(), 2, sc, count, cpu(1));
    };
  };
  expect_refused(call(2, 2, b.data(), 4, 4, -1), 18, {"sgemm_batch_strided", "count"}, c, before);
  expect_refused(call(1, 2, b.data(), 4, 4, 3), 9, {"lda", "max(1, k)"}, c, before);
  expect_refused(call(2, 2, nullptr, 4, 4, 3), 11, {"(b) is NULL"}, c, before);
  expect_refused(call(2, 1, b.data(), 4, 4, 3), 12, {"ldb"}, c, before);
  expect_refused(call(2, 2, b.data(), -4, 4, 3), 13, {"stride_b", "negative"}, c, before);
  // C of problem i + 1 starts inside C of problem i (a stride of 3 for a 2 x 2 C of ldc 2).
  expect_refused(call(2, 2, b.data(), 4, 3, 3), 17, {"stride_c", "problems 0 and 1"}, c, before);
  expect_refused(call(2, 2, b.data(), 4, 0, 2), 17, {"stride_c"}, c, before);
  // C of a later problem over an A the batch reads: a's buffer is C's.
  expect_refused(
      [&] {
        gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 2, 2, 2, 1.0f,
                                  c.data() + 8, 2, 4, b.data(), 2, 4, 1.0f, c.data(), 2, 4, 3,
                                  cpu(1));
      },
      15, {"(c)", "share", "A of problem 0"}, c, before);
  // The same in column-major: the row-major problems tandem makes of it read the caller's A as
  // their B, and the check must still see A's whole block (4 x 1, ld 4, under C of problem 0).
  std::vector<float> x(10, 3);
  const auto x_before = x;
  expect_refused(
      [&] {
        gemm_batch_strided<float>(Layout::ColMajor, Op::NoTrans, Op::NoTrans, 4, 1, 1, 1.0f,
                                  x.data(), 4, 0, b.data(), 1, 0, 1.0f, x.data() + 2, 4, 4, 2,
                                  cpu(1));
      },
      15, {"share", "A of problem 0"}, x, x_before);
  // Unused operands may be NULL with any stride (k = 0), and an empty C any pointer.
  gemm_batch_strided<float>(Layout::ColMajor, Op::NoTrans, Op::NoTrans, 2, 2, 0, 1.0f, nullptr, 2,
                            std::numeric_limits<int64_t>::max(), nullptr, 1,
                            std::numeric_limits<int64_t>::max(), 1.0f, c.data(), 2, 4, 3, cpu(1));
  gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 0, 2, 2, 1.0f, nullptr, 2,
                            0, nullptr, 2, 0, 1.0f, nullptr, 2, 0, int64_t(1) << 40, cpu(1));
  expect_refused(
      [&] {
        gemm_batch_strided<float>(Layout(7), Op::NoTrans, Op::NoTrans, 2, 2, 2, 1.0f, a.data(), 2,
                                  4, b.data(), 2, 4, 1.0f, c.data(), 2, 4, 0, cpu(1));
      },
      1, {"layout"}, c, before);
  // A C that the batch does not write may be read (k = 0: no product reads A or B).
  gemm_batch_strided<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 2, 2, 0, 1.0f, nullptr, 1,
                            0, nullptr, 2, 0, 1.0f, c.data(), 2, 4, 3, cpu(1));
  EXPECT_EQ(c, before);
}

TEST(Batch, GroupedRefusalsNameTheGroupAndTouchNoC) {
  std::vector<float> a(64, 1), b(64, 1), c(64, 7);
  const auto before = c;
  const float* as[4] = {a.data(), a.data() + 8, a.data() + 16, a.data() + 24};
  const float* bs[4] = {b.data(), b.data(), b.data(), b.data()};
  float* cs[4] = {c.data(), c.data() + 8, c.data() + 16, c.data() + 24};
  const auto groups = [&] {
    std::vector<GemmGroup<float>> g(2);
    for (int i = 0; i < 2; ++i) {
      g[i].m = g[i].n = g[i].k = 2;
      g[i].lda = g[i].ldb = g[i].ldc = 2;
      g[i].a = as + 2 * i, g[i].b = bs + 2 * i, g[i].c = cs + 2 * i;
      g[i].size = 2;
      g[i].beta = 1;
    }
    return g;
  };
  auto run = [&](std::vector<GemmGroup<float>> g) {
    return [g, &c] { gemm_batch<float>(Layout::RowMajor, g.data(), 2, cpu(1)); };
  };
  auto g = groups();
  g[1].ldb = 1;
  expect_refused(run(g), 11, {"sgemm_batch", "group 1", "ldb"}, c, before);
  g = groups();
  g[1].size = -1;
  expect_refused(run(g), 16, {"group 1", "negative"}, c, before);
  g = groups();
  float* broken[2] = {c.data() + 16, nullptr};
  g[1].c = broken;
  expect_refused(run(g), 13, {"group 1: problem 1", "(c) is NULL"}, c, before);
  g = groups();
  g[0].b = nullptr;
  expect_refused(run(g), 10, {"group 0", "array"}, c, before);
  g = groups();
  float* same[2] = {c.data() + 16, c.data() + 17};  // overlapping 2 x 2 blocks of ldc 2
  g[1].c = same;
  expect_refused(run(g), 13, {"share"}, c, before);
  g = groups();
  const float* over[2] = {a.data() + 16, c.data() + 1};  // problem 3 reads C of problem 0
  g[1].a = over;
  expect_refused(run(g), 13, {"share", "A of problem 1 of group 1", "C of problem 0 of group 0"}, c,
                 before);
  expect_refused([&] { gemm_batch<float>(Layout::RowMajor, nullptr, -1, cpu(1)); }, 15,
                 {"group_count"}, c, before);
  // A group whose C are empty reads none of its arrays, however many problems it counts (as the
  // strided form's 2^40 empty problems, above): none of them is built or checked one by one.
  std::vector<GemmGroup<float>> empty(1);
  empty[0].m = 0;
  empty[0].n = empty[0].k = empty[0].lda = empty[0].ldb = empty[0].ldc = 2;
  empty[0].size = int64_t(1) << 40;
  BatchReport none;
  gemm_batch<float>(Layout::RowMajor, empty.data(), 1, cpu(1), &none);
  EXPECT_EQ(none.problems, int64_t(1) << 40);
  EXPECT_EQ(none.products, 0);
  // Counts summing past int64_t are refused, naming the group that makes them so.
  empty.push_back(empty[0]);
  empty[0].size = std::numeric_limits<int64_t>::max();
  expect_refused([&] { gemm_batch<float>(Layout::RowMajor, empty.data(), 2, cpu(1)); }, 16,
                 {"group 1", "group_size", "2^63"}, c, before);
  // The same groups, valid, run.
  gemm_batch<float>(Layout::RowMajor, groups().data(), 2, cpu(1));
  EXPECT_EQ(c[0], 7 + 2);
}

TEST(Batch, TheCInterfaceReturnsPositions) {
  std::vector<double> a(64, 1), b(64, 1), c(64, 0);
  // tandem_dgemm_batch_strided: ldb (position 12) too small.
  EXPECT_EQ(tandem_dgemm_batch_strided(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, 2, 2, 2,
                                       1.0, a.data(), 2, 4, b.data(), 1, 4, 0.0, c.data(), 2, 4, 3),
            12);
  EXPECT_NE(std::string(tandem_last_error()).find("ldb"), std::string::npos);
  EXPECT_EQ(tandem_dgemm_batch_strided(TANDEM_COL_MAJOR, TANDEM_TRANS, TANDEM_NO_TRANS, 2, 2, 2,
                                       1.0, a.data(), 2, 4, b.data(), 2, 4, 0.0, c.data(), 2, 4, 3),
            0);
  EXPECT_EQ(c[0], 2.0);
  const std::complex<float> one(1, 0);
  std::vector<std::complex<float>> z(64, one), w(64);
  EXPECT_EQ(
      tandem_cgemm_batch_strided(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, 2, 2, 2,
                                 nullptr, z.data(), 2, 4, z.data(), 2, 4, &one, w.data(), 2, 4, 3),
      7);
  // Grouped: NULL arrays name their positions; a valid batch of two groups runs.
  const int ops[2] = {TANDEM_NO_TRANS, TANDEM_CONJ_TRANS};
  const int64_t m[2] = {2, 1}, n[2] = {2, 2}, k[2] = {2, 3}, lda[2] = {2, 1}, ldb[2] = {2, 3},
                ldc[2] = {2, 2}, sizes[2] = {1, 2};
  const std::complex<float> alpha[2] = {one, {0, 1}}, beta[2] = {{0, 0}, {0, 0}};
  const void* as[3] = {z.data(), z.data() + 8, z.data() + 16};
  void* cs[3] = {w.data(), w.data() + 8, w.data() + 16};
  EXPECT_EQ(tandem_cgemm_batch(TANDEM_ROW_MAJOR, ops, ops, nullptr, n, k, alpha, as, lda, as, ldb,
                               beta, cs, ldc, 2, sizes),
            4);
  EXPECT_EQ(tandem_cgemm_batch(TANDEM_ROW_MAJOR, ops, ops, m, n, k, alpha, as, lda, as, ldb, beta,
                               cs, ldc, 2, sizes),
            0)
      << tandem_last_error();
  EXPECT_EQ(w[0], std::complex<float>(2, 0));
  // Group 1: alpha i, op(A) = A^H of the 3 x 1 ones, op(B) = B^H of 2 x 3 ones: each C is 3i.
  EXPECT_EQ(w[8], std::complex<float>(0, 3));
  EXPECT_EQ(w[17], std::complex<float>(0, 3));
}

// The overlap rule against the elements themselves: random blocks in a small address space,
// one lattice (exact) and two (conservative: it may say "share" only where the ranges meet).
TEST(Overlap, ShareIsExactOnOneLatticeAndSafeAcrossTwo) {
  std::mt19937_64 rng(14);
  const auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  static const char space[8 * 4096] = {};
  int exact = 0;
  for (int t = 0; t < 20000; ++t) {
    detail::overlap::Block x, y;
    const int64_t ld = pick(1, 9);
    for (detail::overlap::Block* b : {&x, &y}) {
      b->rows = pick(0, 5);
      b->cols = pick(0, ld);
      b->ld = b == &y && pick(0, 3) == 0 ? pick(b->cols > 0 ? b->cols : 1, 9) : ld;
      b->element = 8;
      b->at = space + 8 * pick(0, 60);
    }
    std::set<int64_t> ex, ey;
    for (int64_t i = 0; i < x.rows; ++i)
      for (int64_t j = 0; j < x.cols; ++j) ex.insert((x.at - space) / 8 + i * x.ld + j);
    for (int64_t i = 0; i < y.rows; ++i)
      for (int64_t j = 0; j < y.cols; ++j) ey.insert((y.at - space) / 8 + i * y.ld + j);
    bool truly = false;
    for (int64_t e : ex) truly = truly || ey.count(e) > 0;
    const bool said = detail::overlap::share(x, y);
    EXPECT_EQ(said, detail::overlap::share(y, x));
    if (x.ld == y.ld) {
      ++exact;
      ASSERT_EQ(said, truly) << "t " << t << ": x " << (x.at - space) / 8 << " " << x.rows << "x"
                             << x.cols << " y " << (y.at - space) / 8 << " " << y.rows << "x"
                             << y.cols << " ld " << ld;
    } else {
      ASSERT_TRUE(said || !truly) << "t " << t << ": a shared element not seen";
    }
  }
  EXPECT_GT(exact, 10000);
}

TEST(Overlap, FirstSharedSeesOnlyPairsWithAnOutput) {
  static const char space[8 * 256] = {};
  using detail::overlap::Block;
  const Block in1{space, 4, 4, 4, 8, false}, in2{space + 8, 3, 4, 4, 8, false};
  EXPECT_FALSE(detail::overlap::first_shared({in1, in2}).has_value());
  const Block out{space + 8 * 16, 2, 2, 4, 8, true}, out2{space + 8 * 18, 2, 2, 4, 8, true};
  EXPECT_FALSE(detail::overlap::first_shared({in1, out, out2}).has_value());  // tiles side by side
  const Block out3{space + 8 * 17, 2, 2, 4, 8, true};
  const auto pair = detail::overlap::first_shared({in1, out, out3, in2});
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(std::min(pair->first, pair->second), 1);
  EXPECT_EQ(std::max(pair->first, pair->second), 2);
  const Block reads_out{space + 8 * 12, 2, 2, 4, 8, false};  // row 1 of it is out's row 0
  EXPECT_TRUE(detail::overlap::first_shared({out, reads_out}).has_value());
}

}  // namespace
}  // namespace tandem::test
