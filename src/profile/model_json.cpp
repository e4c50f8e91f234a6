// The cost model's part of a profile (cost_model.hpp): its rates and factors as JSON, and the
// measurements it was fitted to, each with what the model predicted for it.
#include <algorithm>

#include "profile/json.hpp"
#include "profile/profile.hpp"

namespace tandem::detail::profile {
using nlohmann::json;

namespace {

json samples_json(const std::vector<cost::Sample>& table) {
  json j = json::array();
  for (const cost::Sample& s : table) j.push_back({s.x, s.y});
  return j;
}

std::vector<cost::Sample> samples_of(const json& j) {
  std::vector<cost::Sample> table;
  for (const auto& pair : j) table.push_back({pair.at(0).get<double>(), pair.at(1).get<double>()});
  if (!std::is_sorted(table.begin(), table.end(),
                      [](const cost::Sample& a, const cost::Sample& b) { return a.x < b.x; }))
    throw std::runtime_error("a model's rate table is not in ascending order");
  return table;
}

}  // namespace

json model_json(const cost::Model& m, const std::vector<cost::Observation>& observations) {
  const cost::DeviceModel& d = m.device;
  json obs = json::array();
  for (const cost::Observation& o : observations)
    obs.push_back({{"what", o.what},
                   {"m", o.m},
                   {"n", o.n},
                   {"k", o.k},
                   {"rows", o.rows},
                   {"threads", o.threads},
                   {"feeders", o.feeders},
                   {"pinned", o.pinned},
                   {"reads_c", o.reads_c},
                   {"bytes", o.bytes},
                   {"seconds", o.seconds},
                   {"predicted", o.predicted},
                   {"device_seconds", o.device_seconds},
                   {"cpu_seconds", o.cpu_seconds}});
  return {{"cpu",
           {{"gflops_by_threads", samples_json(m.cpu.gflops_by_threads)},
            {"half_m", m.cpu.half_m},
            {"half_n", m.cpu.half_n},
            {"half_k", m.cpu.half_k},
            {"latency", m.cpu.latency}}},
          {"device",
           {{"discrete", d.discrete},
            {"kernel_gflops", d.kernel_gflops},
            {"launch", d.launch},
            {"tile_m", d.tile_m},
            {"tile_n", d.tile_n},
            {"compute_units", d.compute_units},
            {"chunk_fill", d.chunk_fill},
            {"chunk_from", d.chunk_from},
            {"bus_in", d.bus_in},
            {"bus_out", d.bus_out},
            {"pack_by_threads", samples_json(d.pack_by_threads)},
            {"latency", d.latency},
            {"overlap", d.overlap}}},
          {"both_busy", m.both_busy},
          {"cpu_busy", m.cpu_busy},
          {"split_margin", m.split_margin},
          {"observations", obs}};
}

// The model, its observations into *observations; a model that cannot plan is an error.
cost::Model model_of(const json& j, std::vector<cost::Observation>* observations) {
  cost::Model m;
  const json& c = j.at("cpu");
  m.cpu.gflops_by_threads = samples_of(c.at("gflops_by_threads"));
  m.cpu.half_m = c.at("half_m").get<double>();
  m.cpu.half_n = c.at("half_n").get<double>();
  m.cpu.half_k = c.at("half_k").get<double>();
  m.cpu.latency = c.at("latency").get<double>();
  const json& d = j.at("device");
  m.device.discrete = d.at("discrete").get<bool>();
  m.device.kernel_gflops = d.at("kernel_gflops").get<double>();
  m.device.launch = d.at("launch").get<double>();
  m.device.tile_m = integer<int64_t>(d, "tile_m");
  m.device.tile_n = integer<int64_t>(d, "tile_n");
  m.device.compute_units = integer<int>(d, "compute_units");
  m.device.chunk_fill = integer<int>(d, "chunk_fill");
  m.device.chunk_from = d.at("chunk_from").get<double>();
  m.device.bus_in = d.at("bus_in").get<double>();
  m.device.bus_out = d.at("bus_out").get<double>();
  m.device.pack_by_threads = samples_of(d.at("pack_by_threads"));
  m.device.latency = d.at("latency").get<double>();
  m.device.overlap = d.at("overlap").get<double>();
  m.both_busy = j.at("both_busy").get<double>();
  m.cpu_busy = j.at("cpu_busy").get<double>();
  m.split_margin = j.at("split_margin").get<double>();
  if (const std::string why = m.problem(); !why.empty())
    throw std::runtime_error("the cost model cannot be used: " + why);
  for (const json& o : j.value("observations", json::array())) {
    cost::Observation x;
    x.what = o.at("what").get<std::string>();
    x.m = integer<int64_t>(o, "m");
    x.n = integer<int64_t>(o, "n");
    x.k = integer<int64_t>(o, "k");
    x.rows = integer<int64_t>(o, "rows");
    x.threads = integer<int>(o, "threads");
    x.feeders = integer<int>(o, "feeders");
    x.pinned = o.at("pinned").get<bool>();
    x.reads_c = o.at("reads_c").get<bool>();
    x.bytes = o.at("bytes").get<double>();
    x.seconds = o.at("seconds").get<double>();
    x.predicted = o.at("predicted").get<double>();
    x.device_seconds = o.value("device_seconds", 0.0);
    x.cpu_seconds = o.value("cpu_seconds", 0.0);
    observations->push_back(x);
  }
  return m;
}

}  // namespace tandem::detail::profile
