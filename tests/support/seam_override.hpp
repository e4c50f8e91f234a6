// For tests and benchmarks only: sets tandem's seams (src/base/seams.hpp) for a scope and restores
// the previous values after it. Outside the library: the library only reads its seams.
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
