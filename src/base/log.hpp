// Diagnostics: warnings printed once per process per key, and TANDEM_VERBOSE lines, to stderr or
// to the file TANDEM_LOG names, each line whole.
#pragma once

#include <string>

namespace tandem {
struct Report;
}

namespace tandem::detail {

// Writes "tandem: warning: <message>" the first time `key` is seen in this process. Returns
// whether it wrote.
bool warn_once(const std::string& key, const std::string& message);

// Writes "tandem: <line>" with one write(), so that lines from concurrent calls, and from other
// processes appending to the same TANDEM_LOG file, never interleave. Without TANDEM_LOG it goes
// to stderr as it is; with TANDEM_LOG=FILE (appended to) or TANDEM_LOG=stderr the prefix is
// "tandem pid=P:", or "tandem pid=P rank=R:" where the MPI launcher gave the process a rank
// (OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK).
void log_line(const std::string& line);

// The TANDEM_VERBOSE line of one GEMM call ("sgemm m=... strategy=... total=...ms") in the
// caller's terms: a column-major call (Fortran's, or CBLAS's with CblasColMajor) says so, and
// counts the columns of its C that each side computed, and names its own A and B (tandem ran
// the transposed, row-major problem, whose rows are those columns and whose A is the caller's B).
void log_call(const char* routine, const Report& r, bool column_major);

}  // namespace tandem::detail
