// The built-in database: the profiles of database/*.json, embedded at build time, and how an
// identity finds its entry among them.
#include "profile/database.hpp"

#include <map>

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
        // Each section is the entry's own, whatever local profile it was once shipped from.
        for (auto& [prec, pp] : p.precisions) {
          pp.source = p.origin;
          pp.based_on.clear();
          pp.measured.clear();
        }
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
                                    std::string* how, std::optional<Precision> having) {
  const Profile* best = nullptr;
  int nearest = 0;
  for (const Profile& p : db) {
    if ((p.match != "device" && p.match != "architecture") || !compatible(p) ||
        p.identity.platform != id.platform || (having && p.precisions.count(*having) == 0))
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

Profile with_relatives_precisions(const Profile& entry, const Identity& id,
                                  const std::vector<Profile>& db) {
  Profile out = entry;
  std::map<std::string, std::string> taken;  // relative's origin and how near -> letters
  for (const Precision prec : kPrecisions) {
    if (out.precisions.count(prec) != 0) continue;
    std::string how;
    const Profile* near = nearest_architecture(id, db, &how, prec);
    if (near == nullptr) continue;
    out.precisions.emplace(prec, near->precisions.at(prec));
    std::string& letters = taken[near->origin + ", " + how];
    letters += (letters.empty() ? "" : ", ") + std::string(1, letter(prec));
  }
  for (const auto& [from, letters] : taken) out.origin += " (" + letters + " from " + from + ")";
  return out;
}

// The levels in turn: device, architecture (a relative's entry, named in the origin), platform,
// any; only a device's or a relative's entry borrows.
std::shared_ptr<const Profile> entry_for(const Identity& id, const std::vector<Profile>& db,
                                         bool borrow) {
  const auto lent = [&](const Profile& entry) {
    return std::make_shared<const Profile>(borrow ? with_relatives_precisions(entry, id, db)
                                                  : entry);
  };
  if (const Profile* own = builtin_entry("device", id, db)) return lent(*own);
  for (const char* level : {"architecture", "platform", "any"}) {
    if (std::string(level) == "architecture") {
      std::string how;
      if (const Profile* near = nearest_architecture(id, db, &how)) {
        Profile p = *near;
        p.origin += " (" + how + ")";
        return lent(p);
      }
      continue;
    }
    const Profile* best = builtin_entry(level, id, db);
    if (best != nullptr) return std::make_shared<const Profile>(*best);
  }
  return nullptr;
}

}  // namespace tandem::detail::profile
