// Reading one number from a sysfs file, as the RAPL (energy counters) and amdgpu (power
// readings) sources both do, with the reason in words when the file cannot give one.
#pragma once

#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace tandem::power::sysfs {

// The first line of `file` as a number: `convert(text, &used)` is std::stod or std::stoull
// (through a lambda, as they are overloaded), the whole line must convert, and `accept(text,
// value)` must hold. Otherwise nullopt, and *error says why.
template <class T, class Convert, class Accept>
std::optional<T> read_number(const std::filesystem::path& file, std::string* error, Convert convert,
                             Accept accept) {
  std::ifstream in(file);
  if (!in) {
    *error = file.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string text;
  std::getline(in, text);
  try {
    size_t used = 0;
    const T value = convert(text, &used);
    if (used == text.size() && accept(text, value)) return value;
  } catch (const std::exception&) {
  }
  *error = file.string() + ": not a number ('" + text.substr(0, 40) + "')";
  return std::nullopt;
}

}  // namespace tandem::power::sysfs
