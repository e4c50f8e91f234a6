// Kernel parameters: defaults by kind of device, the validity rules, and resolution of a set.
#include "gemm_params.hpp"

#include <algorithm>

#include "tandem/tandem.hpp"
#include "text.hpp"

namespace tandem::detail::gpu {
namespace {

// Default kernel parameters by kind of device, until a tuned profile supplies better ones.
// Discrete and integrated GPUs get a 64x64 tile of 16x16 work-items; a CPU device (PoCL), whose
// work-groups become vectorised loops, a 4x8 group with a 16x8 register tile (a hand sweep on
// PoCL 3.1, 2-core EPYC, sgemm 512: 20.5 GFLOPS against 4.2 for a 32x32 tile on 8x8).
// INDEX_LONG = 1 forces 64-bit index arithmetic; 0 leaves it to the operands' extents.
// A_T and B_T choose the layout the kernel reads each operand in (RaijinCL's NN, NT and TN
// codelets): 0 as op(X) itself, 1 transposed, -1 whatever the caller stored.
const Params& defaults_for(bool is_gpu) {
  static const Params gpu{{"MWG", 64},   {"NWG", 64},     {"KWG", 16}, {"MDIMC", 16},
                          {"NDIMC", 16}, {"KUNROLL", 4},  {"VW", 4},   {"SA", 1},
                          {"SB", 1},     {"STRIDED", 1},  {"INDEX_LONG", 0},
                          {"A_T", -1},   {"B_T", -1},     {"KERNEL", 0}, {"VWM", 1},
                          {"VWN", 1},    {"DB", 0},       {"NV_MAXRREG", 0}, {"AK", 0},
                          {"CHUNK_FILL", 1}, {"QUEUES", 1}};
  static const Params cpu{{"MWG", 64},   {"NWG", 64},     {"KWG", 16}, {"MDIMC", 4},
                          {"NDIMC", 8},  {"KUNROLL", 4},  {"VW", 4},   {"SA", 1},
                          {"SB", 1},     {"STRIDED", 1},  {"INDEX_LONG", 0},
                          {"A_T", -1},   {"B_T", -1},     {"KERNEL", 0}, {"VWM", 1},
                          {"VWN", 1},    {"DB", 0},       {"NV_MAXRREG", 0}, {"AK", 0},
                          {"CHUNK_FILL", 1}, {"QUEUES", 1}};
  return is_gpu ? gpu : cpu;
}

}  // namespace

Limits limits_of(const DeviceInfo& info) {
  return {info.max_work_group, info.local_mem_bytes, info.is_gpu};
}

uint64_t local_bytes(const Params& p, uint64_t elem) {
  const auto at = [&](const char* name) { return static_cast<uint64_t>(p.at(name)); };
  if (p.count("KERNEL") && p.at("KERNEL") == 1)
    return elem * at("KWG") * (at("MWG") + at("NWG")) * (p.at("DB") ? 2 : 1);
  return elem * at("KWG") * ((at("SA") ? at("MWG") + 1 : 0) + (at("SB") ? at("NWG") + 1 : 0));
}

std::optional<Violation> check(const Params& p, const Limits& limits, bool fp64) {
  using K = Violation::Kind;
  const auto v = [&p](const char* name) { return p.at(name); };
  for (const char* layout : {"A_T", "B_T"})
    if (v(layout) < -1 || v(layout) > 1)
      return Violation{K::Host, std::string("kernel parameter ") + layout + " must be -1, 0 or 1"};
  for (const char* positive : {"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "KUNROLL", "VW"})
    if (v(positive) <= 0)
      return Violation{K::Kernel, std::string("kernel parameter ") + positive + " must be positive"};
  const uint64_t group = static_cast<uint64_t>(v("MDIMC")) * static_cast<uint64_t>(v("NDIMC"));
  if (group > limits.max_work_group)
    return Violation{K::Device, "work-group of " + std::to_string(group) +
                                    " work-items exceeds the device's limit of " +
                                    std::to_string(limits.max_work_group)};
  if (v("KERNEL") != 0 && v("KERNEL") != 1)
    return Violation{K::Kernel, "kernel parameter KERNEL must be 0 or 1"};
  for (const char* width : {"VWM", "VWN"})
    if (v(width) != 1 && v(width) != 2 && v(width) != 4 && v(width) != 8)
      return Violation{K::Kernel, std::string("kernel parameter ") + width + " must be 1, 2, 4 or 8"};
  if (v("CHUNK_FILL") < 1 || v("CHUNK_FILL") > 64)
    return Violation{K::Host, "kernel parameter CHUNK_FILL must be 1 to 64"};
  if (v("QUEUES") < 1 || v("QUEUES") > 2)
    return Violation{K::Host, "kernel parameter QUEUES must be 1 or 2"};
  if (v("NV_MAXRREG") < 0 || v("NV_MAXRREG") > 255)
    return Violation{K::Host, "kernel parameter NV_MAXRREG must be 0 (none) to 255"};
  if (v("KERNEL") == 1) {
    const int64_t wgs = static_cast<int64_t>(group) * v("VW");
    if (v("MWG") % (v("MDIMC") * v("VWM")) != 0 || v("NWG") % (v("NDIMC") * v("VWN")) != 0 ||
        (int64_t{v("MWG")} * v("KWG")) % wgs != 0 || (int64_t{v("NWG")} * v("KWG")) % wgs != 0 ||
        v("KWG") % v("VW") != 0 || v("MWG") % v("VW") != 0 || v("NWG") % v("VW") != 0)
      return Violation{K::Kernel, "kernel parameters do not fit KERNEL 1's tiling: " + text::describe(p)};
  }
  const uint64_t local = local_bytes(p, fp64 ? 8 : 4);
  if (local > limits.local_mem_bytes)
    return Violation{K::Device, "kernel needs " + std::to_string(local) +
                                    " bytes of local memory; the device has " +
                                    std::to_string(limits.local_mem_bytes)};
  return std::nullopt;
}

Params resolve_params(const Limits& limits, bool fp64, const std::map<std::string, int>& overrides) {
  Params p = defaults_for(limits.is_gpu);
  for (const auto& [name, value] : overrides) {
    if (p.find(name) == p.end())
      throw Error(Error::Kind::InvalidArgument, "unknown kernel parameter '" + name + "'");
    p[name] = value;
  }
  if (const auto violation = check(p, limits, fp64)) throw Error(Error::Kind::Runtime, violation->message);
  return p;
}

Params resolve_params(const Device& device, bool fp64, const std::map<std::string, int>& overrides) {
  return resolve_params(limits_of(info(device)), fp64, overrides);
}

int64_t row_tile(const Params& params) {
  auto it = params.find("MWG");
  return it != params.end() && it->second > 0 ? it->second : 1;
}

bool read_transposed(const Params& params, const char* name, bool caller) {
  const int v = params.at(name);
  return v < 0 ? caller : v == 1;
}

}  // namespace tandem::detail::gpu
