// What reading power costs the run it measures, for the sources read by sampling (amdgpu hwmon,
// NVML without an energy counter): a CPU sgemm alternately with and without a Meter that samples
// a sensor every interval. The sensor is a file in a temporary sysfs-like tree, read exactly as
// the real one would be.
//
//   sampling_cost [--size 1024] [--pairs 15] [--interval 0.01]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gemm_measure.hpp"
#include "power.hpp"

int main(int argc, char** argv) {
  CLI::App app{"the cost of sampling power during a measured run"};
  int64_t size = 1024;
  int pairs = 15;
  double interval = 0.01;
  app.add_option("--size", size, "sgemm size");
  app.add_option("--pairs", pairs, "runs with and without, alternated");
  app.add_option("--interval", interval, "sampling interval in seconds");
  CLI11_PARSE(app, argc, argv);

  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("tandem-sampling-" + std::to_string(::getpid()));
  fs::create_directories(root / "hwmon0");
  std::ofstream(root / "hwmon0" / "name") << "amdgpu\n";
  std::ofstream(root / "hwmon0" / "power1_input") << "25000000\n";
  tandem::power::Config c;
  c.powercap_root = (root / "none").string();
  c.hwmon_root = root.string();
  c.nvml_library = "none";
  c.sample_interval_seconds = interval;
  tandem::power::Meter meter(c);

  tandem::bench::Problem<float> p(size, size, size, 1);
  tandem::Options cpu;
  cpu.strategy = tandem::Strategy::Cpu;
  p.run(cpu);
  std::vector<double> with, without;
  int samples = 0;
  for (int i = 0; i < pairs; ++i) {
    without.push_back(p.run(cpu));
    meter.start();
    with.push_back(p.run(cpu));
    const auto m = meter.stop();
    samples += static_cast<int>(m.seconds / interval);
  }
  const double a = tandem::bench::median(with), b = tandem::bench::median(without);
  std::printf(
      "sgemm %lld on the CPU: median %.3f ms with a %g s sampler, %.3f ms without (%d pairs, ~%d "
      "samples)\n",
      static_cast<long long>(size), a * 1e3, interval, b * 1e3, pairs, samples);
  std::printf("sampling cost: %+.2f%%\n", 100 * (a - b) / b);
  fs::remove_all(root);
  return 0;
}
