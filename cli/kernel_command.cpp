// `tandem kernel`: one GEMM kernel built as a call with these layouts would build it, with its
// source, build log and binary written out for inspection.
#include <filesystem>
#include <iostream>
#include <system_error>

#include "base/files.hpp"
#include "base/text.hpp"
#include "cli.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "gpu/programs.hpp"

namespace tandem::cli {
namespace {

namespace gpu = detail::gpu;
namespace fs = std::filesystem;
using nlohmann::json;

struct KernelArgs {
  std::string precision = "s", device, dir = "tandem-kernel";
  std::vector<std::string> kernel;
  bool trans_a = false, trans_b = false;
};

// Builds the kernel and writes what came out to the directory: kernel.cl (the source as
// compiled), build.log (the compiler's report) and, if built, kernel.bin (the device binary: PTX
// on NVIDIA, which ptxas and cuobjdump read).
// The directory, made now, and each file it will hold checked (no link, FIFO or device in its
// place), so that a usage error stops the command before the device is opened.
void prepare_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw UsageError("kernel: --out-dir " + dir.string() + " is not a directory" +
                     (ec ? " (" + ec.message() + ")" : std::string()));
  for (const char* name : {"kernel.cl", "build.log", "kernel.bin"})
    if (const std::string why = detail::files::unwritable(dir / name); !why.empty())
      throw UsageError("kernel: cannot write " + (dir / name).string() + ": " + why);
}

int kernel_command(const KernelArgs& a, bool as_json) {
  const auto overrides = parse_assignments(a.kernel, "--kernel");
  prepare_directory(a.dir);
  auto dev = gpu::open_device(a.device);
  const detail::Precision precision = detail::parse_precision(a.precision);
  const gpu::Params params = gpu::resolve_params(*dev, precision, overrides);
  const gpu::BuildReport r = gpu::inspect(*dev, precision, a.trans_a, a.trans_b, params);
  std::error_code ec;
  const fs::path d(a.dir);
  fs::remove(d / "kernel.bin", ec);  // a failed build leaves no binary from an earlier one
  if (!write_file((d / "kernel.cl").string(), r.source) ||
      !write_file((d / "build.log").string(), r.log) ||
      (r.built && !write_file((d / "kernel.bin").string(), r.binary)))
    return kExitFailed;
  if (as_json) {
    std::cout << json{{"device", gpu::info(*dev).describe()},
                      {"precision", a.precision},
                      {"kernel", tandem::detail::text::describe(params)},
                      {"options", r.options},
                      {"built", r.built},
                      {"log", r.log},
                      {"binary_bytes", r.binary.size()},
                      {"directory", a.dir}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << gpu::info(*dev).describe() << "\n"
              << detail::routine_name(precision, "gemm").c_str() << " kernel "
              << tandem::detail::text::describe(params) << "\n"
              << "options: " << r.options << "\n"
              << (r.built ? "built" : "build FAILED") << "; binary " << r.binary.size()
              << " bytes; files in " << a.dir << "\n"
              << r.log << (r.log.empty() || r.log.back() == '\n' ? "" : "\n");
  }
  return r.built ? kExitOk : kExitFailed;
}

}  // namespace

Subcommand add_kernel(CLI::App& app) {
  auto args = std::make_shared<KernelArgs>();
  KernelArgs& a = *args;
  auto* sub = app.add_subcommand(
      "kernel", "build one GEMM kernel and write its source, build log and binary");
  sub->add_option("--precision", a.precision, "s or d")->check(CLI::IsMember({"s", "d"}));
  sub->add_option("--kernel", a.kernel, "kernel parameters NAME=VALUE,...")
      ->delimiter(',')
      ->check(kKernelParams)
      ->default_str("the device's defaults");
  sub->add_flag("--trans-a", a.trans_a, "the caller's A is transposed (op(A) = A^T)");
  sub->add_flag("--trans-b", a.trans_b, "the caller's B is transposed");
  sub->add_option("--device", a.device, "device index or name");
  sub->add_option("--out-dir", a.dir, "directory for kernel.cl, build.log and kernel.bin");
  return {sub, [args](bool as_json) { return kernel_command(*args, as_json); }};
}

}  // namespace tandem::cli
