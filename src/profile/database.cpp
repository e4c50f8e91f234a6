// The built-in database: the profiles of database/*.json, embedded at build time, and how an
// identity finds its entry among them.
#include "profile/database.hpp"

#include "base/log.hpp"
#include "profile/architecture.hpp"
#include "tandem_builtin_profiles.hpp"

namespace tandem::detail::profile {

const std::vector<Profile>& builtin() {
  static const std::vector<Profile> db = [] {
    std::vector<Profile> out;
    for (const auto& [name, text] : builtin_profiles::all) {
      if (std::string(name) == kDefaultsName) continue;  // not a profile: kernel_defaults()
      try {
        Profile p = from_json(text);
        p.origin = std::string("built-in:") + name;
        out.push_back(std::move(p));
      } catch (const std::exception& e) {
        warn_once(std::string("builtin:") + name,
                  std::string("built-in profile ") + name + " ignored: " + e.what());
      }
    }
    return out;
  }();
  return db;
}

namespace {

// How much of the host an entry was tuned on is this one's: the CPU and the thread count (its
// rates and its cost model's CPU side are the host's), the CPU alone, or neither. Of a device's
// entries, the built-in database takes the likest host's (one device on several kinds of host:
// one H200 beside 16 cores, two beside 32), the first in name order among equals.
int host_likeness(const Identity& entry, const Identity& id) {
  if (entry.cpu_model != id.cpu_model) return 0;
  return entry.threads == id.threads ? 2 : 1;
}

}  // namespace

const Profile* builtin_entry(const std::string& level, const Identity& id,
                             const std::vector<Profile>& db) {
  const Profile* best = nullptr;
  for (const Profile& p : db) {
    if (p.match != level || !compatible(p)) continue;
    const bool hit =
        p.match == "any" || (p.match == "platform" && p.identity.platform == id.platform) ||
        (p.match == "device" && p.identity.platform == id.platform &&
         p.identity.device == id.device && p.identity.compute_units == id.compute_units);
    if (hit &&
        (best == nullptr || host_likeness(p.identity, id) > host_likeness(best->identity, id)))
      best = &p;
  }
  return best;
}

const Profile* nearest_architecture(const Identity& id, const std::vector<Profile>& db,
                                    std::string* how) {
  const Profile* best = nullptr;
  int nearest = 0;
  for (const Profile& p : db) {
    if ((p.match != "device" && p.match != "architecture") || !compatible(p) ||
        p.identity.platform != id.platform)
      continue;
    const auto d = architecture_distance(p.identity.architecture, id.architecture);
    if (d && (best == nullptr || *d < nearest)) {
      best = &p;
      nearest = *d;
    }
  }
  if (best != nullptr)
    *how = nearest == 0 ? "same architecture, " + id.architecture
                        : "architecture " + best->identity.architecture + ", the nearest to " +
                              id.architecture;
  return best;
}

}  // namespace tandem::detail::profile
