// The co-tuner's last phase: the measurements that fit the cost model (src/model/cost_model.hpp) of
// one precision, each part of the call measured on its own where it can be (the CPU BLAS by thread
// count, the kernel, the bus and the host's packing), then whole calls of the device alone and
// of a split, at a square shape and at a small-k shape with beta = 1, whose costs differ most.
// Every result is checked on sampled elements against exact integer products.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>

#include "base/precision.hpp"
#include "base/seams.hpp"
#include "cotuner_internal.hpp"
#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "gpu/pinned_memory.hpp"

namespace tandem::tuner {
namespace {

int cores() {
  return std::min(detail::topology::physical_cores(), detail::cpu_blas::current_threads());
}

// The CPU's thread counts the model measures: powers of two up to the cores, and the cores.
std::vector<int> thread_table() {
  std::set<int> t{cores()};
  for (int c = 1; c < cores(); c *= 2) t.insert(c);
  return {t.begin(), t.end()};
}

// One row-major shape's operands, in ordinary memory or tandem_malloc's, holding small integers
// so every element of C = A B + beta C is exact and can be checked.
template <class T>
struct ShapeWork {
  int64_t m, n, k;
  bool reads_c, pinned;
  bench::Buffer<T> a, b, c, c0;
  ShapeWork(int64_t m_, int64_t n_, int64_t k_, bool beta_one, bool in_tandem_memory)
      : m(m_),
        n(n_),
        k(k_),
        reads_c(beta_one),
        pinned(in_tandem_memory),
        a(m * k, T(0), bench::HostAllocator<T>(pinned)),
        b(k * n, T(0), bench::HostAllocator<T>(pinned)),
        c(m * n, T(0), bench::HostAllocator<T>(pinned)),
        c0(m * n, T(0), bench::HostAllocator<T>(false)) {
    for (int64_t i = 0; i < m * k; ++i) a[i] = small_integer<T>(i * 7 % 5 - 2, i * 11 % 3 - 1);
    for (int64_t i = 0; i < k * n; ++i) b[i] = small_integer<T>(i * 5 % 7 - 3, i * 13 % 5 - 2);
    for (int64_t i = 0; i < m * n; ++i) c0[i] = small_integer<T>(i % 3 - 1, i % 2);
  }
  T beta() const { return reads_c ? T(1) : T(0); }
  // Sampled elements against the exact product; "" if they all agree.
  std::string check() const {
    for (int s = 0; s < 24; ++s) {
      const int64_t i = (s * 7919) % m, j = (s * 104729 + s) % n;
      using W = bench::wide_t<T>;
      W want = reads_c ? W(c0[i * n + j]) : W(0);
      for (int64_t p = 0; p < k; ++p) want += W(a[i * k + p]) * W(b[p * n + j]);
      if (W(c[i * n + j]) != want) {
        std::ostringstream msg;
        msg << "model check: C(" << i << "," << j << ") = " << c[i * n + j] << ", expected "
            << want;
        return msg.str();
      }
    }
    return "";
  }
};

// The median seconds and kernel seconds of one configuration on w over `reps` calls after a
// warm-up; the report of the last call in *last. failure is set when a call failed, fell back or
// was wrong.
template <class T>
Timed time_shape(ShapeWork<T>& w, const Options& opt, int reps, Report* last) {
  Timed t;
  std::vector<double> wall, kernel;
  try {
    for (int i = 0; i < 1 + reps; ++i) {
      std::copy(w.c0.begin(), w.c0.end(), w.c.begin());
      Report r;
      const detail::clock::Stopwatch call;
      gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, w.m, w.n, w.k, T(1), w.a.data(), w.k,
              w.b.data(), w.n, w.beta(), w.c.data(), w.n, opt, &r);
      const double s = call.seconds();
      if (r.fell_back) t.failure = "GPU failed: " + r.fallback_reason;
      if (t.failure.empty()) t.failure = w.check();
      if (!t.failure.empty()) return t;
      if (i > 0) {
        wall.push_back(s);
        kernel.push_back(r.gpu_kernel_seconds);
      }
      *last = r;
    }
  } catch (const Error& e) {
    t.failure = e.what();
    return t;
  }
  t.wall = summarize(wall);
  t.kernel = summarize(kernel).median;
  return t;
}

// The observations of one precision's model, taken in turn; the first failure stops the rest.
template <class T>
struct Observer {
  int reps;
  std::function<void(const std::string&)> on_progress;
  std::vector<detail::cost::Observation> obs{};
  std::string failure{};

  // One configuration on w, timed; a pinned device-alone call gives the kernel's time too, a
  // split each side's.
  void operator()(const char* what, ShapeWork<T>& w, const Options& opt, int threads, int feeders,
                  int64_t rows) {
    if (!failure.empty()) return;
    Report r;
    const Timed t = time_shape(w, opt, reps, &r);
    if (!t.failure.empty()) {
      failure = t.failure;
      return;
    }
    detail::cost::Observation o{what, w.m, w.n, w.k, rows, threads, feeders, w.pinned, w.reads_c};
    if (std::string(what) == "hybrid") {  // as the call ran them (rows in its kernel's tiles)
      o.rows = r.gpu_rows;
      o.threads = r.cpu_threads;
      o.feeders = r.feeder_threads;
      o.cpu_seconds = r.cpu_seconds();
      o.device_seconds = r.gpu_seconds();
    }
    o.seconds = t.wall.median;
    obs.push_back(o);
    if (std::string(what) == "device" && w.pinned && t.kernel > 0) {
      o.what = "kernel";
      o.seconds = t.kernel;
      obs.push_back(o);
    }
    on_progress(std::string(what) + " " + std::to_string(w.m) + "x" + std::to_string(w.n) + "x" +
                std::to_string(w.k) + (w.pinned ? " pinned" : ""));
  }

  // The CPU by threads at a square size a single thread does in a fraction of a second; on every
  // core with each of m, n and k small in turn, at the same work (so the size of the call does
  // not pass for its shape); and on every core at a quarter of the size, for what a call costs
  // beyond its flops.
  void cpu(int64_t s) {
    const int64_t sc = std::min<int64_t>(s, 2048), small = std::max<int64_t>(16, sc / 8);
    const double scale = std::sqrt(static_cast<double>(sc) / static_cast<double>(small));
    const int64_t big = (std::llround(static_cast<double>(sc) * scale) + 15) / 16 * 16;
    Options opt;
    opt.strategy = Strategy::Cpu;
    {
      ShapeWork<T> square(sc, sc, sc, false, false);
      for (int threads : thread_table()) {
        opt.cpu_threads = threads;
        (*this)("cpu", square, opt, threads, 0, 0);
      }
    }
    opt.cpu_threads = cores();
    for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{small, big, big},
                                  {big, small, big},
                                  {big, big, small},
                                  {sc / 4, sc / 4, sc / 4}}) {
      ShapeWork<T> w(std::max<int64_t>(1, m), std::max<int64_t>(1, n), std::max<int64_t>(1, k),
                     false, false);
      (*this)("cpu", w, opt, cores(), 0, 0);
    }
  }

  // The bus both ways and packing on the feeders' thread counts.
  void feed(const detail::gpu::FeedTimes& f) {
    const auto add = [&](const char* what, double bytes, double seconds, int threads) {
      if (seconds <= 0) return;
      detail::cost::Observation o;
      o.what = what;
      o.threads = threads;
      o.bytes = bytes;
      o.seconds = seconds;
      obs.push_back(o);
    };
    add("bus_in", f.bytes, f.in_seconds, 0);
    add("bus_out", f.bytes, f.out_seconds, 0);
    for (const auto& [threads, seconds] : f.pack_seconds)
      add("pack", f.pack_bytes, seconds, threads);
  }
};

// The calls the device alone is measured on: a square one, a larger one and a small-k one with
// beta = 1, from tandem_malloc memory (the first three) and from ordinary memory.
template <class T>
std::vector<std::unique_ptr<ShapeWork<T>>> device_shapes(int64_t s) {
  const int64_t wide = 2 * s, short_k = std::max<int64_t>(16, s / 8);
  std::vector<std::unique_ptr<ShapeWork<T>>> shapes;
  for (bool pinned : {true, false}) {
    shapes.push_back(std::make_unique<ShapeWork<T>>(s, s, s, false, pinned));
    shapes.push_back(std::make_unique<ShapeWork<T>>(wide, wide, wide, false, pinned));
    shapes.push_back(std::make_unique<ShapeWork<T>>(wide, wide, short_k, true, pinned));
  }
  return shapes;
}

}  // namespace

// Measures and fits the model of one precision at size s (the middle bucket's), with the kernel
// its largest bucket runs alone (the buckets' hybrid kernel for splits). Returns why no model was
// fitted ("" when one was).
template <class T>
std::string Tuner::fit_model(Precision prec, int64_t s, prof::PrecisionProfile& pp) {
  std::map<std::string, int> alone = pp.gpu_kernel, split = pp.gpu_kernel;
  for (const prof::Bucket& b : pp.buckets) {
    if (!b.gpu_kernel.empty()) alone = b.gpu_kernel;
    if (b.gpu_parts > 0 && b.gpu_parts < b.parts && !b.kernel.empty()) split = b.kernel;
  }
  if (alone.empty()) return "no GPU kernel was measured";
  const auto dc = device_constants(alone, prec);
  Observer<T> observe{std::min(o_.reps, 3),
                      [&](const std::string& last) { progress("model", prec, 0, 0, 0, 0, last); }};
  observe.cpu(s);
  try {
    observe.feed(detail::gpu::time_feed(*device_, thread_table()));
  } catch (const Error& e) {
    return e.what();
  }
  auto shapes = device_shapes<T>(s);
  for (auto& w : shapes) observe("device", *w, gpu_options(alone), 0, cores(), w->m);
  if (!observe.failure.empty()) return observe.failure;
  detail::cost::Model model = detail::cost::fit(observe.obs, dc, o_.split_margin);

  // Splits where the model so far balances the large square and the small-k shape from ordinary
  // memory, and the small-k one from tandem_malloc memory: what each side takes there beyond what
  // it takes alone is how much it slows while the other runs.
  for (size_t i : {size_t{4}, size_t{5}, size_t{2}}) {
    ShapeWork<T>& w = *shapes[i];
    const detail::cost::Side side{&model.device, dc.tile_m, 1.0, 1.0};
    detail::cost::Shape shape{w.m, w.n, w.k, sizeof(T), w.reads_c, w.pinned};
    shape.flops_per_multiply_add = dc.flops_per_multiply_add;
    const auto plan = detail::cost::best_split(model.cpu, {side}, shape, cores(), 1e9);
    if (!std::isfinite(plan.seconds)) continue;
    Options opt;
    opt.device = o_.device;
    opt.strategy = Strategy::Hybrid;
    opt.gpu_fraction = static_cast<double>(plan.rows[0]) / static_cast<double>(w.m);
    opt.kernel_params = split;
    opt.cpu_threads = plan.cpu_threads;
    opt.feeder_threads = std::max(1, cores() - plan.cpu_threads);
    observe("hybrid", w, opt, plan.cpu_threads, plan.feeders, plan.rows[0]);
  }
  if (!observe.failure.empty()) return observe.failure;
  model = detail::cost::fit(observe.obs, dc, o_.split_margin);
  if (const std::string why = model.problem(); !why.empty()) return "the fit left " + why;
  pp.model = model;
  pp.observations = observe.obs;
  return "";
}

// What the model takes from the device and the kernel it measures rather than from timings.
detail::cost::DeviceConstants Tuner::device_constants(const std::map<std::string, int>& kernel,
                                                      Precision prec) const {
  const auto params = detail::gpu::resolve_params(*device_, prec, kernel);
  detail::cost::DeviceConstants dc;
  dc.discrete = detail::gpu::is_discrete(*device_);
  dc.tile_m = detail::gpu::row_tile(params);
  dc.tile_n = params.at("NWG");
  dc.compute_units = info_.compute_units;
  dc.chunk_fill = dc.discrete ? std::max(1, params.at("CHUNK_FILL")) : 0;
  dc.chunk_from = static_cast<double>(detail::seams::overlap_from());
  dc.element_bytes = static_cast<int>(detail::element_bytes(prec));
  dc.flops_per_multiply_add = detail::flops_per_multiply_add(prec);
  return dc;
}

#define X(T) template std::string Tuner::fit_model<T>(Precision, int64_t, prof::PrecisionProfile&);
TANDEM_FOR_EACH_ELEMENT(X)
#undef X

}  // namespace tandem::tuner
