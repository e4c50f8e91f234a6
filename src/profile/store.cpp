// Where profiles live and which one applies: the profile directory, a profile file written and
// read safely, a device's local profile (checked against this machine's setup), else the built-in
// database's closest entry, cached per identity until forget().
#include "profile/store.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <mutex>
#include <system_error>

#include "base/files.hpp"
#include "base/log.hpp"
#include "profile/database.hpp"
#include "profile/json.hpp"

namespace tandem::detail::profile {
namespace fs = std::filesystem;

namespace {

// The largest profile file read. Profiles are a few KiB to tens of KiB (the largest built-in one,
// the H100's, with a dozen buckets, resident splits and two precisions, 20 KiB; a tuned one with
// its cost model and the measurements behind it, about 30 KiB); 1 MiB leaves room for fifty times
// that, and every call that looks for a profile reads at most that much of a file.
constexpr uintmax_t kMaxBytes = uintmax_t{1} << 20;

// The directory as text, without the parsing a path does: every call's profile lookup keys on it
// (a path cost a small call about 1k instructions, issue 17).
std::string directory_text() {
  // `base` and then `tail`, one separator between them, as fs::path's operator/ joins them.
  const auto join = [](std::string base, const char* tail) {
    if (base.back() != '/') base += '/';
    return base += tail;
  };
  if (const char* d = std::getenv("TANDEM_PROFILE_DIR"); d != nullptr && *d != '\0') return d;
  // A relative XDG_CACHE_HOME is ignored, as the XDG rules say: it would name another folder in
  // each working directory.
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x == '/')
    return join(x, "tandem");
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    return join(h, ".cache/tandem");
  // Without a home, the runtime directory the XDG rules give each user: never a folder in the
  // shared temporary directory, where another user could have put a profile or a link first.
  if (const char* r = std::getenv("XDG_RUNTIME_DIR"); r != nullptr && *r == '/') {
    struct stat st;
    if (::stat(r, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
        (st.st_mode & 0777) == 0700)
      return join(r, "tandem");
  }
  return "";
}

// Profiles saved where there is no profile directory: this process's alone, by file name.
std::map<std::string, std::shared_ptr<const Profile>>& in_memory() {
  static auto& kept = *new std::map<std::string, std::shared_ptr<const Profile>>;
  return kept;
}

std::mutex& in_memory_mutex() {
  static std::mutex& m = *new std::mutex;
  return m;
}

void say_in_memory() {
  warn_once("profile-dir:none",
            "no profile directory (HOME, XDG_CACHE_HOME and TANDEM_PROFILE_DIR are unset or "
            "XDG_CACHE_HOME is not absolute, and "
            "XDG_RUNTIME_DIR is not a directory of this user's alone): profiles are kept in "
            "memory only, for this process, and only the built-in ones are found");
}

}  // namespace

void save(const Profile& p, const fs::path& file) {
  const std::string text = to_json(p);
  // Never written where every later read would refuse it.
  check_ranges(parse_json(text));
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  files::replace(file, text);
}

Profile load(const fs::path& file) {
  // Only a regular file of a profile's size is read: a FIFO would block every call that looks for
  // a profile forever, and a file of hundreds of MB would cost each process seconds to reject.
  const std::string text = files::read(file, kMaxBytes, "a profile");
  try {
    Profile p = from_json(text);
    p.origin = file.string();
    return p;
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

fs::path directory() { return directory_text(); }

fs::path path_for(const Identity& id) {
  const fs::path dir = directory();
  return dir.empty() ? dir : dir / id.file_name();
}

fs::path save_local(const Profile& p) {
  Profile whole = p;
  return save_local_over(whole, {std::begin(kPrecisions), std::end(kPrecisions)});
}

namespace {

// How long a save waits for another save of the same file: saves take milliseconds.
constexpr double kLockSeconds = 10;

fs::path keep_in_memory(const Profile& p) {
  say_in_memory();
  auto kept = std::make_shared<Profile>(p);
  kept->origin = "memory (no profile directory)";
  std::lock_guard<std::mutex> lock(in_memory_mutex());
  in_memory()[p.identity.file_name()] = std::move(kept);
  return {};
}

}  // namespace

fs::path save_local_over(Profile& p, const std::vector<Precision>& replaced) {
  const fs::path file = path_for(p.identity);
  if (file.empty()) return keep_in_memory(p);
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  const fs::path lock_file = file.parent_path() / ("." + file.filename().string() + ".lock");
  const files::Lock lock(lock_file, kLockSeconds);
  if (!lock.held() && files::unwritable(file).empty())
    warn_once("profile-lock:" + lock_file.string(),
              "could not lock " + lock_file.string() + " within " +
                  std::to_string(static_cast<int>(kLockSeconds)) +
                  " s (another user's file, or held that long): saving " + file.string() +
                  " without it");
  if (replaced.size() < static_cast<size_t>(kPrecisionCount) && fs::exists(file, ec)) {
    try {
      const Profile old = load(file);
      if (compatible(old) && old.identity == p.identity)
        for (const auto& [prec, pp] : old.precisions)
          if (std::find(replaced.begin(), replaced.end(), prec) == replaced.end())
            p.precisions.emplace(prec, pp);
    } catch (const std::exception&) {
      // An unreadable old file is simply replaced.
    }
  }
  save(p, file);
  return file;
}

namespace {

// The profile directory's files that may hold a profile for `id`'s device, by their names alone:
// its own file first, then the others that Identity::file_name gives the same device (another
// driver, CPU or BLAS), in name order. Nothing else there is read, so junk in the directory costs
// a call nothing. A directory that exists but cannot be listed is reported once, since its
// profiles would otherwise be skipped without a word.
std::vector<fs::path> local_candidates(const fs::path& dir, const Identity& id) {
  const fs::path exact = dir / id.file_name();
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (status.type() == fs::file_type::not_found) return {};  // nothing tuned here yet
  std::vector<fs::path> files;
  fs::directory_iterator it, end;
  if (fs::is_directory(status)) it = fs::directory_iterator(dir, ec);
  for (; !ec && it != end; it.increment(ec))
    if (it->path() != exact && id.names_same_device(it->path().filename().string()))
      files.push_back(it->path());
  if (ec || !fs::is_directory(status)) {
    warn_once("profile-dir:" + dir.string(),
              "cannot read the profile directory " + dir.string() + " (" +
                  (ec ? ec.message() : std::string("not a directory")) +
                  "): no local profile applies");
    return {};
  }
  std::sort(files.begin(), files.end());
  if (fs::exists(exact, ec)) files.insert(files.begin(), exact);
  return files;
}

// A profile this process saved with no profile directory to save it in.
std::shared_ptr<const Profile> kept_in_memory(const Identity& id) {
  say_in_memory();
  std::lock_guard<std::mutex> lock(in_memory_mutex());
  const auto it = in_memory().find(id.file_name());
  return it == in_memory().end() ? nullptr : it->second;
}

// A local profile for exactly this machine: this identity's own file first, then any other file
// that claims the same device; or, without a profile directory, one this process saved.
std::shared_ptr<const Profile> local(const Identity& id) {
  const fs::path dir = directory();
  if (dir.empty()) return kept_in_memory(id);
  const fs::path exact = dir / id.file_name();
  for (const fs::path& file : local_candidates(dir, id)) {
    Profile p;
    try {
      p = load(file);
    } catch (const std::exception& e) {
      warn_once("profile:" + file.string(), std::string("ignoring profile: ") + e.what());
      continue;
    }
    if (p.identity.device != id.device && file != exact) continue;  // another device's
    std::string why;
    if (const std::string d = p.identity.difference(id); !d.empty())
      why = "it was tuned for another setup (" + d + ")";
    else if (!compatible(p, &why))
      why = "it is incompatible (" + why + ")";
    if (!why.empty()) {
      warn_once("profile:" + file.string(),
                "not applying profile " + file.string() + ": " + why +
                    "; using defaults (run `tandem tune` to tune this setup)");
      continue;
    }
    return std::make_shared<const Profile>(std::move(p));
  }
  return nullptr;
}

// The built-in database's entry for this device (profile::entry_for), borrowing or as shipped.
std::shared_ptr<const Profile> built_in(const Identity& id, bool borrow = true) {
  return entry_for(id, builtin(), borrow);
}

// The local profile, else the built-in entry. A local profile speaks for the precisions it was
// tuned for; each other precision keeps what the built-in entry says (tuning dgemm alone leaves
// sgemm on the entry's kernels, not on the defaults), and the origin says so.
std::shared_ptr<const Profile> find(const Identity& id) {
  auto mine = local(id);
  auto entry = built_in(id);
  if (!mine || !entry) return mine ? mine : entry;
  auto merged = std::make_shared<Profile>(*mine);
  std::string taken;
  for (const auto& [prec, pp] : entry->precisions)
    if (merged->precisions.emplace(prec, pp).second)
      taken += (taken.empty() ? "" : ", ") + std::string(1, letter(prec));
  if (taken.empty()) return mine;
  merged->origin += " (" + taken + " from " + entry->origin + ")";
  return merged;
}

}  // namespace

namespace {

std::mutex& cache_mutex() {
  static std::mutex& m = *new std::mutex;
  return m;
}

std::map<std::string, std::shared_ptr<const Profile>>& cache() {
  static auto& c = *new std::map<std::string, std::shared_ptr<const Profile>>;
  return c;
}

}  // namespace

namespace {

std::shared_ptr<const Profile> active_keyed(const Identity& id, const std::string& file_name) {
  std::lock_guard<std::mutex> lock(cache_mutex());
  std::string key = directory_text();
  key += '\n';
  key += file_name;
  auto it = cache().find(key);
  if (it == cache().end()) it = cache().emplace(key, find(id)).first;
  return it->second;
}

}  // namespace

std::shared_ptr<const Profile> active(const Identity& id) {
  return active_keyed(id, id.file_name());
}

std::shared_ptr<const Profile> active(const Identity& id, const std::string& file_name) {
  return active_keyed(id, file_name);
}

std::shared_ptr<const Profile> own(const Identity& id) {
  if (auto mine = local(id)) return mine;
  return built_in(id, /*borrow=*/false);
}

std::vector<fs::path> local_files(const Identity& id) {
  std::vector<fs::path> out;
  const fs::path dir = directory();
  if (dir.empty()) return out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!id.names_same_device(entry.path().filename().string())) continue;
    try {
      if (load(entry.path()).identity == id) out.push_back(entry.path());
    } catch (const std::exception&) {
    }
  }
  return out;
}

namespace {
std::atomic<uint64_t> g_changes{0};
}  // namespace

void forget() {
  std::lock_guard<std::mutex> lock(cache_mutex());
  cache().clear();
  g_changes.fetch_add(1);
}

uint64_t changes() { return g_changes.load(); }

}  // namespace tandem::detail::profile
