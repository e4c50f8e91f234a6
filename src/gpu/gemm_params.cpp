// Kernel parameters: defaults by kind of device, the validity rules, and resolution of a set.
#include "gpu/gemm_params.hpp"

#include <algorithm>
#include <vector>

#include "base/memo.hpp"
#include "base/text.hpp"
#include "gpu/engine.hpp"
#include "profile/defaults.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail::gpu {
namespace {

bool one_of_1248(int v) { return v == 1 || v == 2 || v == 4 || v == 8; }

// Byte counts stop here rather than wrap, far above any device's memory: a huge parameter (a
// hand-edited MWG=2147483647) is then refused instead of passing as a small wrapped size.
constexpr uint64_t kSaturated = uint64_t{1} << 60;
uint64_t saturated(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) || product > kSaturated ? kSaturated : product;
}

// The private memory of one work-group: each work-item's register tile (MWG/MDIMC x NWG/NDIMC
// accumulators), its column of A and row of B, and KERNEL 1's staged loads. OpenCL reports no
// limit for it, yet every device has one. A GPU holds it in the compute unit's register file
// (256 KiB on NVIDIA's, 512 KiB on AMD's) and spills the excess to slow memory; a CPU device
// (PoCL) holds it on the stack of the worker thread that runs the work-group, 8 MiB by default.
// On this project's machine MWG=32768 on PoCL's 4x8 group (8 MiB) overflowed that stack and
// crashed the process, and MWG=16384 (4 MiB) ran. The bound is that 4 MiB, half the stack. It
// is eight times the largest register file, so no tile a GPU can hold is refused: the tuned
// profiles' largest (the H100's 8x16 tiles on 16x16 groups) needs 164 KiB, and the tuner's
// register estimate keeps its space within 1 MiB.
constexpr uint64_t kPrivateBytesPerGroup = uint64_t{4} << 20;

// kernels/gemm_direct.cl's #error checks, in its order. It reads A and B as stored, in either
// layout, so a vector width must divide both sides of its operand's tile.
std::optional<std::string> direct_rule(const Params& p) {
  const auto v = [&p](const char* name) { return p.at(name); };
  if (v("MWG") % v("MDIMC") != 0 || v("NWG") % v("NDIMC") != 0)
    return "MWG must be a multiple of MDIMC and NWG a multiple of NDIMC";
  if (!one_of_1248(v("VWA")) || !one_of_1248(v("VWB"))) return "VWA and VWB must be 1, 2, 4 or 8";
  if (v("KWG") % v("VWA") != 0 || v("MWG") % v("VWA") != 0 || v("KWG") % v("VWB") != 0 ||
      v("NWG") % v("VWB") != 0)
    return "VWA must divide KWG and MWG, and VWB must divide KWG and NWG";
  if (v("PADA") < 0 || v("PADB") < 0 || v("PADA") > 16 || v("PADB") > 16)
    return "PADA and PADB must be 0 to 16";
  return std::nullopt;
}

// kernels/gemm_engine.cl's #error checks, in its order (it reads A and B as stored, in either
// layout, with rules that hold for both). What the device's probe proved is check()'s.
std::optional<std::string> engine_rule(const Params& p) {
  const auto v = [&p](const char* name) { return int64_t{p.at(name)}; };
  const int64_t group = v("MDIMC") * v("NDIMC"), warps = group / 32;
  if (group % 32 != 0 || v("WM") <= 0 || warps % v("WM") != 0)
    return "the matrix-engine codelet's work-group (MDIMC x NDIMC) must be whole warps of 32, WM "
           "of them along M";
  if (v("MMA_M") != 8 && v("MMA_M") != 16) return "kernel parameter MMA_M must be 8 or 16";
  if (v("MWG") % (v("WM") * v("MMA_M")) != 0 || v("NWG") % (warps / v("WM") * 8) != 0)
    return "MWG must be a multiple of WM * MMA_M and NWG of the warps along N times 8";
  if (v("PADA") < 0 || v("PADB") < 0 || v("PADA") > 64 || v("PADB") > 64)
    return "PADA and PADB must be 0 to 64";
  if (v("KWG") % 4 != 0 || (v("VW") != 1 && v("VW") != 2) || v("PADA") % v("VW") != 0 ||
      v("PADB") % v("VW") != 0)
    return "KWG must be a multiple of 4, VW 1 or 2, PADA and PADB multiples of VW";
  if (v("KP") != 0 && v("KP") != 1) return "kernel parameter KP must be 0 or 1";
  if (v("KP") == 1 && (v("KWG") % 8 != 0 || v("PADA") % 2 != 0 || v("PADB") % 2 != 0))
    return "KP needs KWG a multiple of 8 and even PADA and PADB";
  if ((v("MWG") * v("KWG")) % (group * v("VW")) != 0 ||
      (v("NWG") * v("KWG")) % (group * v("VW")) != 0)
    return "each work-item must load a whole number of VW-vectors of each tile";
  if (v("DB") != 0 && v("DB") != 1) return "kernel parameter DB must be 0 or 1";
  return std::nullopt;
}

// Bytes of the local scratch the emulated instruction uses (kernels/gemm_engine.cl's xa, xb).
uint64_t engine_scratch_bytes(const Params& p) {
  const uint64_t warps = uint64_t(p.at("MDIMC")) * uint64_t(p.at("NDIMC")) / 32;
  return warps * 32 * (uint64_t(p.at("MMA_M")) / 8 + 1) * 8;
}

// kernels/gemm.cl's #error checks, in its order, for one pair of read layouts.
std::optional<std::string> kernel_rule(const Params& p, bool trans_a, bool trans_b) {
  const auto v = [&p](const char* name) { return p.at(name); };
  if (v("KERNEL") != 0 && v("KERNEL") != 1)
    return "kernel parameter KERNEL must be 0, 1, 2 (the direct kernel) or 3 (the matrix-engine "
           "codelet)";
  if (v("MWG") % v("MDIMC") != 0 || v("NWG") % v("NDIMC") != 0)
    return "MWG must be a multiple of MDIMC and NWG a multiple of NDIMC";
  if (!one_of_1248(v("VW"))) return "kernel parameter VW must be 1, 2, 4 or 8";
  if (v("KERNEL") == 0) {
    if (p.count("CA") && v("CA") != 0)
      return "kernel parameter CA is KERNEL 1's: it must be 0 with KERNEL 0";
    if (v("SA") && (trans_a ? v("MWG") : v("KWG")) % v("VW") != 0)
      return std::string("the contiguous side of the A tile (") + (trans_a ? "MWG" : "KWG") +
             ") must be a multiple of VW";
    if (v("SB") && (trans_b ? v("KWG") : v("NWG")) % v("VW") != 0)
      return std::string("the contiguous side of the B tile (") + (trans_b ? "KWG" : "NWG") +
             ") must be a multiple of VW";
    return std::nullopt;
  }
  if (!one_of_1248(v("VWM")) || !one_of_1248(v("VWN"))) return "VWM and VWN must be 1, 2, 4 or 8";
  const int ca = p.count("CA") ? v("CA") : 0;
  if (ca != 0 && ca != 2 && ca != 3 && ca != 4) return "kernel parameter CA must be 0, 2, 3 or 4";
  if (ca != 0 && (v("DB") != 0 || !trans_a || trans_b))
    return "CA copies tiles as they lie: it needs A read transposed and B as stored (A_T 1, B_T "
           "0) and DB 0";
  const int64_t loads = int64_t{v("MDIMC")} * v("NDIMC") * v("VW");
  if (v("MWG") % (v("MDIMC") * v("VWM")) != 0 || v("NWG") % (v("NDIMC") * v("VWN")) != 0 ||
      (int64_t{v("MWG")} * v("KWG")) % loads != 0 || (int64_t{v("NWG")} * v("KWG")) % loads != 0 ||
      v("KWG") % v("VW") != 0 || v("MWG") % v("VW") != 0 || v("NWG") % v("VW") != 0)
    return "kernel parameters do not fit KERNEL 1's tiling: " + text::describe(p);
  return std::nullopt;
}

// The layouts an operand may be read in: its parameter's, or both when the caller decides.
std::vector<bool> layouts(int parameter) {
  return parameter < 0 ? std::vector<bool>{false, true} : std::vector<bool>{parameter == 1};
}

std::optional<Violation> host_rule(const Params& p) {
  using K = Violation::Kind;
  const auto v = [&p](const char* name) { return p.at(name); };
  for (const char* layout : {"A_T", "B_T"})
    if (v(layout) < -1 || v(layout) > 1)
      return Violation{K::Host, std::string("kernel parameter ") + layout + " must be -1, 0 or 1"};
  if (is_engine(p) && (v("A_T") != -1 || v("B_T") != -1))
    return Violation{K::Host,
                     "the matrix-engine codelet (KERNEL 3) reads A and B as they are stored: A_T "
                     "and B_T must be -1"};
  if (is_direct(p) && (v("A_T") != -1 || v("B_T") != -1))
    return Violation{K::Host,
                     "the direct kernel (KERNEL 2) reads A and B as they are stored: A_T and B_T "
                     "must be -1"};
  // VWM and VWN mean something to KERNEL 1 only; elsewhere they are still kept to the values
  // the tuner uses, so a profile cannot carry a meaningless one.
  for (const char* width : {"VWM", "VWN"})
    if (p.count(width) && !one_of_1248(v(width)) && v("KERNEL") != 1)
      return Violation{K::Host, std::string("kernel parameter ") + width + " must be 1, 2, 4 or 8"};
  if (v("CHUNK_FILL") < 1 || v("CHUNK_FILL") > 64)
    return Violation{K::Host, "kernel parameter CHUNK_FILL must be 1 to 64"};
  if (v("QUEUES") < 1 || v("QUEUES") > 2)
    return Violation{K::Host, "kernel parameter QUEUES must be 1 or 2"};
  if (v("NV_MAXRREG") < 0 || v("NV_MAXRREG") > 255)
    return Violation{K::Host, "kernel parameter NV_MAXRREG must be 0 (none) to 255"};
  if (v("LAUNCH_ROWS") < 0)
    return Violation{K::Host, "kernel parameter LAUNCH_ROWS must be 0 (no bound) or more"};
  return std::nullopt;
}

}  // namespace

bool host_only(const std::string& name) {
  return name == "INDEX_LONG" || name == "A_T" || name == "B_T" || name == "NV_MAXRREG" ||
         name == "CHUNK_FILL" || name == "QUEUES" || name == "LAUNCH_ROWS";
}

Limits limits_of(const DeviceInfo& info) {
  return {info.max_work_group, info.local_mem_bytes, info.is_gpu, 0};
}

uint64_t hash_limits(const Limits& limits, uint64_t h) {
  for (uint64_t v : {limits.max_work_group, limits.local_mem_bytes, uint64_t(limits.is_gpu),
                     uint64_t(limits.engine)})
    h = hash_value(v, h);
  return h;
}

int engine_shape(int mma_m) { return mma_m == 8 ? 1 : mma_m == 16 ? 2 : 0; }

uint64_t local_bytes(const Params& p, uint64_t elem) {
  const auto at = [&](const char* name) { return static_cast<uint64_t>(p.at(name)); };
  if (is_direct(p))
    return saturated(elem * at("KWG"), at("MWG") + at("PADA") + at("NWG") + at("PADB"));
  if (is_engine(p)) {
    // Each tile in the larger of its two layouts (rows of k, or rows of m or n), per buffer.
    const uint64_t kwg = at("KWG"), pa = at("PADA"), pb = at("PADB");
    const uint64_t a = std::max(saturated(kwg, at("MWG") + pa), saturated(at("MWG"), kwg + pa));
    const uint64_t b = std::max(saturated(kwg, at("NWG") + pb), saturated(at("NWG"), kwg + pb));
    return saturated(elem * (1 + at("DB")), std::min(kSaturated, a + b));
  }
  if (p.count("KERNEL") && p.at("KERNEL") == 1) {
    const uint64_t buffers = uses_async_copy(p) ? at("CA") : p.at("DB") ? 2 : 1;
    return saturated(elem * at("KWG"), (at("MWG") + at("NWG")) * buffers);
  }
  return saturated(elem * at("KWG"),
                   (at("SA") ? at("MWG") + 1 : 0) + (at("SB") ? at("NWG") + 1 : 0));
}

uint64_t private_bytes(const Params& p, uint64_t elem) {
  const auto at = [&](const char* name) { return static_cast<uint64_t>(p.at(name)); };
  if (is_engine(p)) {
    // A warp's block of C over its 32 lanes, one step's fragments of A and B, the staged loads.
    const uint64_t group = at("MDIMC") * at("NDIMC"), warps = std::max<uint64_t>(1, group / 32);
    const uint64_t wm = std::max<uint64_t>(1, at("WM")), wn = std::max<uint64_t>(1, warps / wm);
    const uint64_t wtm = at("MWG") / wm, wtn = at("NWG") / wn;
    const uint64_t accumulators = saturated(wtm, wtn) / 32;
    const uint64_t fragments = wtm / 8 + wtn / 8;
    const uint64_t staged =
        saturated(at("MWG") + at("NWG"), at("KWG")) / std::max<uint64_t>(1, group);
    return saturated(elem, std::min(kSaturated, accumulators + fragments + staged));
  }
  const uint64_t mwi = at("MWG") / at("MDIMC"), nwi = at("NWG") / at("NDIMC");
  // KERNEL 1 also holds its share of the next A and B tiles (ra, rb) while it computes, unless
  // they are copied asynchronously (CA).
  const uint64_t staged =
      p.count("KERNEL") && p.at("KERNEL") == 1 && !uses_async_copy(p)
          ? saturated(at("MWG") + at("NWG"), at("KWG")) / (at("MDIMC") * at("NDIMC"))
          : 0;
  const uint64_t elements = saturated(mwi, nwi);
  return saturated(elem, std::min(kSaturated, elements + mwi + nwi + staged));
}

std::optional<Violation> check(const Params& p, const Limits& limits, Precision precision) {
  using K = Violation::Kind;
  if (auto violation = host_rule(p)) return violation;
  // Sizes first: the kernel's preprocessor divides by them.
  const bool direct = is_direct(p);
  for (const char* positive :
       {"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "KUNROLL", "VW", "VWA", "VWB", "WM", "MMA_M"})
    if (p.count(positive) && p.at(positive) <= 0)
      return Violation{K::Kernel,
                       std::string("kernel parameter ") + positive + " must be positive"};
  if (is_engine(p)) {
    if (auto rule = engine_rule(p)) return Violation{K::Kernel, *rule};
    if (precision != Precision::d && precision != Precision::z)
      return Violation{K::Kernel,
                       std::string("the matrix-engine codelet (KERNEL 3) computes in double "
                                   "precision, real or complex (d, z), not ") +
                           letter(precision)};
    if (precision == Precision::z && p.at("KP") != 0)
      return Violation{K::Kernel, "KP is for real elements: zgemm's codelet takes KP 0"};
    if ((limits.engine & engine_shape(p.at("MMA_M"))) == 0)
      return Violation{K::Device,
                       "the matrix-engine codelet (KERNEL 3) with MMA_M " +
                           std::to_string(p.at("MMA_M")) +
                           " needs a device whose probe ran that instruction exactly; this one's "
                           "did not (TANDEM_VERBOSE=1 says why)"};
  } else if (direct) {
    if (auto rule = direct_rule(p)) return Violation{K::Kernel, *rule};
  } else {
    for (bool ta : layouts(p.at("A_T")))
      for (bool tb : layouts(p.at("B_T")))
        if (auto rule = kernel_rule(p, ta, tb)) return Violation{K::Kernel, *rule};
    if (uses_async_copy(p)) {
      // One size of copy, the one the probe runs: a whole 16-byte vector.
      if (uint64_t(p.at("VW")) * element_bytes(precision) != 16)
        return Violation{K::Kernel, std::string("CA copies 16 bytes at a time: VW elements of ") +
                                        letter(precision) + " must be 16 bytes"};
      if ((limits.engine & kAsyncCopy) == 0)
        return Violation{K::Device,
                         "CA (asynchronous copies) needs a device whose probe ran cp.async "
                         "exactly; this one's did not (TANDEM_VERBOSE=1 says why)"};
    }
  }
  const uint64_t group =
      static_cast<uint64_t>(p.at("MDIMC")) * static_cast<uint64_t>(p.at("NDIMC"));
  if (group > limits.max_work_group)
    return Violation{K::Device, "work-group of " + std::to_string(group) +
                                    " work-items exceeds the device's limit of " +
                                    std::to_string(limits.max_work_group)};
  const uint64_t local =
      local_bytes(p, element_bytes(precision)) +
      (is_engine(p) && (limits.engine & kEngineEmulated) ? engine_scratch_bytes(p) : 0);
  if (local > limits.local_mem_bytes)
    return Violation{K::Device, "kernel needs " + std::to_string(local) +
                                    " bytes of local memory; the device has " +
                                    std::to_string(limits.local_mem_bytes)};
  const uint64_t private_group = saturated(group, private_bytes(p, element_bytes(precision)));
  if (private_group > kPrivateBytesPerGroup)
    return Violation{
        K::Device,
        "register tile of MWG/MDIMC x NWG/NDIMC = " + std::to_string(p.at("MWG") / p.at("MDIMC")) +
            " x " + std::to_string(p.at("NWG") / p.at("NDIMC")) +
            " per work-item: " + std::to_string(group) + " work-items need " +
            std::to_string(private_group) + " bytes of private memory, above the " +
            std::to_string(kPrivateBytesPerGroup) + " a work-group may hold"};
  return std::nullopt;
}

Params with_defaults(const Limits& limits, const std::map<std::string, int>& overrides) {
  const auto kernel = overrides.find("KERNEL");
  const bool direct = kernel != overrides.end() && kernel->second == kDirect;
  const bool engine = kernel != overrides.end() && kernel->second == kEngine;
  Params p = direct   ? direct_params(limits.is_gpu)
             : engine ? engine_params(limits.is_gpu)
                      : profile::kernel_defaults(limits.is_gpu);
  for (const auto& [name, value] : overrides) {
    auto it = p.find(name);
    if (it == p.end())
      throw Error(Error::Kind::InvalidArgument,
                  "unknown kernel parameter '" + name + "'" +
                      (direct   ? " for the direct kernel (KERNEL 2)"
                       : engine ? " for the matrix-engine codelet (KERNEL 3)"
                                : ""));
    it->second = value;
  }
  return p;
}

Params direct_params(bool is_gpu) {
  Params p;
  for (const auto& [name, value] : profile::kernel_defaults(is_gpu))
    if (host_only(name)) p[name] = value;
  for (const auto& [name, value] : *profile::direct_defaults(is_gpu).kernel) p[name] = value;
  return p;
}

Params engine_params(bool is_gpu) {
  Params p;
  for (const auto& [name, value] : profile::kernel_defaults(is_gpu))
    if (host_only(name)) p[name] = value;
  for (const auto& [name, value] : profile::engine_defaults()) p[name] = value;
  return p;
}

SharedParams resolved(const Limits& limits, Precision precision,
                      const std::map<std::string, int>& overrides) {
  // Every call resolves its profile's kernel: remembered, as the rules are checked one by one.
  struct Key {
    Limits limits;
    Precision precision;
    std::map<std::string, int> overrides;
  };
  struct View {
    const Limits& limits;
    Precision precision;
    const std::map<std::string, int>& overrides;
    uint64_t hash() const {
      return hash_value(index_of(precision), hash_limits(limits, hash_map(overrides)));
    }
    bool matches(const Key& k) const {
      return k.limits == limits && k.precision == precision && k.overrides == overrides;
    }
    Key own() const { return {limits, precision, overrides}; }
  };
  static auto& memo = *new Memo<Key, SharedParams>;  // never destroyed: calls may come during exit
  return memo.get(View{limits, precision, overrides}, [&] {
    auto p = std::make_shared<Params>(with_defaults(limits, overrides));
    if (const auto violation = check(*p, limits, precision))
      throw Error(Error::Kind::Runtime, violation->message);
    return SharedParams(std::move(p));
  });
}

Params resolve_params(const Limits& limits, Precision precision,
                      const std::map<std::string, int>& overrides) {
  return *resolved(limits, precision, overrides);
}

Params resolve_params(const Device& device, Precision precision,
                      const std::map<std::string, int>& overrides) {
  return resolve_params(limits_for(device, overrides), precision, overrides);
}

int64_t row_tile(const Params& params) {
  auto it = params.find("MWG");
  return it != params.end() && it->second > 0 ? it->second : 1;
}

int64_t col_tile(const Params& params) {
  auto it = params.find("NWG");
  return it != params.end() && it->second > 0 ? it->second : 1;
}

bool is_direct(const Params& params) {
  const auto it = params.find("KERNEL");
  return it != params.end() && it->second == kDirect;
}

bool is_engine(const Params& params) {
  const auto it = params.find("KERNEL");
  return it != params.end() && it->second == kEngine;
}

bool uses_async_copy(const Params& params) {
  const auto kernel = params.find("KERNEL"), ca = params.find("CA");
  return kernel != params.end() && kernel->second == 1 && ca != params.end() && ca->second != 0;
}

bool read_transposed(const Params& params, const char* name, bool caller) {
  return read_transposed(params.at(name), caller);
}

KernelFacts facts_of(const Params& params) {
  const auto optional = [&](const char* name) {
    const auto it = params.find(name);
    return it == params.end() ? 0 : it->second;
  };
  KernelFacts f;  // the names every resolved set has are required (std::out_of_range)
  f.mwg = params.at("MWG"), f.nwg = params.at("NWG"), f.kwg = params.at("KWG");
  f.mdimc = params.at("MDIMC"), f.ndimc = params.at("NDIMC");
  f.a_t = params.at("A_T"), f.b_t = params.at("B_T"), f.index_long = params.at("INDEX_LONG");
  f.chunk_fill = params.at("CHUNK_FILL"), f.queues = params.at("QUEUES");
  f.vw = optional("VW"), f.vwn = optional("VWN"), f.launch_rows = optional("LAUNCH_ROWS");
  f.direct = is_direct(params);
  return f;
}

KernelFacts facts_of(const SharedParams& params) {
  using View = ByAddress<SharedParams>;
  static auto& memo = *new Memo<View::Key, KernelFacts>;  // never destroyed
  return memo.get(View{params}, [&] { return facts_of(*params); });
}

}  // namespace tandem::detail::gpu
