// The tuning log's lines, as JSON.
#include "profile/tune_log.hpp"

#include "profile/json.hpp"

namespace tandem::detail::profile {
using nlohmann::json;

std::string to_log_line(const LogRecord& r) {
  json j = {{"kind", r.kind},       {"precision", std::string(1, letter(r.precision))},
            {"size", r.size},       {"point", r.point},
            {"kernel", r.kernel},   {"gpu_parts", r.gpu_parts},
            {"parts", r.parts},     {"cpu_threads", r.cpu_threads},
            {"min", r.min},         {"max", r.max},
            {"spread", r.spread},   {"kernel_seconds", r.kernel_seconds},
            {"bimodal", r.bimodal}, {"failure", r.failure},
            {"cost", r.cost}};
  if (r.resident) j["resident"] = true;
  if (r.dynamic) j["balance"] = "dynamic";
  if (r.count > 0) j["count"] = r.count;
  if (!r.base_kernel.empty()) j["base_kernel"] = r.base_kernel;
  j["seconds"] = r.seconds ? json(*r.seconds) : json(nullptr);
  if (!r.rounds.empty()) j["rounds"] = r.rounds;
  if (!r.verdict.empty()) j["verdict"] = r.verdict;
  if (!r.note.empty()) j["note"] = r.note;
  return j.dump();
}

std::optional<LogRecord> from_log_line(const std::string& line) {
  try {
    const json j = parse_json(line);
    LogRecord r;
    r.kind = j.at("kind").get<std::string>();
    r.precision = parse_precision(j.at("precision").get<std::string>());
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
    if (j.contains("count")) r.count = integer<int64_t>(j, "count");
    if (const auto base = j.find("base_kernel"); base != j.end()) r.base_kernel = kernel_of(*base);
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
