// Device profiles as JSON: reading and writing them and their tuning logs, the built-in database
// and the kernel defaults. The cost model's part of a profile is profile_model.cpp's, the ranges
// of its numbers profile_ranges.cpp's.
#include "profile/profile.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "base/files.hpp"
#include "base/log.hpp"
#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "gpu/architecture.hpp"
#include "gpu/device.hpp"
#include "profile/json.hpp"
#include "tandem_builtin_profiles.hpp"

namespace tandem::detail::profile {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kFormat = 1;
// The largest profile file read. Profiles are a few KiB to tens of KiB (the largest built-in one,
// the H100's, with a dozen buckets, resident splits and two precisions, 20 KiB; a tuned one with
// its cost model and the measurements behind it, about 30 KiB); 1 MiB leaves room for fifty times
// that, and every call that looks for a profile reads at most that much of a file.
constexpr uintmax_t kMaxBytes = uintmax_t{1} << 20;
// database/defaults.json: the kernel defaults, beside the profiles.
constexpr const char* kDefaultsName = "defaults";

// "major.minor" of a version string.
std::string major_minor(const std::string& v) {
  const auto first = v.find('.');
  if (first == std::string::npos) return v;
  const auto second = v.find('.', first + 1);
  return v.substr(0, second);
}

std::string safe(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  while (out.find("__") != std::string::npos) out.replace(out.find("__"), 2, "_");
  return out.substr(0, 48);
}

int integer_or(const json& object, const char* field, int fallback) {
  return object.contains(field) ? integer<int>(object, field) : fallback;
}

json kernel_json(const std::map<std::string, int>& k) { return json(k); }

// Written only where rounds ran, so a profile without them reads as one from before them.
void confirmation_json(const Confirmation& c, json& into) {
  if (!c.verdict.empty()) into["confirmation"] = {{"verdict", c.verdict}, {"note", c.note}};
}

Confirmation confirmation_of(const json& j) {
  Confirmation c;
  const auto cj = j.find("confirmation");
  if (cj == j.end()) return c;
  c.verdict = cj->at("verdict").get<std::string>();
  c.note = cj->value("note", std::string());
  if (c.verdict != "faster" && c.verdict != "not faster" && c.verdict != "too noisy")
    throw std::runtime_error("confirmation verdict '" + c.verdict +
                             "' is none of faster, not faster and too noisy");
  return c;
}

// A split's balance: "static" (or absent, as in profiles written before dynamic balance) or
// "dynamic"; anything else is an error.
bool balance_of(const json& j) {
  const std::string b = j.value("balance", "static");
  if (b != "static" && b != "dynamic")
    throw std::runtime_error("balance '" + b + "' is neither static nor dynamic");
  return b == "dynamic";
}

}  // namespace

std::map<std::string, int> kernel_of(const json& j) {
  if (!j.is_object()) throw std::runtime_error("a kernel must be an object, not " + j.dump());
  std::map<std::string, int> out;
  for (const auto& [name, value] : j.items())
    out[name] = integer_value<int>(value, "kernel parameter " + name);
  return out;
}

bool Identity::operator==(const Identity& o) const { return difference(o).empty(); }

std::string Identity::difference(const Identity& o) const {
  auto diff = [](const char* what, const std::string& a, const std::string& b) {
    return a == b ? std::string() : std::string(what) + " '" + a + "' vs '" + b + "'";
  };
  for (auto d :
       {diff("platform", platform, o.platform), diff("device", device, o.device),
        diff("driver", driver, o.driver),
        diff("compute units", std::to_string(compute_units), std::to_string(o.compute_units)),
        diff("CPU", cpu_model, o.cpu_model), diff("BLAS", blas, o.blas),
        diff("BLAS version", blas_version, o.blas_version),
        diff("BLAS core type", blas_core, o.blas_core),
        diff("threads", std::to_string(threads), std::to_string(o.threads))})
    if (!d.empty()) return d;
  return "";
}

std::string Identity::file_name() const {
  // Readable prefix, plus a hash of every field so distinct identities never share a file.
  const std::string all = platform + '\n' + device + '\n' + driver + '\n' +
                          std::to_string(compute_units) + '\n' + cpu_model + '\n' + blas + '\n' +
                          blas_version + '\n' + blas_core + '\n' + std::to_string(threads);
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs and builds
  for (unsigned char ch : all) h = (h ^ ch) * 1099511628211ull;
  std::ostringstream name;
  name << safe(device) << "-" << std::hex << std::setw(16) << std::setfill('0') << h << ".json";
  return name.str();
}

bool Identity::names_same_device(const std::string& name) const {
  const std::string prefix = safe(device) + "-";
  constexpr size_t kHash = 16;
  return name.size() == prefix.size() + kHash + 5 && name.compare(0, prefix.size(), prefix) == 0 &&
         std::all_of(name.begin() + prefix.size(), name.end() - 5,
                     [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)); }) &&
         name.compare(name.size() - 5, 5, ".json") == 0;
}

Identity identity_for(const gpu::DeviceInfo& d) {
  Identity id;
  id.platform = d.platform;
  id.device = d.name;
  id.driver = d.driver;
  id.compute_units = d.compute_units;
  id.cpu_model = topology::cpu_model();
  id.blas = cpu_blas::name();
  id.blas_version = cpu_blas::version();
  id.blas_core = cpu_blas::core_type();
  id.threads = topology::physical_cores();
  id.architecture = d.architecture;
  return id;
}

std::string to_json(const Profile& p) {
  json j;
  j["format"] = p.format;
  j["tandem_version"] = p.tandem_version;
  j["match"] = p.match;
  const Identity& id = p.identity;
  j["identity"] = {
      {"platform", id.platform},           {"device", id.device},       {"driver", id.driver},
      {"compute_units", id.compute_units}, {"cpu_model", id.cpu_model}, {"blas", id.blas},
      {"blas_version", id.blas_version},   {"blas_core", id.blas_core}, {"threads", id.threads}};
  if (!id.architecture.empty()) j["identity"]["architecture"] = id.architecture;
  j["precisions"] = json::object();  // present even when empty (a device without fp64, say)
  for (const auto& [prec, pp] : p.precisions) {
    json buckets = json::array();
    for (const auto& b : pp.buckets) {
      json bj = {{"size", b.size},
                 {"parts", b.parts},
                 {"gpu_parts", b.gpu_parts},
                 {"cpu_threads", b.cpu_threads},
                 {"balance", b.dynamic ? "dynamic" : "static"},
                 {"kernel", kernel_json(b.kernel)},
                 {"cpu_gflops", b.cpu_gflops},
                 {"gpu_gflops", b.gpu_gflops},
                 {"best_gflops", b.best_gflops}};
      if (!b.gpu_kernel.empty()) bj["gpu_kernel"] = kernel_json(b.gpu_kernel);
      if (b.resident) {
        bj["resident"] = {{"gpu_parts", b.resident->gpu_parts},
                          {"cpu_threads", b.resident->cpu_threads},
                          {"balance", b.resident->dynamic ? "dynamic" : "static"},
                          {"kernel", kernel_json(b.resident->kernel)},
                          {"gpu_gflops", b.resident->gpu_gflops},
                          {"best_gflops", b.resident->best_gflops}};
        confirmation_json(b.resident->confirmation, bj["resident"]);
      }
      confirmation_json(b.confirmation, bj);
      buckets.push_back(bj);
    }
    j["precisions"][std::string(1, prec)] = {{"gpu_kernel", kernel_json(pp.gpu_kernel)},
                                             {"gpu_size", pp.gpu_size},
                                             {"gpu_gflops", pp.gpu_gflops},
                                             {"buckets", buckets}};
    json& pj = j["precisions"][std::string(1, prec)];
    if (pp.model) pj["model"] = model_json(*pp.model, pp.observations);
    // Written only where tuned, so a profile without them reads as one from before them.
    if (!pp.direct_kernel.empty()) {
      pj["direct_kernel"] = kernel_json(pp.direct_kernel);
      pj["direct_size"] = pp.direct_size;
      pj["direct_gflops"] = pp.direct_gflops;
    }
    if (pp.direct_below) pj["direct_below"] = *pp.direct_below;
  }
  const Tuning& t = p.tuning;
  j["tuning"] = {{"strategy", t.strategy},
                 {"objective", t.objective},
                 {"date", t.date},
                 {"budget_evaluations", t.budget_evaluations},
                 {"budget_seconds", t.budget_seconds},
                 {"evaluations", t.evaluations},
                 {"seconds", t.seconds}};
  return j.dump(2) + "\n";
}

namespace {

Identity identity_of(const json& id) {
  Identity i;
  i.platform = id.at("platform").get<std::string>();
  i.device = id.at("device").get<std::string>();
  i.driver = id.at("driver").get<std::string>();
  i.compute_units = integer<int>(id, "compute_units");
  i.cpu_model = id.at("cpu_model").get<std::string>();
  i.blas = id.at("blas").get<std::string>();
  i.blas_version = id.at("blas_version").get<std::string>();
  i.blas_core = id.at("blas_core").get<std::string>();
  i.threads = integer<int>(id, "threads");
  i.architecture = id.value("architecture", std::string());
  if (!i.architecture.empty() && !gpu::parse_architecture(i.architecture))
    throw std::runtime_error("architecture '" + i.architecture + "' is not family:major.minor");
  return i;
}

ResidentSplit resident_of(const json& rj, const Bucket& b) {
  ResidentSplit r;
  r.gpu_parts = integer<int>(rj, "gpu_parts");
  r.cpu_threads = integer<int>(rj, "cpu_threads");
  r.dynamic = balance_of(rj);
  r.kernel = kernel_of(rj.at("kernel"));
  r.gpu_gflops = rj.at("gpu_gflops").get<double>();
  r.best_gflops = rj.at("best_gflops").get<double>();
  r.confirmation = confirmation_of(rj);
  if (r.gpu_parts < 0 || r.gpu_parts > b.parts)
    throw std::runtime_error("bucket with size " + std::to_string(b.size) + ": resident split " +
                             std::to_string(r.gpu_parts) + "/" + std::to_string(b.parts) +
                             " is out of range");
  return r;
}

Bucket bucket_of(const json& bj) {
  Bucket b;
  b.size = integer<int64_t>(bj, "size");
  b.parts = integer<int>(bj, "parts");
  b.gpu_parts = integer<int>(bj, "gpu_parts");
  b.cpu_threads = integer<int>(bj, "cpu_threads");
  b.dynamic = balance_of(bj);
  b.kernel = kernel_of(bj.at("kernel"));
  if (const auto g = bj.find("gpu_kernel"); g != bj.end()) b.gpu_kernel = kernel_of(*g);
  if (const auto rj = bj.find("resident"); rj != bj.end()) b.resident = resident_of(*rj, b);
  b.cpu_gflops = bj.at("cpu_gflops").get<double>();
  b.gpu_gflops = bj.at("gpu_gflops").get<double>();
  b.best_gflops = bj.at("best_gflops").get<double>();
  b.confirmation = confirmation_of(bj);
  if (b.size <= 0 || b.parts <= 0 || b.gpu_parts < 0 || b.gpu_parts > b.parts)
    throw std::runtime_error("bucket with size " + std::to_string(b.size) + " and split " +
                             std::to_string(b.gpu_parts) + "/" + std::to_string(b.parts) +
                             " is out of range");
  return b;
}

PrecisionProfile precision_of(const json& pj) {
  PrecisionProfile pp;
  pp.gpu_kernel = kernel_of(pj.at("gpu_kernel"));
  pp.gpu_size = integer<int64_t>(pj, "gpu_size");
  pp.gpu_gflops = pj.at("gpu_gflops").get<double>();
  for (const auto& bj : pj.at("buckets")) pp.buckets.push_back(bucket_of(bj));
  if (const auto mj = pj.find("model"); mj != pj.end()) pp.model = model_of(*mj, &pp.observations);
  if (const auto dk = pj.find("direct_kernel"); dk != pj.end()) {
    pp.direct_kernel = kernel_of(*dk);
    pp.direct_size = pj.contains("direct_size") ? integer<int64_t>(pj, "direct_size") : 0;
    pp.direct_gflops = pj.value("direct_gflops", 0.0);
  }
  if (pj.contains("direct_below")) {
    pp.direct_below = integer<int64_t>(pj, "direct_below");
    if (*pp.direct_below < 0) throw std::runtime_error("direct_below must not be negative");
  }
  std::sort(pp.buckets.begin(), pp.buckets.end(),
            [](const Bucket& a, const Bucket& b) { return a.size < b.size; });
  return pp;
}

Tuning tuning_of(const json& t) {
  Tuning r;
  r.strategy = t.value("strategy", "");
  r.objective = t.value("objective", "");
  r.date = t.value("date", "");
  r.budget_evaluations = integer_or(t, "budget_evaluations", 0);
  r.budget_seconds = t.value("budget_seconds", 0.0);
  r.evaluations = integer_or(t, "evaluations", 0);
  r.seconds = t.value("seconds", 0.0);
  return r;
}

}  // namespace

Profile from_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    check_ranges(j);  // first: a model's own checks would not name the field
    Profile p;
    p.format = integer<int>(j, "format");
    p.tandem_version = j.at("tandem_version").get<std::string>();
    p.match = j.value("match", std::string("device"));
    if (p.match != "device" && p.match != "architecture" && p.match != "platform" &&
        p.match != "any")
      throw std::runtime_error("match must be device, architecture, platform or any, not '" +
                               p.match + "'");
    p.identity = identity_of(j.at("identity"));
    for (const auto& [key, pj] : j.at("precisions").items()) {
      if (key != "s" && key != "d") throw std::runtime_error("unknown precision '" + key + "'");
      p.precisions[key[0]] = precision_of(pj);
    }
    if (const auto t = j.find("tuning"); t != j.end()) p.tuning = tuning_of(*t);
    return p;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("not a valid profile: ") + e.what());
  }
}

void save(const Profile& p, const fs::path& file) {
  const std::string text = to_json(p);
  // Never written where every later read would refuse it.
  check_ranges(json::parse(text));
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  files::replace(file, text);
}

Profile load(const fs::path& file) {
  // Only a regular file of a profile's size is read: a FIFO would block every call that looks for
  // a profile forever, and a file of hundreds of MB would cost each process seconds to reject.
  const std::string text = files::read(file, kMaxBytes, "a profile");
  try {
    Profile p = from_json(text);
    p.origin = file.string();
    return p;
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

bool compatible(const Profile& p, std::string* why) {
  if (p.format != kFormat) {
    if (why)
      *why = "profile format " + std::to_string(p.format) + ", this tandem reads " +
             std::to_string(kFormat);
    return false;
  }
  if (major_minor(p.tandem_version) != major_minor(TANDEM_VERSION)) {
    if (why) *why = "tuned by tandem " + p.tandem_version + ", this is " + TANDEM_VERSION;
    return false;
  }
  return true;
}

const std::vector<Profile>& builtin() {
  static const std::vector<Profile> db = [] {
    std::vector<Profile> out;
    for (const auto& [name, text] : builtin_profiles::all) {
      if (std::string(name) == kDefaultsName) continue;  // not a profile: kernel_defaults()
      try {
        Profile p = from_json(text);
        p.origin = std::string("built-in:") + name;
        out.push_back(std::move(p));
      } catch (const std::exception& e) {
        warn_once(std::string("builtin:") + name,
                  std::string("built-in profile ") + name + " ignored: " + e.what());
      }
    }
    return out;
  }();
  return db;
}

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

int64_t level3_min_diagonal(bool fp64) {
  static const std::pair<int64_t, int64_t> sizes = [] {
    const json& j = defaults_file().at("level3").at("min_diagonal");
    return std::make_pair(j.at("s").get<int64_t>(), j.at("d").get<int64_t>());
  }();
  return fp64 ? sizes.second : sizes.first;
}

size_t host_pack_parallel_from() {
  static const auto bytes = integer<uint32_t>(defaults_file().at("host_pack"), "parallel_from");
  return bytes;
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
    return r;
  }();
  return rule;
}

const WatchRule& watch_rule() {
  static const WatchRule rule = [] {
    const json& j = defaults_file().at("watch");
    return WatchRule{static_cast<int>(within(j, "calls", 1, 1000)), within(j, "margin", 0, 100)};
  }();
  return rule;
}

std::string to_log_line(const LogRecord& r) {
  json j = {{"kind", r.kind},       {"precision", std::string(1, r.precision)},
            {"size", r.size},       {"point", r.point},
            {"kernel", r.kernel},   {"gpu_parts", r.gpu_parts},
            {"parts", r.parts},     {"cpu_threads", r.cpu_threads},
            {"min", r.min},         {"max", r.max},
            {"spread", r.spread},   {"kernel_seconds", r.kernel_seconds},
            {"bimodal", r.bimodal}, {"failure", r.failure},
            {"cost", r.cost}};
  if (r.resident) j["resident"] = true;
  if (r.dynamic) j["balance"] = "dynamic";
  j["seconds"] = r.seconds ? json(*r.seconds) : json(nullptr);
  if (!r.rounds.empty()) j["rounds"] = r.rounds;
  if (!r.verdict.empty()) j["verdict"] = r.verdict;
  if (!r.note.empty()) j["note"] = r.note;
  return j.dump();
}

std::optional<LogRecord> from_log_line(const std::string& line) {
  try {
    const json j = json::parse(line);
    LogRecord r;
    r.kind = j.at("kind").get<std::string>();
    r.precision = j.at("precision").get<std::string>().at(0);
    r.size = integer<int64_t>(j, "size");
    for (const json& v : j.at("point")) r.point.push_back(integer_value<int>(v, "point"));
    r.kernel = kernel_of(j.at("kernel"));
    r.gpu_parts = integer<int>(j, "gpu_parts");
    r.parts = integer<int>(j, "parts");
    r.cpu_threads = integer<int>(j, "cpu_threads");
    if (!j.at("seconds").is_null()) r.seconds = j.at("seconds").get<double>();
    r.min = j.at("min").get<double>();
    r.max = j.at("max").get<double>();
    r.spread = j.at("spread").get<double>();
    r.kernel_seconds = j.at("kernel_seconds").get<double>();
    r.bimodal = j.at("bimodal").get<bool>();
    r.failure = j.at("failure").get<std::string>();
    r.resident = j.value("resident", false);
    r.dynamic = j.value("balance", "static") == "dynamic";
    r.cost = j.value("cost", r.seconds.value_or(0.0));
    if (const auto rounds = j.find("rounds"); rounds != j.end())
      r.rounds = rounds->get<std::map<std::string, std::vector<double>>>();
    r.verdict = j.value("verdict", std::string());
    r.note = j.value("note", std::string());
    return r;
  } catch (const std::exception&) {
    return std::nullopt;  // a line cut short by an interrupted run, say
  }
}

}  // namespace tandem::detail::profile
