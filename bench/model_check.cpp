// The cost model's predictions against measurement: for each shape and kind of memory, the CPU
// alone, the device alone, auto (which plans untuned shapes with the model) and the splits asked
// for, timed in turn through the public API (medians after a warm-up, every result compared with
// the CPU's), each beside what the profile's model predicts for it. One JSON line per
// configuration on stdout, a table on stderr.
//
//   model_check [--precision s|d] [--shapes MxNxK[:beta],...]
//               [--memory ordinary,pinned,c-pinned,ab-pinned] [--fractions 0.8,0.9] [--reps 5]
//               [--device SELECTOR] [--kernels]
//
// --kernels adds the GPU alone with each of the bucket's two GPU kernels, the one tuned from
// ordinary memory and the one tuned from tandem_malloc memory (its resident split's), whatever
// memory the call's operands are in: which suits a call whose operands are only partly pinned.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "base/clock.hpp"
#include "base/precision.hpp"
#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "gemm_measure.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "plan/device_profile.hpp"
#include "profile/choice.hpp"

namespace {

using namespace tandem;
namespace cost = detail::cost;

struct Shape {
  int64_t m = 0, n = 0, k = 0;
  bool beta = false;
  std::string text;
};

Shape parse_shape(const std::string& s) {
  Shape sh;
  sh.text = s;
  const auto colon = s.find(':');
  const std::string dims = s.substr(0, colon);
  sh.beta = colon != std::string::npos && s.substr(colon + 1) != "0";
  if (std::sscanf(dims.c_str(), "%ldx%ldx%ld", &sh.m, &sh.n, &sh.k) != 3 || sh.m <= 0 ||
      sh.n <= 0 || sh.k <= 0)
    throw CLI::ValidationError("--shapes", "'" + s + "' is not MxNxK[:beta]");
  return sh;
}

// One configuration: its options, and the model's prediction when it is not auto's own.
struct Config {
  std::string name;
  Options options;
  double predicted = 0;
  std::vector<double> seconds;
  Report last;
  double error = 0;
};

// Which operands lie in tandem_malloc memory: "ordinary" none, "pinned" all, "c-pinned" C alone,
// "ab-pinned" A and B.
struct Memory {
  bool ab = false, c = false;
  explicit Memory(const std::string& kind)
      : ab(kind == "pinned" || kind == "ab-pinned"), c(kind == "pinned" || kind == "c-pinned") {}
};

template <class T>
struct Operands {
  int64_t m, n, k;
  bool beta;
  bench::Buffer<T> a, b, c, c0;
  T *pa, *pb, *pc;
  Operands(const Shape& s, Memory mem)
      : m(s.m),
        n(s.n),
        k(s.k),
        beta(s.beta),
        a(bench::random_buffer<T>(static_cast<size_t>(m * k + 1), 1, mem.ab)),
        b(bench::random_buffer<T>(static_cast<size_t>(k * n + 1), 2, mem.ab)),
        c(static_cast<size_t>(m * n + 1), T(0), bench::HostAllocator<T>(mem.c)),
        c0(bench::random_buffer<T>(static_cast<size_t>(m * n), 3, false)),
        // Ordinary memory one element past its start, as malloc'd arrays often are.
        pa(a.data() + (mem.ab ? 0 : 1)),
        pb(b.data() + (mem.ab ? 0 : 1)),
        pc(c.data() + (mem.c ? 0 : 1)) {}
  double run(const Options& o, Report* r) {
    std::copy(c0.begin(), c0.end(), pc);
    const detail::clock::Stopwatch call;
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(1), pa, k, pb, n,
            beta ? T(1) : T(0), pc, n, o, r);
    return call.seconds();
  }
};

template <class T>
void check(const Shape& sh, Memory mem, std::vector<Config>& configs, int reps,
           const cost::Model* model, int cores) {
  Operands<T> w(sh, mem);
  Options cpu_opt;
  cpu_opt.strategy = Strategy::Cpu;
  w.run(cpu_opt, nullptr);
  const std::vector<T> want(w.pc, w.pc + sh.m * sh.n);
  cost::Shape s{sh.m, sh.n, sh.k, static_cast<int>(sizeof(T)), sh.beta};
  s.flops_per_multiply_add =
      tandem::detail::flops_per_multiply_add(tandem::detail::precision_of<T>());
  s.pin({mem.ab, mem.ab, mem.c});
  for (Config& c : configs) {
    if (!model || c.name == "auto") continue;
    const cost::Side side{&model->device, 1, model->both_busy, model->cpu_busy};
    const int64_t rows =
        c.options.strategy == Strategy::Cpu
            ? 0
            : std::llround(c.options.gpu_fraction.value_or(1.0) * static_cast<double>(sh.m));
    const int threads = c.options.cpu_threads.value_or(cores);
    c.predicted = cost::predict(model->cpu, {side}, s, {rows}, threads,
                                rows == sh.m ? cores : std::max(1, cores - threads));
  }
  for (int i = 0; i <= reps; ++i)
    for (Config& c : configs) {
      Report r;
      const double t = w.run(c.options, &r);
      if (i == 0) continue;  // warm-up
      c.seconds.push_back(t);
      c.last = r;
      double err = 0, scale = 0;
      for (int64_t e = 0; e < sh.m * sh.n; ++e) {
        err = std::max(err, std::fabs(double(w.pc[e]) - double(want[e])));
        scale = std::max(scale, std::fabs(double(want[e])));
      }
      c.error = std::max(c.error, scale > 0 ? err / scale : err);
    }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the cost model's predictions against measurement"};
  std::string precision = "s", device;
  std::vector<std::string> shape_text{"2048x2048x2048", "4096x4096x256:1"},
      memories{"ordinary", "pinned"};
  std::vector<double> fractions;
  int reps = 5;
  app.add_option("--precision", precision, "s or d")->check(CLI::IsMember({"s", "d"}));
  app.add_option("--shapes", shape_text, "MxNxK[:beta], beta 0 or 1")->delimiter(',');
  app.add_option("--memory", memories,
                 "ordinary, pinned (tandem_malloc), c-pinned (C alone), ab-pinned (A and B)")
      ->delimiter(',')
      ->check(CLI::IsMember({"ordinary", "pinned", "c-pinned", "ab-pinned"}));
  app.add_option("--fractions", fractions, "splits to time besides auto's")->delimiter(',');
  app.add_option("--reps", reps, "timed calls per configuration")->check(CLI::PositiveNumber);
  app.add_option("--device", device, "the device (index or name)");
  bool kernels = false;
  app.add_flag("--kernels", kernels, "also the GPU alone with each of the bucket's GPU kernels");
  CLI11_PARSE(app, argc, argv);

  const detail::Precision prec = detail::parse_precision(precision);
  const auto dev = detail::gpu::open_device(device);
  const auto prof = detail::profile::active_for(detail::gpu::info(*dev));
  const cost::Model* model = nullptr;
  if (prof)
    if (auto it = prof->precisions.find(prec); it != prof->precisions.end() && it->second.model)
      model = &*it->second.model;
  const int cores =
      std::min(detail::topology::physical_cores(), detail::cpu_blas::current_threads());
  std::fprintf(stderr, "device %s, profile %s, %s cost model, %d cores\n",
               detail::gpu::info(*dev).describe().c_str(), prof ? prof->origin.c_str() : "none",
               model ? "with a" : "no", cores);
  std::fprintf(stderr, "%-18s %-8s %-14s %10s %10s %7s %s\n", "shape", "memory", "config",
               "measured", "predicted", "ratio", "plan");
  for (const std::string& text : shape_text) {
    const Shape sh = parse_shape(text);
    for (const std::string& memory : memories) {
      std::vector<Config> configs;
      auto add = [&](const std::string& name, Strategy st, std::optional<double> f,
                     std::optional<int> threads) {
        Config c;
        c.name = name;
        c.options.strategy = st;
        c.options.device = device;
        c.options.gpu_fraction = f;
        c.options.cpu_threads = threads;
        if (threads) c.options.feeder_threads = std::max(1, cores - *threads);
        configs.push_back(c);
      };
      add("cpu", Strategy::Cpu, std::nullopt, std::nullopt);
      add("gpu", Strategy::Gpu, std::nullopt, std::nullopt);
      add("auto", Strategy::Auto, std::nullopt, std::nullopt);
      for (const bool resident : {false, true}) {
        if (!kernels || !prof) break;
        const auto choice = detail::profile::choose(*prof, prec, sh.m, sh.n, sh.k, resident);
        add(resident ? "gpu k-resident" : "gpu k-ordinary", Strategy::Gpu, std::nullopt,
            std::nullopt);
        configs.back().options.kernel_params = *choice.gpu_kernel;
      }
      for (double f : fractions)
        add("hybrid " + std::to_string(f).substr(0, 5), Strategy::Hybrid, f, std::nullopt);
      detail::with_real_type(prec, [&](auto zero) {
        check<decltype(zero)>(sh, Memory(memory), configs, reps, model, cores);
      });
      for (const Config& c : configs) {
        const double measured = bench::median(c.seconds);
        const double predicted = c.name == "auto" ? c.last.predicted_seconds : c.predicted;
        const std::string plan = std::to_string(c.last.gpu_rows) + " GPU rows, " +
                                 std::to_string(c.last.cpu_threads) + " CPU threads" +
                                 (c.last.profile_model ? " (model)" : "");
        std::fprintf(stderr, "%-18s %-8s %-14s %10.5f %10.5f %7.2f %s\n", text.c_str(),
                     memory.c_str(), c.name.c_str(), measured, predicted,
                     predicted > 0 ? predicted / measured : 0.0, plan.c_str());
        nlohmann::json j = {{"precision", precision},
                            {"shape", text},
                            {"memory", memory},
                            {"config", c.name},
                            {"measured", measured},
                            {"predicted", predicted},
                            {"seconds", c.seconds},
                            {"gpu_rows", c.last.gpu_rows},
                            {"cpu_threads", c.last.cpu_threads},
                            {"feeders", c.last.feeder_threads},
                            {"model_plan", c.last.profile_model},
                            {"error", c.error},
                            {"device", c.last.device},
                            {"kernel", c.last.devices.empty() ? "" : c.last.devices[0].kernel}};
        std::printf("%s\n", j.dump().c_str());
      }
    }
  }
  return 0;
}
