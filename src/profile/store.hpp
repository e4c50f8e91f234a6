// Where profiles live and which one applies: the profile directory, files written and read
// safely, a device's local profile (checked against this machine's setup), else the built-in
// database's closest entry, cached until forget().
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace tandem::detail::profile {

// $TANDEM_PROFILE_DIR, else $XDG_CACHE_HOME/tandem, else ~/.cache/tandem, else (no HOME)
// $XDG_RUNTIME_DIR/tandem where that is a directory of this user's alone (mode 0700); else ""
// (none): profiles are then kept in memory, for the process that saved them (save_local).
std::filesystem::path directory();
// The local profile file for `id` in directory(); "" where there is no directory.
std::filesystem::path path_for(const Identity& id);
// Writes the whole file or nothing (files::replace: never through a link, only over a regular
// file). Throws std::runtime_error.
void save(const Profile& p, const std::filesystem::path& file);
// Saves `p` as this machine's local profile for its identity: to path_for (returned), or, where
// there is no profile directory, into this process's memory (said once), returning "". Throws
// std::runtime_error.
std::filesystem::path save_local(const Profile& p);
// The same for a profile that replaces only some precisions of the one saved: `p` first takes,
// from the file saved for its identity (where it reads, is compatible and has that identity), the
// sections of the precisions it lacks that `replaced` does not name (tune s, then d, and both are
// there; a profile kept in memory, without a directory, is replaced whole). Reading that file and
// replacing it are one step among the threads and processes that save it, save_local's saves
// too (a lock file beside it, files::Lock, waited for at most 10 s, else a warning and the save
// without it), so two tunes of different precisions that save at once both land. An unreadable
// old file is simply replaced.
std::filesystem::path save_local_over(Profile& p, const std::vector<Precision>& replaced);
// Reads one file: a regular file of a profile's size (1 MiB at most), never waiting on a FIFO.
// Throws std::runtime_error naming the file and the problem.
Profile load(const std::filesystem::path& file);
// Every local profile file whose identity is `id` (what `tandem profile reset` removes), among
// the files named for its device (Identity::names_same_device).
std::vector<std::filesystem::path> local_files(const Identity& id);

// The profile that applies to `id`: a local file for exactly this identity (its own file name
// first, then the other files named for its device; no other file is read), with the built-in
// database's closest entry's sections for the precisions it lacks, else that entry alone (device,
// then architecture, then platform, then any), else none. A device's or relative's built-in entry
// takes the precisions it lacks from its architecture's nearest entry that has them
// (with_relatives_precisions in database.hpp). A local profile for the same device
// that differs in driver, CPU, BLAS or version, or one that cannot be read, is reported once on
// stderr and not applied. Cached (here, and nowhere else) until forget().
std::shared_ptr<const Profile> active(const Identity& id);
// The same, where the caller has worked out `file_name` (id.file_name()) once already: a
// device's identity is fixed for the process (plan/device_profile.hpp).
std::shared_ptr<const Profile> active(const Identity& id, const std::string& file_name);
// What this machine tuned for `id`: the local profile active() starts from, without the built-in
// entry's sections; else the built-in entry as shipped, without the sections it borrows from a
// relative (what `tandem profile export` writes). Not cached.
std::shared_ptr<const Profile> own(const Identity& id);
void forget();
// How many times forget() has run: what depends on the profiles in use (route.hpp) is taken
// again when it changes.
uint64_t changes();

}  // namespace tandem::detail::profile
