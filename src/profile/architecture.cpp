// The architecture's text form and the distance the built-in database matches by.
#include "profile/architecture.hpp"

#include <cstdio>
#include <cstdlib>

namespace tandem::detail::profile {

std::string Architecture::text() const {
  return family + ":" + std::to_string(major) + "." + std::to_string(minor);
}

std::optional<Architecture> parse_architecture(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  Architecture a;
  a.family = text.substr(0, colon);
  char rest = 0;
  if (std::sscanf(text.c_str() + colon + 1, "%d.%d%c", &a.major, &a.minor, &rest) != 2 ||
      a.major < 0 || a.minor < 0)
    return std::nullopt;
  return a;
}

std::optional<int> architecture_distance(const std::string& a, const std::string& b) {
  const auto x = parse_architecture(a), y = parse_architecture(b);
  if (!x || !y || x->family != y->family) return std::nullopt;
  return 1000 * std::abs(x->major - y->major) + std::abs(x->minor - y->minor);
}

}  // namespace tandem::detail::profile
