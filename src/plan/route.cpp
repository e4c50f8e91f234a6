// The route (route.hpp): the fingerprint of what decides it, the record kept in the profile
// directory (ROUTE_FILE, a line per fingerprint), and this process's copy.
#include "plan/route.hpp"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "base/files.hpp"
#include "base/seams.hpp"
#include "cpu/blas.hpp"
#include "gpu/pinned_memory.hpp"
#include "profile/store.hpp"
#include "tandem/version.h"
#include "tandem_builtin_profiles.hpp"

extern char** environ;

namespace tandem::detail::route {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRouteFile = "routes.cache";
constexpr size_t kKept = 16;  // fingerprints the file keeps, the latest first
constexpr uintmax_t kMostBytes = 1 << 16;

// The cube edges learn() plans, smallest first: the route is the largest whose cube, and every
// cube before it, auto planned on the CPU alone.
constexpr std::array<int64_t, 30> kEdges = {
    16,  32,   48,   64,   96,   128,  160,  192,  256,  320,  384,  448,  512,  640,   768,
    896, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 8192, 12288, 16384};

// The environment outside tandem's own that decides which devices OpenCL shows and how many
// threads the CPU side has.
constexpr std::array<const char*, 14> kEnvironment = {
    "OCL_ICD_VENDORS",        "OCL_ICD_FILENAMES",    "OPENCL_VENDOR_PATH",   "POCL_DEVICES",
    "POCL_MAX_PTHREAD_COUNT", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",     "ZE_AFFINITY_MASK",     "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
    "OPENBLAS_CORETYPE",      "LD_LIBRARY_PATH"};

// tandem's settings that never change what auto plans: the log's, and the drop-in's threshold
// (a call below it never reaches the route) and hybrid's fraction.
bool outside_plan(const char* setting) {
  for (const char* name :
       {"TANDEM_VERBOSE=", "TANDEM_LOG=", "TANDEM_MIN_MNK=", "TANDEM_GPU_FRACTION="})
    if (std::strncmp(setting, name, std::strlen(name)) == 0) return true;
  return false;
}

uint64_t fnv1a(const std::string& text, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// A file's identity for the fingerprint: size and modification time, or "-" where it is absent.
std::string stamp(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "-";
  return std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

// Where the ICD loader would find a driver library named in an .icd file (a path, or a name it
// loads through the dynamic linker's search: LD_LIBRARY_PATH, then the system's directories).
std::string driver_stamp(const std::string& library) {
  if (library.find('/') != std::string::npos) return stamp(library);
  std::vector<std::string> dirs;
  if (const char* lp = std::getenv("LD_LIBRARY_PATH")) {
    std::stringstream s(lp);
    for (std::string d; std::getline(s, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  for (const char* d : {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64",
                        "/usr/lib", "/lib", "/usr/local/lib", "/usr/lib/aarch64-linux-gnu"})
    dirs.emplace_back(d);
  for (const std::string& d : dirs)
    if (std::string s = stamp(fs::path(d) / library); s != "-") return d + "/" + library + " " + s;
  return library + " -";
}

// The OpenCL drivers installed (the ICD loader's vendor files and the libraries they name), and
// the device nodes GPUs appear as.
std::string drivers() {
  std::string out;
  const char* vendors = std::getenv("OCL_ICD_VENDORS");
  std::error_code ec;
  fs::path dir = vendors != nullptr && fs::is_directory(vendors, ec)
                     ? fs::path(vendors)
                     : fs::path("/etc/OpenCL/vendors");
  std::vector<fs::path> icds;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".icd") icds.push_back(e.path());
  std::sort(icds.begin(), icds.end());
  for (const fs::path& icd : icds) {
    std::string library;
    try {
      library = files::read(icd, 4096, "an OpenCL vendor file");
    } catch (const std::exception&) {
    }
    library.erase(std::remove_if(library.begin(), library.end(),
                                 [](char c) { return c == '\n' || c == '\r'; }),
                  library.end());
    out += icd.filename().string() + " " + stamp(icd) + " " + driver_stamp(library) + ";";
  }
  std::vector<std::string> nodes;
  for (const char* d : {"/dev/dri", "/dev"})
    for (const auto& e : fs::directory_iterator(d, ec)) {
      const std::string name = e.path().filename().string();
      if (std::string(d) == "/dev/dri" || name.rfind("nvidia", 0) == 0 || name == "kfd")
        nodes.push_back(e.path().string());
    }
  std::sort(nodes.begin(), nodes.end());
  for (const std::string& n : nodes) out += n + ";";
  return out;
}

// The local profiles (any file of the profile directory but the route's own).
std::string profiles(const fs::path& dir) {
  if (dir.empty()) return "no directory";
  std::vector<std::string> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name != kRouteFile) entries.push_back(name + " " + stamp(e.path()));
  }
  std::sort(entries.begin(), entries.end());
  std::string out;
  for (const std::string& e : entries) out += e + ";";
  return out;
}

// Everything that decides the route, hashed.
std::string fingerprint(const fs::path& dir) {
  std::string text = std::string("tandem ") + TANDEM_VERSION + ";";
  uint64_t db = fnv1a("");
  for (const auto& [name, json] : builtin_profiles::all) db = fnv1a(json, fnv1a(name, db));
  text += "db " + std::to_string(db) + ";";
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "TANDEM_", 7) == 0 && !outside_plan(*e)) text += std::string(*e) + ";";
  for (const char* name : kEnvironment)
    if (const char* v = std::getenv(name)) text += std::string(name) + "=" + v + ";";
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  text += std::string("host ") + host.data() + " cpus " + std::to_string(cpus) + ";";
  text += "blas " + cpu_blas::version() + " " + cpu_blas::core_type() + " " +
          std::to_string(cpu_blas::current_threads()) + " " + cpu_blas::config() + ";";
  text += drivers() + profiles(dir);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return hex;
}

// One recorded route: the largest CPU-alone cube edge per precision, by index_of (-1: not known).
// The file's lines hold the fingerprint and the edges of s and d (kFiled).
struct Record {
  std::string fingerprint;
  std::array<int64_t, kPrecisionCount> edge{-1, -1, -1, -1};
};
constexpr int kFiled = 2;
static_assert(index_of(Precision::s) == 0 && index_of(Precision::d) == 1);

std::vector<Record> read_records(const fs::path& file) {
  std::vector<Record> out;
  std::string text;
  try {
    text = files::read(file, kMostBytes, "a route file");
  } catch (const std::exception&) {
    return out;  // none yet, or unreadable: learned again
  }
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    Record r;
    std::stringstream s(line);
    bool read = static_cast<bool>(s >> r.fingerprint);
    for (int i = 0; i < kFiled && read; ++i) read = static_cast<bool>(s >> r.edge[i]);
    if (read && r.fingerprint.size() == 16) out.push_back(r);
  }
  return out;
}

// This process's copy: the fingerprint's route, taken for the profiles as they were at
// `profiles_seen` (profile::changes()).
struct Known {
  uint64_t profiles_seen = ~uint64_t{0};
  fs::path dir;
  Record record;
};

std::mutex& known_mutex() {
  static std::mutex& m = *new std::mutex;
  return m;
}
Known& known() {
  static Known& k = *new Known;
  return k;
}
// The edges as known now, for the calls' fast check; and the profile state they belong to.
std::array<std::atomic<int64_t>, kPrecisionCount> g_edge{-1, -1, -1, -1};
std::atomic<uint64_t> g_seen{~uint64_t{0}};

// Reads the record for this fingerprint, once per profile state. Called with known_mutex held.
void refresh() {
  Known& k = known();
  const uint64_t now = profile::changes();
  if (k.profiles_seen == now) return;
  k = Known{};
  k.profiles_seen = now;
  k.dir = profile::directory();
  k.record.fingerprint = fingerprint(k.dir);
  if (!k.dir.empty())
    for (const Record& r : read_records(k.dir / kRouteFile))
      if (r.fingerprint == k.record.fingerprint) k.record.edge = r.edge;
  for (int i = 0; i < kPrecisionCount; ++i) g_edge[i].store(k.record.edge[i]);
  g_seen.store(now);
}

// The edge for this precision, the record read again first where the profiles changed.
int64_t edge_now(Precision precision) {
  if (g_seen.load() != profile::changes()) {
    std::lock_guard<std::mutex> lock(known_mutex());
    refresh();
  }
  return g_edge[index_of(precision)].load();
}

}  // namespace

bool eligible(const Options& o, Strategy strategy) {
  return strategy == Strategy::Auto && !o.device && !env_config().device &&
         o.kernel_params.empty() && !o.direct && !o.balance && !o.cpu_threads &&
         !o.feeder_threads && !seams::overridden() && !gpu::any_pinned_block();
}

bool known(Precision precision) { return edge_now(precision) >= 0; }

bool cpu_alone(Precision precision, int64_t m, int64_t n, int64_t k) {
  const int64_t edge = edge_now(precision);
  if (edge <= 0) return false;
  const double cube =
      static_cast<double>(edge) * static_cast<double>(edge) * static_cast<double>(edge);
  return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <= cube;
}

void learn(Precision precision, const std::function<bool(int64_t edge)>& devices_take_rows) {
  std::lock_guard<std::mutex> lock(known_mutex());
  refresh();
  Known& k = known();
  const int at = index_of(precision);
  if (k.record.edge[at] >= 0) return;
  int64_t edge = 0;
  for (int64_t e : kEdges) {
    if (devices_take_rows(e)) break;
    edge = e;
  }
  k.record.edge[at] = edge;
  g_edge[at].store(edge);
  if (k.dir.empty()) return;
  const fs::path file = k.dir / kRouteFile;
  std::vector<Record> records{k.record};
  for (const Record& r : read_records(file))
    if (r.fingerprint != k.record.fingerprint && records.size() < kKept) records.push_back(r);
  std::string text;
  for (const Record& r : records) {
    text += r.fingerprint;
    for (int i = 0; i < kFiled; ++i) text += " " + std::to_string(r.edge[i]);
    text += "\n";
  }
  try {
    files::replace(file, text);
  } catch (const std::exception&) {
    // An unwritable directory: the route holds for this process alone.
  }
}

}  // namespace tandem::detail::route
