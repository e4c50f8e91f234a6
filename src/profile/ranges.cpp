// The physical ranges of a profile's numbers, as one table: every profile read (a local file, an
// import, the built-in database) has each number checked against it, so that a hand edit or a
// corrupted file with a negative rate, a thread count of a million or a fraction above 1 is
// refused by name rather than planned with; and how deep a profile's JSON may nest.
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>

#include "profile/json.hpp"
#include "profile/profile.hpp"

namespace tandem::detail::profile {
using nlohmann::json;

namespace {

// Bounds beyond any machine tandem may run on, so that only what no measurement can give is
// refused.
constexpr double kThreads = 1 << 16;      // hardware threads (Linux allows 8,192 CPUs)
constexpr double kUnits = 1 << 20;        // a device's compute units
constexpr double kSize = INT_MAX;         // a dimension: the CPU BLAS takes 32-bit integers
constexpr double kParts = 1024;           // P, the split's granularity (tandem tune --parts)
constexpr double kGflops = 1e8;           // 100 PFLOPS, a thousand times an H100's fp32
constexpr double kBytesPerSecond = 1e14;  // 100 TB/s, thirty times an H100's memory
constexpr double kSeconds = 1e6;          // one call, or one launch: eleven days
constexpr double kTuneSeconds = 1e8;      // a whole tune: three years
constexpr double kCount = INT_MAX;

struct Range {
  const char* field;  // its place, each precision as *, each array element as [], a pair's as [i]
  double min, max;
};

const Range kRanges[] = {
    {"format", 1, 1000},
    {"identity.compute_units", 0, kUnits},  // 0: the global entry's "any device"
    {"identity.threads", 0, kThreads},
    {"precisions.*.gpu_size", 0, kSize},
    {"precisions.*.gpu_gflops", 0, kGflops},
    {"precisions.*.direct_size", 0, kSize},
    {"precisions.*.direct_gflops", 0, kGflops},
    {"precisions.*.direct_below", 0, kSize},
    {"precisions.*.batch.devices_from", 0, kSize},  // 0: never
    {"precisions.*.batch.points[].size", 1, kSize},
    {"precisions.*.batch.points[].count", 1, kCount},
    {"precisions.*.batch.points[].cpu_gflops", 0, kGflops},
    {"precisions.*.batch.points[].hybrid_gflops", 0, kGflops},
    {"precisions.*.batch.points[].gpu_gflops", 0, kGflops},
    {"precisions.*.batch.points[].few.count", 1, kCount},
    {"precisions.*.batch.points[].few.cpu_gflops", 0, kGflops},
    {"precisions.*.batch.points[].few.gpu_gflops", 0, kGflops},
    {"precisions.*.batch.points[].middle.count", 1, kCount},
    {"precisions.*.batch.points[].middle.cpu_gflops", 0, kGflops},
    {"precisions.*.batch.points[].middle.gpu_gflops", 0, kGflops},
    {"precisions.*.batch.points[].middle.hybrid_gflops", 0, kGflops},
    {"precisions.*.batch_resident.devices_from", 0, kSize},
    {"precisions.*.batch_resident.points[].size", 1, kSize},
    {"precisions.*.batch_resident.points[].count", 1, kCount},
    {"precisions.*.batch_resident.points[].cpu_gflops", 0, kGflops},
    {"precisions.*.batch_resident.points[].hybrid_gflops", 0, kGflops},
    {"precisions.*.batch_resident.points[].gpu_gflops", 0, kGflops},
    {"precisions.*.batch_resident.points[].few.count", 1, kCount},
    {"precisions.*.batch_resident.points[].few.cpu_gflops", 0, kGflops},
    {"precisions.*.batch_resident.points[].few.gpu_gflops", 0, kGflops},
    {"precisions.*.batch_resident.points[].middle.count", 1, kCount},
    {"precisions.*.batch_resident.points[].middle.cpu_gflops", 0, kGflops},
    {"precisions.*.batch_resident.points[].middle.gpu_gflops", 0, kGflops},
    {"precisions.*.batch_resident.points[].middle.hybrid_gflops", 0, kGflops},
    {"precisions.*.coalesced[].size", 1, kSize},
    {"precisions.*.coalesced[].count", 1, kCount},
    {"precisions.*.coalesced[].gflops", 0, kGflops},
    {"precisions.*.coalesced[].direct_gflops", 0, kGflops},
    {"precisions.*.buckets[].size", 1, kSize},
    {"precisions.*.buckets[].parts", 1, kParts},
    {"precisions.*.buckets[].gpu_parts", 0, kParts},
    {"precisions.*.buckets[].cpu_threads", 0, kThreads},  // 0: the default
    {"precisions.*.buckets[].cpu_gflops", 0, kGflops},
    {"precisions.*.buckets[].gpu_gflops", 0, kGflops},
    {"precisions.*.buckets[].best_gflops", 0, kGflops},
    {"precisions.*.buckets[].resident.gpu_parts", 0, kParts},
    {"precisions.*.buckets[].resident.cpu_threads", 0, kThreads},
    {"precisions.*.buckets[].resident.gpu_gflops", 0, kGflops},
    {"precisions.*.buckets[].resident.best_gflops", 0, kGflops},
    {"precisions.*.model.cpu.gflops_by_threads[][0]", 1, kThreads},
    {"precisions.*.model.cpu.gflops_by_threads[][1]", 0, kGflops},
    {"precisions.*.model.cpu.half_m", 0, kSize},
    {"precisions.*.model.cpu.half_n", 0, kSize},
    {"precisions.*.model.cpu.half_k", 0, kSize},
    {"precisions.*.model.cpu.latency", 0, kSeconds},
    {"precisions.*.model.device.kernel_gflops", 0, kGflops},
    {"precisions.*.model.device.launch", 0, kSeconds},
    {"precisions.*.model.device.tile_m", 1, kSize},
    {"precisions.*.model.device.tile_n", 1, kSize},
    {"precisions.*.model.device.compute_units", 1, kUnits},
    {"precisions.*.model.device.chunk_fill", 0, kCount},
    {"precisions.*.model.device.chunk_from", 0, 1e18},  // bytes
    {"precisions.*.model.device.bus_in", 0, kBytesPerSecond},
    {"precisions.*.model.device.bus_out", 0, kBytesPerSecond},
    {"precisions.*.model.device.pack_by_threads[][0]", 1, kThreads},
    {"precisions.*.model.device.pack_by_threads[][1]", 0, kBytesPerSecond},
    {"precisions.*.model.device.latency", 0, kSeconds},
    {"precisions.*.model.device.overlap", 0, 1},
    {"precisions.*.model.both_busy", 0, 1},
    {"precisions.*.model.cpu_busy", 0, 1},
    // The co-tuner's margin, or the fit's worst miss on a split it measured (1: 100%).
    {"precisions.*.model.split_margin", 0, 1000},
    {"precisions.*.model.observations[].m", 0, kSize},
    {"precisions.*.model.observations[].n", 0, kSize},
    {"precisions.*.model.observations[].k", 0, kSize},
    {"precisions.*.model.observations[].rows", 0, kSize},
    {"precisions.*.model.observations[].threads", 0, kThreads},
    {"precisions.*.model.observations[].feeders", 0, kThreads},
    {"precisions.*.model.observations[].bytes", 0, 1e18},
    {"precisions.*.model.observations[].seconds", 0, kSeconds},
    {"precisions.*.model.observations[].predicted", 0, kSeconds},
    {"precisions.*.model.observations[].device_seconds", 0, kSeconds},
    {"precisions.*.model.observations[].cpu_seconds", 0, kSeconds},
    {"tuning.budget_evaluations", 0, kCount},
    {"tuning.budget_seconds", 0, kTuneSeconds},
    {"tuning.evaluations", 0, kCount},
    {"tuning.seconds", 0, kTuneSeconds},
};

const Range* range_of(const std::string& field) {
  static const auto& by_field = *new std::map<std::string, const Range*>([] {
    std::map<std::string, const Range*> m;
    for (const Range& r : kRanges) m.emplace(r.field, &r);
    return m;
  }());
  const auto it = by_field.find(field);
  return it == by_field.end() ? nullptr : it->second;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// `j` at `place` (as the file has it: "precisions.s.buckets[0].size") and `field` (as the table
// names it: "precisions.*.buckets[].size").
void check(const json& j, const std::string& place, const std::string& field,
           std::vector<std::string>* unranged) {
  const auto join = [](const std::string& a, const std::string& b) {
    return a.empty() ? b : a + "." + b;
  };
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      // A kernel's parameters are judged by name, by gpu::check, against the device.
      if (key.size() >= 6 && key.compare(key.size() - 6, 6, "kernel") == 0) continue;
      check(value, join(place, key), join(field, field == "precisions" ? "*" : key), unranged);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string index = "[" + std::to_string(i) + "]";
      check(j[i], place + index, field + (j[i].is_number() ? index : "[]"), unranged);
    }
  } else if (j.is_number()) {
    const Range* r = range_of(field);
    if (r == nullptr) {
      unranged->push_back(place);
      return;
    }
    const double v = j.get<double>();
    if (!(v >= r->min && v <= r->max))  // NaN too
      throw std::runtime_error(place + " = " + j.dump() + " is outside its range, " +
                               number(r->min) + " to " + number(r->max));
  }
}

}  // namespace

json parse_json(const std::string& text) {
  return json::parse(text, [](int depth, json::parse_event_t, json&) {
    if (depth >= kMaxDepth)  // an array or object opens at the depth of those around it
      throw std::runtime_error("the JSON is nested more than " + std::to_string(kMaxDepth) +
                               " levels deep");
    return true;
  });
}

void check_finite(const json& j, const std::string& place) {
  if (j.is_structured()) {
    for (const auto& [key, value] : j.items())
      check_finite(value, j.is_array() ? place + "[" + key + "]"
                                       : (place.empty() ? key : place + "." + key));
  } else if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    throw std::runtime_error(place + " is " + (std::isnan(j.get<double>()) ? "NaN" : "infinite") +
                             ": a profile holds finite numbers only");
  }
}

std::vector<std::string> check_ranges(const json& profile) {
  std::vector<std::string> unranged;
  check(profile, "", "", &unranged);
  return unranged;
}

std::map<Precision, std::string> drop_models_out_of_range(Profile& p) {
  std::map<Precision, std::string> dropped;
  for (auto& [prec, pp] : p.precisions) {
    if (!pp.model) continue;
    const std::string place = std::string("precisions.") + letter(prec) + ".model";
    std::vector<std::string> unranged;
    try {
      check(model_json(*pp.model, pp.observations), place, "precisions.*.model", &unranged);
    } catch (const std::runtime_error& e) {
      dropped[prec] = e.what();
      pp.model.reset();
      pp.observations.clear();
    }
  }
  return dropped;
}

}  // namespace tandem::detail::profile
