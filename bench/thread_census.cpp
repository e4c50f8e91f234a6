// Which of the process's threads run while tandem's calls do: steps of n x n x n sgemm calls from
// ordinary memory under a strategy (cpu, gpu, auto, hybrid), or pauses, in the order given; for
// each step its calls' times and, from /proc/self/task/*/schedstat, every thread's CPU time
// during it. A CPU call that slows after GPU calls, with threads other than OpenBLAS's busy
// beside it, points at who spins (docs/PERFORMANCE.md, issue 17).
//
//   thread_census [--device D] cpu:384:21 auto:1000:1 cpu:384:21 sleep:1000 cpu:384:21
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <tandem/tandem.hpp>
#include <thread>
#include <vector>

namespace {

struct ThreadTime {
  std::string name;
  long long ns = 0;
};

// Run time of each thread of this process, by thread id.
std::map<int, ThreadTime> census() {
  std::map<int, ThreadTime> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const int tid = std::atoi(e->d_name);
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    ThreadTime t;
    std::ifstream(base + "/comm") >> t.name;
    std::ifstream(base + "/schedstat") >> t.ns;
    out[tid] = t;
  }
  closedir(dir);
  return out;
}

// The machine's CPU time by kind, in clock ticks, from /proc/stat's first line: user, nice,
// system, idle, iowait, irq, softirq, steal (time the hypervisor ran something else on a vCPU).
std::vector<long long> machine_ticks() {
  std::ifstream in("/proc/stat");
  std::string label;
  in >> label;
  std::vector<long long> t(8, 0);
  for (auto& x : t) in >> x;
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// REPS calls under `strategy`; prints their times and each thread's CPU time over the loop.
void loop(const char* label, tandem::Strategy strategy, const std::string& device, int64_t n,
          int reps, const std::vector<float>& a, const std::vector<float>& b,
          std::vector<float>& c) {
  tandem::Options o;
  o.strategy = strategy;
  if (!device.empty()) o.device = device;
  std::vector<double> ms;
  const auto before = census();
  const auto ticks_before = machine_ticks();
  const auto t0 = std::chrono::steady_clock::now();
  tandem::Report last;
  for (int i = 0; i < reps; ++i) {
    const auto s = std::chrono::steady_clock::now();
    tandem::gemm<float>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, n, n, n,
                        1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n, o, &last);
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  const double wall =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto after = census();
  const auto ticks_after = machine_ticks();
  std::printf(
      "%s: %d calls of %lld^3 as %s (%d CPU threads, %lld GPU rows): median %.3f ms, "
      "min %.3f, max %.3f, loop %.1f ms\n",
      label, reps, static_cast<long long>(n), tandem::to_string(last.strategy), last.cpu_threads,
      static_cast<long long>(last.gpu_rows), median(ms), *std::min_element(ms.begin(), ms.end()),
      *std::max_element(ms.begin(), ms.end()), wall);
  // Threads that ran over the loop, busiest first, with their share of its wall time.
  std::vector<std::pair<long long, std::string>> busy;
  int threads = 0;
  for (const auto& [tid, t] : after) {
    ++threads;
    auto it = before.find(tid);
    const long long ran = t.ns - (it != before.end() ? it->second.ns : 0);
    if (ran > 0) busy.push_back({ran, t.name + "/" + std::to_string(tid)});
  }
  std::sort(busy.rbegin(), busy.rend());
  std::printf("  %d threads; ran during the loop (%% of its wall):", threads);
  for (const auto& [ran, name] : busy)
    std::printf(" %s %.0f%%", name.c_str(), 100.0 * static_cast<double>(ran) * 1e-6 / wall);
  std::printf("\n");
  const char* kinds[] = {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"};
  std::printf("  machine, ticks of %ld per second:", sysconf(_SC_CLK_TCK));
  for (size_t i = 0; i < ticks_after.size(); ++i)
    std::printf(" %s %lld", kinds[i], ticks_after[i] - ticks_before[i]);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: thread_census [--device D] STEP...\n"
                 "  STEP: STRATEGY:N:REPS (STRATEGY cpu, gpu, auto or hybrid; sgemm N^3, ordinary "
                 "memory) or sleep:MS\n");
    return 2;
  }
  std::string device;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 1; i < argc; ++i) {
    const std::string step = argv[i];
    if (step == "--device" && i + 1 < argc) {
      device = argv[++i];
      continue;
    }
    const auto colon = step.find(':');
    const std::string what = step.substr(0, colon);
    if (what == "sleep") {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(step.c_str() + colon + 1)));
      std::printf("slept %s ms\n", step.c_str() + colon + 1);
      continue;
    }
    int64_t n = 0;
    int reps = 0;
    if (colon == std::string::npos ||
        std::sscanf(step.c_str() + colon + 1, "%lld:%d", reinterpret_cast<long long*>(&n), &reps) !=
            2 ||
        n <= 0 || reps <= 0) {
      std::fprintf(stderr, "thread_census: bad step '%s'\n", step.c_str());
      return 2;
    }
    const std::map<std::string, tandem::Strategy> strategies = {
        {"cpu", tandem::Strategy::Cpu},
        {"gpu", tandem::Strategy::Gpu},
        {"auto", tandem::Strategy::Auto},
        {"hybrid", tandem::Strategy::Hybrid}};
    const auto it = strategies.find(what);
    if (it == strategies.end()) {
      std::fprintf(stderr, "thread_census: bad strategy in '%s'\n", step.c_str());
      return 2;
    }
    std::vector<float> a(static_cast<size_t>(n * n)), b(a.size()), c(a.size());
    for (auto* v : {&a, &b})
      for (auto& x : *v) x = u(rng);
    loop(step.c_str(), it->second, device, n, reps, a, b, c);
  }
  return 0;
}
