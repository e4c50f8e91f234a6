// The power readers against fake sysfs trees in a temporary directory: energy deltas and
// wraparound, missing files, garbage, permission denied, amdgpu's power integration and its
// fallback file, NVML absent, and a total that never counts the same energy twice. The RAPL tests
// run once per reader: libpowercap (where the build has it) and sysfs by hand.
#include "power.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "rapl_zone.hpp"

namespace tandem::power {

// For GoogleTest's messages (found by argument-dependent lookup, so not in the unnamed namespace).
void PrintTo(RaplReader r, std::ostream* os) {
  *os << (r == RaplReader::Libpowercap ? "libpowercap" : "sysfs");
}

namespace {

namespace fs = std::filesystem;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("tandem-sysfs-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "powercap");
    fs::create_directories(root_ / "hwmon");
    fs::permissions(root_, fs::perms::all);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
  void zone(const std::string& id, const std::string& name, unsigned long long energy,
            unsigned long long max = 262143328850ull) {
    write(root_ / "powercap" / id / "name", name);
    write(root_ / "powercap" / id / "energy_uj", std::to_string(energy));
    write(root_ / "powercap" / id / "max_energy_range_uj", std::to_string(max));
  }
  Config config() const {
    Config c;
    c.powercap_root = (root_ / "powercap").string();
    c.hwmon_root = (root_ / "hwmon").string();
    c.nvml_library = "libnvidia-ml-absent-for-tests.so.1";
    c.sample_interval_seconds = 0.005;
    return c;
  }
  fs::path root_;
};

// The RAPL tests, for each reader. libpowercap reads files it keeps open, which sees the fake
// counters rewritten in place (std::ofstream truncates the same inode), as sysfs files are.
class Rapl : public FakeSysfs, public ::testing::WithParamInterface<RaplReader> {
 protected:
  void SetUp() override {
    if (GetParam() == RaplReader::Libpowercap && !powercap_built_in())
      GTEST_SKIP() << "this build has no libpowercap";
    FakeSysfs::SetUp();
  }
  Config config() const {
    Config c = FakeSysfs::config();
    c.rapl_reader = GetParam();
    return c;
  }
  std::unique_ptr<Source> rapl() const { return make_rapl(config().powercap_root, GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Readers, Rapl,
                         ::testing::Values(RaplReader::Libpowercap, RaplReader::Sysfs),
                         [](const ::testing::TestParamInfo<RaplReader>& reader) {
                           return reader.param == RaplReader::Libpowercap ? "libpowercap" : "sysfs";
                         });

double joules_of(const Measurement& m, const std::string& domain) {
  for (const auto& d : m.domains)
    if (d.domain == domain) return d.joules;
  return -1;
}

TEST_P(Rapl, EnergyDeltasPerZone) {
  zone("intel-rapl:0", "package-0", 1000000);
  zone("intel-rapl:0:0", "core", 500000);
  zone("intel-rapl:0:1", "dram", 200000);
  auto rapl = this->rapl();
  ASSERT_TRUE(rapl->status().available) << rapl->status().detail;
  rapl->start();
  zone("intel-rapl:0", "package-0", 3500000);  // +2.5 J
  zone("intel-rapl:0:0", "core", 1500000);     // +1.0 J
  zone("intel-rapl:0:1", "dram", 700000);      // +0.5 J
  Measurement m;
  m.domains = rapl->stop();
  EXPECT_DOUBLE_EQ(joules_of(m, "package-0"), 2.5);
  EXPECT_DOUBLE_EQ(joules_of(m, "core (intel-rapl:0:0)"), 1.0);
  EXPECT_DOUBLE_EQ(joules_of(m, "dram (intel-rapl:0:1)"), 0.5);
}

TEST_P(Rapl, WrapsAtMaxEnergyRange) {
  zone("intel-rapl:0", "package-0", 999000, 1000000);
  Meter meter(config());
  ASSERT_TRUE(meter.any());
  meter.start();
  zone("intel-rapl:0", "package-0", 4000, 1000000);  // wrapped: 1000 + 4000 uJ
  const Measurement m = meter.stop();
  EXPECT_NEAR(joules_of(m, "package-0"), 0.005, 1e-12);
  EXPECT_NEAR(m.joules, 0.005, 1e-12);
}

TEST_P(Rapl, MissingTreesAndFilesAreUnavailableWithAReason) {
  Config c = config();
  c.powercap_root = (root_ / "nope").string();
  Meter none(c);
  EXPECT_FALSE(none.any());
  for (const auto& s : none.sources()) {
    EXPECT_FALSE(s.available) << s.name;
    EXPECT_EQ(s.detail.rfind("unavailable: ", 0), 0u) << s.detail;
  }
  // A zone without max_energy_range_uj.
  write(root_ / "powercap" / "intel-rapl:0" / "name", "package-0");
  write(root_ / "powercap" / "intel-rapl:0" / "energy_uj", "123");
  auto rapl = this->rapl();
  EXPECT_FALSE(rapl->status().available);
  EXPECT_NE(rapl->status().detail.find("max_energy_range_uj"), std::string::npos)
      << rapl->status().detail;
  // A measurement without any source still works: zero joules, a duration.
  none.start();
  const Measurement m = none.stop();
  EXPECT_EQ(m.joules, 0.0);
  EXPECT_GE(m.seconds, 0.0);
}

// By the sysfs reader only: libpowercap parses with strtoull, which reads "12ab" as 12 and "-5"
// as 2^64 - 5 (a kernel's counter never holds either).
TEST_F(FakeSysfs, GarbageContentsAreRejected) {
  zone("intel-rapl:0", "package-0", 100);
  write(root_ / "powercap" / "intel-rapl:0" / "energy_uj", "12ab");
  auto rapl = make_rapl(config().powercap_root, RaplReader::Sysfs);
  EXPECT_FALSE(rapl->status().available);
  EXPECT_NE(rapl->status().detail.find("not a number"), std::string::npos) << rapl->status().detail;
  write(root_ / "hwmon" / "hwmon0" / "name", "amdgpu");
  write(root_ / "hwmon" / "hwmon0" / "power1_input", "-5");
  auto gpu = make_amdgpu(config().hwmon_root);
  EXPECT_FALSE(gpu->status().available);
  EXPECT_NE(gpu->status().detail.find("not a number"), std::string::npos) << gpu->status().detail;
}

// energy_uj is root-only since Linux 5.10. As root, a child process that drops to nobody plays
// the ordinary user; otherwise the file's mode does it.
TEST_P(Rapl, PermissionDeniedIsUnavailableNotACrash) {
  zone("intel-rapl:0", "package-0", 100);
  const fs::path energy = root_ / "powercap" / "intel-rapl:0" / "energy_uj";
  fs::permissions(energy, fs::perms::owner_read);
  for (const auto& d : {root_, root_ / "powercap", root_ / "powercap" / "intel-rapl:0"})
    fs::permissions(d, fs::perms::all);
  fs::permissions(root_ / "powercap" / "intel-rapl:0" / "name", fs::perms::all);
  fs::permissions(root_ / "powercap" / "intel-rapl:0" / "max_energy_range_uj", fs::perms::all);
  const std::string rootdir = config().powercap_root;
  auto check = [&]() -> int {
    auto rapl = make_rapl(rootdir, GetParam());
    const auto s = rapl->status();
    return !s.available && s.detail.find("Permission denied") != std::string::npos ? 0 : 1;
  };
  if (::getuid() != 0) {
    fs::permissions(energy, fs::perms::none);
    EXPECT_EQ(check(), 0);
    return;
  }
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    ::_exit(check());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: could not drop privileges; 1: wrong status";
}

TEST_F(FakeSysfs, AmdgpuPowerIsIntegratedAndPowerAverageIsTheFallback) {
  write(root_ / "hwmon" / "hwmon0" / "name", "k10temp");  // not a GPU: ignored
  write(root_ / "hwmon" / "hwmon0" / "power1_input", "99000000");
  write(root_ / "hwmon" / "hwmon1" / "name", "amdgpu");
  write(root_ / "hwmon" / "hwmon1" / "power1_average", "15000000");  // 15 W, no power1_input
  Meter meter(config());
  ASSERT_TRUE(meter.any());
  meter.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const Measurement m = meter.stop();
  const double j = joules_of(m, "hwmon1");
  ASSERT_GT(j, 0) << "hwmon1 not read";
  EXPECT_NEAR(j / m.seconds, 15.0, 0.5);  // a constant 15 W integrates to 15 W on average
  EXPECT_EQ(joules_of(m, "hwmon0"), -1);
  EXPECT_NEAR(m.watts(), 15.0, 0.5);  // no RAPL: the amdgpu sensor is the total
}

TEST_P(Rapl, TotalNeverCountsTheSameEnergyTwice) {
  zone("intel-rapl:0", "package-0", 0);
  zone("intel-rapl:0:1", "dram", 0);
  zone("intel-rapl:0:0", "core", 0);
  write(root_ / "hwmon" / "hwmon0" / "name", "amdgpu");
  write(root_ / "hwmon" / "hwmon0" / "power1_input", "20000000");
  Meter meter(config());
  meter.start();
  zone("intel-rapl:0", "package-0", 3000000);
  zone("intel-rapl:0:1", "dram", 1000000);
  zone("intel-rapl:0:0", "core", 2000000);
  const Measurement m = meter.stop();
  // package + dram; core is inside package, and the APU sensor is the socket again.
  EXPECT_DOUBLE_EQ(m.joules, 4.0);
  EXPECT_GT(joules_of(m, "hwmon0"), -1) << "still reported on its own";
  // With psys (the whole platform), psys alone is the total.
  zone("intel-rapl:1", "psys", 0);
  Meter with_psys(config());
  with_psys.start();
  zone("intel-rapl:1", "psys", 7000000);
  EXPECT_DOUBLE_EQ(with_psys.stop().joules, 7.0);
}

// The reader a Meter uses unless told: libpowercap where the build has it, and the source says
// which.
TEST_F(FakeSysfs, LibpowercapIsTheDefaultReaderWhereBuilt) {
  zone("intel-rapl:0", "package-0", 100);
  const RaplReader expected = powercap_built_in() ? RaplReader::Libpowercap : RaplReader::Sysfs;
  EXPECT_EQ(default_rapl_reader(), expected);
  Config c = FakeSysfs::config();
  ASSERT_EQ(c.rapl_reader, expected);
  Meter meter(c);
  const std::string detail = meter.sources().at(0).detail;
  EXPECT_NE(detail.find(powercap_built_in() ? "(libpowercap)" : "(sysfs)"), std::string::npos)
      << detail;
}

TEST_F(FakeSysfs, NvmlAbsentIsReportedOnce) {
  auto nvml = make_nvml("libnvidia-ml-absent-for-tests.so.1");
  const auto s = nvml->status();
  EXPECT_FALSE(s.available);
  EXPECT_NE(s.detail.find("cannot load"), std::string::npos) << s.detail;
}

}  // namespace
}  // namespace tandem::power
