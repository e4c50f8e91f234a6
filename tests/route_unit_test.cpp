// The route (src/plan/route.hpp) agrees with the plans it stands for: every cube it sends to the
// CPU without OpenCL is one auto would plan on the CPU alone, with the built-in database and with a
// local profile whose split gives the device rows from 512 up; a profile that changes is a
// route learned again. On PoCL's first device (the one auto takes when none is named).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gpu/device.hpp"
#include "plan/device_profile.hpp"
#include "plan/route.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "run/executor.hpp"
#include "tandem/version.h"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
namespace prof = detail::profile;

// Whether auto gives the devices rows of the cube of this edge, planned as a call naming the
// device auto takes (so the route is not asked).
bool devices_take_rows(detail::Precision precision, int64_t edge) {
  Options named;
  named.device = "0";
  static double buffer[1];
  if (precision == detail::Precision::d) {
    const detail::Problem<double> p{false, false,  edge, edge, edge,   1.0, buffer,
                                    edge,  buffer, edge, 0.0,  buffer, edge};
    return detail::uses_devices(p, named);
  }
  static float fbuffer[1];
  const detail::Problem<float> p{false, false,   edge, edge, edge,    1.0f, fbuffer,
                                 edge,  fbuffer, edge, 0.0f, fbuffer, edge};
  return detail::uses_devices(p, named);
}

// An eligible call of the edge's cube, which learns the route where it is not known.
void auto_call(int64_t n) {
  std::vector<float> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n, 0.0f);
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c.data(), n);
  ASSERT_EQ(c[0], float(n));
}

void expect_route_agrees(const std::string& what) {
  ASSERT_TRUE(detail::route::known(detail::Precision::s)) << what;
  int cpu_cubes = 0;
  for (int64_t edge : {16, 64, 128, 256, 384, 512, 768, 1024, 2048}) {
    if (!detail::route::cpu_alone(detail::Precision::s, edge, edge, edge)) continue;
    ++cpu_cubes;
    EXPECT_FALSE(devices_take_rows(detail::Precision::s, edge))
        << what << ": the route sends " << edge << "^3 to the CPU, auto gives the device rows";
  }
  EXPECT_GT(cpu_cubes, 0) << what << ": the route sends nothing to the CPU";
}

TEST(Route, SendsToTheCpuOnlyWhatAutoPlansThere) {
  const fs::path dir = fs::temp_directory_path() / ("tandem-route-" + std::to_string(getpid()));
  fs::create_directories(dir);
  setenv("TANDEM_PROFILE_DIR", dir.c_str(), 1);
  prof::forget();
  auto_call(64);
  expect_route_agrees("built-in database");
  EXPECT_TRUE(fs::exists(dir / "routes.cache"));

  // A local profile: the CPU alone up to 256, the device every row from 512.
  const auto id = prof::identity_for(detail::gpu::info(*detail::gpu::open_device("0")));
  prof::Profile p;
  p.tandem_version = TANDEM_VERSION_STRING;
  p.identity = id;
  prof::PrecisionProfile pp;
  pp.gpu_kernel = {{"MWG", 32}, {"NWG", 32}};
  for (int64_t size : {128, 256, 512, 1024}) {
    prof::Bucket b;
    b.size = size;
    b.parts = 64;
    b.gpu_parts = size >= 512 ? 64 : 0;
    b.kernel = pp.gpu_kernel;
    b.cpu_gflops = 10;
    b.gpu_gflops = size >= 512 ? 100 : 1;
    b.best_gflops = size >= 512 ? 100 : 10;
    pp.buckets.push_back(b);
  }
  p.precisions[detail::Precision::s] = pp;
  prof::save(p, prof::path_for(id));
  prof::forget();
  EXPECT_FALSE(detail::route::known(detail::Precision::s))
      << "a new profile: the route is learned again";
  auto_call(64);
  expect_route_agrees("a local profile, the device from 512");
  EXPECT_FALSE(detail::route::cpu_alone(detail::Precision::s, 512, 512, 512));
  EXPECT_TRUE(devices_take_rows(detail::Precision::s, 512))
      << "the profile's bucket gives the device rows";
  fs::remove_all(dir);
  prof::forget();
}

}  // namespace
}  // namespace tandem::test
