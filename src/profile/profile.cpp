// A profile's identity and its text form: JSON written and read, every number checked against
// its range (ranges.cpp), the cost model's part in model_json.cpp.
#include "profile/profile.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "profile/architecture.hpp"
#include "profile/json.hpp"

namespace tandem::detail::profile {
using nlohmann::json;

const char* to_string(BatchSide side) {
  switch (side) {
    case BatchSide::Cores:
      return "cores";
    case BatchSide::Devices:
      return "devices";
    case BatchSide::Dealt:
      return "dealt";
  }
  return "?";
}

namespace {

constexpr int kFormat = 1;
// "major.minor" of a version string.
std::string major_minor(const std::string& v) {
  const auto first = v.find('.');
  if (first == std::string::npos) return v;
  const auto second = v.find('.', first + 1);
  return v.substr(0, second);
}

// ASCII letters and digits kept, anything else '_': not std::isalnum, which follows the program's
// C locale (a single-byte one keeps its own letters), so that the name is the same in any.
std::string safe(const std::string& s) {
  const auto ascii_alnum = [](char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
  };
  std::string out;
  for (char ch : s) out += ascii_alnum(ch) ? ch : '_';
  while (out.find("__") != std::string::npos) out.replace(out.find("__"), 2, "_");
  return out.substr(0, 48);
}

int integer_or(const json& object, const char* field, int fallback) {
  return object.contains(field) ? integer<int>(object, field) : fallback;
}

json kernel_json(const std::map<std::string, int>& k) { return json(k); }

void check_verdict(const std::string& verdict, const char* what) {
  if (verdict != "faster" && verdict != "not faster" && verdict != "too noisy")
    throw std::runtime_error(std::string(what) + " verdict '" + verdict +
                             "' is none of faster, not faster and too noisy");
}

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
  check_verdict(c.verdict, "confirmation");
  return c;
}

constexpr BatchSide kBatchSides[] = {BatchSide::Cores, BatchSide::Devices, BatchSide::Dealt};

BatchSide batch_side_of(const std::string& name) {
  for (const BatchSide side : kBatchSides)
    if (name == to_string(side)) return side;
  throw std::runtime_error("batch point side '" + name + "' is none of cores, devices and dealt");
}

json batch_rule_json(const BatchRule& rule) {
  json points = json::array();
  for (const BatchPoint& p : rule.points) {
    json pj = {{"size", p.size},
               {"count", p.count},
               {"cpu_gflops", p.cpu_gflops},
               {"hybrid_gflops", p.hybrid_gflops},
               {"verdict", p.verdict},
               {"note", p.note}};
    if (p.gpu_gflops > 0) pj["gpu_gflops"] = p.gpu_gflops;
    if (p.chosen) pj["side"] = to_string(*p.chosen);
    if (const auto& f = p.few)
      pj["few"] = {{"count", f->count},
                   {"cpu_gflops", f->cpu_gflops},
                   {"gpu_gflops", f->gpu_gflops},
                   {"side", to_string(f->devices ? BatchSide::Devices : BatchSide::Cores)},
                   {"verdict", f->verdict},
                   {"note", f->note}};
    if (const auto& m = p.middle)
      pj["middle"] = {{"count", m->count},
                      {"cpu_gflops", m->cpu_gflops},
                      {"gpu_gflops", m->gpu_gflops},
                      {"hybrid_gflops", m->hybrid_gflops},
                      {"side", to_string(m->side)},
                      {"verdict", m->verdict},
                      {"note", m->note}};
    points.push_back(pj);
  }
  return {{"devices_from", rule.devices_from}, {"points", points}};
}

BatchRule batch_rule_of(const json& j) {
  BatchRule rule;
  rule.devices_from = integer<int64_t>(j, "devices_from");
  for (const json& pj : j.at("points")) {
    BatchPoint p;
    p.size = integer<int64_t>(pj, "size");
    p.count = integer<int64_t>(pj, "count");
    p.cpu_gflops = pj.at("cpu_gflops").get<double>();
    p.hybrid_gflops = pj.at("hybrid_gflops").get<double>();
    p.verdict = pj.at("verdict").get<std::string>();
    p.note = pj.value("note", std::string());
    p.gpu_gflops = pj.value("gpu_gflops", 0.0);
    if (const auto side = pj.find("side"); side != pj.end())
      p.chosen = batch_side_of(side->get<std::string>());
    check_verdict(p.verdict, "batch point");
    if (const auto few = pj.find("few"); few != pj.end()) {
      FewProducts f;
      f.count = integer<int64_t>(*few, "count");
      f.cpu_gflops = few->at("cpu_gflops").get<double>();
      f.gpu_gflops = few->at("gpu_gflops").get<double>();
      const BatchSide side = batch_side_of(few->at("side").get<std::string>());
      if (side == BatchSide::Dealt)
        throw std::runtime_error("a batch point's few products are never dealt: side 'dealt'");
      f.devices = side == BatchSide::Devices;
      f.verdict = few->at("verdict").get<std::string>();
      f.note = few->value("note", std::string());
      check_verdict(f.verdict, "batch point's few products");
      p.few = f;
    }
    if (const auto middle = pj.find("middle"); middle != pj.end()) {
      MiddleCount m;
      m.count = integer<int64_t>(*middle, "count");
      m.cpu_gflops = middle->at("cpu_gflops").get<double>();
      m.gpu_gflops = middle->at("gpu_gflops").get<double>();
      m.hybrid_gflops = middle->at("hybrid_gflops").get<double>();
      m.side = batch_side_of(middle->at("side").get<std::string>());
      m.verdict = middle->at("verdict").get<std::string>();
      m.note = middle->value("note", std::string());
      check_verdict(m.verdict, "batch point's middle count");
      if (!p.few) throw std::runtime_error("a batch point's middle count without its few products");
      if (m.count <= p.few->count || m.count >= p.count)
        throw std::runtime_error("a batch point's middle count " + std::to_string(m.count) +
                                 " is not between its few products' " +
                                 std::to_string(p.few->count) + " and its own count " +
                                 std::to_string(p.count));
      p.middle = m;
    }
    rule.points.push_back(p);
  }
  std::sort(rule.points.begin(), rule.points.end(),
            [](const BatchPoint& a, const BatchPoint& b) { return a.size < b.size; });
  return rule;
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

namespace {

json coalesced_json(const std::vector<CoalescedBucket>& buckets) {
  json out = json::array();
  for (const CoalescedBucket& b : buckets) {
    out.push_back({{"size", b.size},
                   {"count", b.count},
                   {"kernel", kernel_json(b.kernel)},
                   {"gflops", b.gflops},
                   {"direct_gflops", b.direct_gflops},
                   {"verdict", b.verdict},
                   {"note", b.note},
                   {"direct_kernel", kernel_json(b.direct_kernel)}});
    if (b.resident) out.back()["resident"] = *b.resident;
  }
  return out;
}

std::vector<CoalescedBucket> coalesced_of(const json& j) {
  std::vector<CoalescedBucket> out;
  for (const json& bj : j) {
    CoalescedBucket b;
    b.size = integer<int64_t>(bj, "size");
    b.count = integer<int64_t>(bj, "count");
    b.kernel = kernel_of(bj.at("kernel"));
    if (b.kernel.empty()) throw std::runtime_error("a coalesced bucket's kernel is empty");
    b.gflops = bj.at("gflops").get<double>();
    b.direct_gflops = bj.at("direct_gflops").get<double>();
    b.verdict = bj.at("verdict").get<std::string>();
    b.note = bj.value("note", std::string());
    if (const auto a = bj.find("direct_kernel"); a != bj.end()) b.direct_kernel = kernel_of(*a);
    if (const auto r = bj.find("resident"); r != bj.end()) {
      if (!r->is_boolean())
        throw std::runtime_error("a coalesced bucket's resident must be true or false");
      b.resident = r->get<bool>();
    }
    check_verdict(b.verdict, "coalesced bucket");
    out.push_back(std::move(b));
  }
  std::sort(out.begin(), out.end(), [](const CoalescedBucket& a, const CoalescedBucket& b) {
    return std::pair(a.size, a.count) < std::pair(b.size, b.count);
  });
  return out;
}

}  // namespace

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
  // snprintf, not a stream: a stream takes the program's global C++ locale, whose digit grouping
  // would put separators into the hash.
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(h));
  return safe(device) + "-" + hash + ".json";
}

bool Identity::names_same_device(const std::string& name) const {
  const std::string prefix = safe(device) + "-";
  constexpr size_t kHash = 16;
  return name.size() == prefix.size() + kHash + 5 && name.compare(0, prefix.size(), prefix) == 0 &&
         std::all_of(name.begin() + prefix.size(), name.end() - 5,
                     [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)); }) &&
         name.compare(name.size() - 5, 5, ".json") == 0;
}

namespace {

// A precision's section as stored.
json section_json(const PrecisionProfile& pp) {
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
  json pj = {{"gpu_kernel", kernel_json(pp.gpu_kernel)},
             {"gpu_size", pp.gpu_size},
             {"gpu_gflops", pp.gpu_gflops},
             {"buckets", buckets}};
  if (pp.model) pj["model"] = model_json(*pp.model, pp.observations);
  // Written only where tuned, so a profile without them reads as one from before them.
  if (!pp.direct_kernel.empty()) {
    pj["direct_kernel"] = kernel_json(pp.direct_kernel);
    pj["direct_size"] = pp.direct_size;
    pj["direct_gflops"] = pp.direct_gflops;
  }
  if (pp.direct_below) pj["direct_below"] = *pp.direct_below;
  for (const auto& [key, rule] :
       {std::pair{"batch", &pp.batch}, std::pair{"batch_resident", &pp.batch_resident}})
    if (*rule) pj[key] = batch_rule_json(**rule);
  if (!pp.coalesced.empty()) pj["coalesced"] = coalesced_json(pp.coalesced);
  if (!pp.based_on.empty()) pj["based_on"] = {{"entry", pp.based_on}, {"measured", pp.measured}};
  return pj;
}

}  // namespace

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
  for (const auto& [prec, pp] : p.precisions)
    j["precisions"][std::string(1, letter(prec))] = section_json(pp);
  const Tuning& t = p.tuning;
  j["tuning"] = {{"strategy", t.strategy},
                 {"objective", t.objective},
                 {"date", t.date},
                 {"budget_evaluations", t.budget_evaluations},
                 {"budget_seconds", t.budget_seconds},
                 {"evaluations", t.evaluations},
                 {"seconds", t.seconds}};
  check_finite(j);
  return j.dump(2) + "\n";
}

std::vector<std::string> replaced_parts(const PrecisionProfile& before,
                                        const PrecisionProfile& after) {
  json b = section_json(before), a = section_json(after);
  std::vector<std::string> out;
  // The coalesced kernel's buckets by size: a batch phase out of time keeps the sizes it did not
  // reach.
  std::map<int64_t, std::vector<json>> cb, ca;
  for (const auto& [j, by] : {std::pair{&b, &cb}, std::pair{&a, &ca}})
    if (const auto it = j->find("coalesced"); it != j->end())
      for (const json& bucket : *it) (*by)[bucket.at("size").get<int64_t>()].push_back(bucket);
  for (json* j : {&b, &a}) {
    j->erase("coalesced");
    j->erase("based_on");
  }
  for (const json* keys : {&b, &a})
    for (const auto& [key, value] : keys->items()) {
      const auto ib = b.find(key), ia = a.find(key);
      const bool differ = ib == b.end() || ia == a.end() || *ib != *ia;
      if (differ && std::find(out.begin(), out.end(), key) == out.end()) out.push_back(key);
    }
  for (const auto* sizes : {&cb, &ca})
    for (const auto& [size, buckets] : *sizes) {
      const auto ib = cb.find(size), ia = ca.find(size);
      const std::string name = "coalesced " + std::to_string(size);
      if ((ib == cb.end() || ia == ca.end() || ib->second != ia->second) &&
          std::find(out.begin(), out.end(), name) == out.end())
        out.push_back(name);
    }
  return out;
}

PrecisionProfile based_on_its_entry(PrecisionProfile pp) {
  if (!pp.source.empty()) {
    pp.based_on = pp.source;
    pp.measured.clear();
    pp.source.clear();
  }
  return pp;
}

void add_measured(const PrecisionProfile& before, PrecisionProfile& after) {
  if (after.based_on.empty()) return;
  for (std::string& part : replaced_parts(before, after))
    if (std::find(after.measured.begin(), after.measured.end(), part) == after.measured.end())
      after.measured.push_back(std::move(part));
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
  if (!i.architecture.empty() && !parse_architecture(i.architecture))
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

PrecisionProfile precision_profile_of(const json& pj) {
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
  if (const auto bj = pj.find("batch"); bj != pj.end()) pp.batch = batch_rule_of(*bj);
  if (const auto bj = pj.find("batch_resident"); bj != pj.end())
    pp.batch_resident = batch_rule_of(*bj);
  if (const auto cj = pj.find("coalesced"); cj != pj.end()) pp.coalesced = coalesced_of(*cj);
  if (const auto bj = pj.find("based_on"); bj != pj.end()) {
    pp.based_on = bj->at("entry").get<std::string>();
    if (pp.based_on.empty()) throw std::runtime_error("based_on's entry is empty");
    pp.measured = bj->at("measured").get<std::vector<std::string>>();
    for (const std::string& part : pp.measured)
      if (part.empty()) throw std::runtime_error("based_on's measured names an empty part");
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
    const json j = parse_json(text);
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
    // Each section under a letter the precisions know (precision.hpp), c and z as s and d.
    for (const auto& [key, pj] : j.at("precisions").items()) {
      const auto precision = precision_from_letter(key);
      if (!precision) throw std::runtime_error("unknown precision '" + key + "'");
      p.precisions[*precision] = precision_profile_of(pj);
    }
    if (const auto t = j.find("tuning"); t != j.end()) p.tuning = tuning_of(*t);
    return p;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("not a valid profile: ") + e.what());
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

}  // namespace tandem::detail::profile
