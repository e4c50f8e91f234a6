// The `tandem` command: devices (what this machine offers), tune (the co-tuner), profile (show,
// path, export, import, reset), gemm (one checked call), compare and kernel (one kernel build,
// inspected), each in its own file (cli_*.cpp). Here: main, which wires them to the arguments,
// and the option checks and helpers they share. Every command takes --json.
#include "cli.hpp"

#include <fstream>
#include <iostream>
#include <stdexcept>

#include "tandem/tandem.h"
#include "text.hpp"

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
  std::ofstream out(path);
  out << text;
  if (!out) std::cerr << "tandem: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

}  // namespace tandem::cli

int main(int argc, char** argv) {
  namespace cli = tandem::cli;
  CLI::App app{"tandem: hybrid CPU+GPU GEMM, its co-tuner and device profiles"};
  app.require_subcommand(1);
  // The library's version (the one this command runs with), which profiles record too.
  app.set_version_flag("--version", std::string("tandem ") + tandem_version(),
                       "print tandem's version and exit");
  app.fallthrough();  // --json is accepted after any subcommand too
  bool as_json = false;
  app.add_flag("--json", as_json, "machine-readable output");
  // In the order `tandem --help` lists them.
  const std::vector<cli::Subcommand> subcommands{cli::add_devices(app), cli::add_tune(app),
                                                 cli::add_profile(app), cli::add_gemm(app),
                                                 cli::add_kernel(app),  cli::add_compare(app)};
  CLI11_PARSE(app, argc, argv);
  try {
    for (const auto& s : subcommands)
      if (s.app->parsed()) return s.run(as_json);
  } catch (const std::exception& e) {
    std::cerr << "tandem: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
