// The `tandem` command: devices (what this machine offers), tune (the co-tuner), profile (show,
// path, export, import, reset), gemm (one checked call), compare and kernel (one kernel build,
// inspected). Every command takes --json.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "compare.hpp"
#include "cotuner.hpp"
#include "search.hpp"
#include "cpu_blas.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "gpu/programs.hpp"
#include "text.hpp"
#include "power.hpp"
#include "profile.hpp"
#include "tandem/tandem.hpp"
#include "topology.hpp"

namespace {

namespace fs = std::filesystem;
namespace prof = tandem::detail::profile;
namespace gpu = tandem::detail::gpu;
using nlohmann::json;

std::string kernel_text(const std::map<std::string, int>& k) {
  std::string s;
  for (const auto& [n, v] : k) s += (s.empty() ? "" : " ") + n + "=" + std::to_string(v);
  return s.empty() ? "(defaults)" : s;
}

// ---- devices -------------------------------------------------------------------------------------

int devices(bool as_json) {
  json out;
  try {
    for (const auto& d : gpu::list_devices())
      out["opencl"].push_back({{"index", d.index},
                               {"platform", d.platform},
                               {"device", d.name},
                               {"vendor", d.vendor},
                               {"driver", d.driver},
                               {"version", d.version},
                               {"type", d.is_gpu ? "GPU" : "other"},
                               {"unified_memory", d.unified_memory},
                               {"fp64", d.fp64},
                               {"compute_units", d.compute_units},
                               {"local_memory_bytes", d.local_mem_bytes},
                               {"max_work_group", d.max_work_group},
                               {"global_memory_bytes", d.global_mem_bytes}});
  } catch (const tandem::Error& e) {
    out["opencl_unavailable"] = e.what();
  }
  namespace topo = tandem::detail::topology;
  namespace blas = tandem::detail::cpu_blas;
  const std::string best = topo::best_openblas_core(topo::cpu_flags());
  const std::string core = blas::core_type();
  out["cpu"] = {{"model", topo::cpu_model()},
                {"physical_cores", topo::physical_cores()},
                {"hardware_threads", topo::logical_cpus()}};
  out["blas"] = {{"name", blas::name()},
                 {"version", blas::version()},
                 {"core_type", core},
                 {"best_core_type", best},
                 {"threads", blas::current_threads()}};
  if (topo::weaker_core(core, best))
    out["advice"] = "OpenBLAS chose its " + core + " kernels, but this CPU supports " + best +
                    ": set OPENBLAS_CORETYPE=" + best + " (often several times faster)";
  out["profile_directory"] = prof::directory().string();
  tandem::power::Meter meter;
  for (const auto& src : meter.sources())
    out["power"].push_back({{"source", src.name}, {"available", src.available}, {"detail", src.detail}});
  if (as_json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (out.contains("opencl")) {
    std::cout << "OpenCL devices:\n";
    for (const auto& d : out["opencl"])
      std::printf("  %d: %s / %s\n     %s, driver %s, unified memory %s, fp64 %s, %d compute units, "
                  "%llu KiB local memory, work-groups up to %llu\n",
                  d["index"].get<int>(), d["platform"].get<std::string>().c_str(),
                  d["device"].get<std::string>().c_str(), d["type"].get<std::string>().c_str(),
                  d["driver"].get<std::string>().c_str(), d["unified_memory"].get<bool>() ? "yes" : "no",
                  d["fp64"].get<bool>() ? "yes" : "no", d["compute_units"].get<int>(),
                  static_cast<unsigned long long>(d["local_memory_bytes"].get<uint64_t>() / 1024),
                  static_cast<unsigned long long>(d["max_work_group"].get<uint64_t>()));
  } else {
    std::cout << "OpenCL: unavailable: " << out["opencl_unavailable"].get<std::string>() << "\n";
  }
  std::printf("CPU: %s, %d physical cores, %d hardware threads\n", topo::cpu_model().c_str(),
              topo::physical_cores(), topo::logical_cpus());
  std::printf("CPU BLAS: %s %s, core type %s, %d threads\n", blas::name().c_str(), blas::version().c_str(),
              core.c_str(), blas::current_threads());
  if (out.contains("advice")) std::printf("  warning: %s\n", out["advice"].get<std::string>().c_str());
  std::printf("Power sources:\n");
  for (const auto& p : out["power"])
    std::printf("  %s: %s\n", p["source"].get<std::string>().c_str(), p["detail"].get<std::string>().c_str());
  std::printf("Profile directory: %s\n", prof::directory().string().c_str());
  return 0;
}

// ---- profile -------------------------------------------------------------------------------------

prof::Identity identity(const std::string& device) {
  return prof::identity_for(gpu::info(*gpu::open_device(device)));
}

json profile_json(const prof::Profile& p) {
  json j = json::parse(prof::to_json(p));
  j["origin"] = p.origin;
  return j;
}

void print_profile(const prof::Profile& p) {
  std::printf("profile: %s\n", p.origin.c_str());
  std::printf("  for %s / %s (driver %s, %d compute units), CPU %s, %s %s (%s), %d threads\n",
              p.identity.platform.c_str(), p.identity.device.c_str(), p.identity.driver.c_str(),
              p.identity.compute_units, p.identity.cpu_model.c_str(), p.identity.blas.c_str(),
              p.identity.blas_version.c_str(), p.identity.blas_core.c_str(), p.identity.threads);
  std::printf("  tuned %s by tandem %s: strategy %s, %d evaluations, %.0f s\n", p.tuning.date.c_str(),
              p.tandem_version.c_str(), p.tuning.strategy.c_str(), p.tuning.evaluations, p.tuning.seconds);
  for (const auto& [prec, pp] : p.precisions) {
    std::printf("  %cgemm: best GPU-only kernel %.1f GFLOPS at %lld: %s\n", prec, pp.gpu_gflops,
                static_cast<long long>(pp.gpu_size), kernel_text(pp.gpu_kernel).c_str());
    std::printf("    %8s %10s %10s %10s %10s  %s\n", "size", "GPU share", "CPU GF/s", "GPU GF/s", "best GF/s",
                "hybrid kernel");
    for (const auto& b : pp.buckets)
      std::printf("    %8lld %7d/%-3d %9.1f %10.1f %10.1f  %s\n", static_cast<long long>(b.size), b.gpu_parts,
                  b.parts, b.cpu_gflops, b.gpu_gflops, b.best_gflops,
                  b.gpu_parts ? kernel_text(b.kernel).c_str() : "-");
  }
}

int profile_command(const std::string& action, const std::string& file, const std::string& device,
                    bool as_json) {
  const prof::Identity id = identity(device);
  if (action == "path") {
    if (as_json)
      std::cout << json{{"path", prof::path_for(id).string()}}.dump(2) << "\n";
    else
      std::cout << prof::path_for(id).string() << "\n";
    return 0;
  }
  if (action == "show" || action == "export") {
    auto p = prof::active(id);
    if (!p) {
      std::cerr << "tandem: no profile applies to this device; run `tandem tune`\n";
      return 1;
    }
    if (action == "export") {
      prof::save(*p, file);
      if (as_json)
        std::cout << json{{"exported", file}, {"from", p->origin}}.dump(2) << "\n";
      else
        std::cout << "exported " << p->origin << " to " << file << "\n";
      return 0;
    }
    if (as_json)
      std::cout << profile_json(*p).dump(2) << "\n";
    else
      print_profile(*p);
    return 0;
  }
  if (action == "import") {
    prof::Profile p = prof::load(file);  // throws with the reason if it is not a valid profile
    std::string why;
    if (!prof::compatible(p, &why)) {
      std::cerr << "tandem: cannot import " << file << ": " << why << "\n";
      return 1;
    }
    const fs::path to = prof::path_for(p.identity);
    prof::save(p, to);
    prof::forget();
    const std::string diff = p.identity.difference(id);
    if (as_json) {
      std::cout << json{{"imported", to.string()}, {"applies_here", diff.empty()}, {"difference", diff}}.dump(2)
                << "\n";
    } else {
      std::cout << "imported to " << to.string() << "\n";
      if (!diff.empty())
        std::cout << "note: it does not apply to this setup (" << diff << ") and stays unused here\n";
    }
    return 0;
  }
  if (action == "reset") {
    std::error_code ec;
    std::vector<std::string> removed;
    for (const fs::path& f : prof::local_files(id))
      if (fs::remove(f, ec)) removed.push_back(f.string());
    fs::remove(prof::directory() / ("tune-" + id.file_name() + "l"), ec);
    prof::forget();
    if (as_json) {
      std::cout << json{{"removed", removed}}.dump(2) << "\n";
    } else {
      if (removed.empty()) std::cout << "no local profile for this device\n";
      for (const auto& f : removed) std::cout << "removed " << f << "\n";
    }
    return 0;
  }
  std::cerr << "tandem: unknown profile action '" << action << "'\n";
  return 2;
}

// ---- tune ----------------------------------------------------------------------------------------

std::string clock_text(double s) {
  char buf[32];
  const int t = static_cast<int>(std::max(0.0, s));
  std::snprintf(buf, sizeof buf, "%02d:%02d", t / 60, t % 60);
  return buf;
}

int tune_command(tandem::tuner::TuneOptions o, const std::string& precision, bool as_json) {
  o.precisions = precision == "both" ? std::vector<char>{'s', 'd'} : std::vector<char>{precision[0]};
  const bool tty = isatty(STDERR_FILENO) != 0;
  o.on_progress = [tty](const tandem::tuner::Progress& p) {
    if (tty) {
      const int width = 24, filled = p.budget > 0 ? std::min(width, width * p.done / p.budget) : 0;
      std::fprintf(stderr, "\r\033[K%cgemm %-7s [%s%s] %d/%d  best %.1f GFLOPS  %s elapsed  ~%s left",
                   p.precision, p.phase.c_str(), std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), p.done, p.budget, p.best_gflops,
                   clock_text(p.elapsed).c_str(), clock_text(p.remaining).c_str());
    } else {
      std::fprintf(stderr, "tune: %cgemm %s %d/%d best %.1f GFLOPS, %s elapsed: %s\n", p.precision,
                   p.phase.c_str(), p.done, p.budget, p.best_gflops, clock_text(p.elapsed).c_str(),
                   p.last.c_str());
    }
    std::fflush(stderr);
  };
  const auto report = tandem::tuner::tune(o);
  if (tty) std::fprintf(stderr, "\n");
  if (as_json) {
    json j = profile_json(report.profile);
    j["saved"] = report.saved.string();
    j["log"] = report.log.string();
    for (const auto& s : report.precisions)
      j["summary"].push_back({{"precision", std::string(1, s.precision)},
                              {"evaluations", s.evaluations},
                              {"failures", s.failures},
                              {"resumed", s.resumed},
                              {"failure_reasons", s.failure_reasons}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (const auto& s : report.precisions) {
    std::printf("%cgemm: %d kernel candidates measured (%d resumed from the log), %d excluded\n", s.precision,
                s.evaluations, s.resumed, s.failures);
    for (const auto& r : s.failure_reasons) std::printf("  excluded: %s\n", r.c_str());
  }
  print_profile(report.profile);
  std::printf("log: %s\n", report.log.string().c_str());
  return 0;
}

// ---- compare -------------------------------------------------------------------------------------

json compare_json(const tandem::tuner::CompareResult& r) {
  json j;
  j["power_readable"] = r.power;
  for (const auto& s : r.sources) j["power_sources"].push_back({{"name", s.name}, {"available", s.available}, {"detail", s.detail}});
  if (r.power) {
    j["idle"] = {{"seconds", r.idle.seconds}, {"joules", r.idle.joules}, {"watts", r.idle.watts()}};
    j["sampling_overhead"] = r.sampling_overhead;
  }
  j["sampling_note"] = r.overhead_note;
  j["rows"] = json::array();
  for (const auto& x : r.rows) {
    json row = {{"precision", std::string(1, x.precision)}, {"m", x.m}, {"n", x.n}, {"k", x.k},
                {"strategy", x.strategy}, {"ran", x.ran}, {"gflops", x.gflops}, {"gflops_min", x.gflops_min},
                {"gflops_max", x.gflops_max}, {"seconds", x.seconds}, {"gpu_rows", x.gpu_rows},
                {"cpu_rows", x.cpu_rows}, {"cpu_seconds", x.cpu_seconds}, {"gpu_seconds", x.gpu_seconds},
                {"kernel_seconds", x.kernel_seconds}, {"kernel_gflops", x.kernel_gflops},
                {"speedup", x.speedup}, {"max_error", x.max_error}, {"buffers", x.buffers},
                {"fell_back", x.fell_back}};
    if (x.power) row.update({{"joules", x.joules}, {"watts", x.watts}, {"gflops_per_watt", x.gflops_per_watt}});
    j["rows"].push_back(row);
  }
  return j;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) std::cerr << "tandem: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

struct CompareArgs {
  std::string precision = "both", sizes = "256,512,1024", shape = "square", strategies = "cpu,gpu,hybrid,auto";
  std::string csv, json_file, plot, device;
  int reps = 3;
  bool resident = false, no_power = false, no_tune = false;
};

int compare_command(const CompareArgs& a) {
  tandem::tuner::CompareOptions o;
  o.precisions = a.precision == "both" ? std::vector<char>{'s', 'd'} : std::vector<char>{a.precision[0]};
  o.shapes = tandem::tuner::parse_shapes(a.shape, tandem::tuner::parse_sizes(a.sizes));
  o.strategies.clear();
  std::stringstream list(a.strategies);
  for (std::string s; std::getline(list, s, ',');) o.strategies.push_back(s);
  o.reps = a.reps;
  o.resident = a.resident;
  o.device = a.device;
  o.power = !a.no_power;

  // Without a profile tuned for this device (a platform or global fallback does not count), a
  // quick co-tune first, so auto has something measured here to follow.
  if (!a.no_tune) {
    const prof::Identity id = identity(a.device);
    const auto applies = prof::active(id);
    if (!applies || applies->match != "device") {
      std::fprintf(stderr, "compare: no profile tuned for this device: a quick tune first (tandem tune for a full one)\n");
      tandem::tuner::TuneOptions t;
      t.device = a.device;
      t.precisions = o.precisions;
      t.budget_evaluations = 8;
      t.budget_seconds = 120;
      t.sizes.clear();
      for (const auto& s : o.shapes) t.sizes.push_back(static_cast<int64_t>(std::lround(std::cbrt(double(s[0]) * double(s[1]) * double(s[2])))));
      std::sort(t.sizes.begin(), t.sizes.end());
      t.sizes.erase(std::unique(t.sizes.begin(), t.sizes.end()), t.sizes.end());
      t.top_kernels = 1;
      t.reps = 3;
      const auto tuned = tandem::tuner::tune(t);
      std::fprintf(stderr, "compare: profile saved to %s\n", tuned.saved.string().c_str());
    }
  }

  std::printf("%-5s %-16s %-7s %-7s %22s  %-13s %8s %8s %7s %9s %s\n", "prec", "m x n x k", "asked", "ran",
              "GFLOPS median (min-max)", "rows gpu/cpu", "cpu ms", "gpu ms", "speedup", "max err",
              "J/call  W  GFLOPS/W");
  o.on_row = [](const tandem::tuner::CompareRow& x) {
    char shape[64], rate[64], split[32], energy[64] = "-";
    std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", static_cast<long long>(x.m), static_cast<long long>(x.n),
                  static_cast<long long>(x.k));
    std::snprintf(rate, sizeof rate, "%.1f (%.1f-%.1f)", x.gflops, x.gflops_min, x.gflops_max);
    std::snprintf(split, sizeof split, "%lld/%lld", static_cast<long long>(x.gpu_rows), static_cast<long long>(x.cpu_rows));
    if (x.power) std::snprintf(energy, sizeof energy, "%.3g %.1f %.2f", x.joules, x.watts, x.gflops_per_watt);
    std::printf("%-5s %-16s %-7s %-7s %22s  %-13s %8.2f %8.2f %7s %9.2e %s%s\n",
                x.precision == 's' ? "sgemm" : "dgemm", shape, x.strategy.c_str(), x.ran.c_str(), rate, split,
                x.cpu_seconds * 1e3, x.gpu_seconds * 1e3,
                x.speedup > 0 ? (std::to_string(x.speedup).substr(0, 4) + "x").c_str() : "-", x.max_error, energy,
                x.fell_back ? "  (GPU failed: CPU)" : "");
    std::fflush(stdout);
  };
  const auto r = tandem::tuner::compare(o);
  std::printf("\npower: %s\n", r.power ? "read" : "not readable here");
  for (const auto& s : r.sources) std::printf("  %s: %s\n", s.name.c_str(), s.detail.c_str());
  if (r.power)
    std::printf("  idle baseline: %.1f W over %.1f s (reported apart from the runs' energy)\n  sampling cost: %+.2f%% (%s)\n",
                r.idle.watts(), r.idle.seconds, 100 * r.sampling_overhead, r.overhead_note.c_str());
  bool ok = true;
  if (!a.csv.empty()) ok = write_file(a.csv, tandem::tuner::to_csv(r)) && ok;
  if (!a.json_file.empty()) ok = write_file(a.json_file, compare_json(r).dump(2) + "\n") && ok;
  if (!a.plot.empty()) ok = write_file(a.plot, tandem::tuner::to_svg(r)) && ok;
  return ok ? 0 : 1;
}

// ---- gemm ----------------------------------------------------------------------------------------

// NAME=VALUE items, as --kernel and --start take them.
std::map<std::string, int> parse_assignments(const std::vector<std::string>& items, const char* option) {
  std::map<std::string, int> out;
  for (const auto& kv : items) {
    const auto eq = kv.find('=');
    size_t used = 0;
    int value = 0;
    try {
      if (eq != std::string::npos && eq > 0) value = std::stoi(kv.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == std::string::npos || eq == 0 || used == 0 || eq + 1 + used != kv.size())
      throw std::invalid_argument(std::string(option) + " wants NAME=INTEGER, not '" + kv + "'");
    out[kv.substr(0, eq)] = value;
  }
  return out;
}

// Alloc: std::allocator (ordinary memory) or tandem::Allocator (tandem_malloc memory, --resident).
template <class T, class Alloc = std::allocator<T>>
int gemm_command(int64_t m, int64_t n, int64_t k, const tandem::Options& o, int reps, bool as_json) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T, Alloc> a(m * k), b(k * n), c(m * n);
  for (auto& x : a) x = static_cast<T>(d(rng));
  for (auto& x : b) x = static_cast<T>(d(rng));
  tandem::Report r;
  std::vector<double> times, kernel_times;
  for (int i = 0; i <= reps; ++i) {  // the first call is a warm-up
    const auto t0 = std::chrono::steady_clock::now();
    tandem::gemm<T>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, m, n, k, T(1), a.data(),
                    k, b.data(), n, T(0), c.data(), n, o, &r);
    if (i > 0) {
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      kernel_times.push_back(r.gpu_kernel_seconds);
    }
  }
  std::sort(times.begin(), times.end());
  std::sort(kernel_times.begin(), kernel_times.end());
  const double median = times[times.size() / 2];
  const double kernel_median = kernel_times[kernel_times.size() / 2];
  // The kernel's own rate (profiling events), for a call that ran on the GPU alone.
  const double kernel_gflops =
      kernel_median > 0 && r.cpu_rows == 0 ? 2.0 * double(m) * double(n) * double(k) * 1e-9 / kernel_median : 0;
  // The check: the CPU BLAS in double on the same inputs.
  std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()), ref(m * n);
  tandem::Options cpu;
  cpu.strategy = tandem::Strategy::Cpu;
  tandem::gemm<double>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, m, n, k, 1.0,
                       ad.data(), k, bd.data(), n, 0.0, ref.data(), n, cpu);
  double err = 0, scale = 0;
  for (int64_t i = 0; i < m * n; ++i) {
    err = std::max(err, std::fabs(double(c[i]) - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  const double rel = scale > 0 ? err / scale : err;
  const bool ok = std::isfinite(rel) && rel <= 8.0 * std::sqrt(double(k)) * std::numeric_limits<T>::epsilon();
  const double gflops = 2.0 * double(m) * double(n) * double(k) * 1e-9 / median;
  if (as_json) {
    std::cout << json{{"gflops", gflops},        {"seconds", median},
                      {"strategy", tandem::to_string(r.strategy)},
                      {"gpu_rows", r.gpu_rows},  {"cpu_rows", r.cpu_rows},
                      {"cpu_threads", r.cpu_threads}, {"profile_resident", r.profile_resident},
                      {"buffers", {tandem::to_string(r.a), tandem::to_string(r.b), tandem::to_string(r.c)}},
                      {"device", r.device},      {"kernel", r.kernel},
                      {"profile", r.profile},    {"max_relative_error", rel},
                      {"kernel_seconds", kernel_median}, {"kernel_gflops", kernel_gflops},
                      {"fell_back", r.fell_back}, {"ok", ok},
                      // The last call's timeline: each side's busy time, from the call's start.
                      {"cpu_share_seconds", r.t_cpu_end > r.t_cpu_start ? static_cast<double>(r.t_cpu_end - r.t_cpu_start) * 1e-9 : 0.0},
                      {"gpu_done_seconds", r.t_gpu_done > 0 ? static_cast<double>(r.t_gpu_done - r.t_start) * 1e-9 : 0.0}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("%cgemm %lldx%lldx%lld: %.1f GFLOPS (median of %d), strategy %s, rows GPU %lld / CPU %lld, "
                "max relative error %.2e%s\n",
                std::is_same_v<T, double> ? 'd' : 's', static_cast<long long>(m), static_cast<long long>(n),
                static_cast<long long>(k), gflops, reps, tandem::to_string(r.strategy),
                static_cast<long long>(r.gpu_rows), static_cast<long long>(r.cpu_rows), rel,
                ok ? "" : "  WRONG");
    if (kernel_gflops > 0) std::printf("  kernel alone: %.1f GFLOPS (%s)\n", kernel_gflops, r.kernel.c_str());
    if (!r.profile.empty()) std::printf("  profile: %s\n", r.profile.c_str());
    if (r.fell_back) std::printf("  GPU failed, computed on the CPU: %s\n", r.fallback_reason.c_str());
  }
  return ok ? 0 : 1;
}

// ---- kernel --------------------------------------------------------------------------------------

// Builds one kernel as a GEMM with these layouts would and writes what came out to `dir`:
// kernel.cl (the source as compiled), build.log (the compiler's report) and, if built,
// kernel.bin (the device binary: PTX on NVIDIA, which ptxas and cuobjdump read).
int kernel_command(const std::string& precision, const std::map<std::string, int>& overrides, bool trans_a,
                   bool trans_b, const std::string& device, const std::string& dir, bool as_json) {
  auto dev = gpu::open_device(device);
  const bool fp64 = precision == "d";
  const gpu::Params params = gpu::resolve_params(*dev, fp64, overrides);
  const gpu::BuildReport r = gpu::inspect(*dev, fp64, trans_a, trans_b, params);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path d(dir);
  fs::remove(d / "kernel.bin", ec);  // a failed build leaves no binary from an earlier one
  if (!write_file((d / "kernel.cl").string(), r.source) || !write_file((d / "build.log").string(), r.log) ||
      (r.built && !write_file((d / "kernel.bin").string(), r.binary)))
    return 1;
  if (as_json) {
    std::cout << json{{"device", gpu::info(*dev).describe()}, {"precision", precision},
                      {"kernel", tandem::detail::text::describe(params)}, {"options", r.options},
                      {"built", r.built}, {"log", r.log}, {"binary_bytes", r.binary.size()},
                      {"directory", dir}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << gpu::info(*dev).describe() << "\n"
              << (fp64 ? "dgemm" : "sgemm") << " kernel " << tandem::detail::text::describe(params) << "\n"
              << "options: " << r.options << "\n"
              << (r.built ? "built" : "build FAILED") << "; binary " << r.binary.size() << " bytes; files in "
              << dir << "\n"
              << r.log << (r.log.empty() || r.log.back() == '\n' ? "" : "\n");
  }
  return r.built ? 0 : 1;
}

}  // namespace

// CLI11's own range messages print the whole double range; these name the rule instead.
const CLI::Validator kPositive(
    [](std::string& v) {
      try {
        size_t used = 0;
        if (std::stod(v, &used) > 0 && used == v.size()) return std::string();
      } catch (const std::exception&) {
      }
      return "must be a positive number, not '" + v + "'";
    },
    "POSITIVE");
const CLI::Validator kNonNegative(
    [](std::string& v) {
      try {
        size_t used = 0;
        if (std::stod(v, &used) >= 0 && used == v.size()) return std::string();
      } catch (const std::exception&) {
      }
      return "must be zero or more, not '" + v + "'";
    },
    "NON-NEGATIVE");

int main(int argc, char** argv) {
  CLI::App app{"tandem: hybrid CPU+GPU GEMM, its co-tuner and device profiles"};
  app.require_subcommand(1);
  app.fallthrough();  // --json is accepted after any subcommand too
  bool as_json = false;
  app.add_flag("--json", as_json, "machine-readable output");

  auto* dev = app.add_subcommand("devices", "OpenCL devices, CPU topology and the CPU BLAS");

  tandem::tuner::TuneOptions topt;
  std::string tprecision = "both";
  auto* tune = app.add_subcommand("tune", "co-tune the GPU kernel and the CPU/GPU split; save the profile");
  tune->add_option("--precision", tprecision, "s, d or both")->check(CLI::IsMember({"s", "d", "both"}));
  tune->add_option("--strategy", topt.strategy, "search strategy")
      ->check(CLI::IsMember(tandem::tuner::strategy_names()));
  tune->add_option("--budget-evals", topt.budget_evaluations, "kernel candidates to measure, per precision")
      ->check(kPositive);
  tune->add_option("--budget-seconds", topt.budget_seconds, "wall-time budget")->check(kPositive);
  tune->add_option("--sizes", topt.sizes, "size buckets (m = n = k)")->delimiter(',')->check(kPositive);
  tune->add_option("--kernel-size", topt.kernel_size, "size at which kernels are compared")
      ->check(kNonNegative);
  tune->add_option("--device", topt.device, "device index or name");
  tune->add_option("--reps", topt.reps, "timed repetitions per configuration")->check(kPositive);
  tune->add_option("--parts", topt.parts, "P, the split's granularity")->check(CLI::Range(2, 1024));
  tune->add_option("--top-kernels", topt.top_kernels, "kernels whose split is searched")->check(kPositive);
  tune->add_option("--split-margin", topt.split_margin,
                   "how much faster a split must be than the better single strategy (0.05: 5%)")
      ->check(CLI::Range(0.0, 1.0));
  tune->add_option("--compile-jobs", topt.compile_jobs, "programs built ahead in parallel (-1: by device)");
  tune->add_option("--seed", topt.seed, "random seed");
  tune->add_option("--objective", topt.objective, "minimise time, energy or energy x delay (edp)")
      ->check(CLI::IsMember({"time", "energy", "edp"}));
  tune->add_option("--timeout", topt.timeout_seconds, "a call slower than this (seconds) excludes its candidate")
      ->check(kPositive);
  std::string log;
  tune->add_option("--log", log, "JSON-lines log (resumes from it)");
  tune->add_flag("--small-space", topt.small_space, "the small, enumerable kernel space");
  std::vector<std::string> tstart;
  tune->add_option("--start", tstart, "start point: kernel parameters NAME=VALUE,...")->delimiter(',');
  std::vector<std::string> tstart_d;
  tune->add_option("--start-d", tstart_d, "dgemm's start point, if not --start's")->delimiter(',');
  bool no_save = false;
  tune->add_flag("--no-save", no_save, "do not write the profile");

  std::string action, file, pdevice;
  auto* profile = app.add_subcommand("profile", "the device profile: show, path, export FILE, import FILE, reset");
  profile->add_option("action", action, "show, path, export, import or reset")
      ->required()
      ->check(CLI::IsMember({"show", "path", "export", "import", "reset"}));
  profile->add_option("file", file, "for export and import");
  profile->add_option("--device", pdevice, "device index or name");

  std::string gprecision = "s", gstrategy = "auto", gdevice;
  int64_t gm = 1024, gn = 1024, gk = 1024;
  int greps = 3, gthreads = 0;
  bool gresident = false;
  double gfraction = -1;
  auto* g = app.add_subcommand("gemm", "one checked GEMM: GFLOPS, split and error");
  g->add_option("--precision", gprecision, "s or d")->check(CLI::IsMember({"s", "d"}));
  g->add_option("--m", gm, "rows of C")->check(kPositive);
  g->add_option("--n", gn, "columns of C")->check(kPositive);
  g->add_option("--k", gk, "inner dimension")->check(kPositive);
  g->add_option("--strategy", gstrategy, "auto, cpu, gpu or hybrid")
      ->check(CLI::IsMember({"auto", "cpu", "gpu", "hybrid"}));
  g->add_option("--fraction", gfraction, "GPU share under hybrid")->check(CLI::Range(0.0, 1.0));
  g->add_option("--device", gdevice, "device index or name");
  g->add_option("--reps", greps, "timed repetitions")->check(kPositive);
  g->add_option("--threads", gthreads, "CPU BLAS threads for the CPU share")->check(kPositive);
  g->add_flag("--resident", gresident, "operands in tandem_malloc memory (pinned on a discrete GPU)");
  std::vector<std::string> gkernel;
  g->add_option("--kernel", gkernel, "kernel parameters NAME=VALUE,...")->delimiter(',');

  std::string kprecision = "s", kdevice, kdir = "tandem-kernel";
  std::vector<std::string> kkernel;
  bool ktrans_a = false, ktrans_b = false;
  auto* kern = app.add_subcommand("kernel", "build one GEMM kernel and write its source, build log and binary");
  kern->add_option("--precision", kprecision, "s or d")->check(CLI::IsMember({"s", "d"}));
  kern->add_option("--kernel", kkernel, "kernel parameters NAME=VALUE,...")->delimiter(',');
  kern->add_flag("--trans-a", ktrans_a, "the caller's A is transposed (op(A) = A^T)");
  kern->add_flag("--trans-b", ktrans_b, "the caller's B is transposed");
  kern->add_option("--device", kdevice, "device index or name");
  kern->add_option("--out", kdir, "directory for kernel.cl, build.log and kernel.bin");

  CompareArgs ca;
  auto* cmp = app.add_subcommand("compare", "CPU-only, GPU-only, hybrid and auto side by side: throughput, energy, plot");
  cmp->add_option("--precision", ca.precision, "s, d or both")->check(CLI::IsMember({"s", "d", "both"}));
  cmp->add_option("--sizes", ca.sizes, "256,512,... or 256:4096:x2");
  cmp->add_option("--shape", ca.shape, "square, tall, wide or MxNxK,...");
  cmp->add_option("--reps", ca.reps, "timed repetitions (median, after a warm-up)")->check(kPositive);
  cmp->add_option("--strategies", ca.strategies, "from cpu,gpu,hybrid,auto");
  cmp->add_flag("--resident", ca.resident, "operands in tandem_malloc memory (used in place by unified-memory devices)");
  cmp->add_option("--csv", ca.csv, "write the table as CSV");
  cmp->add_option("--json", ca.json_file, "write the table as JSON");
  cmp->add_option("--plot", ca.plot, "write an SVG plot");
  cmp->add_option("--device", ca.device, "device index or name");
  cmp->add_flag("--no-power", ca.no_power, "do not read power");
  cmp->add_flag("--no-tune", ca.no_tune, "never tune first, even without a local profile");

  CLI11_PARSE(app, argc, argv);
  try {
    if (cmp->parsed()) return compare_command(ca);
    if (dev->parsed()) return devices(as_json);
    if (kern->parsed())
      return kernel_command(kprecision, parse_assignments(kkernel, "--kernel"), ktrans_a, ktrans_b, kdevice, kdir,
                            as_json);
    if (tune->parsed()) {
      topt.log = log;
      topt.start = parse_assignments(tstart, "--start");
      topt.start_d = parse_assignments(tstart_d, "--start-d");
      topt.save = !no_save;
      return tune_command(topt, tprecision, as_json);
    }
    if (profile->parsed()) {
      if ((action == "export" || action == "import") && file.empty()) {
        std::cerr << "tandem: profile " << action << " needs a FILE\n";
        return 2;
      }
      return profile_command(action, file, pdevice, as_json);
    }
    if (g->parsed()) {
      tandem::Options o;
      o.strategy = gstrategy == "cpu" ? tandem::Strategy::Cpu
                   : gstrategy == "gpu" ? tandem::Strategy::Gpu
                   : gstrategy == "hybrid" ? tandem::Strategy::Hybrid
                                           : tandem::Strategy::Auto;
      if (gfraction >= 0) o.gpu_fraction = gfraction;
      if (gthreads > 0) o.cpu_threads = gthreads;
      if (!gdevice.empty()) o.device = gdevice;
      o.kernel_params = parse_assignments(gkernel, "--kernel");
      if (gresident)
        return gprecision == "d" ? gemm_command<double, tandem::Allocator<double>>(gm, gn, gk, o, greps, as_json)
                                 : gemm_command<float, tandem::Allocator<float>>(gm, gn, gk, o, greps, as_json);
      return gprecision == "d" ? gemm_command<double>(gm, gn, gk, o, greps, as_json)
                               : gemm_command<float>(gm, gn, gk, o, greps, as_json);
    }
  } catch (const std::exception& e) {
    std::cerr << "tandem: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
