// tuner::Space for kernels/gemm.cl. Which points are valid is gpu::check's to say (the rule the
// library applies too), so nothing doomed to fail is ever compiled; the space adds only pruning.
#include "gemm_space.hpp"

#include <algorithm>
#include <climits>

#include "gpu/gemm_params.hpp"

namespace tandem::tuner {
namespace {

namespace gpu = detail::gpu;

// LAYOUT: 0 NN (both as op(X)), 1 NT (B transposed), 2 TN (A transposed).
int a_t(int layout) { return layout == 2 ? 1 : 0; }
int b_t(int layout) { return layout == 1 ? 1 : 0; }

// A parameter's value, or the kernel's default where the space leaves it out.
int get(const std::map<std::string, int>& v, const char* name, int fallback) {
  auto it = v.find(name);
  return it == v.end() ? fallback : it->second;
}

// The kernel parameters of a point's values: LAYOUT becomes A_T and B_T (the direct kernel's
// space has none: it reads operands as stored).
std::map<std::string, int> params_of(std::map<std::string, int> v) {
  const auto layout = v.find("LAYOUT");
  if (layout == v.end()) return v;
  const int value = layout->second;
  v.erase(layout);
  v["A_T"] = a_t(value);
  v["B_T"] = b_t(value);
  return v;
}

using V = std::map<std::string, int>;
using detail::Precision;

// The vector widths a space offers, from `least` up to vectors of 32 bytes: 8 floats, 4 doubles.
std::vector<int> vector_widths(Precision precision, int least) {
  std::vector<int> widths;
  for (int w = least; w * detail::element_bytes(precision) <= 32; w *= 2) widths.push_back(w);
  return widths;
}

// The constraints of both spaces. Validity is gpu::check's alone (the rule the library applies
// to every call); the rest prune points that the register estimate says would spill, or that
// unroll beyond the loop.
std::vector<Constraint> common_constraints(const DeviceLimits& limits, Precision precision) {
  const gpu::Limits device{limits.max_work_group, limits.local_mem_bytes, limits.is_gpu,
                           limits.engine};
  const int register_limit = limits.is_gpu ? 200 : 256;
  return {
      {"a valid kernel for the device (gpu::check)",
       [device, precision](const V& v) {
         return !gpu::check(gpu::with_defaults(device, params_of(v)), device, precision);
       }},
      {"registers per work-item within the limit",
       [register_limit, precision](const V& v) {
         return estimated_registers(v, precision) <= register_limit;
       }},
      {"KUNROLL <= KWG", [](const V& v) { return v.at("KUNROLL") <= v.at("KWG"); }},
  };
}

// kernels/gemm.cl's space prunes points that duplicate others, too.
void add_constraints(Space& s, const DeviceLimits& limits, Precision precision) {
  s.constraints = common_constraints(limits, precision);
  s.constraints.insert(
      s.constraints.end(),
      {
          {"KERNEL 0 has no VWM, VWN, DB or AK",
           [](const V& v) {
             return get(v, "KERNEL", 0) == 1 || (get(v, "VWM", 1) == 1 && get(v, "VWN", 1) == 1 &&
                                                 get(v, "DB", 0) == 0 && get(v, "AK", 0) == 0);
           }},
          {"KERNEL 1 always stages both tiles (SA, SB, STRIDED unused)",
           [](const V& v) {
             return get(v, "KERNEL", 0) == 0 ||
                    (v.at("SA") == 1 && v.at("SB") == 1 && v.at("STRIDED") == 1);
           }},
          {"VW only stages tiles (KERNEL 0 without local memory has no use for it)",
           [](const V& v) {
             return get(v, "KERNEL", 0) == 1 || v.at("SA") == 1 || v.at("SB") == 1 ||
                    v.at("VW") == 1;
           }},
      });
}

void set_start(Space& s, const std::map<std::string, int>& start) {
  if (start.empty()) return;
  Point p(s.dimension(), 0);
  for (size_t i = 0; i < s.dimension(); ++i) {
    const auto& par = s.parameters[i];
    int value;
    if (par.name == "LAYOUT") {
      const int at = start.count("A_T") ? start.at("A_T") : 0,
                bt = start.count("B_T") ? start.at("B_T") : 0;
      value = at == 1 ? 2 : bt == 1 ? 1 : 0;
    } else {
      auto it = start.find(par.name);
      if (it == start.end()) return;
      value = it->second;
    }
    bool found = false;
    for (size_t j = 0; j < par.values.size(); ++j)
      if (par.values[j] == value) {
        p[i] = static_cast<int>(j);
        found = true;
      }
    if (!found) return;
  }
  if (!s.violated(p)) s.start = p;
}

}  // namespace

int estimated_registers(const std::map<std::string, int>& v, Precision precision) {
  // The private data gpu::check bounds per work-group, in 32-bit registers per work-item.
  const uint64_t words = gpu::private_bytes(v, detail::element_bytes(precision)) / 4;
  return static_cast<int>(std::min<uint64_t>(words, INT_MAX));
}

Space gemm_space(const DeviceLimits& limits, Precision precision,
                 const std::map<std::string, int>& start) {
  Space s;
  s.parameters = {
      {"MWG", {16, 32, 64, 128, 256}, 0},
      {"NWG", {16, 32, 64, 128, 256}, 0},
      {"MDIMC", {4, 8, 16, 32}, 0},
      {"NDIMC", {4, 8, 16, 32}, 0},
      {"KWG", {8, 16, 32}, 1},
      {"KUNROLL", {1, 2, 4, 8, 16}, 1},
      {"VW", vector_widths(precision, 1), 1},
      {"SA", {0, 1}, 1},
      {"SB", {0, 1}, 1},
      {"STRIDED", {0, 1}, 1},
      {"LAYOUT", {0, 1, 2}, 1},
      {"KERNEL", {0, 1}, 0},
      {"VWM", {1, 2, 4, 8}, 0},
      {"VWN", {1, 2, 4, 8}, 0},
      {"DB", {0, 1}, 1},
      {"AK", {0, 1}, 1},
  };
  if (limits.nv_compiler_options) s.parameters.push_back({"NV_MAXRREG", {0, 96, 128, 168, 255}, 1});
  // Asynchronous copies where the device's probe proved them (gpu::check keeps them to KERNEL
  // 1, A read transposed, B as stored and 16-byte vectors).
  if (limits.engine & gpu::kAsyncCopy) s.parameters.push_back({"CA", {0, 2, 3, 4}, 1});
  add_constraints(s, limits, precision);
  set_start(s, start);
  return s;
}

Space small_gemm_space(const DeviceLimits& limits, Precision precision) {
  Space s;
  s.parameters = {
      {"MWG", {16, 32, 64}, 0}, {"NWG", {16, 32, 64}, 0}, {"MDIMC", {4, 8}, 0},
      {"NDIMC", {4, 8}, 0},     {"KWG", {8, 16}, 1},      {"KUNROLL", {4}, 1},
      {"VW", {1, 4}, 1},        {"SA", {0, 1}, 1},        {"SB", {1}, 1},
      {"STRIDED", {0, 1}, 1},   {"LAYOUT", {0}, 1},
  };
  add_constraints(s, limits, precision);
  return s;
}

Space small_tile_space(const DeviceLimits& limits, Precision precision,
                       const std::map<std::string, int>& start) {
  Space s;
  s.parameters = {
      {"KERNEL", {1}, 0},
      {"MWG", {16, 32, 64}, 0},
      {"NWG", {16, 32, 64}, 0},
      {"MDIMC", {4, 8, 16, 32}, 0},
      {"NDIMC", {4, 8, 16, 32}, 0},
      {"KWG", {16, 32}, 1},
      {"KUNROLL", {8, 16}, 1},
      {"VW", vector_widths(precision, 2), 1},
      {"VWM", {1, 2, 4, 8}, 1},
      {"VWN", {1, 2, 4, 8}, 1},
      {"DB", {0, 1}, 1},
      {"AK", {0, 1}, 1},
      {"A_T", {-1}, 1},
      {"B_T", {-1}, 1},
  };
  if (limits.nv_compiler_options) s.parameters.push_back({"NV_MAXRREG", {0, 128, 255}, 1});
  s.constraints = common_constraints(limits, precision);
  set_start(s, start);
  return s;
}

Space direct_space(const DeviceLimits& limits, Precision precision,
                   const std::map<std::string, int>& start) {
  Space s;
  const std::vector<int> widths = vector_widths(precision, 1);
  s.parameters = {
      {"KERNEL", {gpu::kDirect}, 0},
      {"MWG", {8, 16, 32, 64, 128}, 0},
      {"NWG", {8, 16, 32, 64, 128}, 0},
      {"MDIMC", {2, 4, 8, 16, 32}, 0},
      {"NDIMC", {2, 4, 8, 16, 32}, 0},
      {"KWG", {8, 16, 32}, 1},
      {"KUNROLL", {1, 2, 4, 8}, 1},
      {"VWA", widths, 1},
      {"VWB", widths, 1},
      {"PADA", {0, 1}, 1},
      {"PADB", {0, 1}, 1},
  };
  if (limits.nv_compiler_options) s.parameters.push_back({"NV_MAXRREG", {0, 64, 128, 255}, 1});
  s.constraints = common_constraints(limits, precision);
  set_start(s, start);
  return s;
}

Space engine_space(const DeviceLimits& limits, Precision precision,
                   const std::map<std::string, int>& start) {
  Space s;
  std::vector<int> shapes;
  for (int rows : {8, 16})
    if (limits.engine & gpu::engine_shape(rows)) shapes.push_back(rows);
  s.parameters = {
      {"KERNEL", {gpu::kEngine}, 0},
      {"MWG", {32, 64, 128, 256}, 0},
      {"NWG", {32, 64, 128, 256}, 0},
      {"MDIMC", {4, 8, 16, 32}, 0},
      {"NDIMC", {4, 8, 16, 32}, 0},
      {"WM", {1, 2, 4}, 0},
      {"MMA_M", shapes, 1},
      {"KWG", {4, 8, 16}, 1},
      {"VW", {1, 2}, 1},
      {"PADA", {0, 2, 4}, 1},
      {"PADB", {0, 2, 4}, 1},
      {"DB", {0, 1}, 1},
      {"KP", precision == Precision::z ? std::vector<int>{0} : std::vector<int>{0, 1}, 1},
      {"A_T", {-1}, 1},
      {"B_T", {-1}, 1},
  };
  const gpu::Limits device{limits.max_work_group, limits.local_mem_bytes, limits.is_gpu,
                           limits.engine};
  s.constraints = {
      {"a valid kernel for the device (gpu::check)",
       [device, precision](const V& v) {
         return !gpu::check(gpu::with_defaults(device, v), device, precision);
       }},
      {"registers within the register file",
       [precision](const V& v) {
         const int group = v.at("MDIMC") * v.at("NDIMC");
         return estimated_registers(v, precision) <= std::min(255, 65536 / std::max(1, group));
       }},
  };
  // The defaults are real elements' tiles; a complex element's accumulators are twice as many,
  // so a start that does not fit is narrowed, NWG halved, until it does.
  std::map<std::string, int> from = start;
  for (int narrowed = 0; narrowed < 4 && !s.start && from.count("NWG"); ++narrowed) {
    set_start(s, from);
    from["NWG"] /= 2;
  }
  return s;
}

std::map<std::string, int> kernel_params(const Space& space, const Point& p) {
  return params_of(space.values(p));
}

}  // namespace tandem::tuner
