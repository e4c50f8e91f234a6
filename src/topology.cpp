// Counts cores with hwloc, once; falls back to std::thread when hwloc cannot load a topology.
#include "topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <thread>

namespace tandem::detail::topology {
namespace {

struct Counts {
  int cores = 0;
  int pus = 0;
};

Counts read_counts() {
  Counts counts;
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) == 0) {
    if (hwloc_topology_load(topo) == 0) {
      counts.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
      counts.pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
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

}  // namespace tandem::detail::topology
