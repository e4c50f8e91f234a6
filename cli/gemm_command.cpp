// `tandem gemm`: one GEMM on random inputs, timed (median of the repetitions after a warm-up)
// and checked against the CPU BLAS in double, with where its rows ran.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <iostream>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "base/clock.hpp"
#include "base/config.hpp"
#include "base/precision.hpp"
#include "cli.hpp"
#include "gemm_measure.hpp"
#include "tandem/tandem.hpp"

namespace tandem::cli {
namespace {

using nlohmann::json;

struct GemmArgs {
  std::string precision = "s", strategy = "auto", device, balance, direct;
  int64_t m = 1024, n = 1024, k = 1024;
  int reps = 3, threads = 0, feeders = 0;
  double beta = 0;
  bool resident = false;
  double fraction = -1;
  std::vector<std::string> kernel;
};

// What one checked run found.
struct Outcome {
  detail::Precision precision = detail::Precision::s;
  int64_t m = 0, n = 0, k = 0;
  int reps = 0;
  double seconds = 0;         // the median call's
  double kernel_seconds = 0;  // the median kernel time, from profiling events
  double gflops = 0, kernel_gflops = 0;
  double relative_error = 0, beta = 0;
  bool ok = false;
  Report last;  // the last call's report
};

using bench::random_element;

// max |C - ref| / max |ref|, ref: the CPU BLAS in double (complex double) on the same inputs,
// A B + beta C0.
template <class T, class Alloc>
double relative_error(const std::vector<T, Alloc>& a, const std::vector<T, Alloc>& b,
                      const std::vector<T, Alloc>& c, const std::vector<T, Alloc>& c0, double beta,
                      int64_t m, int64_t n, int64_t k) {
  using W = bench::wide_t<T>;
  std::vector<W> ad(a.begin(), a.end()), bd(b.begin(), b.end()), ref(m * n, W(0));
  if (beta != 0) ref.assign(c0.begin(), c0.end());
  Options cpu;
  cpu.strategy = Strategy::Cpu;
  gemm<W>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, W(1), ad.data(), k, bd.data(), n,
          W(beta), ref.data(), n, cpu);
  double err = 0, scale = 0;
  for (int64_t i = 0; i < m * n; ++i) {
    err = std::max(err, std::abs(W(c[i]) - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return scale > 0 ? err / scale : err;
}

// Alloc: std::allocator (ordinary memory) or tandem::Allocator (tandem_malloc memory, --resident).
template <class T, class Alloc>
Outcome run_checked(int64_t m, int64_t n, int64_t k, double beta, const Options& o, int reps) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T, Alloc> a(m * k), b(k * n), c(m * n), c0;
  for (auto& x : a) x = random_element<T>(d, rng);
  for (auto& x : b) x = random_element<T>(d, rng);
  if (beta != 0)
    for (auto& x : c) x = random_element<T>(d, rng);
  Outcome out;
  out.precision = detail::precision_of<T>();
  out.m = m;
  out.n = n;
  out.k = k;
  out.beta = beta;
  out.reps = reps;
  std::vector<double> times, kernel_times;
  for (int i = 0; i <= reps; ++i) {      // the first call is a warm-up
    if (beta != 0 && i == reps) c0 = c;  // what the checked call starts from
    const detail::clock::Stopwatch call;
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(1), a.data(), k, b.data(), n,
            T(static_cast<detail::real_type_t<T>>(beta)), c.data(), n, o, &out.last);
    if (i > 0) {
      times.push_back(call.seconds());
      kernel_times.push_back(out.last.gpu_kernel_seconds);
    }
  }
  std::sort(times.begin(), times.end());
  std::sort(kernel_times.begin(), kernel_times.end());
  out.seconds = times[times.size() / 2];
  out.kernel_seconds = kernel_times[kernel_times.size() / 2];
  const double gflop = bench::gflop<T>(m, n, k);
  // The kernel's own rate (profiling events), for a call that ran on the GPU alone.
  out.kernel_gflops =
      out.kernel_seconds > 0 && out.last.cpu_rows == 0 ? gflop / out.kernel_seconds : 0;
  out.gflops = gflop / out.seconds;
  out.relative_error = relative_error(a, b, c, c0, beta, m, n, k);
  out.ok = std::isfinite(out.relative_error) &&
           out.relative_error <=
               8.0 * std::sqrt(double(k)) * std::numeric_limits<detail::real_type_t<T>>::epsilon();
  return out;
}

// Each device's part of the last call.
json devices_json(const Report& r) {
  json out = json::array();
  for (const Report::Device& d : r.devices)
    out.push_back(
        {{"index", d.index},
         {"name", d.name},
         {"rows", d.rows},
         {"chunks", d.chunks},
         {"feeder_threads", d.feeder_threads},
         {"kernel_seconds", d.kernel_seconds},
         {"bytes_in", d.bytes_in},
         {"bytes_packed", d.bytes_packed},
         {"bytes_out", d.bytes_out},
         {"done_seconds", d.t_done > 0 ? static_cast<double>(d.t_done - r.t_start) * 1e-9 : 0.0},
         {"buffers", {to_string(d.a), to_string(d.b), to_string(d.c)}},
         {"failed", d.failed}});
  return out;
}

void print_json(const Outcome& x) {
  const Report& r = x.last;
  std::cout << json{{"gflops", x.gflops},
                    {"precision", std::string(1, detail::letter(x.precision))},
                    {"m", x.m},
                    {"n", x.n},
                    {"k", x.k},
                    {"beta", x.beta},
                    {"feeder_threads", r.feeder_threads},
                    {"devices", devices_json(r)},
                    {"seconds", x.seconds},
                    {"strategy", to_string(r.strategy)},
                    {"balance", to_string(r.balance)},
                    {"gpu_rows", r.gpu_rows},
                    {"cpu_rows", r.cpu_rows},
                    {"cpu_chunks", r.cpu_chunks},
                    {"cpu_threads", r.cpu_threads},
                    {"profile_resident", r.profile_resident},
                    {"buffers", {to_string(r.a), to_string(r.b), to_string(r.c)}},
                    {"device", r.device},
                    {"kernel", r.kernel},
                    {"profile", r.profile},
                    {"max_relative_error", x.relative_error},
                    {"kernel_seconds", x.kernel_seconds},
                    {"kernel_gflops", x.kernel_gflops},
                    {"fell_back", r.fell_back},
                    {"ok", x.ok},
                    // The last call's timeline: each side's busy time, from the call's start.
                    {"cpu_share_seconds",
                     r.t_cpu_end > r.t_cpu_start
                         ? static_cast<double>(r.t_cpu_end - r.t_cpu_start) * 1e-9
                         : 0.0},
                    {"gpu_done_seconds",
                     r.t_gpu_done > 0 ? static_cast<double>(r.t_gpu_done - r.t_start) * 1e-9 : 0.0}}
                   .dump(2)
            << "\n";
}

void print_text(const Outcome& x) {
  const Report& r = x.last;
  std::printf(
      "%s %lldx%lldx%lld: %.1f GFLOPS (median of %d), strategy %s, rows GPU %lld / CPU %lld, "
      "max relative error %.2e%s\n",
      detail::routine_name(x.precision, "gemm").c_str(), static_cast<long long>(x.m),
      static_cast<long long>(x.n), static_cast<long long>(x.k), x.gflops, x.reps,
      to_string(r.strategy), static_cast<long long>(r.gpu_rows), static_cast<long long>(r.cpu_rows),
      x.relative_error, x.ok ? "" : "  WRONG");
  if (x.kernel_gflops > 0)
    std::printf("  kernel alone: %.1f GFLOPS (%s)\n", x.kernel_gflops, r.kernel.c_str());
  if (!r.profile.empty()) std::printf("  profile: %s\n", r.profile.c_str());
  if (r.balance == Balance::Dynamic)
    std::printf("  dynamic balance: the CPU took %d chunks\n", r.cpu_chunks);
  for (const Report::Device& d : r.devices)
    std::printf("  device %d (%s): rows %lld from %lld in %d chunk%s, %d feeder threads%s\n",
                d.index, d.name.c_str(), static_cast<long long>(d.rows),
                static_cast<long long>(d.row0), d.chunks, d.chunks == 1 ? "" : "s",
                d.feeder_threads, d.failed ? ", failed" : "");
  if (r.fell_back)
    std::printf("  GPU failed, computed on the CPU: %s\n", r.fallback_reason.c_str());
}

template <class T, class Alloc = std::allocator<T>>
int gemm_checked(const GemmArgs& a, const Options& o, bool as_json) {
  Outcome x;
  try {
    x = run_checked<T, Alloc>(a.m, a.n, a.k, a.beta, o, a.reps);
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("out of memory for the operands of the " + std::to_string(a.m) + "x" +
                             std::to_string(a.n) + "x" + std::to_string(a.k) + " GEMM (about " +
                             gigabytes(operand_bytes(a.m, a.n, a.k, detail::precision_of<T>())) +
                             " with the check's copies)");
  }
  if (as_json)
    print_json(x);
  else
    print_text(x);
  return x.ok ? 0 : 1;
}

int gemm_command(const GemmArgs& a, bool as_json) {
  const detail::Precision precision = detail::parse_precision(a.precision);
  if (const std::string why = unrunnable(a.m, a.n, a.k, precision); !why.empty())
    throw UsageError("gemm: " + why);
  Options o;
  o.strategy = *detail::parse_strategy(a.strategy);  // kStrategy let nothing else through
  if (a.fraction >= 0) o.gpu_fraction = a.fraction;
  if (a.threads > 0) o.cpu_threads = a.threads;
  if (a.feeders > 0) o.feeder_threads = a.feeders;
  if (!a.device.empty()) o.device = a.device;
  if (!a.balance.empty()) o.balance = detail::parse_balance(a.balance);
  o.kernel_params = parse_assignments(a.kernel, "--kernel");
  if (!a.direct.empty()) o.direct = a.direct == "on";
  return detail::with_element_type(precision, [&](auto zero) {
    using T = decltype(zero);
    return a.resident ? gemm_checked<T, Allocator<T>>(a, o, as_json)
                      : gemm_checked<T>(a, o, as_json);
  });
}

// auto, cpu, gpu or hybrid, in lower case like every other name the command takes, with
// CLI::IsMember's message and help.
const CLI::Validator kStrategy(
    [](std::string& v) {
      const std::optional<Strategy> s = detail::parse_strategy(v);
      return s && v == to_string(*s) ? std::string() : v + " not in {auto,cpu,gpu,hybrid}";
    },
    "{auto,cpu,gpu,hybrid}");

}  // namespace

Subcommand add_gemm(CLI::App& app) {
  auto args = std::make_shared<GemmArgs>();
  GemmArgs& a = *args;
  auto* sub = app.add_subcommand("gemm", "one checked GEMM: GFLOPS, split and error");
  sub->add_option("--precision", a.precision, "s, d, c or z")
      ->check(CLI::IsMember({"s", "d", "c", "z"}));
  sub->add_option("--m", a.m, "rows of C")->check(kPositive);
  sub->add_option("--n", a.n, "columns of C")->check(kPositive);
  sub->add_option("--k", a.k, "inner dimension")->check(kPositive);
  sub->add_option("--strategy", a.strategy, "auto, cpu, gpu or hybrid")->check(kStrategy);
  sub->add_option("--fraction", a.fraction, "GPU share under hybrid")
      ->check(kFraction)
      ->default_str("TANDEM_GPU_FRACTION, else 0.5");
  sub->add_option("--device", a.device, "device index or name, a list of them (1,2), or all");
  sub->add_option("--balance", a.balance,
                  "static (each side's rows fixed) or dynamic (rows in chunks to whichever side is "
                  "free); default: TANDEM_BALANCE, else the profile's")
      ->check(CLI::IsMember({"static", "dynamic"}));
  sub->add_option("--beta", a.beta, "beta (C starts random where it is not 0)");
  sub->add_option("--reps", a.reps, "timed repetitions")->check(kPositive);
  sub->add_option("--threads", a.threads, "CPU BLAS threads for the CPU share")
      ->check(kPositive)
      ->default_str("the profile's, else every core");
  sub->add_option("--feeders", a.feeders, "host threads feeding each discrete GPU")
      ->check(kPositive)
      ->default_str("by device");
  sub->add_flag("--resident", a.resident,
                "operands in tandem_malloc memory (pinned on a discrete GPU)");
  sub->add_option(
         "--kernel", a.kernel,
         "kernel parameters NAME=VALUE,... (KERNEL=2: the direct kernel, from its defaults)")
      ->delimiter(',')
      ->check(kKernelParams)
      ->default_str("the profile's");
  sub->add_option("--direct", a.direct,
                  "the profile's direct kernel (operands read as stored, nothing packed): on for "
                  "this call, or off")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str("below the profile's direct_below");
  return {sub, [args](bool as_json) { return gemm_command(*args, as_json); }};
}

}  // namespace tandem::cli
