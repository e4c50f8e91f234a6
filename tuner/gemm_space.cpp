// tuner::Space for kernels/gemm.cl. The constraints here mirror the kernel's own #error checks
// and the device's limits, so nothing doomed to fail is ever compiled.
#include "gemm_space.hpp"

namespace tandem::tuner {
namespace {

// LAYOUT: 0 NN (both as op(X)), 1 NT (B transposed), 2 TN (A transposed).
int a_t(int layout) { return layout == 2 ? 1 : 0; }
int b_t(int layout) { return layout == 1 ? 1 : 0; }

// A parameter's value, or the kernel's default where the space leaves it out.
int get(const std::map<std::string, int>& v, const char* name, int fallback) {
  auto it = v.find(name);
  return it == v.end() ? fallback : it->second;
}

void add_constraints(Space& s, const DeviceLimits& limits, bool fp64) {
  const uint64_t elem = fp64 ? 8 : 4;
  const int register_limit = limits.is_gpu ? 200 : 256;
  using V = std::map<std::string, int>;
  s.constraints = {
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
      {"KERNEL 1's tiling divides evenly",
       [](const V& v) {
         if (get(v, "KERNEL", 0) == 0) return true;
         const int mwg = v.at("MWG"), nwg = v.at("NWG"), kwg = v.at("KWG"), vw = v.at("VW");
         const int loads = v.at("MDIMC") * v.at("NDIMC") * vw;
         return mwg % (v.at("MDIMC") * get(v, "VWM", 1)) == 0 &&
                nwg % (v.at("NDIMC") * get(v, "VWN", 1)) == 0 && (mwg * kwg) % loads == 0 &&
                (nwg * kwg) % loads == 0 && kwg % vw == 0 && mwg % vw == 0 && nwg % vw == 0;
       }},
      {"MWG % MDIMC == 0", [](const V& v) { return v.at("MWG") % v.at("MDIMC") == 0; }},
      {"NWG % NDIMC == 0", [](const V& v) { return v.at("NWG") % v.at("NDIMC") == 0; }},
      {"work-group size within the device's limit",
       [limits](const V& v) {
         return static_cast<uint64_t>(v.at("MDIMC") * v.at("NDIMC")) <= limits.max_work_group;
       }},
      {"local memory within the device's",
       [limits, elem](const V& v) {
         const uint64_t kwg = static_cast<uint64_t>(v.at("KWG"));
         const uint64_t words =
             get(v, "KERNEL", 0) == 1
                 ? kwg * static_cast<uint64_t>(v.at("MWG") + v.at("NWG")) * (get(v, "DB", 0) ? 2 : 1)
                 : kwg * static_cast<uint64_t>((v.at("SA") ? v.at("MWG") + 1 : 0) +
                                               (v.at("SB") ? v.at("NWG") + 1 : 0));
         return words * elem <= limits.local_mem_bytes;
       }},
      {"registers per work-item within the limit",
       [register_limit, fp64](const V& v) { return estimated_registers(v, fp64) <= register_limit; }},
      {"vector loads fit the staged tiles",
       [](const V& v) {
         const int vw = v.at("VW");
         if (get(v, "KERNEL", 0) == 1) return true;  // checked above
         if (v.at("SA") == 0 && v.at("SB") == 0) return vw == 1;  // VW only stages tiles
         const int a_side = a_t(v.at("LAYOUT")) ? v.at("MWG") : v.at("KWG");
         const int b_side = b_t(v.at("LAYOUT")) ? v.at("KWG") : v.at("NWG");
         return (!v.at("SA") || a_side % vw == 0) && (!v.at("SB") || b_side % vw == 0);
       }},
      {"KUNROLL <= KWG", [](const V& v) { return v.at("KUNROLL") <= v.at("KWG"); }},
  };
}

void set_start(Space& s, const std::map<std::string, int>& start) {
  if (start.empty()) return;
  Point p(s.dimension(), 0);
  for (size_t i = 0; i < s.dimension(); ++i) {
    const auto& par = s.parameters[i];
    int value;
    if (par.name == "LAYOUT") {
      const int at = start.count("A_T") ? start.at("A_T") : 0, bt = start.count("B_T") ? start.at("B_T") : 0;
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

int estimated_registers(const std::map<std::string, int>& v, bool fp64) {
  const int mwi = v.at("MWG") / v.at("MDIMC"), nwi = v.at("NWG") / v.at("NDIMC");
  int prefetch = 0;
  if (get(v, "KERNEL", 0) == 1) {
    const int group = v.at("MDIMC") * v.at("NDIMC");
    prefetch = (v.at("MWG") + v.at("NWG")) * v.at("KWG") / group;  // elements staged per work-item
  }
  return (mwi * nwi + mwi + nwi + prefetch) * (fp64 ? 2 : 1);
}

Space gemm_space(const DeviceLimits& limits, bool fp64, const std::map<std::string, int>& start) {
  Space s;
  s.parameters = {
      {"MWG", {16, 32, 64, 128, 256}, 0},
      {"NWG", {16, 32, 64, 128, 256}, 0},
      {"MDIMC", {4, 8, 16, 32}, 0},
      {"NDIMC", {4, 8, 16, 32}, 0},
      {"KWG", {8, 16, 32}, 1},
      {"KUNROLL", {1, 2, 4, 8, 16}, 1},
      {"VW", fp64 ? std::vector<int>{1, 2, 4} : std::vector<int>{1, 2, 4, 8}, 1},
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
  add_constraints(s, limits, fp64);
  set_start(s, start);
  return s;
}

Space small_gemm_space(const DeviceLimits& limits, bool fp64) {
  Space s;
  s.parameters = {
      {"MWG", {16, 32, 64}, 0},
      {"NWG", {16, 32, 64}, 0},
      {"MDIMC", {4, 8}, 0},
      {"NDIMC", {4, 8}, 0},
      {"KWG", {8, 16}, 1},
      {"KUNROLL", {4}, 1},
      {"VW", {1, 4}, 1},
      {"SA", {0, 1}, 1},
      {"SB", {1}, 1},
      {"STRIDED", {0, 1}, 1},
      {"LAYOUT", {0}, 1},
  };
  add_constraints(s, limits, fp64);
  return s;
}

std::map<std::string, int> kernel_params(const Space& space, const Point& p) {
  auto v = space.values(p);
  const int layout = v.at("LAYOUT");
  v.erase("LAYOUT");
  v["A_T"] = a_t(layout);
  v["B_T"] = b_t(layout);
  return v;
}

}  // namespace tandem::tuner
