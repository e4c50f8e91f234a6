// Where a small GEMM's time goes on a discrete GPU (issue 17): square sgemm calls under strategy
// gpu through the public API, each timed whole and in the report's steps, from tandem_malloc
// memory and from ordinary memory.
//
//   [LD_PRELOAD=build/bench/libcl_trace.so] call_phases [--device SELECTOR] [--sizes 8,64,256]
//                                                      [--reps 200] [--memory pinned,ordinary]
//                                                      [--kernel NAME=v,...] [--pin-from BYTES]
//                                                      [--check every|last]
//                                                      [--overlap-from BYTES]
//   call_phases [--pin-from BYTES] --alloc-sizes 4096,65536,...
//
// Per size and memory: 10 warm-up calls, then --reps timed ones; one JSON line with the medians
// (seconds) of the whole call as the caller sees it and of its steps from the report:
//   before   the call's entry to Report::t_start (argument checks)
//   plan     t_start to t_gpu_enqueued (options, profile, plan, the share's set-up)
//   enqueue  t_gpu_enqueued to t_flush (operands, kernel and C's copy enqueued, flushed)
//   device   t_flush to t_gpu_done (the wait for C's copy back)
//   after    t_gpu_done to the return (the share's teardown, the report)
// with the kernel's own time (profiling events). Under cl_trace (bench/cl_trace.c) it adds each
// OpenCL function's calls and seconds per GEMM call over the timed calls. Every call's C is
// checked against the CPU's on the same inputs; with --check last, only the last call's (on a C
// full of NaN), so the calls run back to back as in vs_clblast, whose columns are timed that way:
// reading C between calls took a 512^3 call from about 140 us to 200 on the H100 host.
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "seam_override.hpp"
#include "tandem/tandem.hpp"

namespace {

using namespace tandem;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::vector<int64_t> parse_sizes(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
  return out;
}

using Reset = void (*)();
using Dump = void (*)(FILE*, double);

// "A_T=1,MWG=64": Options::kernel_params.
std::map<std::string, int> parse_kernel(const std::string& s) {
  std::map<std::string, int> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("--kernel: '" + item + "' is no NAME=v");
    out[item.substr(0, eq)] = std::stoi(item.substr(eq + 1));
  }
  return out;
}

template <class Alloc>
bool run(int64_t n, int reps, const std::string& device, const std::string& params,
         const char* memory, bool check_every) {
  std::vector<float, Alloc> a(n * n), b(n * n), c(n * n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& x : a) x = d(rng);
  for (auto& x : b) x = d(rng);
  std::vector<float> ref(n * n);
  Options cpu;
  cpu.strategy = Strategy::Cpu;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, ref.data(), n, cpu);
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = device;
  o.kernel_params = parse_kernel(params);
  const auto reset = reinterpret_cast<Reset>(dlsym(RTLD_DEFAULT, "cl_trace_reset"));
  const auto dump = reinterpret_cast<Dump>(dlsym(RTLD_DEFAULT, "cl_trace_dump"));
  std::vector<double> whole, before, plan, enqueue, wait, after, kernel;
  double worst = 0;
  Report last;  // what ran: the kernel, and whether the resident (tandem_malloc) split chose it
  for (int i = -10; i < reps; ++i) {
    if (i == 0 && reset) reset();
    Report r;
    const bool check = check_every || i == reps - 1;
    if (!check_every && check) std::fill(c.begin(), c.end(), std::nanf(""));
    const auto t0 = Clock::now();
    const int64_t t0_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count();
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n, o, &r);
    const auto t1 = Clock::now();
    const int64_t t1_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(t1.time_since_epoch()).count();
    for (int64_t j = 0; check && j < n * n; ++j) {
      const double error = std::fabs(c[j] - ref[j]);
      worst = std::isnan(error) ? INFINITY : std::max(worst, error);
    }
    if (i < 0) continue;
    last = r;
    const auto s = [](int64_t from, int64_t to) { return static_cast<double>(to - from) * 1e-9; };
    whole.push_back(s(t0_ns, t1_ns));
    before.push_back(s(t0_ns, r.t_start));
    plan.push_back(s(r.t_start, r.t_gpu_enqueued));
    enqueue.push_back(s(r.t_gpu_enqueued, r.t_flush));
    wait.push_back(s(r.t_flush, r.t_gpu_done));
    after.push_back(s(r.t_gpu_done, t1_ns));
    kernel.push_back(r.gpu_kernel_seconds);
  }
  const bool ok = worst <= 1e-4 * static_cast<double>(n);
  std::printf(
      "{\"n\": %lld, \"memory\": \"%s\", \"reps\": %d, \"whole\": %.9f, \"before\": %.9f, "
      "\"plan\": %.9f, \"enqueue\": %.9f, \"device\": %.9f, \"after\": %.9f, \"kernel\": %.9f, "
      "\"max_abs_error\": %.3g, \"ok\": %s, \"kernel_params\": \"%s\", \"ran\": \"%s\", "
      "\"resident\": %s, \"a\": \"%s\", \"check\": \"%s\"",
      static_cast<long long>(n), memory, reps, median(whole), median(before), median(plan),
      median(enqueue), median(wait), median(after), median(kernel), worst, ok ? "true" : "false",
      params.c_str(), last.kernel.c_str(), last.profile_resident ? "true" : "false",
      last.devices.empty() ? "" : to_string(last.devices.front().a),
      check_every ? "every" : "last");
  if (dump) {
    std::printf(", \"opencl\": ");
    std::fflush(stdout);
    dump(stdout, reps);
  }
  std::printf("}\n");
  std::fflush(stdout);
  return ok;
}

}  // namespace

// What tandem_malloc and tandem_free of one block cost, the block written once between them (as
// a caller fills it): medians of `reps`, one JSON line per size. A discrete device pins blocks
// from the seam pinned_from (--pin-from) up.
void time_allocs(const std::vector<int64_t>& sizes, int reps) {
  for (int64_t bytes : sizes) {
    std::vector<double> took;
    for (int i = -3; i < reps; ++i) {
      const auto t0 = Clock::now();
      void* p = tandem_malloc(static_cast<size_t>(bytes));
      if (p == nullptr) throw std::runtime_error("tandem_malloc failed");
      std::memset(p, 1, static_cast<size_t>(bytes));
      tandem_free(p);
      if (i >= 0) took.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::printf("{\"alloc_bytes\": %lld, \"pin_from\": %zu, \"malloc_fill_free\": %.9f}\n",
                static_cast<long long>(bytes), detail::seams::pinned_from(), median(took));
  }
}

int main(int argc, char** argv) {
  CLI::App app{"where a small GEMM's time goes on a GPU: the whole call and its steps"};
  std::string device, kernel, sizes = "8,64,256,512", memories = "pinned,ordinary", allocs,
                              checks = "every";
  int reps = 200;
  int64_t pin_from = -1, overlap_from = -1;
  app.add_option("--device", device, "device selector (index or name)");
  app.add_option("--sizes", sizes, "square sizes, comma-separated");
  app.add_option("--reps", reps, "timed calls per size")->check(CLI::PositiveNumber);
  app.add_option("--memory", memories, "pinned (tandem_malloc), ordinary, or both");
  app.add_option("--kernel", kernel, "kernel parameters NAME=v,... (default: the profile's)");
  app.add_option("--pin-from", pin_from,
                 "tandem_malloc pins blocks from this many bytes up (default: the library's)");
  app.add_option("--check", checks, "check every call's C, or the last one's only")
      ->check(CLI::IsMember({"every", "last"}));
  app.add_option("--overlap-from", overlap_from,
                 "the seam overlap_from: shares with fewer operand bytes run as one chunk");
  app.add_option("--alloc-sizes", allocs,
                 "time tandem_malloc, a fill and tandem_free of blocks of these bytes instead");
  CLI11_PARSE(app, argc, argv);
  std::optional<detail::seams::Override> seams;
  if (pin_from >= 0 || overlap_from >= 0) {
    detail::seams::Values v;  // the defaults, but for pinning and chunking
    if (pin_from >= 0) v.pinned_from = static_cast<size_t>(pin_from);
    if (overlap_from >= 0) v.overlap_from = static_cast<size_t>(overlap_from);
    seams.emplace(v);
  }
  if (!allocs.empty()) {
    time_allocs(parse_sizes(allocs), reps);
    return 0;
  }
  bool ok = true;
  for (int64_t n : parse_sizes(sizes)) {
    if (memories.find("pinned") != std::string::npos)
      ok = run<Allocator<float>>(n, reps, device, kernel, "pinned", checks == "every") && ok;
    if (memories.find("ordinary") != std::string::npos)
      ok = run<std::allocator<float>>(n, reps, device, kernel, "ordinary", checks == "every") && ok;
  }
  return ok ? 0 : 1;
}
