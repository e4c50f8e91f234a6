// A cost model of one GEMM call on this machine, for shapes no profile bucket measured: how long
// the CPU BLAS takes for a block of C's rows on a number of threads, how long an OpenCL device
// takes for its rows (its kernel's launches and waves, bus copies, host packing and the host
// memory they share, overlapped in its pipeline), and how much each side slows while the other
// runs. The co-tuner fits it from measurements (tuner/cotuner_model.cpp) and stores it in the
// profile; plan.cpp asks it for the rows, the CPU threads and the feeders of a call. Pure
// arithmetic: no OpenCL, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem::detail::cost {

// One measured point of a rate table: the rate y at x threads.
struct Sample {
  double x = 0, y = 0;
};

// The rate at `x` on a table of samples in ascending x: linear between samples, proportional to
// x below the first (threads share the work), the last sample's above it (no gain from more);
// 0 for an empty table.
double interpolate(const std::vector<Sample>& table, double x);

// Which of a call's operands a device copies without packing: those in tandem_malloc memory
// pinned in its platform's context.
struct Pinning {
  bool a = false, b = false, c = false;
  int bits() const { return int{a} | int{b} << 1 | int{c} << 2; }
};

// A call's shape as the model sees it (row-major C, m rows).
struct Shape {
  int64_t m = 0, n = 0, k = 0;
  int element_bytes = 4;
  bool reads_c = false;  // beta != 0: the old values of a device's rows of C count
  bool pinned = false;   // operands need no packing (tandem_malloc memory, or used in place)
  // Where not every operand does (a caller's tandem_malloc C beside ordinary A and B): those that
  // need none. Ignored where `pinned`.
  bool a_pinned = false, b_pinned = false, c_pinned = false;
  int flops_per_multiply_add = 2;  // the element's: 2 real, 8 complex (base/precision.hpp)
  // The call's flops for `rows` of C's rows.
  double flops(int64_t rows) const {
    return flops_per_multiply_add * static_cast<double>(rows) * static_cast<double>(n) *
           static_cast<double>(k);
  }
  bool packs_a() const { return !pinned && !a_pinned; }
  bool packs_b() const { return !pinned && !b_pinned; }
  bool packs_c() const { return !pinned && !c_pinned; }
  // The operands `p` names need no packing (all three: `pinned`).
  void pin(const Pinning& p) {
    pinned = p.a && p.b && p.c;
    a_pinned = p.a;
    b_pinned = p.b;
    c_pinned = p.c;
  }
};

// The CPU BLAS. Its rate on an m x n x k call is rate(threads) * f(m, half_m) * f(n, half_n) *
// f(k, half_k), f(d, h) = d / (d + h): OpenBLAS runs a small k nearly at its square rate and a
// small n far below it, so each dimension has its own.
struct CpuModel {
  std::vector<Sample> gflops_by_threads;  // without the size penalties, ascending threads
  double half_m = 0, half_n = 0, half_k = 0;
  double latency = 0;  // seconds a call costs beyond its flops
  double gflops(int threads) const { return interpolate(gflops_by_threads, threads); }
  // Seconds for `rows` rows of the shape's n x k product on `threads` threads (0 for no rows).
  double seconds(const Shape& s, int64_t rows, int threads) const;
};

// One OpenCL device. Its share's parts:
//  - the kernel: a launch per chunk of C's rows (discrete devices cut a share in chunks, by
//    model/chunks.hpp's rule) plus its waves of work-groups, each wave as long as a full one;
//  - copies in and out over the bus (discrete devices; C's old values go in only from pinned
//    memory: from ordinary memory the host adds them as it unpacks);
//  - packing and unpacking on the host's feeder threads (operands not in pinned memory);
//  - the host's memory, which packing (a read and a write of each byte) and the bus's copies
//    share, at twice the rate packing reaches on every core.
// The pipeline overlaps them: seconds = latency + max(parts) + overlap * (sum(parts) -
// max(parts)).
struct DeviceModel {
  bool discrete = false;
  double kernel_gflops = 0, launch = 0;  // the rate over whole waves; seconds per launch
  int64_t tile_m = 1, tile_n = 1;        // the kernel's work-group tile
  int compute_units = 1;
  int chunk_fill = 0;              // the kernel's CHUNK_FILL on a discrete device (0: one launch)
  double chunk_from = 0;           // bytes of copies below which a share is one chunk
  double bus_in = 0, bus_out = 0;  // bytes per second (discrete devices)
  std::vector<Sample> pack_by_threads;  // bytes per second host threads copy, by thread count
  double latency = 0, overlap = 0;

  struct Parts {
    double kernel = 0, in = 0, out = 0, pack = 0, memory = 0;
  };
  // `b_packed` is the part of B's packing that falls to this device: B is packed once for every
  // device of a platform, each piece by whichever first needs it (gpu/discrete_b.cpp), so each
  // of d such devices packs about 1/d of it (each still copies all of B across its own bus).
  Parts parts(const Shape& s, int64_t rows, int feeders, double b_packed = 1) const;
  // Seconds for the device's `rows` rows (0 for none) with `feeders` host threads packing.
  double seconds(const Shape& s, int64_t rows, int feeders, double b_packed = 1) const;
  // The same from the parts of at least one row: latency + the longest + overlap x the others.
  double seconds(const Parts& p) const;
  // The kernel's launches and its work over whole waves (flops), for `rows` rows.
  struct Work {
    double launches = 0, flops = 0;
  };
  Work kernel_work(const Shape& s, int64_t rows) const;
  // Whether the device packs on the host for this shape (and so wants feeder threads).
  bool feeds(const Shape& s) const { return s.packs_a() || s.packs_b() || s.packs_c(); }
};

// What a profile stores for one precision: the CPU, one device, how much the device and the CPU
// each slow while both run (RaijinCL measured about 0.75 for both sides of an APU sharing its
// power and memory), and the margin by which a split must beat the better single side before it
// is planned (the co-tuner's split margin, or the fit's worst miss on the splits it measured).
struct Model {
  CpuModel cpu;
  DeviceModel device;
  double both_busy = 1, cpu_busy = 1;
  double split_margin = 0.05;
  // Whether the rates needed to plan are there and every parameter is in its range.
  bool usable() const { return problem().empty(); }
  // What is missing or out of range ("" if nothing).
  std::string problem() const;
};

// One device of a planned call: its model, its kernel's row tile, and the factors by which it
// and the CPU slow while both run.
struct Side {
  const DeviceModel* model = nullptr;
  int64_t tile = 1;
  double both_busy = 1, cpu_busy = 1;
  int platform = 0;  // sides of one platform (one OpenCL context) share B's packing
  // Which operands this device copies without packing, where that differs from the shape's:
  // tandem_malloc pins memory in one platform's context, and a device of another packs it as
  // ordinary memory. Unset: the shape's.
  std::optional<Pinning> pinning = std::nullopt;
  // The call as this device copies it.
  Shape seen(const Shape& s) const {
    if (!pinning) return s;
    Shape own = s;
    own.pin(*pinning);
    return own;
  }
};

struct Plan {
  std::vector<int64_t> rows;  // per device, in order; the CPU takes the rows after them
  int64_t cpu_rows = 0;
  int cpu_threads = 0;  // 0: the CPU has no rows
  int feeders = 0;      // host threads per device that packs (cores - cpu_threads, shared)
  double seconds = 0;   // predicted
};

// The predicted seconds of one division of the rows: each side's time, slowed by its factor
// while the CPU and a device both have rows, and no less than the devices' host-memory traffic
// takes when one memory carries all of it.
double predict(const CpuModel& cpu, const std::vector<Side>& devices, const Shape& s,
               const std::vector<int64_t>& rows, int cpu_threads, int feeders);

// The fastest plan with rows on the CPU and on a device, over the CPU's thread counts (the cores
// it leaves feed the devices that pack), finishing within `limit` seconds; seconds = infinity if
// there is none.
Plan best_split(const CpuModel& cpu, const std::vector<Side>& devices, const Shape& s, int cores,
                double limit);

// The fastest plan the model sees on `cores` cores: the CPU alone, the devices alone, or both,
// over the CPU's thread counts (the cores it leaves feed the devices that pack), each device's
// rows in whole tiles. A split must beat the better single side by `margin`.
Plan best_plan(const CpuModel& cpu, const std::vector<Side>& devices, const Shape& s, int cores,
               double margin);

// Fitting, from what the co-tuner measured (and the profile keeps beside the model).

// One measurement. `what` says which part of the model it fits:
//  "cpu"       the CPU alone on an m x n x k call, on `threads` threads;
//  "kernel"    a device's kernel time for all m rows of an m x n x k call;
//  "bus_in", "bus_out", "pack"   `bytes` moved to the device, from it, or copied on `threads`
//              host threads;
//  "device"    a device alone, the whole call, with `feeders` threads packing;
//  "hybrid"    `rows` rows on the device and the rest on the CPU on `threads` threads, with
//              each side's own time (`device_seconds`, `cpu_seconds`) beside the call's.
// `predicted` is what the fitted model says for it.
struct Observation {
  std::string what;
  int64_t m = 0, n = 0, k = 0, rows = 0;
  int threads = 0, feeders = 0;
  bool pinned = false, reads_c = false;
  double bytes = 0, seconds = 0, predicted = 0;
  double device_seconds = 0, cpu_seconds = 0;
};

// What the fit takes from the device and the kernel rather than from measurements.
struct DeviceConstants {
  bool discrete = false;
  int64_t tile_m = 1, tile_n = 1;
  int compute_units = 1;
  int chunk_fill = 0;
  double chunk_from = 0;
  int element_bytes = 4;
  int flops_per_multiply_add = 2;
};

// The model the observations make, each part from its own kind (the CPU's rates by threads and
// its half-dimensions from "cpu"; the kernel's launch and rate by least squares on "kernel"; the
// bus and packing rates; the pipeline's latency and overlap by least squares on "device"; each
// side's slowing from "hybrid"), and each observation's prediction filled in.
Model fit(std::vector<Observation>& observations, const DeviceConstants& device,
          double split_margin);

// An observation's shape as the model sees it, with the precision's element size and flops.
Shape shape_of(const Observation& o, const DeviceConstants& device);

// Least squares y = a + b x over the points, with a >= 0 and b >= 0 (a falls to 0 when the
// unconstrained fit makes it negative). Returns {a, b}; {0, 0} without points.
struct Line {
  double a = 0, b = 0;
};
Line fit_line(const std::vector<Sample>& points);

}  // namespace tandem::detail::cost
