// The shared text helpers of text.hpp.
#include "base/text.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <stdexcept>

#include "base/memo.hpp"

namespace tandem::detail::text {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

std::optional<double> number(const std::string& text) {
  const char* from = text.data();
  const char* const end = text.data() + text.size();
  while (from != end && std::isspace(static_cast<unsigned char>(*from))) ++from;
  if (from != end && *from == '+' && from + 1 != end && from[1] != '-') ++from;
  double value = 0;
  const auto [stop, error] = std::from_chars(from, end, value);
  if (error != std::errc() || stop != end || from == end) return std::nullopt;
  return value;
}

std::string describe(const std::map<std::string, int>& params) {
  // Every call's report names its kernels: remembered, as the same few sets come back.
  struct View {
    const std::map<std::string, int>& params;
    uint64_t hash() const { return hash_map(params); }
    bool matches(const std::map<std::string, int>& k) const { return k == params; }
    std::map<std::string, int> own() const { return params; }
  };
  static auto& memo = *new Memo<std::map<std::string, int>, std::string>;  // never destroyed
  return memo.get(View{params}, [&] {
    std::string s;
    for (const auto& [name, value] : params)
      s += (s.empty() ? "" : " ") + name + "=" + std::to_string(value);
    return s;
  });
}

std::string describe(const std::shared_ptr<const std::map<std::string, int>>& params) {
  using View = ByAddress<std::shared_ptr<const std::map<std::string, int>>>;
  static auto& memo = *new Memo<View::Key, std::string>;  // never destroyed
  return memo.get(View{params}, [&] { return describe(*params); });
}

std::map<std::string, int> parse_params(const std::string& text) {
  std::map<std::string, int> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find_first_of(" ,", at), text.size());
    const std::string item = text.substr(at, end - at);
    at = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = eq == std::string::npos ? item : item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    char* stop = nullptr;
    errno = 0;
    const long v = value.empty() ? 0 : std::strtol(value.c_str(), &stop, 10);
    // The whole value must be the number: a NUL inside it (which ends strtol's C string early)
    // would otherwise pass "MDIMC=\0x" as MDIMC=0.
    if (name.empty() || value.empty() || stop != value.c_str() + value.size() || errno == ERANGE ||
        v < INT_MIN || v > INT_MAX)
      throw std::invalid_argument("'" + item + "' is not NAME=integer");
    out[name] = static_cast<int>(v);
  }
  return out;
}

}  // namespace tandem::detail::text
