// The README's main job for now: sgemm and dgemm at a few sizes with the cpu, gpu and hybrid
// strategies on the default OpenCL device, printing GFLOPS (median of the repetitions after one
// warm-up call), the split of C's rows, the buffer path and the error against a CPU reference.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "base/precision.hpp"
#include "gemm_measure.hpp"

namespace {

struct Row {
  const char* name;
  tandem::Options options;
};

template <class T>
void demo(const char* precision, int64_t size, int reps, const std::vector<Row>& rows) {
  tandem::bench::Problem<T> p(size, size, size, static_cast<uint64_t>(size));
  std::vector<double> ref;
  for (const Row& row : rows) {
    tandem::Report r;
    p.run(row.options, &r);  // warm-up: device start-up and kernel build stay out of the figure
    std::vector<double> times;
    for (int i = 0; i < reps; ++i) times.push_back(p.run(row.options, &r));
    if (ref.empty()) ref = p.reference();
    const double gflops = tandem::bench::gflop<T>(size, size, size) / tandem::bench::median(times);
    std::printf("%-6s %6lld  %-7s %10.1f  %6lld/%-6lld %-10s %9.2e%s\n", precision,
                static_cast<long long>(size), row.name, gflops, static_cast<long long>(r.gpu_rows),
                static_cast<long long>(r.cpu_rows), r.gpu_rows > 0 ? tandem::to_string(r.c) : "-",
                p.max_relative_error(ref), r.fell_back ? "  (GPU failed: CPU fallback)" : "");
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tandem demo: CPU-only, GPU-only and hybrid GEMM on this machine"};
  std::vector<int64_t> sizes{256, 512, 1024};
  int reps = 3;
  double fraction = 0.5;
  std::string precision = "both";
  app.add_option("--sizes", sizes, "square sizes")->delimiter(',');
  app.add_option("--reps", reps, "timed repetitions per point (median)")
      ->check(CLI::PositiveNumber);
  app.add_option("--fraction", fraction, "GPU share of C's rows for hybrid")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--precision", precision, "s, d or both")
      ->check(CLI::IsMember({"s", "d", "both"}));
  CLI11_PARSE(app, argc, argv);
  using tandem::detail::Precision;
  const std::vector<Precision> precisions =
      precision == "both" ? std::vector<Precision>{Precision::s, Precision::d}
                          : std::vector<Precision>{tandem::detail::parse_precision(precision)};

  tandem::Options cpu, gpu, hybrid;
  cpu.strategy = tandem::Strategy::Cpu;
  gpu.strategy = tandem::Strategy::Gpu;
  hybrid.strategy = tandem::Strategy::Hybrid;
  hybrid.gpu_fraction = fraction;
  const std::vector<Row> rows{{"cpu", cpu}, {"gpu", gpu}, {"hybrid", hybrid}};

  tandem::Report probe;
  {
    tandem::bench::Problem<float> tiny(8, 8, 8, 1);
    tiny.run(hybrid, &probe);
  }
  std::printf("device: %s\n", probe.device.empty() ? "(none: GPU strategies fall back to the CPU)"
                                                   : probe.device.c_str());
  std::printf("kernel: %s\n\n", probe.kernel.c_str());
  std::printf("%-6s %6s  %-7s %10s  %-13s %-10s %9s\n", "prec", "size", "strategy", "GFLOPS",
              "rows gpu/cpu", "C buffer", "max err");
  for (int64_t size : sizes) {
    for (const tandem::detail::Precision p : precisions)
      tandem::detail::with_real_type(p, [&](auto zero) {
        demo<decltype(zero)>(tandem::detail::routine_name(p, "gemm").c_str(), size, reps, rows);
      });
  }
  return 0;
}
