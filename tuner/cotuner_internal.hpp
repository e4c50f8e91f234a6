// The co-tuner's working parts, shared by the files of its two phases (a private header):
// cotuner.cpp runs the tuning and phase 1, the kernel search; cotuner_split.cpp holds phase 2,
// the search of the split between the CPU and the GPU.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/clock.hpp"
#include "confirm.hpp"
#include "cotuner.hpp"
#include "cotuner_checks.hpp"
#include "gemm_measure.hpp"
#include "gemm_space.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "gpu/pinned_memory.hpp"
#include "gpu/programs.hpp"
#include "measure.hpp"
#include "power.hpp"
#include "profile/profile.hpp"
#include "profile/tune_log.hpp"
#include "search.hpp"
#include "tandem/tandem.hpp"

namespace tandem::tuner {

namespace prof = detail::profile;
using detail::Precision;

// The work of one square call of size s in GFLOP (8 flops a complex multiply-add, 2 a real one).
inline double gflop(Precision prec, int64_t s) { return bench::gflop(prec, s, s, s); }

// One configuration's timing.
struct Timed {
  Stats wall;
  double kernel = 0;  // median kernel time from profiling events
  double joules = 0;  // per call, when the objective reads energy
  double cost = 0;    // what the search minimises: seconds, joules or joule-seconds
  std::string failure;
};

// One hybrid configuration's cost (what the objective minimises) and wall time; infinite if it
// failed.
struct Measured {
  double cost = std::numeric_limits<double>::infinity();
  double seconds = std::numeric_limits<double>::infinity();
};

// One workspace's best split, and its best GPU-only kernel.
struct Split {
  Measured best, best_gpu;
  int gpu_parts = 0, cpu_threads = 0;
  bool dynamic = false;  // the split ran faster under dynamic balance
  std::map<std::string, int> kernel, gpu_kernel;
  double gpu_gflops = 0;
};

// (cost, seconds, kernel) of every kernel candidate that passed.
using Candidates = std::vector<std::tuple<double, double, std::map<std::string, int>>>;

// What one kernel search measures: the log records' kind ("kernel", or "direct" for the direct
// kernel's space), the size, and its budgets.
struct SearchPlan {
  const char* kind;  // the log records' kind: "kernel" (phase 1), "small" or "direct"
  int64_t size;
  int evaluations;
  double seconds;
};

// Phase 1's state for one precision (and the direct kernel's search).
template <class T>
struct KernelSearch {
  const char* kind;
  Precision precision;
  const Space& space;
  Workspace<T> ws;  // at the kernel size
  PrecisionSummary& summary;
  double best = 0;        // the best cost so far
  Candidates measured{};  // the candidates that passed, as measured
};

// The median of `v`, 0 where it is empty.
inline double median_of(const std::vector<double>& v) {
  return v.empty() ? 0 : summarize(v).median;
}

// Whether tandem_malloc pinned all of ws's operands on `device` (it gives ordinary memory where
// the device cannot pin so much).
template <class T>
bool pinned(const detail::gpu::Device& device, const BatchWorkspace<T>& ws) {
  const auto bytes = static_cast<size_t>(ws.elements()) * sizeof(T);
  return detail::gpu::in_pinned_block(device, ws.a.data(), bytes) &&
         detail::gpu::in_pinned_block(device, ws.b.data(), bytes) &&
         detail::gpu::in_pinned_block(device, ws.c.data(), bytes);
}

// The batch phase's rounds at one size and memory (cotuner_batch.cpp): the batch's products,
// each side's timed seconds, the first side's failure ("" none), and whether they came from the
// log.
struct BatchRounds {
  int64_t count = 0;
  Rounds rounds;
  std::string failure;
  bool logged = false;
  std::string verdict, note;  // the log's, where logged
};

class Tuner {
 public:
  explicit Tuner(const TuneOptions& o);
  TuneReport run();

 private:
  void settle(Precision prec);
  void save();  // the profile, keeping what the saved one had for precisions not tuned now
  TuneReport run_model_only();
  double elapsed() const { return started_.seconds(); }
  bool out_of_time() const { return elapsed() >= precision_deadline_; }

  // A log record of `kind` for one timing of `kernel` at `size`.
  static prof::LogRecord record(const char* kind, Precision precision, int64_t size,
                                const std::map<std::string, int>& kernel, const Timed& t);
  // cotuner_log.cpp: the JSON-lines log, read once, appended to as measurements come.
  void read_log();
  void append(const prof::LogRecord& r);
  const prof::LogRecord* logged_split(Precision prec, int64_t size,
                                      const std::map<std::string, int>& kernel, int gpu_parts,
                                      int threads, bool resident, bool dynamic) const;
  // The last "batch" record (or `kind`'s: "batch few", "batch middle") with the devices-alone
  // side and a full set of the confirm rule's rounds, of `count` products where one is given.
  const prof::LogRecord* logged_batch(Precision prec, int64_t size, bool resident,
                                      const std::map<std::string, int>& kernel,
                                      const char* kind = "batch", int64_t count = 0) const;
  // A batch's rounds as a record of `kind` ("batch", "batch middle"), with their verdict and note.
  void log_batch(const char* kind, Precision prec, bool resident,
                 const std::map<std::string, int>& kernel, const prof::BatchPoint& point,
                 const BatchRounds& measured);
  void progress(const std::string& phase, Precision prec, int done, int budget, double best_seconds,
                int64_t size, const std::string& last, bool keep_line = false);

  // Times one configuration on ws (after warm-up), checking each result cheaply.
  template <class T>
  Timed time(Workspace<T>& ws, const Options& opt);
  // One call on ws, timed and checked cheaply: "" and its seconds (and its kernel's), or why it
  // failed.
  template <class T>
  std::string call_once(Workspace<T>& ws, const Options& opt, double* seconds,
                        double* kernel_seconds = nullptr);

  // cotuner_small.cpp: kernels of its own for a bucket too small for phase 1's best (`best`).
  template <class T>
  bool wants_small_tiles(int64_t size, const std::map<std::string, int>& best) const;
  template <class T>
  std::vector<std::map<std::string, int>> small_tiles(Precision prec, int64_t size,
                                                      int buckets_left, PrecisionSummary& summary);
  // cotuner.cpp: the run of one precision and its phase 1.
  template <class T>
  void tune_precision(Precision prec);
  template <class T>
  Candidates rank_kernels(Precision prec, const Space& space, PrecisionSummary& summary,
                          const SearchPlan& plan);
  // The matrix-engine codelet's share of phase 1 (where `limits.engine` says the device's probe
  // proved it), until `seconds` from now: its candidates ranked into `measured`.
  template <class T>
  void rank_engine(Precision prec, const DeviceLimits& limits, double seconds,
                   PrecisionSummary& summary, Candidates& measured);
  template <class T>
  Outcome try_kernel(KernelSearch<T>& ks, const Point& p);
  template <class T>
  void resume_kernels(KernelSearch<T>& ks, Evaluator& ev);
  template <class T>
  void prebuild(const Space& space, const Point& p);
  Options gpu_options(const std::map<std::string, int>& kernel) const;
  bool discrete_time() const;
  std::map<std::string, int> ranked_as(std::map<std::string, int> kernel) const;

  // cotuner_split.cpp: phase 2.
  template <class T>
  prof::Bucket split_bucket(Precision prec, int64_t size,
                            const std::vector<std::map<std::string, int>>& top);
  template <class T>
  Split search_split(Precision prec, Workspace<T>& ws, const Measured& cpu,
                     const std::vector<std::map<std::string, int>>& top);
  template <class T>
  Measured gpu_alone(Precision prec, Workspace<T>& ws, const std::map<std::string, int>& ranked,
                     std::map<std::string, int>* kernel);
  template <class T>
  void refine_split(Precision prec, Workspace<T>& ws, const Measured& cpu, Split& sp);
  template <class T>
  void choose_balance(Precision prec, Workspace<T>& ws, Split& sp);
  template <class T>
  Measured hybrid_time(Precision prec, Workspace<T>& ws, const std::map<std::string, int>& kernel,
                       int gpu_parts, int threads, bool dynamic = false);
  Options split_options(const std::map<std::string, int>& kernel, int gpu_parts, int threads,
                        bool dynamic) const;
  // The interleaved rounds that keep or refuse what the search found (tuner/confirm.hpp).
  template <class T>
  prof::Confirmation confirm(Precision prec, Workspace<T>& ws, const Measured& cpu, Split& sp);
  // W: a Workspace<T> (one product) or a BatchWorkspace<T> (the batch phase). *failure: "side:
  // why" of the first side that failed, "" if none did. first_round: the first round's number
  // for round_order (a batch point's further set of rounds goes on from the last set's).
  template <class W>
  Rounds rounds(W& ws, const std::vector<std::pair<std::string, Options>>& sides,
                std::string* failure = nullptr, int first_round = 0);
  const prof::LogRecord* logged_confirm(Precision prec, int64_t size, const Split& sp,
                                        bool resident) const;
  template <class T>
  bool winner_checks(int64_t size, int gpu_parts, int cpu_threads, bool dynamic,
                     const std::map<std::string, int>& kernel, uint64_t seed);
  bool tunable(Precision prec) const;
  void start_from(const prof::Profile& active);
  prof::Tuning record(const std::string& strategy) const;
  // One phase alone (--direct-only, --batch-only) for the profile that applies now:
  // phase(zero element, precision, its profile, its summary) for each precision; `name` is the
  // run's in its tuning record where it keeps no local one.
  template <class Phase>
  TuneReport run_alone(const char* name, const Phase& phase);
  // cotuner_direct.cpp: the direct kernel and its threshold.
  template <class T>
  void tune_direct(Precision prec, prof::PrecisionProfile& pp, PrecisionSummary& summary);
  template <class T>
  std::optional<int64_t> direct_threshold(Precision prec, const prof::PrecisionProfile& pp,
                                          PrecisionSummary& summary);
  // cotuner_batch.cpp: the batch rule, for ordinary memory and (on a discrete device) for
  // tandem_malloc memory.
  template <class T>
  void tune_batch(Precision prec, prof::PrecisionProfile& pp, PrecisionSummary& summary);
  template <class T>
  std::optional<prof::BatchRule> batch_rule(Precision prec, const prof::PrecisionProfile& pp,
                                            bool resident, PrecisionSummary& summary);
  template <class T>
  int64_t batch_count(Precision prec, int64_t size);
  // cotuner_coalesced.cpp: the coalesced kernel's own parameters, a bucket per size and count.
  template <class T>
  void tune_coalesced(Precision prec, prof::PrecisionProfile& pp, PrecisionSummary& summary);
  template <class T>
  std::optional<prof::CoalescedBucket> coalesced_bucket(Precision prec,
                                                        const prof::PrecisionProfile& pp,
                                                        int64_t size, int64_t count, double seconds,
                                                        std::vector<Point>& winners,
                                                        PrecisionSummary& summary);
  template <class T>
  bool confirm_coalesced(Precision prec, BatchWorkspace<T>& ws,
                         const std::map<std::string, int>& direct,
                         const std::map<std::string, int>& candidate, prof::CoalescedBucket& b);
  template <class T>
  Outcome try_coalesced(Precision prec, BatchWorkspace<T>& ws, const Space& space, const Point& p);
  template <class T>
  BatchRounds batch_rounds(Precision prec, int64_t size, bool resident, const Options& cpu,
                           const Options& hybrid, int set = 0, int64_t middle = 0);
  template <class T>
  Confirmed judge_batch(BatchRounds& measured, Precision prec, int64_t size, bool resident,
                        const Options& cpu, const Options& hybrid, int64_t middle = 0);
  template <class T>
  std::optional<prof::MiddleCount> batch_middle(Precision prec, const prof::PrecisionProfile& pp,
                                                const prof::BatchPoint& point, bool resident,
                                                const Options& cpu, Options hybrid);
  template <class T>
  std::optional<prof::FewProducts> batch_few(Precision prec, const prof::PrecisionProfile& pp,
                                             int64_t size, bool resident, const Options& cpu,
                                             const std::optional<std::string>& device);
  // One strided batch call on ws, timed and checked cheaply, as call_once is for one product.
  template <class T>
  std::string call_once(BatchWorkspace<T>& ws, const Options& opt, double* seconds,
                        double* kernel_seconds = nullptr);
  // cotuner_model.cpp: the cost model's measurements and fit.
  template <class T>
  std::string fit_model(Precision prec, int64_t size, prof::PrecisionProfile& pp);
  detail::cost::DeviceConstants device_constants(const std::map<std::string, int>& kernel,
                                                 Precision prec) const;

  static int default_threads(int gpu_parts);
  int search_threads(bool resident) const;

  TuneOptions o_;                     // as settled for the precision being tuned (settle)
  TuneOptions given_;                 // as the caller gave them
  std::map<std::string, int> start_;  // this precision's start point
  detail::clock::Stopwatch started_;
  std::shared_ptr<detail::gpu::Device> device_;
  detail::gpu::DeviceInfo info_;
  TuneReport report_;
  std::vector<prof::LogRecord> log_;
  std::set<std::string> built_;
  std::unique_ptr<power::Meter> meter_;  // for the energy and edp objectives
  double precision_deadline_ = 0;        // elapsed seconds by which this precision must be done
  double small_until_ = 0;  // elapsed seconds by which this precision's small-tile searches end
  double bucket_best_ = 0;  // fastest configuration of the bucket being split, for progress
  int bucket_index_ = 0;    // buckets finished in this precision, for progress
  std::map<int64_t, int64_t> batch_counts_;  // the batch phase's count by size, this precision
};

}  // namespace tandem::tuner
