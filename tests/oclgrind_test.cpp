// Kernel variants of the tuner's space run under Oclgrind (issue 16), the simulator that checks
// every access of every work-item: out-of-bounds reads and writes, uninitialised values, data
// races in local and global memory, and work-groups that diverge at a barrier. PoCL and NVIDIA's
// driver tolerate such faults; Intel's, AMD's and ARM's do not.
//
// Run by tests/oclgrind.sh, which makes Oclgrind the only OpenCL platform, turns its checks on
// and gives its log file in OCLGRIND_LOG: a run fails when a call's result is wrong and when a
// call added anything to that log, and names the parameter set and the call either way.
//
// The sample, per precision: random valid points of the space until every value of every
// parameter has run (so each code path of kernels/gemm.cl that a parameter switches on runs at
// least once), then more up to TANDEM_OCLGRIND_KERNELS (default 24; a third of that, rounded down,
// for c and z, whose kernels are the real ones with a wider element, kernels/element.cl);
// TANDEM_OCLGRIND_SEED. The space includes asynchronous copies (CA), emulated as loads and stores.
// A complex call's transposed operands are conjugate-transposed.
// Each runs through the library as `gpu` at small sizes that fill no tile evenly.
// TANDEM_OCLGRIND_KERNEL="NAME=v ..." runs that one parameter set instead (a failure names it).
// TANDEM_OCLGRIND_VARIANT=i runs only the i-th variant (sgemm's first, then dgemm's, cgemm's and
// zgemm's), and
// TANDEM_OCLGRIND_CALL=i only the i-th call of kCalls.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "gemm_space.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "reference.hpp"
#include "seam_override.hpp"
#include "seam_values.hpp"

namespace tandem::test {
namespace {

namespace gpu = detail::gpu;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// Oclgrind's log so far: what it reported since the last look is what the last call caused.
class OclgrindLog {
 public:
  OclgrindLog() {
    const char* path = std::getenv("OCLGRIND_LOG");
    if (path != nullptr) path_ = path;
  }
  bool present() const { return !path_.empty(); }
  std::string news() {
    std::ifstream in(path_);
    std::stringstream all;
    all << in.rdbuf();
    const std::string text = all.str();
    const std::string fresh = text.size() > seen_ ? text.substr(seen_) : "";
    seen_ = text.size();
    return fresh.size() > 3000 ? fresh.substr(0, 3000) + "\n..." : fresh;
  }

 private:
  std::string path_;
  size_t seen_ = 0;
};

// One call's shape: sizes that fill no tile evenly, each layout and transpose, beta that reads C,
// and the device's memory as the library treats it (the seams assume_unified, assume_discrete).
struct Call {
  Layout layout;
  bool ta, tb;
  int64_t m, n, k;
  double alpha, beta;
  bool unified;
};
// The first has several K steps and a partial last one (k = 41 against KWG of 8 to 32, the
// double-buffered path included) and partial tiles in M and N, run as on an APU: every buffer
// the kernel touches is the operand's own size, so Oclgrind sees an access just past its end
// (a discrete share's staging buffers are whole MiB). The second, column-major and transposed,
// has k below any KWG and one work-group's rows split over tiles, run as on a discrete GPU:
// copies in chunks, and the transpose kernel where the kernel reads an operand the other way.
const Call kCalls[] = {
    {Layout::RowMajor, false, false, 33, 17, 41, 1.5, 0.5, true},
    {Layout::ColMajor, true, false, 5, 70, 3, -1.0, 0.0, false},
};

template <class T>
std::string run_call(const std::map<std::string, int>& kernel, const Call& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const T pad = scalar<T>(777.0);
  auto a = make_matrix<T>(c.layout, c.ta, c.m, c.k, 3, rng, pad);
  auto b = make_matrix<T>(c.layout, c.tb, c.k, c.n, 0, rng, pad);
  auto cm = make_matrix<T>(c.layout, false, c.m, c.n, 2, rng, pad);
  const Op transposed = kComplex<T> ? Op::ConjTrans : Op::Trans;
  a.conj = kComplex<T> && c.ta;
  b.conj = kComplex<T> && c.tb;
  // A complex call's scalars have imaginary parts; beta = 0 stays 0 (C not read).
  const std::complex<double> alpha(c.alpha, kComplex<T> ? 0.5 : 0.0),
      beta(c.beta, kComplex<T> && c.beta != 0 ? -0.25 : 0.0);
  const auto before = cm;
  const Reference ref = reference(a, b, before, alpha, beta);
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = "oclgrind";
  o.kernel_params = kernel;
  try {
    gemm<T>(c.layout, c.ta ? transposed : Op::NoTrans, c.tb ? transposed : Op::NoTrans, c.m, c.n,
            c.k, scalar<T>(alpha), a.ptr(), a.ld, b.ptr(), b.ld, scalar<T>(beta), cm.ptr(), cm.ld,
            o);
  } catch (const Error& e) {
    return std::string("the call failed: ") + e.what();
  }
  const std::string what = detail::routine_name(detail::precision_of<T>(), "gemm").str() + " " +
                           detail::text::describe(kernel);
  expect_matches(cm, before, ref, c.k, what);
  return "";
}

// Random valid points, first until every value of every parameter has been in one (each time
// the candidate, of a few drawn, that adds most values not yet seen), then up to `count`.
std::vector<tuner::Point> sample(const tuner::Space& space, int count, std::mt19937_64& rng) {
  std::set<std::pair<size_t, int>> unseen;
  for (size_t i = 0; i < space.dimension(); ++i)
    for (size_t v = 0; v < space.parameters[i].values.size(); ++v)
      unseen.insert({i, static_cast<int>(v)});
  const auto valid_point = [&]() -> std::optional<tuner::Point> {
    for (int attempt = 0; attempt < 100000; ++attempt) {
      tuner::Point p(space.dimension());
      for (size_t i = 0; i < p.size(); ++i)
        p[i] = static_cast<int>(rng() % space.parameters[i].values.size());
      if (!space.violated(p)) return p;
    }
    return std::nullopt;
  };
  const auto news = [&](const tuner::Point& p) {
    int n = 0;
    for (size_t i = 0; i < p.size(); ++i) n += static_cast<int>(unseen.count({i, p[i]}));
    return n;
  };
  std::set<tuner::Point> chosen;
  std::vector<tuner::Point> order;
  for (int stale = 0; !unseen.empty() && stale < 20;) {
    std::optional<tuner::Point> best;
    for (int candidate = 0; candidate < 400; ++candidate)
      if (auto p = valid_point(); p && (!best || news(*p) > news(*best))) best = p;
    if (!best || news(*best) == 0) {
      ++stale;
      continue;
    }
    for (size_t i = 0; i < best->size(); ++i) unseen.erase({i, (*best)[i]});
    chosen.insert(*best);
    order.push_back(*best);
  }
  for (const auto& [i, v] : unseen)
    std::printf("no valid point found with %s=%d\n", space.parameters[i].name.c_str(),
                space.parameters[i].values[static_cast<size_t>(v)]);
  for (int attempt = 0; static_cast<int>(order.size()) < count && attempt < 10 * count; ++attempt)
    if (auto p = valid_point(); p && chosen.insert(*p).second) order.push_back(*p);
  return order;
}

// Runs one kernel variant's calls and fails each one that is wrong or that Oclgrind reported on,
// naming it. Returns the number of calls.
int run_variant(const std::map<std::string, int>& kernel, detail::Precision precision,
                OclgrindLog& log, std::mt19937_64& rng) {
  int runs = 0;
  const int only = env_int("TANDEM_OCLGRIND_CALL", -1);
  for (int i = 0; i < static_cast<int>(std::size(kCalls)); ++i) {
    if (only >= 0 && i != only) continue;
    const Call& c = kCalls[i];
    detail::seams::Values values;
    values.assume_unified = c.unified;
    values.assume_discrete = !c.unified;
    values.pinned_from = test::kNothingPinned;  // tandem_malloc blocks are packed, as before
    values.emulate_engine = true;               // CA's copies as loads and stores (no PTX here)
    // A discrete share in chunks even at these sizes, except under the uninitialised-value check,
    // which loses track of a buffer written in pieces or by rectangles: there its rows are tight
    // too (tests/oclgrind_preload.c).
    if (std::getenv("OCLGRIND_UNINITIALIZED") == nullptr)
      values.overlap_from = 0;
    else
      values.pad_rows = false;
    const detail::seams::Override seam(values);
    const std::string failed = detail::with_element_type(
        precision, [&](auto zero) { return run_call<decltype(zero)>(kernel, c, rng()); });
    ++runs;
    const std::string report = log.news();
    const std::string where =
        detail::routine_name(precision, "gemm").str() + " m=" + std::to_string(c.m) +
        " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
        (c.layout == Layout::ColMajor ? " col-major" : " row-major") + (c.ta ? " A^T" : "") +
        (c.tb ? " B^T" : "") + (c.unified ? " as on an APU" : " as on a discrete GPU") +
        "; to run this kernel alone: TANDEM_OCLGRIND_KERNEL='" + detail::text::describe(kernel) +
        "'";
    EXPECT_EQ(failed, "") << where;
    EXPECT_EQ(report, "") << "Oclgrind reported, for " << where << ":\n" << report;
  }
  return runs;
}

TEST(Oclgrind, KernelVariantsOfTheTunersSpace) {
  OclgrindLog log;
  ASSERT_TRUE(log.present()) << "OCLGRIND_LOG is not set: run this through tests/oclgrind.sh";
  const auto device = gpu::open_device("oclgrind");  // throws if Oclgrind is not the platform
  const gpu::DeviceInfo& info = gpu::info(*device);
  ASSERT_NE(info.platform.find("Oclgrind"), std::string::npos) << info.describe();
  // The variants, per precision: the one TANDEM_OCLGRIND_KERNEL names, or the sample. Drawing
  // the sample takes seconds; TANDEM_OCLGRIND_SAMPLE names a file that keeps it for the next
  // process (tests/oclgrind.sh, a process for each variant).
  std::mt19937_64 rng(static_cast<uint64_t>(env_int("TANDEM_OCLGRIND_SEED", 16)));
  const int count = env_int("TANDEM_OCLGRIND_KERNELS", 24);
  std::vector<std::pair<detail::Precision, std::map<std::string, int>>> variants;
  const char* kept = std::getenv("TANDEM_OCLGRIND_SAMPLE");
  const bool from_file = kept != nullptr && *kept != '\0' && std::ifstream(kept).good();
  if (from_file) {
    std::ifstream in(kept);
    std::string letter, params;
    while (in >> letter && std::getline(in >> std::ws, params))
      variants.emplace_back(detail::parse_precision(letter), detail::text::parse_params(params));
  }
  for (detail::Precision precision : detail::kPrecisions) {
    if (from_file) break;
    if (detail::needs_fp64(precision) && !info.fp64) continue;
    if (const char* one = std::getenv("TANDEM_OCLGRIND_KERNEL"); one != nullptr && *one != '\0') {
      variants.emplace_back(precision, detail::text::parse_params(one));
      continue;
    }
    // Asynchronous copies (CA) are in the space: emulated (run_variant), their pipeline's buffer
    // order is what Oclgrind's race check sees.
    const tuner::DeviceLimits limits{info.max_work_group, info.local_mem_bytes, info.is_gpu, false,
                                     gpu::kAsyncCopy};
    const tuner::Space space = tuner::gemm_space(limits, precision);
    // A third for c and z: none in the one-variant uninitialised-value run (ctest
    // oclgrind.uninitialized), which compiles unoptimised and took 568 s with them.
    const int wanted = detail::is_complex(precision) ? count / 3 : count;
    if (wanted == 0) continue;
    for (const tuner::Point& p : sample(space, wanted, rng))
      variants.emplace_back(precision, tuner::kernel_params(space, p));
  }
  if (kept != nullptr && *kept != '\0' && !from_file) {
    std::ofstream out(kept);
    for (const auto& [precision, params] : variants)
      out << precision << ' ' << detail::text::describe(params) << '\n';
  }
  // TANDEM_OCLGRIND_VARIANT=i runs the i-th alone (tests/oclgrind.sh, a process for each).
  const int only = env_int("TANDEM_OCLGRIND_VARIANT", -1);
  if (only >= static_cast<int>(variants.size()))
    GTEST_SKIP() << "oclgrind: no variant " << only << " (" << variants.size() << " in all)";
  int runs = 0, kernels = 0;
  for (int i = 0; i < static_cast<int>(variants.size()); ++i) {
    if (only >= 0 && i != only) continue;
    std::mt19937_64 data(static_cast<uint64_t>(i) + 1);  // the calls' operands
    runs += run_variant(variants[i].second, variants[i].first, log, data);
    ++kernels;
  }
  std::printf("oclgrind: %d kernel variants, %d calls, on %s\n", kernels, runs,
              info.describe().c_str());
}

}  // namespace
}  // namespace tandem::test
