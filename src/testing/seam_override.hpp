// For tests and benchmarks only: sets tandem's seams (src/seams.hpp) for a scope and restores
// the previous values after it. Production code never includes this header (ctest `structure`).
#pragma once

#include "base/seams.hpp"

namespace tandem::detail::seams {

class Override {
 public:
  explicit Override(const Values& values);
  ~Override();
  Override(const Override&) = delete;
  Override& operator=(const Override&) = delete;

 private:
  Values previous_;
};

}  // namespace tandem::detail::seams
