// The `tandem` command: devices (what this machine offers), tune (the co-tuner), profile (show,
// path, export, import, reset), gemm (one checked call), compare and kernel (one kernel build,
// inspected), each in its own file (cli_*.cpp). Here: main, which wires them to the arguments
// and keeps the command's conventions (README: exit statuses, --json, --help's defaults), and
// the option checks and helpers the subcommands share.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "base/files.hpp"
#include "base/text.hpp"
#include "cli.hpp"
#include "cpu/blas.hpp"
#include "profile/defaults.hpp"
#include "tandem/tandem.h"

namespace tandem::cli {

const CLI::Validator kPositive(
    [](std::string& v) {
      try {
        size_t used = 0;
        if (std::stod(v, &used) > 0 && used == v.size()) return std::string();
      } catch (const std::exception&) {
      }
      return "must be a positive number, not '" + v + "'";
    },
    "POSITIVE");
const CLI::Validator kNonNegative(
    [](std::string& v) {
      try {
        size_t used = 0;
        if (std::stod(v, &used) >= 0 && used == v.size()) return std::string();
      } catch (const std::exception&) {
      }
      return "must be zero or more, not '" + v + "'";
    },
    "NON-NEGATIVE");

const CLI::Validator kKernelParams(
    [](std::string& v) {
      std::map<std::string, int> one;
      try {
        one = detail::text::parse_params(v);
      } catch (const std::invalid_argument&) {
        // Reported below, in the option's own words.
      }
      if (one.size() != 1) return "wants NAME=INTEGER, not '" + v + "'";
      // The names a kernel takes are those its defaults give, for a GPU or any other device:
      // kernels/gemm.cl's, the direct kernel's (KERNEL=2) and the matrix-engine codelet's
      // (KERNEL=3). Which of them a set may combine is the kernel rules' to say.
      namespace prof = detail::profile;
      const std::string& name = one.begin()->first;
      bool known = prof::engine_defaults().count(name) > 0;
      for (bool is_gpu : {true, false})
        known = known || prof::kernel_defaults(is_gpu).count(name) > 0 ||
                prof::direct_defaults(is_gpu).kernel->count(name) > 0;
      if (!known) return "unknown kernel parameter '" + name + "'";
      return std::string();
    },
    "NAME=INTEGER");

const CLI::Validator kWritableFile(
    [](std::string& v) {
      if (v.empty()) return std::string();  // "": no file
      const std::string why = detail::files::unwritable(v);
      return why.empty() ? why : "cannot write '" + v + "': " + why;
    },
    "FILE");
// CLI::Range lets NaN through (no comparison with it is true), and `--fraction nan` then meant the
// default fraction without a word.
const CLI::Validator kFraction(
    [](std::string& v) {
      try {
        size_t used = 0;
        const double f = std::stod(v, &used);
        if (used == v.size() && f >= 0 && f <= 1) return std::string();
      } catch (const std::exception&) {
      }
      return "must be a number from 0 to 1, not '" + v + "'";
    },
    "FRACTION");

std::string unrunnable(int64_t m, int64_t n, int64_t k, detail::Precision precision,
                       int64_t count) {
  for (const auto& [name, size] : {std::pair{"m", m}, {"n", n}, {"k", k}})
    if (!detail::cpu_blas::fits(size))
      return std::string(name) + " = " + std::to_string(size) +
             " is larger than tandem takes (the CPU BLAS's 32-bit integers: at most " +
             std::to_string(INT_MAX) + ")";
  const double bytes = operand_bytes(m, n, k, precision, count);
  const double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (memory > 0 && bytes > memory)
    return gigabytes(bytes) + " for the operands of " +
           (count > 1 ? std::to_string(count) + " x " : "") + std::to_string(m) + "x" +
           std::to_string(n) + "x" + std::to_string(k) +
           " and the check's copies in double, more than this machine's " + gigabytes(memory) +
           " of memory";
  return "";
}

double operand_bytes(int64_t m, int64_t n, int64_t k, detail::Precision precision, int64_t count) {
  const double elements = double(m) * double(k) + double(k) * double(n) + 2 * double(m) * double(n);
  const double wide = detail::is_complex(precision) ? 2 * sizeof(double) : sizeof(double);
  return double(count) * elements * (double(detail::element_bytes(precision)) + wide);
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB", bytes * 1e-9);
  return text;
}

const CLI::Validator kPrecisions = CLI::IsMember({"s", "d", "c", "z", "both", "all"});

std::vector<detail::Precision> parse_precisions(const std::string& text) {
  using detail::Precision;
  if (text == "both") return {Precision::s, Precision::d};
  if (text == "all") return {Precision::s, Precision::d, Precision::c, Precision::z};
  return {detail::parse_precision(text)};
}

std::map<std::string, int> parse_assignments(const std::vector<std::string>& items,
                                             const char* option) {
  std::map<std::string, int> out;
  for (const auto& item : items) {
    std::map<std::string, int> one;
    try {
      one = detail::text::parse_params(item);
    } catch (const std::invalid_argument&) {
      // Reported below, in the option's own words.
    }
    if (one.size() != 1)
      throw std::invalid_argument(std::string(option) + " wants NAME=INTEGER, not '" + item + "'");
    out[one.begin()->first] = one.begin()->second;
  }
  return out;
}

bool write_file(const std::string& path, const std::string& text) {
  try {
    detail::files::replace(path, text);
    return true;
  } catch (const std::runtime_error& e) {
    std::cerr << "tandem: " << e.what() << "\n";
    return false;
  }
}

std::string unknown_subcommand(const CLI::App& app, const CLI::ParseError& e) {
  // The word is left over (fallthrough keeps it for the subcommands), and CLI11 then says only
  // "A subcommand is required".
  if (dynamic_cast<const CLI::RequiredError*>(&e) == nullptr) return "";
  for (const std::string& word : app.remaining())
    if (!word.empty() && word[0] != '-') return word;
  return "";
}

}  // namespace tandem::cli

int main(int argc, char** argv) {
  namespace cli = tandem::cli;
  CLI::App app{"tandem: hybrid CPU+GPU GEMM, its co-tuner and device profiles"};
  // Before any option is added, so that every subcommand's --help shows its defaults.
  app.option_defaults()->always_capture_default();
  app.require_subcommand(1);
  // The library's version (the one this command runs with), which profiles record too.
  app.set_version_flag("--version", std::string("tandem ") + tandem_version(),
                       "print tandem's version and exit");
  app.fallthrough();  // --json is accepted after any subcommand too
  bool as_json = false;
  app.add_flag("--json", as_json, "JSON on standard output instead of text");
  // In the order `tandem --help` lists them.
  const std::vector<cli::Subcommand> subcommands{cli::add_devices(app), cli::add_tune(app),
                                                 cli::add_profile(app), cli::add_gemm(app),
                                                 cli::add_kernel(app),  cli::add_compare(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const std::string word = cli::unknown_subcommand(app, e); !word.empty()) {
      std::string names;
      for (const auto& s : subcommands) names += (names.empty() ? "" : ", ") + s.app->get_name();
      std::cerr << "tandem: unknown subcommand '" << word << "' (one of " << names << ")\n";
      return cli::kExitUsage;
    }
    // CLI11's own statuses (105, 106, 109, ...) become the convention's: 0 for --help and
    // --version, 2 for every usage error, which app.exit has described on stderr.
    return app.exit(e) == 0 ? cli::kExitOk : cli::kExitUsage;
  }
  try {
    for (const auto& s : subcommands)
      if (s.app->parsed()) return s.run(as_json);
  } catch (const cli::UsageError& e) {
    std::cerr << "tandem: " << e.what() << "\n";
    return cli::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "tandem: " << e.what() << "\n";
    return cli::kExitFailed;
  }
  return cli::kExitOk;
}
