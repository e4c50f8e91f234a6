// CPU identity and the OpenBLAS core-type advice `tandem devices` gives (a VM can make OpenBLAS
// pick Prescott kernels on an AVX-512 CPU, several times slower).
#include "cpu/topology.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>
#include <string>

namespace tandem::detail::topology {
namespace {

TEST(Topology, CountsAndModel) {
  EXPECT_GE(physical_cores(), 1);
  EXPECT_GE(logical_cpus(), physical_cores());
  EXPECT_FALSE(cpu_model().empty());
}

// The processing units are those the process may run on, its affinity mask (where oneTBB's
// workers come from too), and the model is /proc/cpuinfo's, as profiles name it.
TEST(Topology, TheAffinityMasksProcessingUnits) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(logical_cpus(), CPU_COUNT(&set));
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model;
  while (model.empty() && std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) model = line.substr(line.find(':') + 2);
  if (!model.empty()) {
    EXPECT_EQ(cpu_model(), model);
  }
}

TEST(Topology, BestOpenBlasCoreFromFlags) {
  EXPECT_EQ(best_openblas_core(
                {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512vl", "avx512bw", "avx512dq"}),
            "SkylakeX");
  // bf16 adds nothing to sgemm/dgemm: no advice to move from SkylakeX to Cooperlake.
  EXPECT_EQ(best_openblas_core(
                {"avx2", "fma", "avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512_bf16"}),
            "SkylakeX");
  EXPECT_EQ(best_openblas_core({"sse4_2", "avx", "avx2", "fma"}), "Haswell");
  EXPECT_EQ(best_openblas_core({"sse4_2", "avx"}), "Sandybridge");
  EXPECT_EQ(best_openblas_core({"sse2"}), "Prescott");
}

TEST(Topology, WeakerCoreTypes) {
  EXPECT_TRUE(weaker_core("Prescott", "SkylakeX"));  // the GPU host's case
  EXPECT_TRUE(weaker_core("Haswell", "SkylakeX"));
  EXPECT_FALSE(weaker_core("SkylakeX", "Cooperlake"));
  EXPECT_FALSE(weaker_core("Cooperlake", "SkylakeX"));
  EXPECT_FALSE(weaker_core("SkylakeX", "SkylakeX"));
  EXPECT_FALSE(weaker_core("Zen", "Haswell"));  // AMD's own kernels are not weaker
  EXPECT_FALSE(weaker_core("unknown-core", "Haswell"));
  EXPECT_FALSE(weaker_core(best_openblas_core(cpu_flags()), best_openblas_core(cpu_flags())));
}

}  // namespace
}  // namespace tandem::detail::topology
