// libFuzzer target: the grouped batch interface's arrays (issue 43 item 6). The input decides the
// element type (float or double), the layout, the strategy (cpu, gpu or hybrid, on whatever
// device the process sees: PoCL in CI), the group count and, per group, the operations, the
// shape, each leading dimension (the least allowed, one more, or one too few), the scalars (0, 1,
// 2, -1/2 or NaN) and the size; per problem, where each of A, B and C lies: in one shared arena
// (so that operands alias each other at any offset), in a heap block of its own sized exactly to
// the matrix (so that a read past it, or between two unrelated blocks, is an ASan report), or
// NULL. Every value is a small integer, so every product is exact in either type.
//
// Properties: a refused batch throws tandem::Error of kind InvalidArgument naming a position (or,
// under gpu, another kind for want of a device) and leaves every byte of the arena and the blocks
// as it was; a batch with a negative count, size or dimension, a leading dimension below the
// least, a NULL operand the batch uses, or a written C sharing an element with another or with an
// A or B the batch reads is refused; a batch with none of those whose written C's ranges meet no
// other used matrix's, and no NULL anywhere, is accepted; an accepted batch leaves memory exactly
// as computing each problem by the BLAS rules from the memory as it was would (C = alpha op(A)
// op(B) + beta C; with alpha 0 or k 0, A and B are not read; with beta 0, C is not read, so NaN
// reaches C only through what is read), and touches nothing else.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_check.hpp"
#include "tandem/tandem.hpp"

namespace {

using tandem::Layout;
using tandem::Op;

// The input, a byte at a time; 0 once it runs out.
struct Bytes {
  const uint8_t* data;
  size_t size, at = 0;
  uint8_t next() { return at < size ? data[at++] : 0; }
};

constexpr size_t kArena = 256;  // elements in the shared arena
constexpr int64_t kMaxSide = 6;

// Where one matrix lies: a region (0: the arena, else block region - 1) and an offset, or
// nowhere (NULL).
struct Place {
  bool null = false;
  size_t region = 0, offset = 0;
};

// A stored matrix's outer count and inner length (rows of a row-major matrix, columns of a
// column-major one) for a logical rows x cols matrix read as `op`.
struct Stored {
  int64_t outer = 0, inner = 0;
  int64_t extent(int64_t ld) const { return outer > 0 && inner > 0 ? (outer - 1) * ld + inner : 0; }
};
Stored stored(Layout layout, Op op, int64_t rows, int64_t cols) {
  const bool row_outer = (layout == Layout::RowMajor) == (op == Op::NoTrans);
  return row_outer ? Stored{rows, cols} : Stored{cols, rows};
}

// One operand of one problem as the batch uses it: where, its stored outer count, inner length
// and leading dimension, and whether the batch reads (A, B) or writes (C) it.
struct Mat {
  Place at;
  int64_t outer = 0, inner = 0, ld = 0;
  bool used = false;
  bool is_c = false;
  int64_t extent() const { return Stored{outer, inner}.extent(ld); }
  size_t element(int64_t o, int64_t i) const { return at.offset + size_t(o * ld + i); }
};

template <class T>
T scalar(uint8_t b) {
  const T values[] = {T(0), T(1), T(2), T(-0.5), T(NAN)};
  return values[b % 5];
}

template <class T>
struct Case {
  Layout layout = Layout::RowMajor;
  tandem::Strategy strategy = tandem::Strategy::Cpu;
  int64_t group_count = 0;
  std::vector<tandem::GemmGroup<T>> groups;
  std::vector<std::vector<T>> memory;  // region 0 the arena, then one block per placed matrix
  std::vector<Mat> mats;               // A, B, C of each problem, in order
  std::vector<const T*> a, b;
  std::vector<T*> c;
  bool must_refuse = false;
  // Where the rules may refuse a batch they do not have to: a C whose range of elements meets
  // another C's or a read A's or B's without sharing an element (the aliasing check is exact only
  // on one lattice, conservative across two), or a NULL operand the batch does not use.
  bool may_share = false;
};

// A leading dimension: the least allowed, one more, or one too few (refused).
int64_t leading(uint8_t byte, int64_t inner, bool& bad) {
  const int64_t least = std::max<int64_t>(1, inner);
  const int64_t ld = least + (byte % 3) - 1;
  bad = bad || ld < least;
  return ld;
}

int64_t side(uint8_t byte, bool& bad) {
  if (byte == 255) {
    bad = true;
    return -1;
  }
  return byte % (kMaxSide + 1);
}

// Places a matrix of `extent` elements as the input says and returns where.
template <class T>
Place place(Bytes& in, Case<T>& c, int64_t extent) {
  const uint8_t how = in.next(), where = in.next();
  Place p;
  if (how % 8 == 7) {
    p.null = true;
  } else if (how % 2 == 0 || extent > static_cast<int64_t>(kArena)) {
    p.region = c.memory.size();
    c.memory.emplace_back(static_cast<size_t>(std::max<int64_t>(1, extent)));
  } else {
    p.offset = (size_t(where) * 7 + how) % (kArena - static_cast<size_t>(extent) + 1);
  }
  return p;
}

// The input as a batch: groups, their problems' places, and whether the rules refuse it.
template <class T>
Case<T> decode(Bytes& in) {
  Case<T> c;
  c.layout = in.next() % 2 ? Layout::ColMajor : Layout::RowMajor;
  const tandem::Strategy strategies[] = {tandem::Strategy::Cpu, tandem::Strategy::Gpu,
                                         tandem::Strategy::Hybrid};
  c.strategy = strategies[in.next() % 3];
  const uint8_t groups = in.next();
  c.group_count = groups == 255 ? -1 : groups % 4;
  c.must_refuse = c.group_count < 0;
  c.memory.emplace_back(kArena);
  for (int64_t g = 0; g < std::max<int64_t>(0, c.group_count); ++g) {
    tandem::GemmGroup<T> gr;
    gr.op_a = in.next() % 2 ? Op::Trans : Op::NoTrans;
    gr.op_b = in.next() % 2 ? Op::Trans : Op::NoTrans;
    bool bad = false;
    gr.m = side(in.next(), bad);
    gr.n = side(in.next(), bad);
    gr.k = side(in.next(), bad);
    const Stored sa = stored(c.layout, gr.op_a, gr.m, gr.k),
                 sb = stored(c.layout, gr.op_b, gr.k, gr.n),
                 sc = stored(c.layout, Op::NoTrans, gr.m, gr.n);
    gr.lda = leading(in.next(), sa.inner, bad);
    gr.ldb = leading(in.next(), sb.inner, bad);
    gr.ldc = leading(in.next(), sc.inner, bad);
    gr.alpha = scalar<T>(in.next());
    gr.beta = scalar<T>(in.next());
    const uint8_t size = in.next();
    gr.size = size == 255 ? -1 : size % 5;
    c.must_refuse = c.must_refuse || bad || gr.size < 0;
    c.groups.push_back(gr);
    // A refused group's problems are placed too: the checks may read its pointers.
    // What each problem reads (A and B where it has a product: alpha not 0, NaN included) and
    // writes (a non-empty C); a refused group's matrices are used by nothing.
    const bool product = !bad && gr.m > 0 && gr.n > 0 && gr.k > 0 && gr.alpha != T(0);
    const bool writes = !bad && gr.m > 0 && gr.n > 0;
    for (int64_t i = 0; i < gr.size; ++i) {
      const Place pa = place(in, c, sa.extent(gr.lda)), pb = place(in, c, sb.extent(gr.ldb)),
                  pc = place(in, c, sc.extent(gr.ldc));
      c.mats.push_back({pa, sa.outer, sa.inner, gr.lda, product, false});
      c.mats.push_back({pb, sb.outer, sb.inner, gr.ldb, product, false});
      c.mats.push_back({pc, sc.outer, sc.inner, gr.ldc, writes, true});
    }
  }
  return c;
}

// Small integers (and a few NaN in C's places: beta 0 must not let them through) everywhere.
template <class T>
void fill(Bytes& in, Case<T>& c) {
  uint32_t state = in.next() * 2654435761u + 1;
  for (auto& region : c.memory)
    for (T& x : region) {
      state = state * 1664525u + 1013904223u;
      x = (state >> 28) == 15 ? T(NAN) : T(int((state >> 24) % 7) - 3);
    }
}

template <class T>
T* address(Case<T>& c, const Place& p) {
  return p.null ? nullptr : c.memory[p.region].data() + p.offset;
}

// The pointer arrays, one entry per problem, the groups' problems one after another; each
// group's `a`, `b` and `c` point into them.
template <class T>
void point(Case<T>& c) {
  for (size_t i = 0; i + 2 < c.mats.size(); i += 3) {
    c.a.push_back(address(c, c.mats[i].at));
    c.b.push_back(address(c, c.mats[i + 1].at));
    c.c.push_back(address(c, c.mats[i + 2].at));
  }
  size_t first = 0;
  for (auto& g : c.groups) {
    const bool placed = g.size > 0 && first < c.a.size();
    g.a = placed ? c.a.data() + first : nullptr;
    g.b = placed ? c.b.data() + first : nullptr;
    g.c = placed ? c.c.data() + first : nullptr;
    if (placed) first += static_cast<size_t>(g.size);
  }
}

// Element (i, j) of a logical matrix read as `op` from `base` with leading dimension ld.
template <class T>
T at(const T* base, Layout layout, Op op, int64_t ld, int64_t i, int64_t j) {
  const bool row_outer = (layout == Layout::RowMajor) == (op == Op::NoTrans);
  return row_outer ? base[i * ld + j] : base[j * ld + i];
}
template <class T>
T& at(T* base, Layout layout, int64_t ld, int64_t i, int64_t j) {
  return layout == Layout::RowMajor ? base[i * ld + j] : base[j * ld + i];
}

// Memory as the BLAS rules leave it: every problem computed from `before` into a copy of it.
template <class T>
std::vector<std::vector<T>> expected(const Case<T>& c, const std::vector<std::vector<T>>& before) {
  auto after = before;
  size_t problem = 0;
  for (const auto& g : c.groups)
    for (int64_t p = 0; p < g.size; ++p, ++problem) {
      const Place pa = c.mats[3 * problem].at, pb = c.mats[3 * problem + 1].at,
                  pc = c.mats[3 * problem + 2].at;
      if (g.m == 0 || g.n == 0) continue;
      const bool product = g.alpha != T(0) && g.k > 0;
      const T* a = product ? before[pa.region].data() + pa.offset : nullptr;
      const T* b = product ? before[pb.region].data() + pb.offset : nullptr;
      const T* old = before[pc.region].data() + pc.offset;
      T* out = after[pc.region].data() + pc.offset;
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
          T sum = 0;
          for (int64_t l = 0; product && l < g.k; ++l)
            sum += at(a, c.layout, g.op_a, g.lda, i, l) * at(b, c.layout, g.op_b, g.ldb, l, j);
          const T from_c = g.beta == T(0) ? T(0) : g.beta * at(old, c.layout, g.ldc, i, j);
          at(out, c.layout, g.ldc, i, j) = (product ? g.alpha * sum : T(0)) + from_c;
        }
    }
  return after;
}

// The aliasing and NULL rules (tandem.h): a problem with a product needs its A and B, a
// non-empty C needs itself, and no written C shares an element with another written C or with any
// A or B the batch reads: where one is broken the batch must be refused. Also whether the rules
// may refuse a batch that keeps them (may_share).
template <class T>
void judge(Case<T>& c) {
  std::vector<std::vector<int>> written;  // per element: the C that writes it, or -1
  std::vector<std::vector<bool>> read;
  for (const auto& region : c.memory) {
    written.emplace_back(region.size(), -1);
    read.emplace_back(region.size(), false);
  }
  for (const Mat& x : c.mats) {
    if (x.at.null) {
      c.must_refuse = c.must_refuse || x.used;
      c.may_share = c.may_share || !x.used;
    }
    if (x.at.null || !x.used || x.is_c) continue;
    for (int64_t o = 0; o < x.outer; ++o)
      for (int64_t i = 0; i < x.inner; ++i) read[x.at.region][x.element(o, i)] = true;
  }
  for (size_t n = 0; n < c.mats.size(); ++n) {
    const Mat& x = c.mats[n];
    if (x.at.null || !x.used || !x.is_c) continue;
    for (int64_t o = 0; o < x.outer; ++o)
      for (int64_t i = 0; i < x.inner; ++i) {
        int& who = written[x.at.region][x.element(o, i)];
        c.must_refuse = c.must_refuse || read[x.at.region][x.element(o, i)] || who >= 0;
        who = static_cast<int>(n);
      }
    // Ranges that meet, shared elements or not.
    for (size_t m = 0; m < c.mats.size(); ++m) {
      const Mat& y = c.mats[m];
      if (m == n || y.at.null || !y.used || y.at.region != x.at.region) continue;
      const size_t x_end = x.at.offset + size_t(x.extent()),
                   y_end = y.at.offset + size_t(y.extent());
      c.may_share = c.may_share || (x.at.offset < y_end && y.at.offset < x_end);
    }
  }
}

bool same(float x, float y) { return x == y || (std::isnan(x) && std::isnan(y)); }
bool same(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

template <class T>
void run(Bytes& in) {
  Case<T> c = decode<T>(in);
  fill(in, c);
  point(c);
  judge(c);
  const auto before = c.memory;
  tandem::Options options;
  options.strategy = c.strategy;
  bool refused = false, failed = false;
  try {
    tandem::gemm_batch<T>(c.layout, c.groups.data(), c.group_count, options);
  } catch (const tandem::Error& e) {
    // Under gpu a device that cannot take the batch (none, no fp64, a failure before any C was
    // written) is the caller's error, every C untouched; under cpu and hybrid only a refusal is.
    failed = e.kind() != tandem::Error::Kind::InvalidArgument;
    FUZZ_CHECK(!failed || c.strategy == tandem::Strategy::Gpu,
               "a batch fails only by refusing an argument, or under gpu for want of a device");
    FUZZ_CHECK(failed || e.argument() > 0, "a refusal names a position");
    refused = true;
  }
  FUZZ_CHECK(refused || !c.must_refuse, "a batch the rules refuse is refused");
  FUZZ_CHECK(!refused || failed || c.must_refuse || c.may_share,
             "a valid batch whose written matrices meet nothing is accepted");
  if (refused) {
    for (size_t r = 0; r < before.size(); ++r)
      for (size_t i = 0; i < before[r].size(); ++i)
        FUZZ_CHECK(same(before[r][i], c.memory[r][i]), "a refused batch touches no memory");
    return;
  }
  const auto want = expected(c, before);
  for (size_t r = 0; r < want.size(); ++r)
    for (size_t i = 0; i < want[r].size(); ++i)
      FUZZ_CHECK(same(want[r][i], c.memory[r][i]),
                 "an accepted batch leaves memory as the BLAS rules do");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in{data, size};
  if (in.next() % 2)
    run<double>(in);
  else
    run<float>(in);
  return 0;
}
