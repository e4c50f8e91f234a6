// One GEMM over several OpenCL devices and the CPU. ctest runs this with PoCL showing two devices
// (POCL_DEVICES="basic pthread": a slow single-threaded one beside a multi-threaded one) and with
// three; every layout and transpose, awkward sizes, both precisions, devices sharing memory with
// the host and (through the seam assume_discrete) discrete ones, and a device that fails mid-call.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <random>
#include <set>
#include <string>

#include "gpu/device.hpp"
#include "plan/feed_cost.hpp"
#include "plan/plan.hpp"
#include "profile/defaults.hpp"
#include "reference.hpp"
#include "seam_values.hpp"

namespace tandem::test {
namespace {

int device_count() { return static_cast<int>(detail::gpu::list_devices().size()); }

// The selector for every device ("0,1" or "0,1,2"): PoCL's devices are not GPUs, so "all" takes
// them all too.
std::string every_device() {
  std::string s;
  for (int i = 0; i < device_count(); ++i) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

struct Call {
  Layout layout;
  bool ta, tb;
  int64_t m, n, k;
};

// What crossed the bus for a device's rows: nothing on a unified device (its share may still copy
// an operand into a buffer of its own, but that is host memory, not the bus); else B once
// (however many chunks dynamic balance dealt it), its rows of A, and of C both ways (in only when
// beta makes the kernel read them, and C goes to the device as it is: pinned, or read as stored
// by the direct kernel; staged C's old values are added on the host and never go in).
void expect_bytes(const Call& call, double beta, const Report::Device& d, size_t element,
                  const std::string& what) {
  if (!detail::seams::assume_discrete()) {  // PoCL's devices are discrete only by the seam
    EXPECT_EQ(d.bytes_in + d.bytes_out, 0) << what << " " << d.name;
    return;
  }
  const int64_t n = call.layout == Layout::RowMajor ? call.n : call.m;  // row-major view
  const int64_t e = static_cast<int64_t>(element);
  const bool direct = d.kernel.find("KERNEL=2") != std::string::npos;
  const bool c_in = beta != 0 && (direct || d.c == Report::Buffer::Pinned);
  EXPECT_EQ(d.bytes_in, (call.k * n + d.rows * call.k + (c_in ? d.rows * n : 0)) * e)
      << what << " " << d.name << " (" << d.chunks << " chunks)";
  EXPECT_EQ(d.bytes_out, d.rows * n * e) << what << " " << d.name;
}

// What the host packed and unpacked for the devices: on a discrete device, each operand outside
// pinned memory (none for the direct kernel, which reads them as stored): its rows of A, of C
// (out, with beta C added where beta is not 0: once either way), and B once for the whole call, by
// one device, the first that started (the others of the platform copy from its staging). A device
// that failed packed an unknown part of its rows, and is left out; after a failure the others
// may each have packed a part of B (whichever first needs a piece packs it).
void expect_packed(const Call& call, const Report& r, size_t element, const std::string& what) {
  if (!detail::seams::assume_discrete()) return;
  const int64_t n = call.layout == Layout::RowMajor ? call.n : call.m;  // row-major view
  const int64_t k = call.k, e = static_cast<int64_t>(element), b_bytes = k * n * e;
  int packers = 0;
  bool b_staged = false;
  const bool any_failed =
      std::any_of(r.devices.begin(), r.devices.end(), [](const auto& d) { return d.failed; });
  for (const auto& d : r.devices) {
    const bool direct = d.kernel.find("KERNEL=2") != std::string::npos;
    const auto staged = [direct](Report::Buffer b) { return !direct && b == Report::Buffer::Copy; };
    b_staged = b_staged || staged(d.b);
    if (d.failed) continue;  // what it packed before it failed is not known here
    int64_t own = 0;
    if (staged(d.a)) own += d.rows * k;
    if (staged(d.c)) own += d.rows * n;
    const int64_t extra = d.bytes_packed - own * e;
    EXPECT_TRUE(extra == 0 ||
                (staged(d.b) && (extra == b_bytes || (any_failed && extra > 0 && extra < b_bytes))))
        << what << " " << d.name << ": packed " << d.bytes_packed << ", its rows " << own * e
        << ", B " << b_bytes;
    if (extra != 0) ++packers;
  }
  EXPECT_LE(packers, 1) << what << ": B packed by " << packers << " devices";
  if (b_staged && !any_failed) {
    EXPECT_EQ(packers, 1) << what << ": B packed " << packers << " times";
  }
}

// Runs one call under `o` and checks C against the reference; returns the report. For a complex
// type a transposed operand is conjugate-transposed and alpha is complex.
template <class T>
Report run_checked(const Call& call, const Options& o, double beta, uint64_t seed,
                   const std::string& what) {
  std::mt19937_64 rng(seed);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const T pad = scalar<T>({nan, nan});
  auto a = make_matrix<T>(call.layout, call.ta, call.m, call.k, 3, rng, pad);
  auto b = make_matrix<T>(call.layout, call.tb, call.k, call.n, 1, rng, pad);
  auto c = make_matrix<T>(call.layout, false, call.m, call.n, 2, rng, pad);
  const Op transposed = kComplex<T> ? Op::ConjTrans : Op::Trans;
  a.conj = kComplex<T> && call.ta;
  b.conj = kComplex<T> && call.tb;
  const std::complex<double> alpha = kComplex<T> ? std::complex<double>(0.75, -0.25) : 0.75;
  const auto c0 = c;
  const auto ref = reference(a, b, c0, alpha, beta);
  Report r;
  gemm<T>(call.layout, call.ta ? transposed : Op::NoTrans, call.tb ? transposed : Op::NoTrans,
          call.m, call.n, call.k, scalar<T>(alpha), a.ptr(), a.ld, b.ptr(), b.ld, scalar<T>(beta),
          c.ptr(), c.ld, o, &r);
  expect_matches(c, c0, ref, call.k, what);
  int64_t rows = 0;
  for (const auto& d : r.devices) {
    if (r.balance == Balance::Static) {
      EXPECT_EQ(d.row0, rows) << what << ": the devices' rows follow one another from row 0";
      EXPECT_EQ(d.chunks, 1) << what << " " << d.name;
    }
    rows += d.rows;
    if (!d.failed && d.rows > 0) {
      EXPECT_GT(d.kernel_seconds, 0.0) << what << " " << d.name;
      expect_bytes(call, beta, d, sizeof(T), what);
    }
  }
  expect_packed(call, r, sizeof(T), what);
  EXPECT_EQ(r.gpu_rows + r.cpu_rows, call.layout == Layout::RowMajor ? call.m : call.n) << what;
  return r;
}

const Call kCalls[] = {
    {Layout::RowMajor, false, false, 257, 129, 65}, {Layout::RowMajor, true, false, 200, 67, 131},
    {Layout::RowMajor, false, true, 131, 190, 33},  {Layout::RowMajor, true, true, 99, 101, 77},
    {Layout::ColMajor, false, false, 143, 255, 40}, {Layout::ColMajor, true, true, 300, 77, 61},
    {Layout::ColMajor, false, true, 64, 64, 64},    {Layout::ColMajor, true, false, 211, 33, 150},
};

std::string name_of(const Call& c) {
  return std::string(c.layout == Layout::RowMajor ? "row " : "col ") + (c.ta ? "T" : "N") +
         (c.tb ? "T " : "N ") + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
         std::to_string(c.k);
}

// Every call's CPU has rows where it takes part: under dynamic balance too, since every side's
// first chunk is dealt before any side runs, however slowly its thread starts (on a busy 2-core
// machine the devices once took every row of small calls before the CPU's thread asked). Under
// static balance every call's devices have rows (a device whose rounded share is empty sits the
// call out); under dynamic balance a device's first chunk, rounded up to its row tile, may leave
// nothing of a small call to the next device.
template <class T>
void every_layout(const Options& o, const char* label, bool expect_cpu_rows) {
  uint64_t seed = 1;
  std::set<int> worked;
  bool cpu_worked = false;
  const bool each_call = o.balance.value_or(Balance::Static) == Balance::Static;
  for (const Call& call : kCalls)
    for (double beta : {0.0, -1.5}) {
      const std::string what =
          std::string(label) + " " + name_of(call) + " beta " + std::to_string(beta);
      const Report r = run_checked<T>(call, o, beta, seed++, what);
      EXPECT_FALSE(r.fell_back) << what << ": " << r.fallback_reason;
      EXPECT_GE(r.devices.size(), 1u) << what;
      for (const auto& d : r.devices) {
        if (each_call) {
          EXPECT_GT(d.rows, 0) << what << " " << d.name;
        }
        if (d.rows > 0) worked.insert(d.index);
      }
      if (expect_cpu_rows) {
        EXPECT_GT(r.cpu_rows, 0) << what;
      }
      cpu_worked = cpu_worked || r.cpu_rows > 0;
    }
  EXPECT_EQ(static_cast<int>(worked.size()), device_count()) << label;
  EXPECT_EQ(cpu_worked, expect_cpu_rows) << label;
}

TEST(MultiDevice, SeveralDevicesAreThere) {
  ASSERT_GE(device_count(), 2) << "run with POCL_DEVICES=\"basic pthread\" (ctest does)";
  EXPECT_EQ(detail::gpu::open_devices(every_device()).size(), static_cast<size_t>(device_count()));
  EXPECT_EQ(detail::gpu::open_devices("all").size(), static_cast<size_t>(device_count()));
  EXPECT_EQ(detail::gpu::open_devices("1,0,1").size(), 2u) << "each device once";
  EXPECT_EQ(detail::gpu::open_devices("1,0").front(), detail::gpu::open_devices("1").front())
      << "a device is opened once, whichever selector names it";
  EXPECT_THROW(detail::gpu::open_devices("0,99999999999999999999999"), Error);
  EXPECT_THROW(detail::gpu::open_device("0,1"), Error);
}

// Every device and the CPU under hybrid, with tiles small enough that every device gets rows of
// the smallest calls.
Options every_device_hybrid(double fraction) {
  Options o;
  o.strategy = Strategy::Hybrid;
  o.gpu_fraction = fraction;
  o.device = every_device();
  o.kernel_params = {{"MWG", 16}, {"NWG", 32}, {"MDIMC", 4}, {"NDIMC", 8}};
  return o;
}

TEST(MultiDevice, DevicesAndTheCpuSplitEveryLayout) {
  const Options o = every_device_hybrid(0.7);
  every_layout<float>(o, "hybrid float", true);
  every_layout<double>(o, "hybrid double", true);
}

// cgemm and zgemm the same way, their transposes conjugated (issue 41).
TEST(MultiDevice, DevicesAndTheCpuSplitEveryComplexLayout) {
  const Options o = every_device_hybrid(0.7);
  every_layout<std::complex<float>>(o, "hybrid complex float", true);
  every_layout<std::complex<double>>(o, "hybrid complex double", true);
}

TEST(MultiDevice, DevicesAloneEveryLayout) {
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = "all";
  every_layout<float>(o, "gpu float", false);
  every_layout<double>(o, "gpu double", false);
}

TEST(MultiDevice, DiscreteDevicesEachFedOnTheirOwnThread) {
  detail::seams::Override seams(discrete(/*chunk_every_share=*/true));
  const Options o = every_device_hybrid(0.6);
  every_layout<float>(o, "discrete hybrid float", true);
  every_layout<double>(o, "discrete hybrid double", true);
  const Report r = run_checked<float>(kCalls[0], o, -1.0, 99, "discrete feeders");
  for (const auto& d : r.devices) EXPECT_GE(d.feeder_threads, 1) << d.name;
  EXPECT_EQ(r.a, Report::Buffer::Copy);
}

TEST(MultiDevice, PinnedMemoryServesEveryDeviceOfThePlatform) {
  detail::seams::Override seams(discrete(/*chunk_every_share=*/true, /*pin_every_block=*/true));
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = every_device();
  const Report r = run_checked<float>(kCalls[0], o, 1.0, 7, "pinned");
  ASSERT_EQ(static_cast<int>(r.devices.size()), device_count());
  for (const auto& d : r.devices) {
    EXPECT_EQ(d.a, Report::Buffer::Pinned) << d.name;
    EXPECT_EQ(d.c, Report::Buffer::Pinned) << d.name;
  }
}

// Seams under which device 1 fails mid-call, on devices played as discrete or as they are.
detail::seams::Values device_1_fails(bool discrete_devices) {
  detail::seams::Values v = discrete_devices ? discrete(true) : detail::seams::Values{};
  v.fail_device = 1;
  return v;
}

// Every device and the CPU, 80% of the rows on the devices.
Options every_device_at_80() {
  Options o;
  o.strategy = Strategy::Hybrid;
  o.gpu_fraction = 0.8;
  o.device = every_device();
  return o;
}

// A device lost mid-call: its rows go to the CPU, the others finish, C is right, and the report
// says which device failed.
template <class T>
void one_device_fails(bool discrete_devices, double beta) {
  detail::seams::Override seams(device_1_fails(discrete_devices));
  const Options o = every_device_at_80();
  const std::string what =
      std::string(discrete_devices ? "discrete" : "unified") + " beta " + std::to_string(beta);
  const Report r = run_checked<T>(kCalls[4], o, beta, 5, what);
  EXPECT_TRUE(r.fell_back) << what;
  ASSERT_EQ(static_cast<int>(r.devices.size()), device_count()) << what;
  for (const auto& d : r.devices) {
    EXPECT_EQ(d.failed, d.index == 1) << what << " " << d.name;
    EXPECT_GT(d.rows, 0) << what << " " << d.name;
  }
  EXPECT_EQ(r.gpu_rows, r.devices[0].rows + (device_count() > 2 ? r.devices[2].rows : 0)) << what;
}

TEST(MultiDevice, AFailingDiscreteDeviceLeavesItsRowsToTheCpu) {
  one_device_fails<float>(true, -1.0);
  one_device_fails<double>(true, 0.0);
}

TEST(MultiDevice, AFailingDeviceLeavesAComplexCallRight) {
  one_device_fails<std::complex<float>>(true, -1.0);
  one_device_fails<std::complex<double>>(true, 0.0);
  one_device_fails<std::complex<double>>(false, 0.0);
}

// The device that packed B for the others fails: they still copy B from its staging, which
// stays theirs until they are done, and C is right.
TEST(MultiDevice, TheDeviceThatPackedBFailing) {
  detail::seams::Values v = discrete(true);
  v.fail_device = 0;
  detail::seams::Override seams(v);
  for (double beta : {0.0, 1.0}) {
    const std::string what = "device 0 fails, beta " + std::to_string(beta);
    const Report r = run_checked<float>(kCalls[0], every_device_at_80(), beta, 8, what);
    EXPECT_TRUE(r.fell_back) << what;
    ASSERT_EQ(static_cast<int>(r.devices.size()), device_count()) << what;
    for (const auto& d : r.devices) EXPECT_EQ(d.failed, d.index == 0) << what << " " << d.name;
    EXPECT_GE(r.devices[0].bytes_packed, 65 * 129 * 4) << what << ": device 0 packed B";
    EXPECT_EQ(r.devices[1].bytes_packed, r.devices[1].rows * (65 + 129) * 4)
        << what << ": B was copied from device 0's staging";
  }
}

// B goes to the devices a piece at a time, to each in turn, and whichever device first needs a
// piece packs it. A device failing as it sends a piece after its first (with its first slabs on
// the device; failing at the first, it fails to start and is not in the report) leaves the rest
// of B to the others to pack when it was the one packing it: C is right, its rows are the CPU's,
// and B was packed no more than once.
TEST(MultiDevice, ADeviceFailingAsItSendsBLeavesTheRestOfBToTheOthers) {
  const Call tall{Layout::RowMajor, false, false, 1500, 129, 65};  // four pieces of B each
  uint64_t seed = 40;
  for (int device : {0, 1})
    for (int piece : {1, 2})
      for (Balance balance : {Balance::Static, Balance::Dynamic}) {
        detail::seams::Values v = discrete(true);
        v.fail_device = device;
        v.fail_b_piece = piece;
        detail::seams::Override seams(v);
        Options o = every_device_at_80();
        o.balance = balance;
        for (double beta : {0.0, 1.0}) {
          const std::string what = "device " + std::to_string(device) + " fails at B's piece " +
                                   std::to_string(piece) +
                                   (balance == Balance::Static ? " static" : " dynamic") +
                                   " beta " + std::to_string(beta);
          const Report r = run_checked<float>(tall, o, beta, seed++, what);
          EXPECT_TRUE(r.fell_back) << what;
          ASSERT_EQ(static_cast<int>(r.devices.size()), device_count()) << what;
          int64_t b_packed_by_others = 0;
          for (const auto& d : r.devices) {
            EXPECT_EQ(d.failed, d.index == device) << what << " " << d.name;
            if (d.failed) continue;
            EXPECT_GT(d.rows, 0) << what << " " << d.name;
            b_packed_by_others += d.bytes_packed - d.rows * (65 + 129) * 4;
          }
          // Device 0 packs B for the others; failing at a later piece, it packed only a part.
          if (device == 0) {
            EXPECT_GT(b_packed_by_others, 0) << what << ": the others packed the rest of B";
            EXPECT_LT(b_packed_by_others, 65 * 129 * 4)
                << what << ": device 0 packed its first pieces";
          }
        }
      }
}

TEST(MultiDevice, AFailingUnifiedDeviceLeavesItsRowsToTheCpuWhenBetaIsZero) {
  one_device_fails<float>(false, 0.0);
}

// In place with beta != 0 the kernel overwrites C's old values; a device that fails there puts
// back the rows it had not finished (from its snapshot), and the CPU computes them: C is right
// (before issue 16 this was OutputLost; recovery_test fails devices partway through).
TEST(MultiDevice, AFailingUnifiedDeviceWithBetaLeavesCRight) {
  detail::seams::Override seams(device_1_fails(false));
  for (Balance balance : {Balance::Static, Balance::Dynamic}) {
    Options o = every_device_at_80();
    o.balance = balance;
    // 384 rows: every device's rounded share has rows, the failing one's included.
    const int64_t m = 384, n = 64, k = 64;
    std::vector<float, Allocator<float>> a(m * k, 1.0f), b(k * n, 1.0f), c(m * n, 1.0f);
    Report r;
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n,
                1.0f, c.data(), n, o, &r);
    for (float x : c) ASSERT_EQ(x, 1.0f + k) << to_string(balance);
    EXPECT_TRUE(r.fell_back) << to_string(balance);
    EXPECT_EQ(r.c, Report::Buffer::ZeroCopy) << "C was written in place";
  }
}

// Under strategy gpu a failing device is the caller's error only while no row of C was written
// (tandem.hpp): here the other devices finish theirs, so the CPU takes the failed one's rows and
// C is right, rather than an error with C part new and part old.
TEST(MultiDevice, UnderGpuAFailingDeviceBesideOthersLeavesItsRowsToTheCpu) {
  detail::seams::Values v = discrete(true);
  v.fail_device = 0;
  detail::seams::Override seams(v);
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = every_device();
  for (Balance balance : {Balance::Static, Balance::Dynamic}) {
    o.balance = balance;
    const Report r =
        run_checked<double>({Layout::RowMajor, false, false, 90, 70, 40}, o, 2.0, 5,
                            std::string("gpu, device 0 failing, ") + to_string(balance));
    EXPECT_TRUE(r.fell_back) << to_string(balance);
    EXPECT_GT(r.cpu_rows, 0) << to_string(balance);
  }
}

// Dynamic balance: the rows go out in chunks to whichever side is free; every layout, on devices
// as they are and played as discrete, with and without the CPU.
Options dynamic(Options o) {
  o.balance = Balance::Dynamic;
  return o;
}

TEST(MultiDevice, DynamicBalanceEveryLayout) {
  const Options o = dynamic(every_device_hybrid(0.7));
  every_layout<float>(o, "dynamic float", true);
  every_layout<double>(o, "dynamic double", true);
  // A call large enough for several chunks: some side takes more than one.
  const Report r = run_checked<float>({Layout::RowMajor, false, false, 1000, 96, 48}, o, 1.0, 3,
                                      "dynamic chunks");
  EXPECT_EQ(r.balance, Balance::Dynamic);
  int chunks = r.cpu_chunks;
  for (const auto& d : r.devices) chunks += d.chunks;
  EXPECT_GT(chunks, static_cast<int>(r.devices.size()) + 1);
}

TEST(MultiDevice, DynamicBalanceOnDiscreteDevicesAndDevicesAlone) {
  {
    detail::seams::Override seams(discrete(/*chunk_every_share=*/true));
    const Options o = dynamic(every_device_hybrid(0.6));
    every_layout<float>(o, "dynamic discrete float", true);
    every_layout<double>(o, "dynamic discrete double", true);
  }
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = "all";
  every_layout<float>(dynamic(o), "dynamic gpu float", false);
}

// One device with every row, or the CPU alone, has nothing to balance: the call runs static.
TEST(MultiDevice, DynamicBalanceNeedsTwoSides) {
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = "1";
  const Report r = run_checked<float>(kCalls[0], dynamic(o), 0.0, 4, "one side");
  EXPECT_EQ(r.balance, Balance::Static);
  EXPECT_EQ(r.cpu_rows, 0);
}

// Under dynamic balance a device lost mid-call takes no more chunks: its chunk goes to the CPU,
// the others finish, and C is right.
template <class T>
void one_device_fails_dynamic(bool discrete_devices, double beta) {
  detail::seams::Override seams(device_1_fails(discrete_devices));
  const std::string what = std::string("dynamic ") + (discrete_devices ? "discrete" : "unified") +
                           " beta " + std::to_string(beta);
  const Report r = run_checked<T>(kCalls[4], dynamic(every_device_at_80()), beta, 6, what);
  EXPECT_TRUE(r.fell_back) << what;
  ASSERT_EQ(static_cast<int>(r.devices.size()), device_count()) << what;
  for (const auto& d : r.devices) {
    EXPECT_EQ(d.failed, d.index == 1) << what << " " << d.name;
    if (d.failed) {
      EXPECT_EQ(d.rows, 0) << what << ": its failed chunk is the CPU's";
    }
  }
}

TEST(MultiDevice, DynamicBalanceSurvivesAFailingDevice) {
  one_device_fails_dynamic<float>(true, -1.0);
  one_device_fails_dynamic<double>(true, 0.0);
  one_device_fails_dynamic<float>(false, 0.0);
}

TEST(SplitRows, SharesFollowTheWeightsAndTheTiles) {
  using detail::split_rows;
  EXPECT_EQ(split_rows(1.0, 1000, {1, 1}, {1, 1}), (std::vector<int64_t>{500, 500}));
  EXPECT_EQ(split_rows(0.5, 1000, {3, 1}, {1, 1}), (std::vector<int64_t>{375, 125}));
  EXPECT_EQ(split_rows(1.0, 1000, {1, 1}, {64, 64}), (std::vector<int64_t>{512, 488}));
  EXPECT_EQ(split_rows(0.5, 1000, {1}, {64}),
            (std::vector<int64_t>{detail::gpu_rows(0.5, 1000, 64)}));
  EXPECT_EQ(split_rows(1.0, 10, {1, 0, 1}, {1, 1, 1}), (std::vector<int64_t>{5, 0, 5}));
  EXPECT_EQ(split_rows(0.9, 7, {1, 1, 1}, {1, 1, 1}), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(split_rows(1.0, 3, {0, 0}, {1, 1}), (std::vector<int64_t>{0, 0}));
}

// The feed rule from pinned memory, at the H100 host's figures (docs/PERFORMANCE.md, issue 14
// item 5): the bus at 46 GB/s at best and no fixed cost, the kernel left out, the profile's CPU
// rate at its 2048 bucket, 640 GFLOPS in double.
TEST(DeviceLosesToCpu, KeepsBusBoundShapesOnTheCpu) {
  using detail::device_loses_to_cpu;
  auto call = [](int64_t m, int64_t n, int64_t k, double beta) {
    return detail::Problem<double>{false, false,   m, n,    k,       1.0, nullptr,
                                   k,     nullptr, n, beta, nullptr, n};
  };
  const detail::FeedCost bus{0, 46e9};
  const double cpu = 640;
  // dgetrf's trailing update: C (8128^2) in and out for 64 flops an element: 23 ms of copies
  // against 13 ms on the CPU.
  EXPECT_TRUE(device_loses_to_cpu(call(8128, 8128, 64, 1.0), bus, cpu));
  // With beta = 0, C goes one way only: 12 ms against 13 ms, so the device may still gain.
  EXPECT_FALSE(device_loses_to_cpu(call(8128, 8128, 64, 0.0), bus, cpu));
  // dpotrf's thin products (9984 x 64 over 6336): 11 ms of copies against 13 ms; the device won.
  EXPECT_FALSE(device_loses_to_cpu(call(9984, 64, 6336, 1.0), bus, cpu));
  // Square calls are never bus-bound at these rates.
  EXPECT_FALSE(device_loses_to_cpu(call(4096, 4096, 4096, 1.0), bus, cpu));
  EXPECT_FALSE(device_loses_to_cpu(call(1024, 1024, 1024, 1.0), bus, cpu));
  // A slow bus (PCIe 3 x4 at 3 GB/s) makes the thin products bus-bound too.
  EXPECT_TRUE(device_loses_to_cpu(call(9984, 64, 6336, 1.0), {0, 3e9}, cpu));
  // Single precision moves half the bytes for the same flops, at the CPU's single rate.
  const detail::Problem<float> s{false, false,   8128, 8128, 64,      1.0f, nullptr,
                                 64,    nullptr, 8128, 1.0f, nullptr, 8128};
  EXPECT_TRUE(device_loses_to_cpu(s, bus, 1275.0));
  // Unknown rates decide nothing.
  EXPECT_FALSE(device_loses_to_cpu(call(8128, 8128, 64, 1.0), {}, cpu));
  EXPECT_FALSE(device_loses_to_cpu(call(8128, 8128, 64, 1.0), bus, 0));
}

// The feed rule from ordinary memory, at what the measurement found on the H100 host
// (docs/PERFORMANCE.md, "Issue 14: level 3 at n = 1024 and 2048"; TANDEM_VERBOSE prints it):
// double: no fixed cost beyond the line's, 4.5 GB/s in one chunk, 25.5 GB/s pipelined, the kernel
// at 13.2 TFLOPS; single: 0.06 ms, 5.3 GB/s, 27.2 GB/s, 28.3 TFLOPS (2026-11-24). The CPU's rate is
// the built-in profile's at the nearest bucket (double: 456 GFLOPS at 1024; single: 1,223 at 2048),
// lowered where C is narrow, as plan.cpp asks. Each case is a product a blocked level-3 routine
// makes, and the side it picks is the one that was faster there in both runs of 2026-11-23 (CPU
// alone / GPU alone, ms).
TEST(DeviceLosesToCpu, WeighsAFeedFromOrdinaryMemory) {
  using detail::cpu_gflops_for;
  using detail::device_loses_to_cpu;
  const double half = detail::profile::cpu_shape().half_dimension;
  const detail::FeedCost d_feed{0, 4.5e9, 25.5e9, 13156, true},
      s_feed{0.061e-3, 5.3e9, 27.2e9, 28338, true};
  auto d = [&](int64_t m, int64_t n, int64_t k) {
    const detail::Problem<double> p{false, false,   m, n,   k,       1.0, nullptr,
                                    k,     nullptr, n, 1.0, nullptr, n};
    return device_loses_to_cpu(p, d_feed, cpu_gflops_for(p, 456, 1024, half));
  };
  auto s = [&](int64_t m, int64_t n, int64_t k) {
    const detail::Problem<float> p{false, false,   m, n,    k,       1.0f, nullptr,
                                   k,     nullptr, n, 1.0f, nullptr, n};
    return device_loses_to_cpu(p, s_feed, cpu_gflops_for(p, 1223, 2048, half));
  };
  // Small products run as one chunk, fed at its slow rate: symm's at n = 1024
  // (1.77 / 1.95 and 2.80 / 3.08) and the third level's at n = 2048 (0.84 / 1.60, 1.64 / 1.93).
  EXPECT_TRUE(d(512, 1024, 512));
  EXPECT_TRUE(d(256, 2048, 256));
  EXPECT_TRUE(s(256, 2048, 256));
  // Larger ones pay it back: the second level at n = 2048 (3.31 / 1.50, 4.25 / 1.63), the first
  // (7.44 / 2.07), single precision's first (4.61 / 2.05, 5.02 / 1.98).
  EXPECT_FALSE(d(512, 2048, 512));
  EXPECT_FALSE(d(1024, 1024, 2048));
  EXPECT_FALSE(s(1024, 1024, 2048));
  // Without a fixed cost and at the pipelined rate throughout, the small ones would go to the
  // device too.
  const detail::Problem<double> small{false, false,   256,  2048, 256,     1.0, nullptr,
                                      256,   nullptr, 2048, 1.0,  nullptr, 2048};
  EXPECT_FALSE(device_loses_to_cpu(small, {0, d_feed.pipelined_bytes_per_second, 0, 0},
                                   cpu_gflops_for(small, 456, 1024, half)));
}

// With beta != 0 a feed from ordinary memory moves C once and adds to it on the host (half a copy
// more), a feed from pinned memory moves it both ways: at 10 GB/s and a CPU that takes 1.5 ms,
// 1000 x 1000 x 64 in double moves 13.0 MB (1.30 ms) from ordinary memory and 17.0 MB (1.70 ms)
// from pinned memory, so only the second loses to the CPU; with beta = 0, 9.0 MB either way.
TEST(DeviceLosesToCpu, CountsCAsEachMemoryMovesIt) {
  const auto call = [](double beta) {
    return detail::Problem<double>{false, false,   1000, 1000, 64,      1.0, nullptr,
                                   64,    nullptr, 1000, beta, nullptr, 1000};
  };
  const double cpu = 2.0 * 1000 * 1000 * 64 / 1.5e-3 * 1e-9;  // GFLOPS: 1.5 ms
  const detail::FeedCost ordinary{0, 10e9, 0, 0, true}, pinned{0, 10e9, 0, 0, false};
  EXPECT_FALSE(detail::device_loses_to_cpu(call(1), ordinary, cpu));
  EXPECT_TRUE(detail::device_loses_to_cpu(call(1), pinned, cpu));
  EXPECT_FALSE(detail::device_loses_to_cpu(call(0), ordinary, cpu));
  EXPECT_FALSE(detail::device_loses_to_cpu(call(0), pinned, cpu));
  // The seam's feed stands for a feed from ordinary memory.
  detail::seams::Values v = discrete(true);
  v.feed_rate = 10e9;
  detail::seams::Override seams(v);
  const auto devices = detail::gpu::open_devices("");
  EXPECT_TRUE(detail::ordinary_feed<double>(devices.front()).adds_c);
}

// The CPU's rate where C is narrow, at defaults.json's half-dimension (210): dpotrf's products
// (C 64 wide) ran at about 150 GFLOPS on the H100 host's OpenBLAS against 600 square.
TEST(CpuGflopsFor, FallsWhereCIsNarrow) {
  using detail::cpu_gflops_for;
  auto call = [](int64_t m, int64_t n, int64_t k) {
    return detail::Problem<double>{false, false,   m, n,   k,       1.0, nullptr,
                                   k,     nullptr, n, 1.0, nullptr, n};
  };
  const double half = detail::profile::cpu_shape().half_dimension;
  EXPECT_EQ(half, 210);
  EXPECT_NEAR(cpu_gflops_for(call(9984, 64, 6336), 600, 4096, half), 147, 1);
  EXPECT_NEAR(cpu_gflops_for(call(64, 9984, 6336), 600, 4096, half), 147, 1) << "either side";
  EXPECT_NEAR(cpu_gflops_for(call(512, 512, 1024), 456, 1024, half), 390, 1);
  EXPECT_EQ(cpu_gflops_for(call(8128, 8128, 64), 640, 2048, half), 640) << "a short k: square";
  EXPECT_EQ(cpu_gflops_for(call(1024, 1024, 1024), 456, 1024, half), 456);
  EXPECT_EQ(cpu_gflops_for(call(64, 64, 64), 456, 0, half), 456) << "no bucket";
  // From ordinary memory at a measured feed, dpotrf's products still go to the device: 18 ms
  // against 55 ms on the CPU (the square rate would have said 13.5 ms).
  const auto thin = call(9984, 64, 6336);
  EXPECT_FALSE(detail::device_loses_to_cpu(thin, {0.9e-3, 32e9, 0, 11419},
                                           cpu_gflops_for(thin, 600, 4096, half)));
  EXPECT_TRUE(detail::device_loses_to_cpu(thin, {0.9e-3, 32e9, 0, 11419}, 600));
}

// Staging sizes come in classes, so that creeping sizes reuse one buffer (the thin products of
// dpotrf at 16384 each pinned a new one and made the factorization 9x slower).
TEST(StagingSize, ClassesAreFewAndTight) {
  constexpr size_t kMiB = size_t(1) << 20;
  size_t previous = 0;
  for (size_t bytes = 1; bytes < (size_t(2) << 30); bytes = bytes * 9 / 8 + 12345) {
    const size_t c = detail::gpu::staging_size(bytes);
    EXPECT_GE(c, bytes);
    EXPECT_EQ(c % kMiB, 0u);
    EXPECT_LE(static_cast<double>(c), 1.25 * static_cast<double>(bytes) + kMiB) << bytes;
    EXPECT_GE(c, previous);
    previous = c;
  }
  // A's staging for 4096 x k products, k from 3968 to 4096 in steps of 64 (two classes at most).
  std::set<size_t> classes;
  for (size_t k = 3968; k <= 4096; k += 64) classes.insert(detail::gpu::staging_size(4096 * k * 8));
  EXPECT_LE(classes.size(), 2u);
}

}  // namespace
}  // namespace tandem::test
