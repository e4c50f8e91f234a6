// The built-in database's global numbers, database/defaults.json, each read once.
#include "profile/defaults.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "cpu/small_kernel.hpp"
#include "profile/database.hpp"
#include "profile/json.hpp"
#include "tandem_builtin_profiles.hpp"

namespace tandem::detail::profile {
using nlohmann::json;

namespace {

// database/defaults.json, parsed once. The database is part of the build, so a defaults
// file that does not parse is a build error that every test would show, not a user's problem to
// recover from.
const json& defaults_file() {
  static const json j = [] {
    for (const auto& [name, text] : builtin_profiles::all)
      if (std::string(name) == kDefaultsName) return json::parse(text);
    throw std::logic_error("the built-in database has no database/defaults.json");
  }();
  return j;
}

}  // namespace

const std::map<std::string, int>& kernel_defaults(bool is_gpu) {
  static const auto defaults = [] {
    const json& j = defaults_file().at("kernel_defaults");
    return std::make_pair(kernel_of(j.at("gpu")), kernel_of(j.at("cpu")));
  }();
  return is_gpu ? defaults.first : defaults.second;
}

const Direct& direct_defaults(bool is_gpu) {
  static const json& j = defaults_file().at("direct");
  // Never destroyed: plans point at them until exit.
  static const auto& kernels = *new std::array<std::map<std::string, int>, 2>{
      kernel_of(j.at("cpu").at("kernel")), kernel_of(j.at("gpu").at("kernel"))};
  static const Direct direct[2] = {{&kernels[0], integer<int64_t>(j.at("cpu"), "below")},
                                   {&kernels[1], integer<int64_t>(j.at("gpu"), "below")}};
  return direct[is_gpu ? 1 : 0];
}

const std::map<std::string, int>& engine_defaults() {
  static const auto defaults = kernel_of(defaults_file().at("engine"));
  return defaults;
}

const LaunchBound& launch_bound() {
  static const LaunchBound bound = [] {
    const json& j = defaults_file().at("launch");
    return LaunchBound{j.at("max_seconds").get<double>(), j.at("assumed_gflops").get<double>()};
  }();
  return bound;
}

const CpuShape& cpu_shape() {
  static const CpuShape shape{defaults_file().at("cpu_shape").at("half_dimension").get<double>()};
  return shape;
}

int64_t level3_min_diagonal(Precision precision) {
  static const auto sizes = [] {
    std::map<Precision, int64_t> by_precision;
    for (const auto& [key, size] : defaults_file().at("level3").at("min_diagonal").items()) {
      const auto p = precision_from_letter(key);
      if (!p)
        throw std::logic_error("database/defaults.json's level3.min_diagonal names '" + key +
                               "', no precision");
      by_precision[*p] = size.get<int64_t>();
    }
    return by_precision;
  }();
  const auto it = sizes.find(precision);
  if (it == sizes.end())
    throw std::logic_error(std::string("database/defaults.json's level3.min_diagonal has no entry "
                                       "for precision ") +
                           letter(precision));
  return it->second;
}

size_t host_pack_parallel_from() {
  static const auto bytes = integer<uint32_t>(defaults_file().at("host_pack"), "parallel_from");
  return bytes;
}

size_t batch_stage_bytes() {
  static const auto bytes = integer<uint32_t>(defaults_file().at("batch"), "stage_bytes");
  return bytes;
}

namespace {

int64_t at_least_one(const char* name) {
  const auto v = integer<int64_t>(defaults_file().at("batch"), name);
  if (v < 1)
    throw std::logic_error(std::string("database/defaults.json's batch.") + name +
                           " must be 1 or more");
  return v;
}

}  // namespace

int64_t batch_stage_products() {
  static const auto n = at_least_one("stage_products");
  return n;
}

int64_t batch_stage_products_dealt() {
  static const auto n = at_least_one("stage_products_dealt");
  return n;
}

int64_t batch_stage_products_unstaged() {
  static const auto n = at_least_one("stage_products_unstaged");
  return n;
}

int batch_stage_tail_unstaged() {
  static const auto n =
      static_cast<int>(integer<uint32_t>(defaults_file().at("batch"), "stage_tail_unstaged"));
  return n;
}

int64_t batch_stage_tail_bytes_unstaged() {
  static const auto bytes =
      integer<int64_t>(defaults_file().at("batch"), "stage_tail_bytes_unstaged");
  return std::max<int64_t>(bytes, 0);
}

int batch_stages_in_flight(bool unstaged) {
  static const auto staged = static_cast<int>(at_least_one("stages_in_flight"));
  static const auto direct = static_cast<int>(at_least_one("stages_in_flight_unstaged"));
  return unstaged ? direct : staged;
}

size_t batch_stage_max_bytes() {
  static const auto bytes =
      static_cast<size_t>(integer<int64_t>(defaults_file().at("batch"), "stage_max_bytes"));
  return bytes;
}

int64_t batch_devices_from() {
  static const auto edge = integer<int64_t>(defaults_file().at("batch"), "devices_from");
  return edge;
}

int64_t batch_deal_from_count() {
  static const auto count = integer<int64_t>(defaults_file().at("batch"), "deal_from_count");
  return count;
}

int64_t batch_cpu_parallel_from() {
  static const auto work = integer<int64_t>(defaults_file().at("batch"), "cpu_parallel_from");
  return work;
}

int64_t cores_small_edge(Precision prec, int threads) {
  // Per precision, the [threads, edge] pairs, ascending by threads.
  static const auto pairs = [] {
    const json& j = defaults_file().at("cores_small").at("edge");
    std::array<std::vector<std::pair<int64_t, int64_t>>, kPrecisionCount> by_precision;
    for (Precision p : kPrecisions) {
      const std::string name =
          "database/defaults.json's cores_small.edge." + std::string(1, letter(p));
      auto& list = by_precision[index_of(p)];
      const json& pairs_of = j.at(std::string(1, letter(p)));
      if (!pairs_of.is_array())
        throw std::logic_error(name + " holds " + pairs_of.dump() + ", not a list of pairs");
      for (const json& pair : pairs_of) {
        if (!pair.is_array() || pair.size() != 2)
          throw std::logic_error(name + " holds " + pair.dump() + ", not a pair [threads, edge]");
        const auto from = integer_value<int64_t>(pair[0], name + "'s threads");
        const auto edge = integer_value<int64_t>(pair[1], name + "'s edge");
        if (from < 1 || edge < 0 || edge > detail::kSmallKernelMax ||
            (!list.empty() && from <= list.back().first))
          throw std::logic_error(name + "'s " + pair.dump() +
                                 " is not a thread count from 1, ascending, with an edge of 0 to " +
                                 std::to_string(detail::kSmallKernelMax));
        list.emplace_back(from, edge);
      }
    }
    return by_precision;
  }();
  int64_t edge = 0;
  for (const auto& [from, size] : pairs[index_of(prec)])
    if (threads >= from) edge = size;
  return edge;
}

const BatchTune& batch_tune() {
  static const BatchTune rule = [] {
    const json& j = defaults_file().at("batch");
    BatchTune r;
    for (const json& n : j.at("tune_sizes")) r.sizes.push_back(integer_value<int64_t>(n, "size"));
    std::sort(r.sizes.begin(), r.sizes.end());
    r.call_seconds = j.at("tune_call_seconds").get<double>();
    r.bytes = static_cast<size_t>(integer<int64_t>(j, "tune_bytes"));
    for (const json& n : j.at("kernel_sizes"))
      r.kernel_sizes.push_back(integer_value<int64_t>(n, "size"));
    std::sort(r.kernel_sizes.begin(), r.kernel_sizes.end());
    r.kernel_few = integer<int64_t>(j, "kernel_few");
    const json& ladder = j.at("kernel_ladder");
    for (const json& t : ladder.at("tiles")) {
      if (!t.is_array() || t.size() != 4)
        throw std::logic_error(
            "database/defaults.json's batch.kernel_ladder.tiles: four numbers each");
      r.ladder.push_back({integer_value<int>(t[0], "MWG"), integer_value<int>(t[1], "NWG"),
                          integer_value<int>(t[2], "MDIMC"), integer_value<int>(t[3], "NDIMC")});
    }
    r.ladder_fixed = kernel_of(ladder.at("fixed"));
    r.ladder_vector_bytes = integer<int>(ladder, "vector_bytes");
    r.ladder_largest_first_from = integer<int64_t>(ladder, "largest_first_from");
    if (r.sizes.empty() || r.sizes.front() <= 0 || !(r.call_seconds > 0) || r.bytes == 0 ||
        r.kernel_sizes.empty() || r.kernel_sizes.front() <= 0 || r.kernel_few <= 0)
      throw std::logic_error(
          "database/defaults.json's batch: tune_sizes and kernel_sizes must be positive sizes, "
          "tune_call_seconds, tune_bytes and kernel_few positive");
    return r;
  }();
  return rule;
}

const TuneSizes& tune_sizes() {
  static const TuneSizes sizes = [] {
    const json& j = defaults_file().at("tune");
    return TuneSizes{j.at("call_seconds").get<double>(), integer<int>(j, "buckets"),
                     integer<int64_t>(j, "min_size"), integer<int64_t>(j, "max_size")};
  }();
  return sizes;
}

namespace {

// A number of defaults.json that must lie in [min, max]: the file is part of the build, so one
// outside is a build error every test shows.
double within(const json& j, const char* field, double min, double max) {
  const double v = j.at(field).get<double>();
  if (!(v >= min && v <= max))
    throw std::logic_error(std::string("database/defaults.json: ") + field + " = " +
                           j.at(field).dump() + " is outside " + std::to_string(min) + " to " +
                           std::to_string(max));
  return v;
}

}  // namespace

const ConfirmRule& confirm_rule() {
  static const ConfirmRule rule = [] {
    const json& j = defaults_file().at("confirm");
    ConfirmRule r;
    r.rounds = static_cast<int>(within(j, "rounds", 1, 1000));
    r.warmup = static_cast<int>(within(j, "warmup", 0, 100));
    r.settle_seconds = within(j, "settle_seconds", 0, 10);
    r.confidence = within(j, "confidence", 0, 0.999999);
    r.compare_confidence = within(j, "compare_confidence", 0, 0.999999);
    r.batch_sets_where_too_noisy = static_cast<int>(within(j, "batch_sets_where_too_noisy", 1, 10));
    return r;
  }();
  return rule;
}

const WatchRule& watch_rule() {
  static const WatchRule rule = [] {
    const json& j = defaults_file().at("watch");
    return WatchRule{static_cast<int>(within(j, "calls", 1, 1000)), within(j, "margin", 0, 100),
                     within(j, "close", 0, 100)};
  }();
  return rule;
}

const std::map<std::string, int>& no_kernel() {
  static const auto& none = *new std::map<std::string, int>;  // never destroyed: calls until exit
  return none;
}

bool Direct::applies(int64_t m, int64_t n, int64_t k) const {
  return below > 0 && static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <
                          std::pow(static_cast<double>(below), 3.0);
}

}  // namespace tandem::detail::profile
