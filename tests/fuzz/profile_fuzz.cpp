// libFuzzer target: a profile file's text, as a hand edit or another machine's export may leave
// it, through what every call and `tandem profile import` do with it.
//
// Properties: from_json either returns or throws std::runtime_error; a profile it returns has
// each bucket's split in range, prints back (to_json) to text it reads again (every number
// within its physical range, ranges.cpp), has a file name that stays in its directory
// and that the lookup reads for its device, gives a choice for any call (choose) with a fraction
// in [0, 1], and its kernels meet the one validity rule (gpu::check) without crashing it,
// whatever their values (issue 16 items 1 and 7). A usable cost model plans any shape within the
// call's rows. Each line of the input is also read as a line of a tuning log.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/precision.hpp"
#include "fuzz_check.hpp"
#include "gpu/gemm_params.hpp"
#include "model/cost_model.hpp"
#include "profile/choice.hpp"
#include "profile/profile.hpp"
#include "profile/tune_log.hpp"
#include "tandem/tandem.hpp"

namespace {

namespace prof = tandem::detail::profile;
namespace gpu = tandem::detail::gpu;
namespace cost = tandem::detail::cost;
using tandem::detail::Precision;

void check_kernel(const std::map<std::string, int>& kernel, Precision precision) {
  const gpu::Limits limits{UINT64_MAX, UINT64_MAX, true};
  try {
    (void)gpu::check(gpu::with_defaults(limits, kernel), limits, precision);
  } catch (const tandem::Error&) {  // an unknown parameter, refused by name
  }
}

void check_choices(const prof::Profile& p) {
  const int64_t sizes[] = {1, 64, 1000, 4096, 1 << 20, int64_t{1} << 31};
  for (Precision precision : tandem::detail::kPrecisions)
    for (int64_t m : sizes)
      for (bool resident : {false, true}) {
        const prof::Choice c = prof::choose(p, precision, m, m / 2 + 1, 64, resident);
        FUZZ_CHECK(c.fraction >= 0 && c.fraction <= 1, "a profile's fraction is in [0, 1]");
        FUZZ_CHECK(c.cpu_threads >= 0, "a profile's CPU threads are not negative");
      }
}

void check_model(const cost::Model& model) {
  if (!model.usable()) return;
  const cost::Side side{&model.device, model.device.tile_m, model.both_busy, model.cpu_busy};
  for (int64_t m : {int64_t{1}, int64_t{100}, int64_t{5000}}) {
    const cost::Shape shape{m, 300, 70, 4, m == 100, m == 1};
    const cost::Plan plan = cost::best_plan(model.cpu, {side}, shape, 4, model.split_margin);
    int64_t rows = plan.cpu_rows;
    for (int64_t r : plan.rows) {
      FUZZ_CHECK(r >= 0, "a planned device share is not negative");
      rows += r;
    }
    FUZZ_CHECK(plan.cpu_rows >= 0 && rows == m, "a plan covers exactly the call's rows");
  }
}

// Each line as a line of `tandem tune --log`, read back when a run resumes: a record it returns
// must print back (to_log_line) to a line it reads again.
void check_log_lines(const std::string& text) {
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    if (const auto record = prof::from_log_line(text.substr(at, end - at)))
      FUZZ_CHECK(prof::from_log_line(prof::to_log_line(*record)).has_value(),
                 "a tuning log record that was read is written back as one that cannot be");
    at = end + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  check_log_lines(text);
  prof::Profile p;
  try {
    p = prof::from_json(text);
  } catch (const std::runtime_error&) {
    return 0;
  }
  std::string why;
  (void)prof::compatible(p, &why);
  const std::string name = p.identity.file_name();
  FUZZ_CHECK(name.find('/') == std::string::npos && name.size() > 5,
             "a profile's file name stays in the profile directory");
  FUZZ_CHECK(p.identity.names_same_device(name),
             "a profile's file name is one the lookup reads for its device");
  for (const auto& [precision, pp] : p.precisions) {
    check_kernel(pp.gpu_kernel, precision);
    for (const prof::Bucket& b : pp.buckets) {
      FUZZ_CHECK(b.parts > 0 && b.gpu_parts >= 0 && b.gpu_parts <= b.parts, "a split in range");
      check_kernel(b.kernel, precision);
      check_kernel(b.gpu_kernel, precision);
    }
    if (pp.model) check_model(*pp.model);
  }
  check_choices(p);
  // `tandem profile import` saves what it read; the file it writes must read back.
  try {
    (void)prof::from_json(prof::to_json(p));
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    FUZZ_CHECK(false, "a profile that was read is written back as one that cannot be");
  }
  return 0;
}
