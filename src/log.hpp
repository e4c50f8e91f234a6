// Diagnostics on stderr: warnings printed once per process per key, and TANDEM_VERBOSE lines.
#pragma once

#include <string>

namespace tandem {
struct Report;
}

namespace tandem::detail {

// Prints "tandem: warning: <message>" the first time `key` is seen in this process. Returns
// whether it printed.
bool warn_once(const std::string& key, const std::string& message);

// Prints "tandem: <line>" as one write, so lines from concurrent calls do not interleave.
void log_line(const std::string& line);

// The TANDEM_VERBOSE line of one GEMM call ("sgemm m=... strategy=... total=...ms").
void log_call(const char* routine, const Report& r);

}  // namespace tandem::detail
