// Reading a precision from its letter, with the error that names what is accepted, and printing it
// (precision.hpp).
#include "base/precision.hpp"

#include <ostream>
#include <stdexcept>

namespace tandem::detail {

std::ostream& operator<<(std::ostream& out, Precision p) { return out << letter(p); }

Precision parse_precision(std::string_view text) {
  if (const auto p = precision_from_letter(text)) return *p;
  throw std::invalid_argument("unknown precision '" + std::string(text) +
                              "': tandem's precisions are s, d, c and z");
}

}  // namespace tandem::detail
