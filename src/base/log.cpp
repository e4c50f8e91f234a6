// Process-wide warning and verbose output. Each line is built whole and written with a single
// write() to stderr or to TANDEM_LOG's file (opened O_APPEND), so lines stay whole between
// threads (one mutex) and between processes (the kernel appends each write at once): under
// mpirun, ranks writing one file or one terminal do not interleave mid-line. Every line passes
// through write_line, which escapes control characters: a value from the environment or a
// profile can neither start a line of its own nor drive the terminal.
#include "base/log.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "base/after_fork.hpp"
#include "base/files.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {
namespace {

std::mutex& log_mutex() {
  static std::mutex& m = []() -> std::mutex& {
    auto* fresh = new std::mutex;  // never destroyed: a fork handler holds it
    after_fork::hold(*fresh, after_fork::Rank::Log);
    return *fresh;
  }();
  return m;
}

// Where lines go and how they are tagged, read from the environment at the first line.
struct Sink {
  int fd = STDERR_FILENO;
  bool tagged = false;  // TANDEM_LOG was set: each line names its process
  std::string rank;     // the MPI launcher's, if any
  std::string failure;  // why TANDEM_LOG's file could not be opened
};

// The rank MPI launchers put in each process's environment: Open MPI's, then PMIx's and PMI's
// (MPICH, Intel MPI, Slurm's srun).
std::string launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0' && std::strspn(v, "0123456789") == std::strlen(v)) return v;
  }
  return "";
}

Sink open_sink() {
  Sink s;
  const char* where = std::getenv("TANDEM_LOG");
  if (where == nullptr || *where == '\0') return s;
  s.tagged = true;
  s.rank = launcher_rank();
  if (std::strcmp(where, "stderr") == 0) return s;
  // A regular file only, never through a link and never waiting: a FIFO without a reader would
  // hang the first line, and a device is no log.
  std::string why;
  const int fd = files::open_append(where, &why);
  if (fd >= 0)
    s.fd = fd;
  else
    s.failure =
        std::string("cannot open TANDEM_LOG=") + where + " (" + why + "): logging to stderr";
  return s;
}

// `text` with each control character (below 0x20, and DEL) as an escape: \n, \r, \t or \xHH.
std::string escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

// Called with the log mutex held. The sink is never closed: a call may log until exit.
const Sink& sink() {
  static const Sink* s = nullptr;
  if (s == nullptr) {
    s = new Sink(open_sink());
    if (!s->failure.empty()) {
      const std::string line = "tandem: warning: " + escaped(s->failure) + "\n";
      (void)!::write(STDERR_FILENO, line.data(), line.size());
    }
  }
  return *s;
}

// One line, prefixed and ended, in one write(); the loop only finishes what a signal or a full
// pipe cut short.
void write_line(const std::string& text) {
  const Sink& s = sink();
  std::string line = "tandem";
  if (s.tagged) {
    line += " pid=" + std::to_string(::getpid());  // a forked child's own
    if (!s.rank.empty()) line += " rank=" + s.rank;
  }
  line += ": " + escaped(text) + "\n";
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(s.fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

bool warn_once(const std::string& key, const std::string& message) {
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(log_mutex());
  if (!seen.insert(key).second) return false;
  write_line("warning: " + message);
  return true;
}

void log_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mutex());
  write_line(line);
}

void log_call(const char* routine, const Report& r, bool column_major) {
  // tandem computed the row-major view: for a column-major call its rows are C's columns and its
  // A is the caller's B.
  const char* part = column_major ? "cols" : "rows";
  const Report::Buffer a = column_major ? r.b : r.a, b = column_major ? r.a : r.b;
  char line[640];
  std::snprintf(line, sizeof line,
                "%s m=%lld n=%lld k=%lld%s strategy=%s gpu_%s=%lld cpu_%s=%lld cpu_threads=%d "
                "A=%s B=%s C=%s cpu=%.3fms gpu=%.3fms kernel=%.3fms total=%.3fms%s%s",
                routine, static_cast<long long>(r.m), static_cast<long long>(r.n),
                static_cast<long long>(r.k), column_major ? " layout=col" : "",
                to_string(r.strategy), part, static_cast<long long>(r.gpu_rows), part,
                static_cast<long long>(r.cpu_rows), r.cpu_threads, to_string(a), to_string(b),
                to_string(r.c), r.cpu_seconds() * 1e3, r.gpu_seconds() * 1e3,
                r.gpu_kernel_seconds * 1e3, r.seconds() * 1e3,
                r.fell_back ? " (GPU failed, CPU fallback)" : "",
                // Last on the line, to its end: a profile's origin may hold spaces ("FILE (c, z
                // from built-in:pocl)", "memory (no profile directory)").
                r.profile.empty() ? "" : (" profile=" + r.profile).c_str());
  log_line(line);
}

}  // namespace tandem::detail
