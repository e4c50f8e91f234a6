// A scope's seams: stored as it starts, the previous ones put back as it ends.
#include "seam_override.hpp"

namespace tandem::detail::seams {

Override::Override(const Values& values) : previous_(current()) { store(values, +1); }

Override::~Override() { store(previous_, -1); }

}  // namespace tandem::detail::seams
