// Compares the search strategies against the exhaustive best on a kernel space that was measured
// in full: `tandem tune --small-space --strategy exhaustive --log FILE` records every candidate's
// time; this program replays each strategy over that table (no new measurements, so every
// strategy sees the same numbers) with a budget of a fraction of the exhaustive evaluations.
//
//   strategy_eval --log FILE [--precision s] [--size N] [--fraction 0.1] [--seeds 20]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>

#include "base/precision.hpp"
#include "gemm_space.hpp"
#include "gpu/device.hpp"
#include "profile/tune_log.hpp"
#include "search.hpp"

int main(int argc, char** argv) {
  CLI::App app{"replay the search strategies over an exhaustively measured kernel space"};
  std::string log, precision = "s", device;
  int64_t size = 0;
  double fraction = 0.1;
  int seeds = 20;
  app.add_option("--log", log, "tuning log of an exhaustive --small-space run")->required();
  app.add_option("--precision", precision, "s or d")->check(CLI::IsMember({"s", "d"}));
  app.add_option("--size", size, "kernel size in the log (default: the only one)");
  app.add_option("--fraction", fraction, "budget as a fraction of the exhaustive evaluations");
  app.add_option("--seeds", seeds, "runs per strategy");
  app.add_option("--device", device, "the device the log was measured on");
  CLI11_PARSE(app, argc, argv);

  namespace prof = tandem::detail::profile;
  const tandem::detail::Precision prec = tandem::detail::parse_precision(precision);
  std::map<tandem::tuner::Point, tandem::tuner::Outcome> table;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    auto r = prof::from_log_line(line);
    if (!r || r->kind != "kernel" || r->precision != prec || (size && r->size != size)) continue;
    table[r->point] = tandem::tuner::Outcome{r->seconds, r->failure};
  }
  if (table.empty()) {
    std::fprintf(stderr, "no kernel records for %s in %s\n",
                 tandem::detail::routine_name(prec, "gemm").c_str(), log.c_str());
    return 1;
  }
  const auto info = tandem::detail::gpu::info(*tandem::detail::gpu::open_device(device));
  const auto space = tandem::tuner::small_gemm_space(
      {info.max_work_group, info.local_mem_bytes, info.is_gpu}, prec);
  // The exhaustive reference: every valid point of the space must be in the table.
  int valid = 0, missing = 0;
  double best = 0;
  {
    tandem::tuner::Evaluator ev(
        space,
        [&](const tandem::tuner::Point& p) {
          auto it = table.find(p);
          if (it == table.end()) ++missing;
          return it == table.end() ? tandem::tuner::Outcome{std::nullopt, "missing"} : it->second;
        },
        {1 << 30, 1e9});
    auto r = tandem::tuner::search("exhaustive", ev, 1);
    valid = r.evaluations;
    best = r.cost;
  }
  if (missing > 0) {
    std::fprintf(stderr,
                 "%d of %d valid points are missing from the log: run the exhaustive tune first\n",
                 missing, valid);
    return 1;
  }
  const int budget = std::max(1, static_cast<int>(valid * fraction));
  std::printf(
      "%sgemm space: %d valid points (of %llu), exhaustive best %.4f ms; budget %d evaluations "
      "(%.0f%%)\n\n",
      precision.c_str(), valid, static_cast<unsigned long long>(space.cardinality()), best * 1e3,
      budget, fraction * 100);
  std::printf(
      "| strategy | median of best speed reached | worst seed | runs reaching 95%% | evaluations "
      "used |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  for (const auto& name : tandem::tuner::strategy_names()) {
    if (name == "exhaustive") continue;
    std::vector<double> reached;
    std::vector<int> used;
    for (int seed = 1; seed <= seeds; ++seed) {
      tandem::tuner::Evaluator ev(space, [&](const tandem::tuner::Point& p) { return table.at(p); },
                                  {budget, 1e9});
      auto r = tandem::tuner::search(name, ev, static_cast<uint64_t>(seed));
      reached.push_back(r.best ? best / r.cost : 0.0);  // speed relative to the best
      used.push_back(r.evaluations);
    }
    std::sort(reached.begin(), reached.end());
    const int hits = static_cast<int>(
        std::count_if(reached.begin(), reached.end(), [](double x) { return x >= 0.95; }));
    std::printf(
        "| %s | %.1f%% | %.1f%% | %d of %d | %.1f (%.1f%% of exhaustive) |\n", name.c_str(),
        100 * reached[reached.size() / 2], 100 * reached.front(), hits, seeds,
        std::accumulate(used.begin(), used.end(), 0.0) / double(used.size()),
        100.0 * std::accumulate(used.begin(), used.end(), 0.0) / double(used.size()) / valid);
  }
  return 0;
}
