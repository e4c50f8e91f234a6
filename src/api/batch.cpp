// tandem's batches: tandem::gemm_batch (groups of one shape each) and tandem::gemm_batch_strided.
// Every group is checked as a GEMM (src/api/checks.hpp) and every operand pointer as its problem's
// before any C is written; the problems are made row-major, and the batch's outputs are checked
// against sharing elements with each other or with any operand (src/base/overlap.hpp); then the
// batch runs: under cpu each problem whole on one core (src/cpu/batch.hpp); under gpu and hybrid
// the problems dealt to the devices' coalesced kernel and to the CPU (src/run/batch.hpp); under
// auto, the products at least as large as the batch rule's edge (plan/batch.hpp's deal_from: the
// profile's, measured by the tune for the batch's precision and memory) are dealt as under hybrid
// where the rule's count lines and, for ordinary memory, a single call of their total work would
// use a device (batch_uses_devices), a batch of one runs as that single call, and the rest run on
// the cores.
#include "plan/batch.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "api/checks.hpp"
#include "api/gemm_rules.hpp"
#include "base/clock.hpp"
#include "base/config.hpp"
#include "base/log.hpp"
#include "base/overlap.hpp"
#include "base/precision.hpp"
#include "plan/plan.hpp"
#include "run/batch.hpp"
#include "tandem/tandem.hpp"

namespace tandem {
namespace detail {
namespace {

// Where a GEMM's arguments sit in tandem_?gemm_batch_strided's signature (the grouped form keeps
// tandem_?gemm's), and the batches' own arguments.
constexpr Positions kStridedPositions = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 14, 15, 16};
constexpr int kStrideA = 10, kStrideB = 13, kStrideC = 17, kCount = 18;
constexpr int kGroupCount = 15, kGroupSize = 16, kA = 8, kB = 10, kC = 13, kStridedC = 15;

[[noreturn]] void refuse(const std::string& routine, const std::string& where, int position,
                         const std::string& what) {
  throw Error(Error::Kind::InvalidArgument,
              routine + ": " + where + "argument " + std::to_string(position) + " " + what,
              position);
}

// Runs `check`, naming the routine and `where` (the group) in what it throws.
template <class F>
void within(const std::string& routine, const std::string& where, F&& check) {
  try {
    check();
  } catch (const Error& e) {
    throw Error(e.kind(), routine + ": " + where + e.what(), e.argument());
  }
}

// A stored block of T.
template <class T>
overlap::Block block(const T* at, int64_t rows, int64_t cols, int64_t ld, bool output) {
  return {reinterpret_cast<const char*>(at), rows,  cols, ld,
          static_cast<int64_t>(sizeof(T)),   output};
}

// The stored blocks a problem reads (A and B, where it has a product) and writes (C).
template <class T>
void add_blocks(const Problem<T>& p, std::vector<overlap::Block>& out) {
  if (p.has_product()) {
    out.push_back(block(p.a, p.a_rows(), p.a_cols(), p.lda, false));
    out.push_back(block(p.b, p.b_rows(), p.b_cols(), p.ldb, false));
  } else {
    out.push_back({});
    out.push_back({});
  }
  out.push_back(block(p.c, p.m, p.n, p.ldc, true));
}

// Refuses a batch one of whose C shares an element with another C or with an A or B, at C's
// position (`position`), naming the two matrices as the caller gave them: the problems' A and B
// are the caller's B and A where the call was column-major (gemm_rules::row_major), and
// `problem_name` names problem i of `problems` ("problem i", or its group's index and its own).
template <class T, class Name>
void check_sharing(const std::vector<Problem<T>>& problems, Layout layout,
                   const std::string& routine, int position, Name&& problem_name) {
  std::vector<overlap::Block> blocks;
  blocks.reserve(3 * problems.size());
  for (const Problem<T>& p : problems) add_blocks(p, blocks);
  if (const auto pair = overlap::first_shared(blocks)) {
    const bool swapped = layout == Layout::ColMajor;
    const auto what = [&](int64_t block) {
      const char* const kWhat[] = {swapped ? "B" : "A", swapped ? "A" : "B", "C"};
      return std::string(kWhat[block % 3]) + " of " + problem_name(block / 3);
    };
    const auto [x, y] = *pair;
    refuse(routine, "", position,
           "(c): the C of a batch must share no element with another C or with any A or B, but " +
               what(x) + " and " + what(y) + " share elements");
  }
}

// A strided batch's C matrices are one block moved by stride_c: C of problems i and i + t share
// an element exactly when C of 0 and t do, which only a shift shorter than C's span can make.
// Returns the first such t, or 0.
template <class T>
int64_t strided_outputs_meet(const Problem<T>& p, int64_t stride_c, int64_t count) {
  const overlap::Block c0 = block(p.c, p.m, p.n, p.ldc, true);
  if (c0.empty()) return 0;
  const int64_t elements = span(p.m, p.n, p.ldc);
  for (int64_t t = 1; t < count && t * stride_c < elements; ++t) {
    overlap::Block ct = c0;
    ct.at += t * stride_c * static_cast<int64_t>(sizeof(T));
    if (overlap::share(c0, ct)) return t;
  }
  return 0;
}

// A byte range, empty when begin == end.
struct Range {
  const char *begin = nullptr, *end = nullptr;
  bool meets(const Range& r) const {
    return begin != end && r.begin != r.end && begin < r.end && r.begin < end;
  }
};

Op op_of(bool trans, bool conj) { return !trans ? Op::NoTrans : conj ? Op::ConjTrans : Op::Trans; }

// One problem as its own tandem::gemm call under `options`.
template <class T>
void single_call(const Problem<T>& p, const Options& options) {
  gemm<T>(Layout::RowMajor, op_of(p.trans_a, p.conj_a), op_of(p.trans_b, p.conj_b), p.m, p.n, p.k,
          p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc, options);
}

// Runs the checked problems of a batch as `options` ask, filling `report`.
// `problems` holds those with a C (`total`: all of them, empty ones too); `one_shape`: all of them
// have the first one's shape and alpha (Problems::one_shape).
template <class T>
void run(std::vector<Problem<T>>& problems, int64_t total, bool one_shape, const Options& options,
         const char* routine, BatchReport& report) {
  const Request req = request(options);
  report.problems = total;
  report.products = std::count_if(problems.begin(), problems.end(),
                                  [](const Problem<T>& p) { return p.has_product(); });
  report.t_start = clock::now_ns();
  if (req.strategy == Strategy::Cpu) {
    // Every problem on the cores, as they are (no copy).
    report.cpu_threads = batch_cpu_threads(
        Problems<T>{problems.data(), static_cast<int64_t>(problems.size()), one_shape}, options);
    cores_batch(problems.data(), static_cast<int64_t>(problems.size()), report.cpu_threads);
    report.cpu_problems = report.products;
    report.strategy = Strategy::Cpu;
  } else {
    // gpu and hybrid: every product dealt to the devices' coalesced kernel and the CPU. auto: the
    // products below the batch rule's edge stay on the cores (all of them where the rule found
    // the devices failing, or no device opens); the others go to the devices where a single call
    // of their total work would use a device (a batch of one is that single call), and where the
    // rule's side for their count is not the cores (profile::batch_side_at), dealt or to the
    // devices alone as plan_batch decides, else stay on the cores too. The problems without a
    // product are C = beta * C, on the cores. The problems are reordered in place (products first,
    // then under auto the large ones first), never copied.
    Problem<T>* const all = problems.data();
    const auto count = static_cast<int64_t>(problems.size());
    const int64_t products = one_shape ? (count > 0 && all[0].has_product() ? count : 0)
                                       : std::partition(all, all + count, [](const Problem<T>& p) {
                                           return p.has_product();
                                         }) - all;
    const auto view = [&](int64_t from, int64_t n) {
      return Problems<T>{all + from, n, one_shape};
    };
    int64_t single = 0, dealt = products;
    if (req.strategy == Strategy::Auto && products == 1) {
      // A batch of one product is the single call it would be.
      dealt = 0;
      if (uses_devices(all[0], options)) {
        single_call(all[0], options);
        report.device_problems = single = 1;
      }
    } else if (req.strategy == Strategy::Auto) {
      // The edge products are dealt from, where any reaches it and the batch's work would use a
      // device (deal_from: known from the route, then a remembered rule, before any plan).
      const std::optional<int64_t> edge = deal_from(view(0, products), options);
      dealt = edge ? large_first(all, products, *edge, one_shape) : 0;
      if (dealt == 1 && uses_devices(all[0], options)) {
        single_call(all[0], options);
        report.device_problems = single = 1;
        dealt = 0;
      } else if (dealt > 0 && dealt < products && !batch_uses_devices(view(0, dealt), options)) {
        dealt = 0;
      }
    }
    if (dealt > 0) {
      const BatchPlan plan = plan_batch(all[0], dealt, options, coalesced_edge(view(0, dealt)),
                                        dealt > 1 ? &all[1] : nullptr);
      run_batch(view(0, dealt), plan, routine, report);
    }
    // What stays on the cores, on all of them (the devices are done; one for a batch too small to
    // wake them: batch_cpu_threads), and last the problems without a product: no C is written
    // before the devices could refuse or fail.
    const int64_t cores_from = single + dealt;
    const int rest = batch_cpu_threads(view(cores_from, count - cores_from), options);
    if (dealt == 0) report.cpu_threads = rest;
    cores_batch(all + cores_from, products - cores_from, rest);
    report.cpu_problems += products - cores_from;
    cores_batch(all + products, count - products, rest);
    report.strategy = report.device_problems == 0 ? Strategy::Cpu
                      : report.cpu_problems == 0  ? Strategy::Gpu
                                                  : Strategy::Hybrid;
  }
  report.t_end = clock::now_ns();
  if (env_config().verbose)
    log_line(std::string(routine) + " problems=" + std::to_string(report.problems) + " products=" +
             std::to_string(report.products) + " strategy=" + to_string(report.strategy) +
             " threads=" + std::to_string(report.cpu_threads) +
             " cpu_problems=" + std::to_string(report.cpu_problems) +
             " device_problems=" + std::to_string(report.device_problems) +
             " seconds=" + std::to_string(report.seconds()));
}

// A group has C to write only where its m and n are both positive. One that has none reads none of
// its arrays, however many problems it counts, and is not built: the checks, the build and the
// overlap check's names all skip it.
template <class T>
bool writes_c(const GemmGroup<T>& group) {
  return group.m > 0 && group.n > 0;
}

}  // namespace
}  // namespace detail

template <class T>
void gemm_batch(Layout layout, const GemmGroup<T>* groups, int64_t group_count,
                const Options& options, BatchReport* report) {
  static constexpr auto kName = detail::routine_name(detail::precision_of<T>(), "gemm_batch");
  const std::string routine = kName.c_str();
  if (group_count < 0)
    detail::refuse(routine, "", detail::kGroupCount,
                   "(group_count) = " + std::to_string(group_count) + " is negative");
  if (group_count > 0 && groups == nullptr)
    detail::refuse(routine, "", detail::kGroupSize, "(the groups) is NULL");
  if (group_count == 0)
    detail::within(routine, "", [&] { detail::check_layout(static_cast<int>(layout)); });
  const T any{};  // a pointer the shape checks may take for an operand the loop below checks
  int64_t total = 0, built = 0;  // problems, and those with a C to write
  for (int64_t g = 0; g < group_count; ++g) {
    const GemmGroup<T>& x = groups[g];
    const std::string where = "group " + std::to_string(g) + ": ";
    if (x.size < 0)
      detail::refuse(routine, where, detail::kGroupSize,
                     "(group_size) = " + std::to_string(x.size) + " is negative");
    detail::within(routine, where, [&] {
      detail::check_gemm(static_cast<int>(layout), static_cast<int>(x.op_a),
                         static_cast<int>(x.op_b), x.m, x.n, x.k, x.alpha, &any, x.lda, &any, x.ldb,
                         const_cast<T*>(&any), x.ldc);
    });
    const bool output = detail::writes_c(x);
    const bool product = output && x.k > 0 && x.alpha != T(0);
    for (const auto& [array, needed, position, name] :
         {std::tuple{static_cast<const void*>(x.a), product, detail::kA, "a"},
          std::tuple{static_cast<const void*>(x.b), product, detail::kB, "b"},
          std::tuple{static_cast<const void*>(x.c), output, detail::kC, "c"}})
      if (needed && x.size > 0 && array == nullptr)
        detail::refuse(routine, where, position, std::string("(") + name + ", the array) is NULL");
    if (x.size > std::numeric_limits<int64_t>::max() - total)
      detail::refuse(routine, where, detail::kGroupSize,
                     "(group_size) = " + std::to_string(x.size) +
                         " makes the batch more than 2^63 - 1 problems");
    total += x.size;
    if (!output) continue;
    for (int64_t i = 0; i < x.size; ++i) {
      const int position = product && x.a[i] == nullptr   ? detail::kA
                           : product && x.b[i] == nullptr ? detail::kB
                           : output && x.c[i] == nullptr  ? detail::kC
                                                          : 0;
      if (position != 0)
        detail::refuse(routine, where + "problem " + std::to_string(i) + ": ", position,
                       position == detail::kA   ? "(a) is NULL"
                       : position == detail::kB ? "(b) is NULL"
                                                : "(c) is NULL");
    }
    built += x.size;
  }
  std::vector<detail::Problem<T>> problems;
  problems.reserve(static_cast<size_t>(built));
  for (int64_t g = 0; g < group_count; ++g) {
    const GemmGroup<T>& x = groups[g];
    if (!detail::writes_c(x)) continue;
    for (int64_t i = 0; i < x.size; ++i)
      problems.push_back(detail::gemm_rules::row_major(
          static_cast<int>(layout), static_cast<int>(x.op_a), static_cast<int>(x.op_b), x.m, x.n,
          x.k, x.alpha, x.a != nullptr ? x.a[i] : nullptr, x.lda, x.b != nullptr ? x.b[i] : nullptr,
          x.ldb, x.beta, x.c != nullptr ? x.c[i] : nullptr, x.ldc));
  }
  detail::check_sharing(problems, layout, routine, detail::kC, [&](int64_t i) {
    // The groups' problems one after another, as built.
    for (int64_t g = 0; g < group_count; ++g) {
      const GemmGroup<T>& x = groups[g];
      if (!detail::writes_c(x)) continue;
      if (i < x.size) return "problem " + std::to_string(i) + " of group " + std::to_string(g);
      i -= x.size;
    }
    return std::string("a problem");
  });
  BatchReport r;
  detail::run(problems, total, group_count == 1, options, kName.c_str(), r);
  if (report != nullptr) *report = r;
}

template <class T>
void gemm_batch_strided(Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, T alpha,
                        const T* a, int64_t lda, int64_t stride_a, const T* b, int64_t ldb,
                        int64_t stride_b, T beta, T* c, int64_t ldc, int64_t stride_c,
                        int64_t count, const Options& options, BatchReport* report) {
  static constexpr auto kName =
      detail::routine_name(detail::precision_of<T>(), "gemm_batch_strided");
  const std::string routine = kName.c_str();
  if (count < 0)
    detail::refuse(routine, "", detail::kCount,
                   "(count) = " + std::to_string(count) + " is negative");
  const int lay = static_cast<int>(layout), oa = static_cast<int>(op_a),
            ob = static_cast<int>(op_b);
  detail::within(routine, "", [&] {
    if (count > 0)
      detail::check_gemm(lay, oa, ob, m, n, k, alpha, a, lda, b, ldb, c, ldc,
                         detail::kStridedPositions);
    else
      detail::check_layout(lay);
  });
  for (const auto& [stride, position, name] : {std::tuple{stride_a, detail::kStrideA, "stride_a"},
                                               std::tuple{stride_b, detail::kStrideB, "stride_b"},
                                               std::tuple{stride_c, detail::kStrideC, "stride_c"}})
    if (stride < 0)
      detail::refuse(routine, "", position,
                     std::string("(") + name + ") = " + std::to_string(stride) + " is negative");
  // Operand pointers are formed only for the operands the problems use: the others may be NULL,
  // their strides anything.
  const bool output = m > 0 && n > 0 && count > 0;
  const bool product = output && k > 0 && alpha != T(0);
  const int64_t total = count;
  std::vector<detail::Problem<T>> problems;
  if (output) problems.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; output && i < count; ++i)
    problems.push_back(detail::gemm_rules::row_major(
        lay, oa, ob, m, n, k, alpha, product ? a + i * stride_a : nullptr, lda,
        product ? b + i * stride_b : nullptr, ldb, beta, c + i * stride_c, ldc));
  if (output) {
    const detail::Problem<T>& first = problems.front();
    const detail::Problem<T>& last = problems.back();
    if (const int64_t t = count > 1 ? detail::strided_outputs_meet(first, stride_c, count) : 0)
      detail::refuse(routine, "", detail::kStrideC,
                     "(stride_c) = " + std::to_string(stride_c) +
                         " is too small: the C of problems 0 and " + std::to_string(t) +
                         " share elements (a batch's C matrices must share none)");
    // An operand could meet a C only where the ranges from the first problem's block to the last
    // one's meet (in the row-major terms of the problems); then every pair is checked.
    const auto range = [](const T* from, const T* to, int64_t rows, int64_t cols, int64_t ld) {
      return detail::Range{reinterpret_cast<const char*>(from),
                           reinterpret_cast<const char*>(to + detail::span(rows, cols, ld))};
    };
    const detail::Range cs = range(first.c, last.c, first.m, first.n, first.ldc);
    if (product && (cs.meets(range(first.a, last.a, first.a_rows(), first.a_cols(), first.lda)) ||
                    cs.meets(range(first.b, last.b, first.b_rows(), first.b_cols(), first.ldb))))
      detail::check_sharing(problems, layout, routine, detail::kStridedC,
                            [](int64_t i) { return "problem " + std::to_string(i); });
  }
  BatchReport r;
  detail::run(problems, total, true, options, kName.c_str(), r);
  if (report != nullptr) *report = r;
}

#define INSTANTIATE(T)                                                                             \
  template void gemm_batch<T>(Layout, const GemmGroup<T>*, int64_t, const Options&, BatchReport*); \
  template void gemm_batch_strided<T>(Layout, Op, Op, int64_t, int64_t, int64_t, T, const T*,      \
                                      int64_t, int64_t, const T*, int64_t, int64_t, T, T*,         \
                                      int64_t, int64_t, int64_t, const Options&, BatchReport*);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem
