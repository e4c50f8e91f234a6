// The kernel-validity rule (gpu::check) against the kernel itself: the database's defaults are
// the kernel's own #ifndef defaults, every rule holds where it should, and over a sample of the
// tuner's space every set check() accepts builds on this machine's OpenCL device while every set
// it refuses would hit one of the kernel's #error checks or a limit the device reports.
#include "gpu/gemm_params.hpp"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>

#include "base/text.hpp"
#include "gemm_space.hpp"
#include "gpu/device.hpp"
#include "gpu/programs.hpp"
#include "model/chunks.hpp"
#include "profile/database.hpp"
#include "profile/defaults.hpp"
#include "profile/profile.hpp"
#include "tandem/tandem.hpp"
#include "tandem_kernels.hpp"

namespace tandem {
namespace {

namespace gpu = detail::gpu;
using detail::Precision;

// A kernel file's "#ifndef NAME / #define NAME value" defaults.
std::map<std::string, int> kernel_source_defaults(const std::string& src = kernels::gemm) {
  std::map<std::string, int> out;
  const std::regex pair(R"(#ifndef (\w+)\s*\n\s*#define \1 (-?\d+))");
  for (auto it = std::sregex_iterator(src.begin(), src.end(), pair); it != std::sregex_iterator();
       ++it)
    out[(*it)[1]] = std::stoi((*it)[2]);
  return out;
}

TEST(GemmParams, DatabaseDefaultsAreTheKernelsOwn) {
  const auto kernel = kernel_source_defaults();
  const auto& gpu_defaults = detail::profile::kernel_defaults(true);
  const auto& cpu_defaults = detail::profile::kernel_defaults(false);
  ASSERT_FALSE(kernel.empty());
  for (const auto& [name, value] : gpu_defaults) {
    EXPECT_EQ(cpu_defaults.count(name), 1u) << name << " has no CPU-device default";
    if (gpu::host_only(name)) {
      EXPECT_EQ(kernel.count(name), 0u) << name << " is the host's, yet the kernel defines it";
      continue;
    }
    ASSERT_EQ(kernel.count(name), 1u) << name << " has no #ifndef default in kernels/gemm.cl";
    EXPECT_EQ(kernel.at(name), value) << name << ": kernels/gemm.cl and database/defaults.json";
  }
  for (const auto& [name, value] : kernel) {
    // The host's, per call: A_T and B_T, and the call's precision.
    if (name == "TRANS_A" || name == "TRANS_B" || name == "PRECISION") continue;
    EXPECT_EQ(gpu_defaults.count(name), 1u) << name << " is a kernel macro with no default";
  }
  for (const auto& [name, value] : cpu_defaults) EXPECT_EQ(gpu_defaults.count(name), 1u) << name;
}

// The direct kernel's defaults for GPUs are kernels/gemm_direct.cl's own; both kinds of device
// name the same parameters, and every macro of the file has one (the host's aside).
TEST(GemmParams, DirectDefaultsAreTheDirectKernelsOwn) {
  const auto kernel = kernel_source_defaults(kernels::gemm_direct);
  const auto gpu_direct = gpu::direct_params(true), cpu_direct = gpu::direct_params(false);
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(gpu_direct.at("KERNEL"), gpu::kDirect);
  for (const auto& [name, value] : gpu_direct) {
    EXPECT_EQ(cpu_direct.count(name), 1u) << name << " has no CPU-device default";
    if (gpu::host_only(name) || name == "KERNEL") continue;
    ASSERT_EQ(kernel.count(name), 1u) << name << " has no #ifndef default in gemm_direct.cl";
    EXPECT_EQ(kernel.at(name), value) << name << ": gemm_direct.cl and defaults.json";
  }
  for (const auto& [name, value] : kernel) {
    if (name == "TRANS_A" || name == "TRANS_B" || name == "PRECISION") continue;
    EXPECT_EQ(gpu_direct.count(name), 1u) << name << " is a direct kernel macro with no default";
  }
  EXPECT_EQ(gpu_direct.size(), cpu_direct.size());
  for (bool is_gpu : {true, false})
    EXPECT_FALSE(
        gpu::check(gpu::direct_params(is_gpu), gpu::Limits{1024, 65536, is_gpu}, Precision::d));
}

gpu::Params params(const std::map<std::string, int>& overrides) {
  return gpu::with_defaults(gpu::Limits{}, overrides);
}

gpu::Violation::Kind kind_of(const std::map<std::string, int>& overrides,
                             const gpu::Limits& limits = {}) {
  const auto v = gpu::check(params(overrides), limits, Precision::s);
  EXPECT_TRUE(v.has_value()) << "accepted: " << detail::text::describe(params(overrides));
  return v ? v->kind : gpu::Violation::Kind::Host;
}

TEST(GemmParams, EachRuleRefusesWhatItShould) {
  using K = gpu::Violation::Kind;
  EXPECT_FALSE(gpu::check(params({}), gpu::Limits{}, Precision::s));
  EXPECT_EQ(kind_of({{"VW", 3}}), K::Kernel);
  EXPECT_EQ(kind_of({{"MWG", 30}, {"MDIMC", 8}}), K::Kernel);
  EXPECT_EQ(kind_of({{"KERNEL", 3}}), K::Kernel);
  EXPECT_EQ(kind_of({{"KWG", 0}}), K::Kernel);
  // A read as stored (KWG wide) is fine with VW = 4; read transposed its tile is MWG = 66 wide.
  EXPECT_FALSE(
      gpu::check(params({{"MWG", 66}, {"MDIMC", 6}, {"A_T", 0}}), gpu::Limits{}, Precision::s));
  EXPECT_EQ(kind_of({{"MWG", 66}, {"MDIMC", 6}, {"A_T", 1}}), K::Kernel);
  EXPECT_EQ(kind_of({{"MWG", 66}, {"MDIMC", 6}, {"A_T", -1}}), K::Kernel)
      << "the caller may transpose";
  EXPECT_EQ(kind_of({{"KERNEL", 1}, {"VWM", 8}, {"MWG", 64}, {"MDIMC", 16}}), K::Kernel);
  EXPECT_EQ(kind_of({{"KERNEL", 1}, {"VWM", 3}}), K::Kernel);
  EXPECT_EQ(kind_of({{"MDIMC", 32}, {"NDIMC", 32}}), K::Device);
  // A register tile too large for any work-group's private memory (issue 16: MWG=100000 without
  // local memory overflowed PoCL's stack and crashed), and one whose size would overflow.
  EXPECT_EQ(kind_of({{"MWG", 100000}, {"SA", 0}, {"SB", 0}}), K::Device);
  EXPECT_EQ(kind_of({{"MWG", 2147483632}, {"NWG", 2147483632}, {"SA", 0}, {"SB", 0}}), K::Device);
  EXPECT_EQ(kind_of({{"KERNEL", 1}, {"MWG", 2147483632}, {"KWG", 1073741824}}), K::Device);
  gpu::Limits small;
  small.local_mem_bytes = 1024;
  EXPECT_EQ(kind_of({}, small), K::Device);
  EXPECT_EQ(kind_of({{"CHUNK_FILL", 0}}), K::Host);
  EXPECT_EQ(kind_of({{"QUEUES", 3}}), K::Host);
  EXPECT_EQ(kind_of({{"A_T", 2}}), K::Host);
  EXPECT_EQ(kind_of({{"VWM", 3}}), K::Host)
      << "meaningless to KERNEL 0, but still not a value the tuner uses";
  EXPECT_THROW(gpu::with_defaults(gpu::Limits{}, {{"NOPE", 1}}), Error);
}

// Kernel parameters as text take whole integers only. A NUL in a value ended strtol's C string
// early, so "MDIMC=<NUL>x" passed as MDIMC=0 (found by tests/fuzz/params_fuzz.cpp).
TEST(GemmParams, ParameterTextTakesWholeIntegersOnly) {
  using detail::text::parse_params;
  EXPECT_EQ(parse_params("MWG=64, NWG=-2").at("NWG"), -2);
  for (const std::string& bad :
       {std::string("MDIMC=\0x", 8), std::string("MDIMC=4\0", 8), std::string("MWG=6x"),
        std::string("MWG="), std::string("=4"), std::string("MWG=99999999999")})
    EXPECT_THROW(parse_params(bad), std::invalid_argument) << bad;
}

// The direct kernel's rules: its own names, its vector widths against both sides of each tile
// (it reads either layout), its padding in the local memory it needs, and no read layout of its
// own.
TEST(GemmParams, TheDirectKernelsRules) {
  using K = gpu::Violation::Kind;
  const auto direct = [](std::map<std::string, int> o) {
    o["KERNEL"] = gpu::kDirect;
    return o;
  };
  EXPECT_FALSE(gpu::check(params(direct({})), gpu::Limits{}, Precision::s));
  EXPECT_EQ(params(direct({})).count("SA"), 0u) << "kernels/gemm.cl's names are not the direct's";
  EXPECT_THROW(params(direct({{"SA", 1}})), Error);
  EXPECT_THROW(params({{"VWA", 2}}), Error) << "VWA is the direct kernel's alone";
  EXPECT_EQ(kind_of(direct({{"VWA", 3}})), K::Kernel);
  EXPECT_EQ(kind_of(direct({{"VWB", 8}, {"NWG", 36}, {"NDIMC", 4}})), K::Kernel);
  EXPECT_EQ(kind_of(direct({{"VWA", 4}, {"KWG", 6}, {"VWB", 1}})), K::Kernel);
  EXPECT_EQ(kind_of(direct({{"MWG", 30}, {"MDIMC", 8}})), K::Kernel);
  EXPECT_EQ(kind_of(direct({{"PADA", -1}})), K::Kernel);
  EXPECT_EQ(kind_of(direct({{"KUNROLL", 0}})), K::Kernel);
  EXPECT_EQ(kind_of(direct({{"A_T", 0}})), K::Host);
  EXPECT_EQ(kind_of(direct({{"B_T", 1}})), K::Host);
  EXPECT_EQ(kind_of(direct({{"MDIMC", 32}, {"NDIMC", 32}})), K::Device);
  const auto p = params(direct({{"MWG", 32}, {"NWG", 64}, {"KWG", 16}, {"PADA", 1}, {"PADB", 0}}));
  EXPECT_EQ(gpu::local_bytes(p, 4), 4u * 16 * (33 + 64));
  gpu::Limits small;
  small.local_mem_bytes = 4 * 16 * (33 + 64) - 1;
  EXPECT_EQ(gpu::check(p, small, Precision::s)->kind, K::Device);
}

// The matrix-engine codelet's defaults are kernels/gemm_engine.cl's own, and every macro of the
// file has one (the host's and the test seam's aside).
TEST(GemmParams, EngineDefaultsAreTheCodeletsOwn) {
  const auto kernel = kernel_source_defaults(kernels::gemm_engine);
  const auto engine = gpu::engine_params(true);
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(engine.at("KERNEL"), gpu::kEngine);
  for (const auto& [name, value] : engine) {
    if (gpu::host_only(name) || name == "KERNEL") continue;
    ASSERT_EQ(kernel.count(name), 1u) << name << " has no #ifndef default in gemm_engine.cl";
    EXPECT_EQ(kernel.at(name), value) << name << ": gemm_engine.cl and defaults.json";
  }
  for (const auto& [name, value] : kernel) {
    if (name == "TRANS_A" || name == "TRANS_B" || name == "ENGINE_EMULATE") continue;
    EXPECT_EQ(engine.count(name), 1u) << name << " is a codelet macro with no default";
  }
}

// The codelet's rules: its own tiling, double precision only, read layouts as stored, and only
// the instruction shapes the device's probe proved; its local memory, both layouts counted.
TEST(GemmParams, TheEnginesRules) {
  using K = gpu::Violation::Kind;
  const auto engine = [](std::map<std::string, int> o) {
    o["KERNEL"] = gpu::kEngine;
    return gpu::with_defaults(gpu::Limits{}, o);
  };
  gpu::Limits proven{1024, 49152, true, gpu::engine_shape(8) | gpu::engine_shape(16)};
  const auto kind = [&](const std::map<std::string, int>& o, Precision p = Precision::d) {
    const auto v = gpu::check(engine(o), proven, p);
    EXPECT_TRUE(v.has_value()) << "accepted: " << detail::text::describe(engine(o));
    return v ? v->kind : K::Host;
  };
  EXPECT_FALSE(gpu::check(engine({}), proven, Precision::d));
  EXPECT_FALSE(gpu::check(engine({{"MMA_M", 8}}), proven, Precision::d));
  EXPECT_EQ(engine({}).count("SA"), 0u) << "kernels/gemm.cl's names are not the codelet's";
  EXPECT_THROW(engine({{"VWA", 1}}), Error);
  EXPECT_THROW(params({{"WM", 2}}), Error) << "WM is the codelet's alone";
  EXPECT_EQ(kind({}, Precision::s), K::Kernel);
  EXPECT_EQ(kind({}, Precision::c), K::Kernel);
  // zgemm on the same engine, where its twice-as-large elements fit: 64 x 64 in 48 KiB.
  EXPECT_FALSE(gpu::check(engine({{"NWG", 64}}), proven, Precision::z));
  EXPECT_EQ(kind({}, Precision::z), K::Device) << "64 x 128 of complex doubles is 72 KiB";
  EXPECT_EQ(kind({{"KP", 1}, {"PADA", 0}, {"PADB", 2}}, Precision::z), K::Kernel)
      << "pairs of k are for real elements";
  EXPECT_EQ(kind({{"MMA_M", 12}}), K::Kernel);
  EXPECT_EQ(kind({{"MDIMC", 5}}), K::Kernel) << "80 work-items are not whole warps";
  EXPECT_EQ(kind({{"WM", 3}}), K::Kernel);
  EXPECT_EQ(kind({{"MWG", 40}}), K::Kernel) << "m16 tiles need a multiple of 16";
  EXPECT_EQ(kind({{"KWG", 6}}), K::Kernel);
  EXPECT_EQ(kind({{"VW", 4}}), K::Kernel);
  EXPECT_EQ(kind({{"PADA", 3}}), K::Kernel);
  EXPECT_EQ(kind({{"PADB", -2}}), K::Kernel);
  EXPECT_EQ(kind({{"KP", 2}}), K::Kernel);
  EXPECT_EQ(kind({{"KP", 1}, {"KWG", 4}}), K::Kernel) << "pairs of k need eight";
  EXPECT_EQ(kind({{"KP", 1}, {"PADA", 1}, {"VW", 1}}), K::Kernel) << "16-byte reads";
  EXPECT_FALSE(gpu::check(engine({{"KP", 1}, {"PADA", 0}, {"PADB", 2}}), proven, Precision::d));
  EXPECT_EQ(kind({{"A_T", 1}}), K::Host);
  EXPECT_EQ(kind({{"KWG", 16}}), K::Device) << "two 16-deep buffers of 64 + 128 rows are 60 KiB";
  // 64 x 128 x 8, double-buffered: each tile in its larger layout (64 and 128 rows of 8 + 4).
  EXPECT_EQ(gpu::local_bytes(engine({}), 8), 8u * 2 * (64 + 128) * 12);
  for (int shapes : {0, gpu::engine_shape(8)}) {
    gpu::Limits limits = proven;
    limits.engine = shapes;
    EXPECT_EQ(gpu::check(engine({}), limits, Precision::d)->kind, K::Device) << shapes;
  }
  gpu::Limits m16_only = proven;
  m16_only.engine = gpu::engine_shape(16);
  EXPECT_EQ(gpu::check(engine({{"MMA_M", 8}}), m16_only, Precision::d)->kind, K::Device);
  EXPECT_NO_THROW(gpu::facts_of(gpu::resolved(proven, Precision::d, {{"KERNEL", gpu::kEngine}})));
}

// Every precision builds, the general and the direct kernel alike, with its PRECISION and the
// element file (kernels/element.cl) before the kernel. A complex set's local memory is twice a
// real one's: check() weighs it by the element's size.
TEST(GemmParams, EveryPrecisionBuilds) {
  const auto device = gpu::open_device("");
  const gpu::Limits limits = gpu::limits_of(gpu::info(*device));
  for (const auto& overrides : std::vector<std::map<std::string, int>>{{}, {{"KERNEL", 2}}}) {
    const gpu::Params set = gpu::with_defaults(limits, overrides);
    for (Precision precision : detail::kPrecisions) {
      if (detail::needs_fp64(precision) && !gpu::info(*device).fp64) continue;
      const std::string gemm = detail::routine_name(precision, "gemm").str();
      SCOPED_TRACE(gemm + " " + detail::text::describe(set));
      const std::string code =
          std::to_string(8 * detail::element_bytes(detail::real_of(precision)));
      const gpu::BuildReport r = gpu::inspect(*device, precision, false, false, set);
      EXPECT_TRUE(r.built) << r.log;
      EXPECT_NE(r.source.find("#define PRECISION " +
                              (detail::is_complex(precision) ? code + code : code) + "\n"),
                std::string::npos);
      EXPECT_NE(r.source.find("#define MADD(acc, a, b)"), std::string::npos) << "element.cl first";
    }
    const uint64_t real = gpu::local_bytes(set, detail::element_bytes(Precision::d));
    gpu::Limits just_real = limits;
    just_real.local_mem_bytes = real;
    EXPECT_FALSE(gpu::check(set, just_real, Precision::d).has_value());
    const auto v = gpu::check(set, just_real, Precision::z);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->kind, gpu::Violation::Kind::Device);
    EXPECT_NE(v->message.find("local memory"), std::string::npos) << v->message;
  }
}

// The register-tile bound refuses none of the tuned kernels the database ships, on a device
// with room for each (the largest, the H100's sgemm kernel, needs 164 KiB of private memory).
TEST(GemmParams, TheDatabasesKernelsFitTheRegisterTileBound) {
  int kernels = 0;
  const auto fits = [&kernels](const detail::profile::Profile& profile, Precision precision,
                               const std::map<std::string, int>& kernel) {
    if (kernel.empty()) return;
    ++kernels;
    // A GPU entry may name the matrix-engine codelet or asynchronous copies: whether its device
    // runs them is the probe's to say at run time (EngineProbe, AsyncCopy tests), so both shapes
    // and the copy count as proven here.
    const bool is_gpu = profile.identity.platform != "Portable Computing Language";
    const gpu::Limits roomy{
        1024, 1 << 20, is_gpu,
        is_gpu ? gpu::engine_shape(8) | gpu::engine_shape(16) | gpu::kAsyncCopy : 0};
    const auto verdict = gpu::check(gpu::with_defaults(roomy, kernel), roomy, precision);
    EXPECT_FALSE(verdict) << profile.origin << ": " << verdict->message;
  };
  for (const auto& profile : detail::profile::builtin())
    for (const auto& [precision, pp] : profile.precisions) {
      fits(profile, precision, pp.gpu_kernel);
      for (const auto& b : pp.buckets) {
        fits(profile, precision, b.kernel);
        fits(profile, precision, b.gpu_kernel);
        if (b.resident) fits(profile, precision, b.resident->kernel);
      }
      fits(profile, precision, pp.direct_kernel);
      for (const auto& b : pp.coalesced) fits(profile, precision, b.kernel);
    }
  EXPECT_GT(kernels, 10);
}

// Over a seeded sample of the tuner's whole grid, both precisions: what check() accepts builds;
// what it refuses as a kernel rule fails to build with the compiler's #error; what it refuses as
// a device limit exceeds a limit the device reports.
// The direct kernel's space and the small-tile one are smaller, and sampled less.
enum class Which { Tiled, Direct, SmallTiles };
void sample_the_space(Precision precision, Which which = Which::Tiled) {
  const auto device = gpu::open_device("");
  const gpu::DeviceInfo& di = gpu::info(*device);
  if (detail::needs_fp64(precision) && !di.fp64) GTEST_SKIP() << di.describe() << " has no fp64";
  const gpu::Limits limits = gpu::limits_of(di);
  const tuner::DeviceLimits tuner_limits{di.max_work_group, di.local_mem_bytes, di.is_gpu, false};
  const tuner::Space space = which == Which::Direct ? tuner::direct_space(tuner_limits, precision)
                             : which == Which::SmallTiles
                                 ? tuner::small_tile_space(tuner_limits, precision)
                                 : tuner::gemm_space(tuner_limits, precision);
  std::mt19937_64 rng(precision == Precision::d ? 11 : 7);
  const bool smaller = which != Which::Tiled;
  const int kAcceptedToBuild = smaller ? 8 : 25, kRefusedToBuild = smaller ? 20 : 60;
  constexpr int kDraws = 6000;
  int accepted = 0, refused = 0, device_limits = 0;
  for (int draw = 0; draw < kDraws && (accepted < kAcceptedToBuild || refused < kRefusedToBuild);
       ++draw) {
    tuner::Point p(space.dimension());
    for (size_t i = 0; i < p.size(); ++i)
      p[i] = static_cast<int>(rng() % space.parameters[i].values.size());
    const gpu::Params set = gpu::with_defaults(limits, tuner::kernel_params(space, p));
    const auto verdict = gpu::check(set, limits, precision);
    const std::string what = space.describe(p);
    if (!verdict) {
      if (accepted++ >= kAcceptedToBuild) continue;
      EXPECT_NO_THROW(gpu::prebuild(*device, precision, false, false, set)) << what;
    } else if (verdict->kind == gpu::Violation::Kind::Kernel) {
      if (refused++ >= kRefusedToBuild) continue;
      try {
        gpu::prebuild(*device, precision, false, false, set);
        ADD_FAILURE() << "refused (" << verdict->message << ") but built: " << what;
      } catch (const Error& e) {
        EXPECT_EQ(e.cl_call(), "clBuildProgram") << e.what();
        EXPECT_NE(std::string(e.what()).find("error"), std::string::npos) << e.what();
      }
    } else {
      ASSERT_EQ(verdict->kind, gpu::Violation::Kind::Device) << verdict->message;
      ++device_limits;
      const uint64_t group = uint64_t(set.at("MDIMC")) * uint64_t(set.at("NDIMC"));
      EXPECT_TRUE(group > di.max_work_group ||
                  gpu::local_bytes(set, detail::element_bytes(precision)) > di.local_mem_bytes ||
                  group * gpu::private_bytes(set, detail::element_bytes(precision)) >
                      (uint64_t{4} << 20))
          << what;
    }
  }
  EXPECT_GE(accepted, kAcceptedToBuild);
  EXPECT_GE(refused, kRefusedToBuild);
  ::testing::Test::RecordProperty("device_limit_refusals", device_limits);
}

// Chunks of a discrete share are whole fills: a fill is the most rows of tiles whose work-groups
// give each compute unit at most chunk_fill. On the H100's figures (132 compute units, fill 2,
// 64 x 64 tiles) 4096^3 keeps its chunks of 512 rows (512 work-groups), and 4160^3, whose 65
// tiles a row do not divide the fill of 264, takes 768 rows (780 work-groups, under three fills)
// where rounding rows up gave 576 (585: a wave and a tail).
TEST(GemmParams, ChunksAreWholeFills) {
  constexpr size_t kBig = size_t{1} << 40;
  EXPECT_EQ(detail::cost::chunk_rows(4096, 4096, kBig, 64, 64, 132, 2, 0), 512);
  EXPECT_EQ(detail::cost::chunk_rows(4160, 4160, kBig, 64, 64, 132, 2, 0), 768);
  EXPECT_EQ(detail::cost::chunk_rows(4160, 4160, kBig, 64, 64, 132, 2, kBig + 1), 4160)
      << "one chunk";
  std::mt19937_64 rng(5);
  const auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int i = 0; i < 20000; ++i) {
    const int64_t m = pick(1, 20000), n = pick(1, 20000), mwg = int64_t{1} << pick(3, 8),
                  nwg = int64_t{1} << pick(3, 8), units = pick(1, 160), fill_per_unit = pick(1, 64);
    SCOPED_TRACE(::testing::Message() << m << " x " << n << ", tiles " << mwg << " x " << nwg
                                      << ", " << units << " units, fill " << fill_per_unit);
    const int64_t rows = detail::cost::chunk_rows(m, n, kBig, mwg, nwg, static_cast<int>(units),
                                                  static_cast<int>(fill_per_unit), 0);
    ASSERT_GE(rows, 1);
    ASSERT_LE(rows, m);
    ASSERT_LE((m + rows - 1) / rows, 8) << "at most 8 chunks";
    if (rows == m) continue;
    ASSERT_EQ(rows % mwg, 0) << "whole rows of tiles";
    const int64_t groups_n = (n + nwg - 1) / nwg, fill = units * fill_per_unit;
    if (groups_n > fill) continue;             // a single row of tiles is more than a fill
    const int64_t per_fill = fill / groups_n;  // rows of tiles in a fill
    ASSERT_EQ(rows / mwg % per_fill, 0) << "whole fills";
    ASSERT_LE(rows / mwg * groups_n, rows / mwg / per_fill * fill) << "each fill within the fill";
  }
}

// What a share reads of a set on every call is the set's own values, each from its own name: a
// set whose every value differs, alone and shared (remembered by its address; a changed copy at
// another address has its own). A set without a name every resolved set has is refused, as the
// lookups by name refused it; VW, VWN and LAUNCH_ROWS may be absent (no padding, no bound).
TEST(GemmParams, FactsAreTheSetsOwnValues) {
  const gpu::Params distinct = {
      {"MWG", 11},        {"NWG", 12},    {"KWG", 13},         {"MDIMC", 14}, {"NDIMC", 15},
      {"VW", 16},         {"VWN", 17},    {"A_T", 1},          {"B_T", 0},    {"INDEX_LONG", 18},
      {"CHUNK_FILL", 19}, {"QUEUES", 20}, {"LAUNCH_ROWS", 21}, {"KERNEL", 2}};
  const auto shared = std::make_shared<const gpu::Params>(distinct);
  using F = gpu::KernelFacts;
  const std::pair<const char*, int F::*> fields[] = {{"MWG", &F::mwg},
                                                     {"NWG", &F::nwg},
                                                     {"KWG", &F::kwg},
                                                     {"MDIMC", &F::mdimc},
                                                     {"NDIMC", &F::ndimc},
                                                     {"VW", &F::vw},
                                                     {"VWN", &F::vwn},
                                                     {"A_T", &F::a_t},
                                                     {"B_T", &F::b_t},
                                                     {"INDEX_LONG", &F::index_long},
                                                     {"CHUNK_FILL", &F::chunk_fill},
                                                     {"QUEUES", &F::queues},
                                                     {"LAUNCH_ROWS", &F::launch_rows}};
  for (const F& f : {gpu::facts_of(distinct), gpu::facts_of(shared), gpu::facts_of(shared)}) {
    for (const auto& [name, field] : fields) EXPECT_EQ(f.*field, distinct.at(name)) << name;
    EXPECT_TRUE(f.direct);
  }
  auto changed = std::make_shared<gpu::Params>(distinct);
  (*changed)["LAUNCH_ROWS"] = 77;
  (*changed)["KERNEL"] = 1;
  EXPECT_EQ(gpu::facts_of(gpu::SharedParams(changed)).launch_rows, 77);
  EXPECT_FALSE(gpu::facts_of(gpu::SharedParams(changed)).direct);
  EXPECT_EQ(gpu::facts_of(shared).launch_rows, 21) << "the original keeps its own";
  for (const char* required : {"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "A_T", "B_T", "INDEX_LONG",
                               "CHUNK_FILL", "QUEUES"}) {
    gpu::Params without = distinct;
    without.erase(required);
    EXPECT_THROW(gpu::facts_of(without), std::out_of_range) << required;
  }
  gpu::Params optional = distinct;
  for (const char* name : {"VW", "VWN", "LAUNCH_ROWS", "KERNEL"}) optional.erase(name);
  const gpu::KernelFacts f = gpu::facts_of(optional);
  EXPECT_EQ(f.vw + f.vwn + f.launch_rows, 0);
  EXPECT_FALSE(f.direct);
  // Every resolved set, of either kind of device and kernel, has what a share reads.
  for (bool is_gpu : {true, false})
    for (const auto& overrides : std::vector<std::map<std::string, int>>{{}, {{"KERNEL", 2}}}) {
      gpu::Limits limits;
      limits.is_gpu = is_gpu;
      EXPECT_NO_THROW(gpu::facts_of(gpu::resolved(limits, Precision::s, overrides)));
    }
}

// Asynchronous copies are searched only where the device's probe proved them; there, the H100's
// sgemm entry (CA 2) is a valid point of the space, taken as its start.
TEST(GemmParams, TheTunerSearchesCopiesOnlyWhereTheProbeSaidYes) {
  const auto has_ca = [](const tuner::Space& space) {
    for (const auto& parameter : space.parameters)
      if (parameter.name == "CA") return true;
    return false;
  };
  tuner::DeviceLimits limits{1024, 49152, true, true};
  EXPECT_FALSE(has_ca(tuner::gemm_space(limits, Precision::s)));
  limits.engine = gpu::kAsyncCopy;
  const std::map<std::string, int> h100 = {
      {"KERNEL", 1}, {"MWG", 128},   {"NWG", 256}, {"KWG", 16},        {"MDIMC", 16},
      {"NDIMC", 16}, {"VW", 4},      {"VWM", 4},   {"VWN", 4},         {"KUNROLL", 16},
      {"A_T", 1},    {"B_T", 0},     {"DB", 0},    {"CA", 2},          {"SA", 1},
      {"SB", 1},     {"STRIDED", 1}, {"AK", 0},    {"NV_MAXRREG", 255}};
  const tuner::Space space = tuner::gemm_space(limits, Precision::s, h100);
  ASSERT_TRUE(has_ca(space));
  ASSERT_TRUE(space.start.has_value()) << "the H100's entry is not a point of the space";
  EXPECT_EQ(space.values(*space.start).at("CA"), 2);
}

TEST(GemmParams, TunerSpaceSampleSingle) { sample_the_space(Precision::s); }
TEST(GemmParams, TunerSpaceSampleDouble) { sample_the_space(Precision::d); }
TEST(GemmParams, DirectSpaceSampleSingle) { sample_the_space(Precision::s, Which::Direct); }
TEST(GemmParams, DirectSpaceSampleDouble) { sample_the_space(Precision::d, Which::Direct); }
TEST(GemmParams, SmallTileSpaceSampleSingle) { sample_the_space(Precision::s, Which::SmallTiles); }
TEST(GemmParams, SmallTileSpaceSampleDouble) { sample_the_space(Precision::d, Which::SmallTiles); }

}  // namespace
}  // namespace tandem
