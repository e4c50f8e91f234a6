// The built-in database: the profiles shipped in database/*.json (embedded at build time), and
// how an identity finds its entry in it (its device's, its architecture's nearest, its
// platform's, any).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace tandem::detail::profile {

// The name of database/defaults.json among the embedded files: the global numbers (defaults.hpp),
// not a profile.
inline constexpr const char* kDefaultsName = "defaults";

// The built-in database (database/*.json, embedded at build time).
const std::vector<Profile>& builtin();

// The entry of `db` for `id` at `level` ("device": the device's own, tuned on the likest host,
// CPU and thread count, to this one; "platform": its vendor's; "any"); nullptr if none.
const Profile* builtin_entry(const std::string& level, const Identity& id,
                             const std::vector<Profile>& db);

// The entry of `db` whose architecture is nearest `id`'s, among its platform's "device" and
// "architecture" entries of the same family (with a section for `having`, where given); nullptr
// if none (or `id` has no architecture). *how says which architecture it is and how near.
const Profile* nearest_architecture(const Identity& id, const std::vector<Profile>& db,
                                    std::string* how,
                                    std::optional<Precision> having = std::nullopt);

// A device's entry with each precision it lacks taken from its architecture's nearest entry that
// has it (an entry tuned for s and d only keeps its relative's c and z kernels rather than leave
// complex calls to the CPU); the origin says which came from where. The entry as it is where it
// lacks none, or no relative has them.
Profile with_relatives_precisions(const Profile& entry, const Identity& id,
                                  const std::vector<Profile>& db);

// The entry of `db` for `id`: the device's, else its architecture's nearest (its origin says
// which), else its platform's, else the global one; with `borrow`, a device's or relative's entry
// takes the precisions it lacks from its relatives (with_relatives_precisions: what calls run by),
// without it the entry as shipped (what `tandem profile export` writes). Null where none applies.
std::shared_ptr<const Profile> entry_for(const Identity& id, const std::vector<Profile>& db,
                                         bool borrow);

}  // namespace tandem::detail::profile
