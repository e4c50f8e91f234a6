// `tandem devices`: what this machine offers tandem (the OpenCL devices, the CPU and its BLAS,
// the power sources), where its profiles live, and which tandem is asking.
#include <cstdint>
#include <cstdio>
#include <iostream>

#include "cli.hpp"
#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "gpu/device.hpp"
#include "plan/device_profile.hpp"
#include "power.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "tandem/tandem.hpp"

namespace tandem::cli {
namespace {

namespace prof = detail::profile;
namespace gpu = detail::gpu;
namespace topo = detail::topology;
namespace blas = detail::cpu_blas;
using nlohmann::json;

// The OpenCL devices under "opencl", or why there are none under "opencl_unavailable".
void add_opencl(json& out) {
  try {
    for (const auto& d : gpu::list_devices())
      out["opencl"].push_back({{"index", d.index},
                               {"platform", d.platform},
                               {"device", d.name},
                               {"vendor", d.vendor},
                               {"driver", d.driver},
                               {"version", d.version},
                               {"type", d.is_gpu ? "GPU" : "other"},
                               {"architecture", d.architecture},
                               {"integrated", d.integrated},
                               {"unified_memory", d.unified_memory},
                               {"fp64", d.fp64},
                               {"compute_units", d.compute_units},
                               {"local_memory_bytes", d.local_mem_bytes},
                               {"max_work_group", d.max_work_group},
                               {"global_memory_bytes", d.global_mem_bytes}});
  } catch (const Error& e) {
    out["opencl_unavailable"] = e.what();
  }
}

// The profile each device would use, the sets "all" and the default ("") name, and the set auto
// weighs for a call that names none: every GPU, else the default's device.
void add_sets(json& out) {
  if (!out.contains("opencl")) return;
  for (const char* selector : {"", "all"}) {
    json set = json::array();
    try {
      for (const auto& d : gpu::open_devices(selector)) set.push_back(gpu::info(*d).index);
    } catch (const Error&) {
    }
    out["sets"][*selector ? selector : "default"] = set;
  }
  json weighed = json::array();
  try {
    for (const auto& d : gpu::found_devices())
      if (gpu::counts_as_gpu(d)) weighed.push_back(d.index);
  } catch (const Error&) {
  }
  out["sets"]["auto"] = weighed.empty() ? out["sets"]["default"] : weighed;
  for (auto& d : out["opencl"]) {
    try {
      const auto p =
          prof::active_for(gpu::info(*gpu::open_device(std::to_string(d["index"].get<int>()))));
      d["profile"] = p ? p->origin : "";
    } catch (const Error& e) {
      d["profile"] = std::string("unavailable: ") + e.what();
    }
  }
}

json devices_json() {
  json out;
  out["tandem_version"] = tandem_version();
  add_opencl(out);
  add_sets(out);
  const std::string best = topo::best_openblas_core(topo::cpu_flags());
  const std::string core = blas::core_type();
  out["cpu"] = {{"model", topo::cpu_model()},
                {"physical_cores", topo::physical_cores()},
                {"hardware_threads", topo::logical_cpus()}};
  out["blas"] = {{"name", blas::name()},
                 {"version", blas::version()},
                 {"core_type", core},
                 {"best_core_type", best},
                 {"threads", blas::current_threads()}};
  if (topo::weaker_core(core, best))
    out["advice"] = "OpenBLAS chose its " + core + " kernels, but this CPU supports " + best +
                    ": set OPENBLAS_CORETYPE=" + best + " (often several times faster)";
  out["profile_directory"] = prof::directory().string();
  power::Meter meter;
  for (const auto& src : meter.sources())
    out["power"].push_back(
        {{"source", src.name}, {"available", src.available}, {"detail", src.detail}});
  return out;
}

void print_opencl(const json& out) {
  if (!out.contains("opencl")) {
    std::cout << "OpenCL: unavailable: " << out["opencl_unavailable"].get<std::string>() << "\n";
    return;
  }
  std::cout << "OpenCL devices:\n";
  for (const auto& d : out["opencl"])
    std::printf(
        "  %d: %s / %s\n     %s%s, architecture %s, driver %s, unified memory %s, fp64 %s, %d "
        "compute units, %llu KiB local memory, work-groups up to %llu\n",
        d["index"].get<int>(), d["platform"].get<std::string>().c_str(),
        d["device"].get<std::string>().c_str(), d["type"].get<std::string>().c_str(),
        d["integrated"].get<bool>() ? " (integrated)" : "",
        d["architecture"].get<std::string>().empty() ? "not reported by the driver"
                                                     : d["architecture"].get<std::string>().c_str(),
        d["driver"].get<std::string>().c_str(), d["unified_memory"].get<bool>() ? "yes" : "no",
        d["fp64"].get<bool>() ? "yes" : "no", d["compute_units"].get<int>(),
        static_cast<unsigned long long>(d["local_memory_bytes"].get<uint64_t>() / 1024),
        static_cast<unsigned long long>(d["max_work_group"].get<uint64_t>()));
  for (const auto& d : out["opencl"])
    if (d.contains("profile"))
      std::printf("  profile of %d: %s\n", d["index"].get<int>(),
                  d["profile"].get<std::string>().empty()
                      ? "none"
                      : d["profile"].get<std::string>().c_str());
  // The sets the device selector names without a list (TANDEM_DEVICE, --device, compare's
  // STRATEGY:DEVICES); any list of indices, "1,2", names a set too. Auto, where none is named,
  // weighs its own.
  for (const char* set : {"default", "auto", "all"}) {
    std::string members;
    for (const auto& i : out["sets"][set])
      members += (members.empty() ? "" : ",") + std::to_string(i.get<int>());
    if (std::string(set) == "auto")
      std::printf("  auto with no device named weighs: %s%s\n",
                  members.empty() ? "none" : members.c_str(),
                  members.find(',') != std::string::npos
                      ? " (where each has a profile with a cost model: each alone or all together, "
                        "as the models say)"
                      : "");
    else
      std::printf("  device set %s: %s\n", set, members.empty() ? "none" : members.c_str());
  }
}

void print_devices(const json& out) {
  std::printf("tandem %s\n", out["tandem_version"].get<std::string>().c_str());
  print_opencl(out);
  std::printf("CPU: %s, %d physical cores, %d hardware threads\n", topo::cpu_model().c_str(),
              topo::physical_cores(), topo::logical_cpus());
  std::printf("CPU BLAS: %s %s, core type %s, %d threads\n", blas::name().c_str(),
              blas::version().c_str(), out["blas"]["core_type"].get<std::string>().c_str(),
              blas::current_threads());
  if (out.contains("advice"))
    std::printf("  warning: %s\n", out["advice"].get<std::string>().c_str());
  std::printf("Power sources:\n");
  for (const auto& p : out["power"])
    std::printf("  %s: %s\n", p["source"].get<std::string>().c_str(),
                p["detail"].get<std::string>().c_str());
  const std::string dir = prof::directory().string();
  std::printf("Profile directory: %s\n",
              dir.empty() ? "none (profiles are kept in memory, for one process)" : dir.c_str());
}

int devices(bool as_json) {
  const json out = devices_json();
  if (as_json)
    std::cout << out.dump(2) << "\n";
  else
    print_devices(out);
  return 0;
}

}  // namespace

Subcommand add_devices(CLI::App& app) {
  return {app.add_subcommand("devices", "OpenCL devices, CPU topology and the CPU BLAS"), devices};
}

}  // namespace tandem::cli
