// Small text helpers that the library, the tuner and the benchmarks share: lower-casing, numbers
// whatever the locale, and kernel parameters as "NAME=value" text in both directions.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tandem::detail::text {

// ASCII lower case (names of devices, strategies and environment values are ASCII).
std::string lower(std::string s);

// The whole of `text` as a decimal number ("0.5", "+0.5", " 1e6"), or nothing: leading blanks
// and a plus sign, then a decimal number with a point, whatever locale the program set (strtod
// would take "0,5" and refuse "0.5" in a program that set LC_NUMERIC to de_DE, and tandem is a
// library inside such programs). Hexadecimal and a value beyond double's range are refused.
std::optional<double> number(const std::string& text);

// "NAME=v NAME=v ...", in name order: how reports, logs and the CLI print kernel parameters.
std::string describe(const std::map<std::string, int>& params);
// The same for a shared set that never changes (gpu::SharedParams), found again by its address
// rather than by hashing and comparing its contents.
std::string describe(const std::shared_ptr<const std::map<std::string, int>>& params);

// The reverse of describe() (spaces or commas between items). Throws std::invalid_argument
// naming the item that is not NAME=integer.
std::map<std::string, int> parse_params(const std::string& text);

}  // namespace tandem::detail::text
