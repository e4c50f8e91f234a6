// Counts the cores the process may run on, once: from Linux's sysfs, else with hwloc, else
// std::thread's count.
#include "cpu/topology.hpp"

#include <hwloc.h>
#include <sched.h>
#include <strings.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tandem::detail::topology {
namespace {

struct Counts {
  int cores = 0;
  int pus = 0;
  std::string model;
};

// Linux: the processing units of the process's affinity mask, their cores told apart by package
// and core id in sysfs, and the model /proc/cpuinfo names: a few small files per processing unit,
// 0.1 ms where hwloc's topology took 4-6 ms on the H100 host's 16 cores (every process's first
// call paid it). False where any of it cannot be read.
bool read_linux(Counts& counts) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  std::set<std::pair<long, long>> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    long package = -1, core = -1;
    std::ifstream(dir + "physical_package_id") >> package;
    std::ifstream(dir + "core_id") >> core;
    if (package < 0 || core < 0) return false;
    cores.emplace(package, core);
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; counts.model.empty() && std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    const size_t first =
        colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
    if (first != std::string::npos)
      counts.model = line.substr(first, line.find_last_not_of(" \t") + 1 - first);
  }
  counts.cores = static_cast<int>(cores.size());
  counts.pus = CPU_COUNT(&set);
  return counts.cores > 0 && !counts.model.empty();
}

// Elsewhere (or where sysfs says too little) hwloc, without its x86 backend, which reads each
// processor's CPUID by binding a thread to it in turn (7-36 ms on this project's 2-core VM under
// load).
Counts read_counts() {
  Counts counts;
  if (read_linux(counts)) return counts;
  counts = Counts{};
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) == 0) {
    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
    if (hwloc_topology_load(topo) == 0) {
      counts.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
      counts.pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
      if (hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0))
        if (const char* model = hwloc_obj_get_info_by_name(pkg, "CPUModel")) counts.model = model;
    }
    hwloc_topology_destroy(topo);
  }
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (counts.pus <= 0) counts.pus = hw;
  if (counts.cores <= 0) counts.cores = counts.pus;
  return counts;
}

const Counts& counts() {
  static const Counts c = read_counts();
  return c;
}

}  // namespace

int physical_cores() { return std::max(1, counts().cores); }
int logical_cpus() { return std::max(1, counts().pus); }

std::string cpu_model() { return counts().model.empty() ? "unknown" : counts().model; }

std::set<std::string> cpu_flags() {
  std::set<std::string> flags;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) flags.insert(w);
    break;
  }
  return flags;
}

namespace {
// OpenBLAS's x86-64 kernel sets, weakest first (the ones a VM's CPUID can make it fall back to);
// the AVX-512 sets share a rank, since their sgemm and dgemm kernels are the same.
const std::vector<std::string>& core_order() {
  static const std::vector<std::string> order{
      "Prescott", "Core2", "Penryn",   "Dunnington", "Nehalem",       "Sandybridge",
      "Haswell",  "Zen",   "SkylakeX", "Cooperlake", "SapphireRapids"};
  return order;
}
int rank(const std::string& core) {
  const auto& o = core_order();
  for (size_t i = 0; i < o.size(); ++i)
    if (strcasecmp(o[i].c_str(), core.c_str()) == 0)
      return std::min(static_cast<int>(i), 8);  // SkylakeX, Cooperlake, SapphireRapids: 8
  return -1;
}
}  // namespace

std::string best_openblas_core(const std::set<std::string>& f) {
  auto has = [&f](const char* x) { return f.count(x) != 0; };
  // Cooperlake and SapphireRapids add bf16 kernels only: for sgemm and dgemm, SkylakeX is best.
  if (has("avx512f") && has("avx512vl") && has("avx512bw") && has("avx512dq")) return "SkylakeX";
  if (has("avx2") && has("fma")) return "Haswell";
  if (has("avx")) return "Sandybridge";
  if (has("sse4_2")) return "Nehalem";
  return "Prescott";
}

bool weaker_core(const std::string& core, const std::string& best) {
  const int c = rank(core), b = rank(best);
  return c >= 0 && b >= 0 && c < b;
}

}  // namespace tandem::detail::topology
