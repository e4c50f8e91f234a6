// CPU identity and the OpenBLAS core-type advice `tandem devices` gives (a VM can make OpenBLAS
// pick Prescott kernels on an AVX-512 CPU, several times slower).
#include "topology.hpp"

#include <gtest/gtest.h>

namespace tandem::detail::topology {
namespace {

TEST(Topology, CountsAndModel) {
  EXPECT_GE(physical_cores(), 1);
  EXPECT_GE(logical_cpus(), physical_cores());
  EXPECT_FALSE(cpu_model().empty());
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
