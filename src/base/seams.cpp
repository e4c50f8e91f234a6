// The seams' values: atomics, so a test may set them while other threads read.
#include "base/seams.hpp"

#include <atomic>

namespace tandem::detail::seams {
namespace {

const Values kDefaults{};
std::atomic<bool> g_assume_discrete{kDefaults.assume_discrete};
std::atomic<bool> g_assume_unified{kDefaults.assume_unified};
std::atomic<bool> g_assume_gpus{kDefaults.assume_gpus};
std::atomic<size_t> g_overlap_from{kDefaults.overlap_from};
std::atomic<bool> g_pad_rows{kDefaults.pad_rows};
std::atomic<size_t> g_pinned_from{kDefaults.pinned_from};
std::atomic<CpuMode> g_cpu_mode{kDefaults.cpu_mode};
std::atomic<bool> g_fail_builds{kDefaults.fail_builds};
std::atomic<bool> g_emulate_engine{kDefaults.emulate_engine};
std::atomic<bool> g_probe_any{kDefaults.probe_any};
std::atomic<bool> g_small_kernel_baseline{kDefaults.small_kernel_baseline};
std::atomic<int> g_fail_device{kDefaults.fail_device};
std::atomic<int64_t> g_fail_after_rows{kDefaults.fail_after_rows};
std::atomic<int> g_fail_b_piece{kDefaults.fail_b_piece};
std::atomic<int> g_fail_drain{kDefaults.fail_drain};
std::atomic<CallEnds> g_call_ends{kDefaults.call_ends};
std::atomic<double> g_feed_seconds{kDefaults.feed_seconds};
std::atomic<double> g_feed_rate{kDefaults.feed_rate};
std::atomic<uint64_t> g_generation{0};
std::atomic<int> g_overrides{0};

Values read() {
  Values v;
  v.assume_discrete = assume_discrete();
  v.assume_unified = assume_unified();
  v.assume_gpus = assume_gpus();
  v.overlap_from = overlap_from();
  v.pad_rows = pad_rows();
  v.pinned_from = pinned_from();
  v.cpu_mode = cpu_mode();
  v.fail_builds = fail_builds();
  v.emulate_engine = emulate_engine();
  v.probe_any = probe_any();
  v.small_kernel_baseline = small_kernel_baseline();
  v.fail_device = fail_device();
  v.fail_after_rows = fail_after_rows();
  v.fail_b_piece = fail_b_piece();
  v.fail_drain = fail_drain();
  v.call_ends = call_ends();
  v.feed_seconds = feed_seconds();
  v.feed_rate = feed_rate();
  return v;
}

void set(const Values& v) {
  g_assume_discrete.store(v.assume_discrete);
  g_assume_unified.store(v.assume_unified);
  g_assume_gpus.store(v.assume_gpus);
  g_overlap_from.store(v.overlap_from);
  g_pad_rows.store(v.pad_rows);
  g_pinned_from.store(v.pinned_from);
  g_cpu_mode.store(v.cpu_mode);
  g_fail_builds.store(v.fail_builds);
  g_emulate_engine.store(v.emulate_engine);
  g_probe_any.store(v.probe_any);
  g_small_kernel_baseline.store(v.small_kernel_baseline);
  g_fail_device.store(v.fail_device);
  g_fail_after_rows.store(v.fail_after_rows);
  g_fail_b_piece.store(v.fail_b_piece);
  g_fail_drain.store(v.fail_drain);
  g_call_ends.store(v.call_ends);
  g_feed_seconds.store(v.feed_seconds);
  g_feed_rate.store(v.feed_rate);
}

}  // namespace

bool assume_discrete() { return g_assume_discrete.load(std::memory_order_relaxed); }
bool assume_unified() { return g_assume_unified.load(std::memory_order_relaxed); }
bool assume_gpus() { return g_assume_gpus.load(std::memory_order_relaxed); }
size_t overlap_from() { return g_overlap_from.load(std::memory_order_relaxed); }
bool pad_rows() { return g_pad_rows.load(std::memory_order_relaxed); }
size_t pinned_from() { return g_pinned_from.load(std::memory_order_relaxed); }
CpuMode cpu_mode() { return g_cpu_mode.load(std::memory_order_relaxed); }
bool fail_builds() { return g_fail_builds.load(std::memory_order_relaxed); }
bool emulate_engine() { return g_emulate_engine.load(std::memory_order_relaxed); }
bool probe_any() { return g_probe_any.load(std::memory_order_relaxed); }
bool small_kernel_baseline() { return g_small_kernel_baseline.load(std::memory_order_relaxed); }
int fail_device() { return g_fail_device.load(std::memory_order_relaxed); }
int64_t fail_after_rows() { return g_fail_after_rows.load(std::memory_order_relaxed); }
int fail_b_piece() { return g_fail_b_piece.load(std::memory_order_relaxed); }
int fail_drain() { return g_fail_drain.load(std::memory_order_relaxed); }
uint64_t generation() { return g_generation.load(); }
bool overridden() { return g_overrides.load() > 0; }
CallEnds call_ends() { return g_call_ends.load(std::memory_order_relaxed); }
double feed_seconds() { return g_feed_seconds.load(std::memory_order_relaxed); }
double feed_rate() { return g_feed_rate.load(std::memory_order_relaxed); }

Values current() { return read(); }

void store(const Values& values, int depth) {
  set(values);
  g_generation.fetch_add(1);
  g_overrides.fetch_add(depth);
}

}  // namespace tandem::detail::seams
