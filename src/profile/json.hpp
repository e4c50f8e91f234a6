// What the files of profile/ that read and write JSON (profile.cpp, model_json.cpp, ranges.cpp,
// store.cpp, defaults.cpp, tune_log.cpp) share: integers read without truncation, kernel parameter
// sets, the cost model's part, and the physical ranges every number of a profile is checked
// against. The library's only users of nlohmann-json are the files of profile/.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/cost_model.hpp"

namespace tandem::detail::profile {

// A JSON integer within T's range, or an error naming `field`: nlohmann's get<int>() would
// truncate 64.7 to 64 and overflow on 1e10.
template <class T>
T integer_value(const nlohmann::json& v, const std::string& field) {
  const bool fits = v.is_number_unsigned()
                        ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
                        : v.is_number_integer() &&
                              v.get<int64_t>() >= std::numeric_limits<T>::min() &&
                              v.get<int64_t>() <= std::numeric_limits<T>::max();
  if (!fits)
    throw std::runtime_error(field + " = " + v.dump() +
                             (v.is_number_integer() ? " is out of range" : " is not an integer"));
  return static_cast<T>(v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>())
                                               : v.get<int64_t>());
}
template <class T>
T integer(const nlohmann::json& object, const char* field) {
  return integer_value<T>(object.at(field), field);
}

// A kernel's parameters: an object of NAME: integer. Throws std::runtime_error.
std::map<std::string, int> kernel_of(const nlohmann::json& j);

// The cost model as a profile stores it, with the measurements it was fitted to
// (model_json.cpp); reading it, a model that cannot plan is an error.
nlohmann::json model_json(const cost::Model& m, const std::vector<cost::Observation>& observations);
cost::Model model_of(const nlohmann::json& j, std::vector<cost::Observation>* observations);

// A profile's, a tuning log line's or the database's JSON from `text` (ranges.cpp): nested at
// most kMaxDepth deep, or std::runtime_error, as malformed text throws nlohmann's parse_error (both
// std::exception). What tandem writes nests 7 deep; what reads it (check_ranges, dump() in an
// error's message) walks it by recursion, which a file of a million '[' would take past the
// stack, so such a file is refused as it is parsed.
constexpr int kMaxDepth = 64;
nlohmann::json parse_json(const std::string& text);
// Refuses (std::runtime_error naming the place) a number that is NaN or infinite in a profile
// about to be written, where JSON would write null and every later read refuse the file.
void check_finite(const nlohmann::json& j, const std::string& place = "");

// Checks every number of a profile's JSON against its physical range (ranges.cpp's
// table): throws std::runtime_error naming the first one outside it, by its place in the file
// ("precisions.s.buckets[0].cpu_gflops = -5 ..."). Returns the places of numbers the table has
// no range for (kernel parameters aside, which gpu::check judges by name), so that a test can
// hold the table to every field a profile has.
std::vector<std::string> check_ranges(const nlohmann::json& profile);

}  // namespace tandem::detail::profile
