// `tandem profile`: the device profile in effect here, shown, located, exported, imported or
// reset; and the profile as JSON and text, which `tandem tune` prints too.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "base/text.hpp"
#include "cli.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "plan/device_profile.hpp"
#include "profile/choice.hpp"
#include "profile/store.hpp"
#include "tandem/tandem.hpp"

namespace tandem::cli {

namespace prof = detail::profile;
namespace gpu = detail::gpu;
namespace fs = std::filesystem;
using nlohmann::json;

prof::Identity identity(const std::string& device) {
  return prof::identity_for(gpu::info(*gpu::open_device(device)));
}

json profile_json(const prof::Profile& p) {
  json j = json::parse(prof::to_json(p));
  j["origin"] = p.origin;
  return j;
}

namespace {

std::string kernel_text(const std::map<std::string, int>& k) {
  const std::string s = detail::text::describe(k);
  return s.empty() ? "(defaults)" : s;
}

}  // namespace

// The cost model's rates, and how well it predicts what it was fitted to.
void print_model(const detail::cost::Model& m,
                 const std::vector<detail::cost::Observation>& observations) {
  std::string cpu;
  for (const auto& s : m.cpu.gflops_by_threads)
    cpu += (cpu.empty() ? "" : ", ") + std::to_string(static_cast<int>(s.x)) + ": " +
           std::to_string(static_cast<int>(s.y));
  std::printf("    cost model: CPU GF/s by threads {%s}, half-dimensions m %.0f n %.0f k %.0f\n",
              cpu.c_str(), m.cpu.half_m, m.cpu.half_n, m.cpu.half_k);
  const auto& d = m.device;
  std::printf(
      "      device: kernel %.1f GF/s (launch %.2g s, tile %lldx%lld), bus %.1f/%.1f GB/s "
      "in/out, packing %.1f GB/s on one thread, latency %.2g s, overlap %.2f\n",
      d.kernel_gflops, d.launch, static_cast<long long>(d.tile_m), static_cast<long long>(d.tile_n),
      d.bus_in * 1e-9, d.bus_out * 1e-9, detail::cost::interpolate(d.pack_by_threads, 1) * 1e-9,
      d.latency, d.overlap);
  double worst = 0;
  for (const auto& o : observations)
    if (o.seconds > 0 && o.predicted > 0)
      worst = std::max(worst, std::fabs(o.predicted / o.seconds - 1));
  std::printf(
      "      busy together: device %.2f, CPU %.2f; %zu measurements, the furthest "
      "predicted %.0f%% off\n",
      m.both_busy, m.cpu_busy, observations.size(), 100 * worst);
}

// A precision's batch rules, by memory: the edge, and each point the tune measured with the few
// products and the middle count it weighed there.
void print_batch_rules(const prof::PrecisionProfile& pp) {
  for (const auto& [rule, memory] : {std::pair{&pp.batch, "ordinary memory"},
                                     std::pair{&pp.batch_resident, "tandem_malloc memory"}}) {
    if (!*rule) continue;
    if ((*rule)->devices_from > 0)
      std::printf(
          "    batches from %s: products from %lld^3 to the devices (dealt, or the devices "
          "alone where the point nearest in size says so)\n",
          memory, static_cast<long long>((*rule)->devices_from));
    else
      std::printf(
          "    batches from %s: every product on the cores (the devices failed where "
          "measured)\n",
          memory);
    for (const prof::BatchPoint& b : (*rule)->points) {
      std::printf("      %lld x %lld^3: cores %.1f, ", static_cast<long long>(b.count),
                  static_cast<long long>(b.size), b.cpu_gflops);
      if (b.gpu_gflops > 0) std::printf("devices alone %.1f, ", b.gpu_gflops);
      std::printf("dealt %.1f GFLOPS, %s (%s): %s\n", b.hybrid_gflops, prof::to_string(b.side()),
                  b.verdict.c_str(), b.note.c_str());
      if (const auto& f = b.few)
        std::printf(
            "        %lld of them (never dealt): cores %.1f, devices alone %.1f GFLOPS, %s: %s\n",
            static_cast<long long>(f->count), f->cpu_gflops, f->gpu_gflops,
            f->devices ? "devices" : "cores", f->note.c_str());
      if (const auto& m = b.middle)
        std::printf(
            "        %lld of them: cores %.1f, devices alone %.1f, dealt %.1f GFLOPS, %s: %s\n",
            static_cast<long long>(m->count), m->cpu_gflops, m->gpu_gflops, m->hybrid_gflops,
            prof::to_string(m->side), m->note.c_str());
    }
  }
}

void print_profile(const prof::Profile& p) {
  std::printf("profile: %s\n", p.origin.c_str());
  std::printf("  for %s / %s (driver %s, %d compute units), CPU %s, %s %s (%s), %d threads\n",
              p.identity.platform.c_str(), p.identity.device.c_str(), p.identity.driver.c_str(),
              p.identity.compute_units, p.identity.cpu_model.c_str(), p.identity.blas.c_str(),
              p.identity.blas_version.c_str(), p.identity.blas_core.c_str(), p.identity.threads);
  std::printf("  tuned %s by tandem %s: strategy %s, %d evaluations, %.0f s\n",
              p.tuning.date.c_str(), p.tandem_version.c_str(), p.tuning.strategy.c_str(),
              p.tuning.evaluations, p.tuning.seconds);
  for (const auto& [prec, pp] : p.precisions) {
    std::printf("  %s: best GPU-only kernel %.1f GFLOPS at %lld: %s\n",
                detail::routine_name(prec, "gemm").c_str(), pp.gpu_gflops,
                static_cast<long long>(pp.gpu_size), kernel_text(pp.gpu_kernel).c_str());
    if (!pp.based_on.empty()) {
      std::string parts;
      for (const std::string& m : pp.measured) parts += (parts.empty() ? "" : ", ") + m;
      std::printf("    measured here: %s; the rest of this section is %s's\n",
                  parts.empty() ? "nothing" : parts.c_str(), pp.based_on.c_str());
    }
    std::printf("    %8s %10s %10s %10s %10s  %s\n", "size", "GPU share", "CPU GF/s", "GPU GF/s",
                "best GF/s", "hybrid kernel");
    for (const auto& b : pp.buckets) {
      std::printf("    %8lld %7d/%-3d %9.1f %10.1f %10.1f  %s\n", static_cast<long long>(b.size),
                  b.gpu_parts, b.parts, b.cpu_gflops, b.gpu_gflops, b.best_gflops,
                  b.gpu_parts ? kernel_text(b.kernel).c_str() : "-");
      // What the tune's interleaved rounds said: whether the machine was too noisy to decide.
      if (!b.confirmation.verdict.empty())
        std::printf("             %s: %s\n", b.confirmation.verdict.c_str(),
                    b.confirmation.note.c_str());
      if (b.resident && !b.resident->confirmation.verdict.empty())
        std::printf("             tandem_malloc memory, %d/%d, %s: %s\n", b.resident->gpu_parts,
                    b.parts, b.resident->confirmation.verdict.c_str(),
                    b.resident->confirmation.note.c_str());
    }
    if (pp.model) print_model(*pp.model, pp.observations);
    if (!pp.direct_kernel.empty())
      std::printf("    direct kernel %.1f GFLOPS at %lld: %s\n", pp.direct_gflops,
                  static_cast<long long>(pp.direct_size), kernel_text(pp.direct_kernel).c_str());
    if (pp.direct_below && *pp.direct_below > 0)
      std::printf("    the direct kernel runs calls below %lld^3\n",
                  static_cast<long long>(*pp.direct_below));
    else if (pp.direct_below)
      std::printf("    the direct kernel runs no call (it lost at the smallest size measured)\n");
    print_batch_rules(pp);
    if (!pp.coalesced.empty())
      std::printf("    coalesced kernel (the device alone; the bucket nearest a batch applies):\n");
    // The direct kernel a batch would run now (the defaults' where the profile has none, which
    // differ by the kind of device: a bucket timed against neither no longer applies).
    const auto& gpu_direct = *prof::direct_for(&pp, true).kernel;
    const auto& cpu_direct = *prof::direct_for(&pp, false).kernel;
    for (const prof::CoalescedBucket& b : pp.coalesced)
      std::printf(
          "      %lld x %lld^3%s: %s %.1f GFLOPS, direct kernel %.1f (%s): %s%s\n",
          static_cast<long long>(b.count), static_cast<long long>(b.size),
          !b.resident   ? ""
          : *b.resident ? ", tandem_malloc memory"
                        : ", ordinary memory",
          b.verdict == "faster" ? "its own" : "the direct kernel's", b.gflops, b.direct_gflops,
          b.verdict.c_str(), kernel_text(b.kernel).c_str(),
          b.verdict == "faster" && b.direct_kernel != gpu_direct && b.direct_kernel != cpu_direct
              ? " [not applied: timed against another direct kernel than the profile's]"
              : "");
  }
}

namespace {

struct ProfileArgs {
  std::string action, file, device;
};

// Without a profile directory there is no file to name, import into or reset (profile.hpp).
void need_directory(const char* action) {
  if (prof::directory().empty())
    throw std::runtime_error(std::string("profile ") + action +
                             ": no profile directory (HOME, XDG_CACHE_HOME and "
                             "TANDEM_PROFILE_DIR are unset or XDG_CACHE_HOME is not absolute, "
                             "and no private XDG_RUNTIME_DIR)");
}

int show_path(const prof::Identity& id, bool as_json) {
  need_directory("path");
  if (as_json)
    std::cout << json{{"path", prof::path_for(id).string()}}.dump(2) << "\n";
  else
    std::cout << prof::path_for(id).string() << "\n";
  return 0;
}

// show, or export to `file`: the profile that applies to this device.
int show_or_export(const prof::Identity& id, const ProfileArgs& a, bool as_json) {
  // Export writes what was tuned here, not the built-in sections a partial local profile
  // borrows: the machine that imports it has its own built-in entry for those.
  const auto p = a.action == "export" ? prof::own(id) : prof::active(id);
  if (!p) {
    std::cerr << "tandem: no profile applies to this device; run `tandem tune`\n";
    return kExitFailed;
  }
  if (a.action == "export") {
    prof::save(*p, a.file);
    if (as_json)
      std::cout << json{{"exported", a.file}, {"from", p->origin}}.dump(2) << "\n";
    else
      std::cout << "exported " << p->origin << " to " << a.file << "\n";
    return 0;
  }
  if (as_json)
    std::cout << profile_json(*p).dump(2) << "\n";
  else
    print_profile(*p);
  return 0;
}

// A kernel a profile names, with its precision and where it is ("sgemm bucket 1024's kernel").
struct NamedKernel {
  detail::Precision precision;
  std::string where;
  std::map<std::string, int> kernel;
};

// Every non-empty kernel a profile names.
std::vector<NamedKernel> kernels_of(const prof::Profile& p) {
  std::vector<NamedKernel> out;
  const auto add = [&out](detail::Precision prec, const std::string& where,
                          const std::map<std::string, int>& k) {
    if (!k.empty())
      out.push_back({prec, detail::routine_name(prec, "gemm").str() + " " + where, k});
  };
  for (const auto& [prec, pp] : p.precisions) {
    add(prec, "GPU-only kernel", pp.gpu_kernel);
    add(prec, "direct kernel", pp.direct_kernel);
    for (const prof::Bucket& b : pp.buckets) {
      const std::string bucket = "bucket " + std::to_string(b.size) + "'s ";
      add(prec, bucket + "kernel", b.kernel);
      add(prec, bucket + "GPU-only kernel", b.gpu_kernel);
      if (b.resident) add(prec, bucket + "resident kernel", b.resident->kernel);
    }
  }
  return out;
}

// Why gpu::check, the rule every call applies, refuses one of the profile's kernels, or "". A
// profile for this device is checked against its limits; one for another device against a device
// with room for any kernel, with either kind's defaults, so only what no device could run counts.
std::string refused_kernel(const prof::Profile& p, const gpu::DeviceInfo& here) {
  const bool applies = p.identity.difference(prof::identity_for(here)).empty();
  const uint64_t room = UINT64_MAX;
  const std::vector<gpu::Limits> devices =
      applies ? std::vector<gpu::Limits>{gpu::limits_of(here)}
              : std::vector<gpu::Limits>{{room, room, true}, {room, room, false}};
  for (const NamedKernel& named : kernels_of(p)) {
    std::string why;
    for (const gpu::Limits& limits : devices) {
      try {
        const auto violation =
            gpu::check(gpu::with_defaults(limits, named.kernel), limits, named.precision);
        if (!violation) {
          why.clear();
          break;
        }
        if (why.empty()) why = violation->message;
      } catch (const Error& e) {  // an unknown parameter
        why = e.what();
      }
    }
    if (!why.empty()) return named.where + " (" + kernel_text(named.kernel) + "): " + why;
  }
  return "";
}

int import_profile(const std::string& device, const std::string& file, bool as_json) {
  prof::Profile p = prof::load(file);  // throws with the reason if it is not a valid profile
  std::string why;
  if (!prof::compatible(p, &why)) {
    std::cerr << "tandem: cannot import " << file << ": " << why << "\n";
    return kExitFailed;
  }
  const gpu::DeviceInfo& here = gpu::info(*gpu::open_device(device));
  const prof::Identity id = prof::identity_for(here);
  if (const std::string refused = refused_kernel(p, here); !refused.empty()) {
    std::cerr << "tandem: cannot import " << file << ": " << refused << "\n";
    return 1;
  }
  need_directory("import");
  const fs::path to = prof::save_local(p);
  prof::forget();
  const std::string diff = p.identity.difference(id);
  if (as_json) {
    std::cout << json{{"imported", to.string()},
                      {"applies_here", diff.empty()},
                      {"difference", diff}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "imported to " << to.string() << "\n";
    if (!diff.empty())
      std::cout << "note: it does not apply to this setup (" << diff << ") and stays unused here\n";
  }
  return 0;
}

// Removes every local copy of this device's profile, and its tuning log.
int reset_profile(const prof::Identity& id, bool as_json) {
  std::error_code ec;
  std::vector<std::string> removed;
  for (const fs::path& f : prof::local_files(id))
    if (fs::remove(f, ec)) removed.push_back(f.string());
  if (!prof::directory().empty())
    fs::remove(prof::directory() / ("tune-" + id.file_name() + "l"), ec);
  prof::forget();
  if (as_json) {
    std::cout << json{{"removed", removed}}.dump(2) << "\n";
  } else {
    if (removed.empty()) std::cout << "no local profile for this device\n";
    for (const auto& f : removed) std::cout << "removed " << f << "\n";
  }
  return 0;
}

// The FILE argument's usage errors, found before the device is opened.
void check_file(const ProfileArgs& a) {
  const bool takes_file = a.action == "export" || a.action == "import";
  if (takes_file && a.file.empty()) throw UsageError("profile " + a.action + " needs a FILE");
  if (!takes_file && !a.file.empty())
    throw UsageError("profile " + a.action + " takes no FILE, but was given '" + a.file + "'");
  std::error_code ec;
  if (a.action == "import" && !fs::is_regular_file(a.file, ec))
    throw UsageError("profile import: no file '" + a.file + "'");
  std::string file = a.file;
  if (a.action == "export") {
    const std::string why = kWritableFile(file);
    if (!why.empty()) throw UsageError("profile export: " + why);
  }
}

int profile(const ProfileArgs& a, bool as_json) {
  check_file(a);
  const prof::Identity id = identity(a.device);
  if (a.action == "path") return show_path(id, as_json);
  if (a.action == "show" || a.action == "export") return show_or_export(id, a, as_json);
  if (a.action == "import") return import_profile(a.device, a.file, as_json);
  if (a.action == "reset") return reset_profile(id, as_json);
  throw UsageError("unknown profile action '" + a.action + "'");
}

}  // namespace

Subcommand add_profile(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  auto* sub = app.add_subcommand("profile",
                                 "the device profile: show, path, export FILE, import FILE, reset");
  sub->add_option("action", args->action, "show, path, export, import or reset")
      ->required()
      ->check(CLI::IsMember({"show", "path", "export", "import", "reset"}));
  sub->add_option("file", args->file, "for export and import");
  sub->add_option("--device", args->device, "device index or name");
  return {sub, [args](bool as_json) { return profile(*args, as_json); }};
}

}  // namespace tandem::cli
