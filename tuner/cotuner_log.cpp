// The co-tuner's log (profile/tune_log.hpp's records, JSON lines): what earlier runs measured,
// read once at the start, each new measurement appended as it comes, and the lookups through
// which every phase resumes from it instead of measuring again.
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "base/files.hpp"
#include "base/log.hpp"
#include "cotuner_internal.hpp"
#include "profile/defaults.hpp"
#include "profile/tune_log.hpp"

namespace tandem::tuner {
namespace {

// The most of a tuning log read to resume from. A log line is about 400 bytes and a full tune
// writes a few thousand; 64 MiB holds a hundred such runs, and no more is read from a file that
// is not a log.
constexpr uintmax_t kMaxLogBytes = uintmax_t{64} << 20;

}  // namespace

prof::LogRecord Tuner::record(const char* kind, Precision precision, int64_t size,
                              const std::map<std::string, int>& kernel, const Timed& t) {
  prof::LogRecord rec;
  rec.kind = kind;
  rec.precision = precision;
  rec.size = size;
  rec.kernel = kernel;
  rec.failure = t.failure;
  if (!t.failure.empty()) return rec;
  rec.seconds = t.wall.median;
  rec.cost = t.cost;
  rec.min = t.wall.min;
  rec.max = t.wall.max;
  rec.spread = t.wall.spread;
  rec.bimodal = t.wall.bimodal;
  rec.kernel_seconds = t.kernel;
  return rec;
}

// What earlier runs measured; and the log is opened for appending now, so a log this run could
// not add to (a link, a FIFO, a device, an unwritable directory) stops it before any of the
// budget is spent. A last line cut short by an interrupted run is ended here: the next record
// then starts a line of its own instead of being swallowed.
void Tuner::read_log() {
  if (report_.log.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(report_.log.parent_path(), ec);
  std::string all;
  try {
    detail::files::append(report_.log, "");  // creates it; refuses what is not a regular file
    all = detail::files::read(report_.log, kMaxLogBytes, "a tuning log");
    if (!all.empty() && all.back() != '\n') detail::files::append(report_.log, "\n");
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("the tuning log: " + std::string(e.what()));
  }
  std::stringstream text(all);
  for (std::string line; std::getline(text, line);)
    if (auto r = prof::from_log_line(line)) log_.push_back(*r);
}

void Tuner::append(const prof::LogRecord& r) {
  log_.push_back(r);
  if (report_.log.empty()) return;
  try {
    detail::files::append(report_.log, prof::to_log_line(r) + "\n");
  } catch (const std::runtime_error& e) {
    detail::warn_once("tune-log:" + report_.log.string(),
                      std::string(e.what()) +
                          "; the tuning log ends here, and an interrupted run will measure again");
  }
}

const prof::LogRecord* Tuner::logged_split(Precision prec, int64_t size,
                                           const std::map<std::string, int>& kernel, int gpu_parts,
                                           int threads, bool resident, bool dynamic) const {
  for (const auto& r : log_)
    if (r.kind == "split" && r.precision == prec && r.size == size && r.kernel == kernel &&
        r.gpu_parts == gpu_parts && r.parts == o_.parts && r.cpu_threads == threads &&
        r.resident == resident && r.dynamic == dynamic)
      return &r;
  return nullptr;
}

// The batch phase's rounds at one size and memory, with today's number of rounds and the direct
// kernel it dealt with (tuner/cotuner_batch.cpp): the latest such record.
const prof::LogRecord* Tuner::logged_batch(Precision prec, int64_t size, bool resident,
                                           const std::map<std::string, int>& kernel,
                                           const char* kind, int64_t count) const {
  const auto rounds = static_cast<size_t>(prof::confirm_rule().rounds);
  for (auto r = log_.rbegin(); r != log_.rend(); ++r) {
    // A record from before the devices-alone side ("gpu") was measured is measured again.
    const auto cpu = r->rounds.find("cpu");
    if (r->kind == kind && r->precision == prec && r->size == size && r->resident == resident &&
        r->kernel == kernel && (count == 0 || r->count == count) && cpu != r->rounds.end() &&
        cpu->second.size() == rounds && r->rounds.count("gpu") > 0)
      return &*r;
  }
  return nullptr;
}

void Tuner::log_batch(const char* kind, Precision prec, bool resident,
                      const std::map<std::string, int>& kernel, const prof::BatchPoint& point,
                      const BatchRounds& measured) {
  prof::LogRecord rec;
  rec.kind = kind;
  rec.precision = prec;
  rec.size = point.size;
  rec.count = point.count;
  rec.kernel = kernel;
  rec.resident = resident;
  rec.rounds = {{"cpu", measured.rounds.cpu},
                {"gpu", measured.rounds.gpu},
                {"candidate", measured.rounds.candidate}};
  if (!measured.rounds.candidate.empty()) rec.seconds = summarize(measured.rounds.candidate).median;
  rec.failure = measured.failure;
  rec.verdict = point.verdict;
  rec.note = point.note;
  append(rec);
}

}  // namespace tandem::tuner
