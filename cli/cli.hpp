// What the files of the `tandem` command share: each subcommand's registration, the option
// checks, and the helpers that more than one subcommand uses.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace tandem::tuner {
struct Progress;
}

namespace tandem::cli {

// The exit statuses of every subcommand (README): success, a failure while working (a device
// error, a wrong result, a file that cannot be read), and a usage error (an option or argument
// that is wrong in itself, found before any work starts).
enum Exit { kExitOk = 0, kExitFailed = 1, kExitUsage = 2 };

// Thrown by a subcommand for a usage error that only it can see (main exits kExitUsage); every
// other exception is a failure (kExitFailed).
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A subcommand: its options, registered on the app, and what it does once the app has parsed
// them, given the top-level --json flag (JSON on stdout). run returns the exit status and may
// throw.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int(bool as_json)> run;
};

Subcommand add_devices(CLI::App& app);  // devices_command.cpp
Subcommand add_tune(CLI::App& app);     // tune_command.cpp
Subcommand add_profile(CLI::App& app);  // profile_command.cpp
Subcommand add_gemm(CLI::App& app);     // gemm_command.cpp
Subcommand add_kernel(CLI::App& app);   // kernel_command.cpp
Subcommand add_compare(CLI::App& app);  // compare_command.cpp

// The word on the command line where a subcommand should be, when `e` is CLI11's complaint that
// none was given although one was ("tandem frobnicate"); "" otherwise.
std::string unknown_subcommand(const CLI::App& app, const CLI::ParseError& e);

// Checks of numeric options. CLI11's own range messages print the whole double range; these
// name the rule instead.
extern const CLI::Validator kPositive, kNonNegative;
// A NAME=INTEGER item whose NAME is a kernel parameter (--kernel, --start).
extern const CLI::Validator kKernelParams;
// A file the command will write: its directory exists and is writable, and the file is absent or a
// regular file, not a link, FIFO or device (files::unwritable; "" passes: no file).
extern const CLI::Validator kWritableFile;

// A fraction from 0 to 1 (--fraction, --split-margin); NaN is refused, which CLI::Range lets by.
extern const CLI::Validator kFraction;

// Why a command cannot run an m x n x k GEMM in `precision` (`count` of them, as a batch), or "": a
// size beyond the CPU BLAS's 32-bit integers (the library refuses it, but only after the command
// has allocated and filled the operands), or operands that with the check's double copies exceed
// this machine's memory.
std::string unrunnable(int64_t m, int64_t n, int64_t k, detail::Precision precision,
                       int64_t count = 1);
// About how many bytes a command holds for `count` m x n x k GEMMs and their check: A, B, C and
// C's starting values, each also in double (complex double) for the reference.
double operand_bytes(int64_t m, int64_t n, int64_t k, detail::Precision precision,
                     int64_t count = 1);
// Bytes as "12.3 GB".
std::string gigabytes(double bytes);

// The precisions a --precision option names: one of s, d, c, z; both (s and d); all (the four).
extern const CLI::Validator kPrecisions;
std::vector<detail::Precision> parse_precisions(const std::string& text);

// NAME=VALUE items, as --kernel and --start take them. Throws std::invalid_argument naming
// `option` and the item that is not NAME=INTEGER.
std::map<std::string, int> parse_assignments(const std::vector<std::string>& items,
                                             const char* option);

// Replaces `path` with `text`, whole or not at all (files::replace); false, having said so on
// stderr, if it could not.
bool write_file(const std::string& path, const std::string& text);

// A tune's progress on stderr (tune_command.cpp): one line redrawn in place on a terminal (`tty`),
// else a line per measurement.
void print_tune_progress(const tuner::Progress& p, bool tty);

// The profile identity of the device `device` selects (profile_command.cpp).
detail::profile::Identity identity(const std::string& device);
// A profile as JSON, with where it came from (profile_command.cpp).
nlohmann::json profile_json(const detail::profile::Profile& p);
// A profile as text (profile_command.cpp).
void print_profile(const detail::profile::Profile& p);

}  // namespace tandem::cli
