// libFuzzer target: kernel parameters as text (a profile's kernel, `tandem gemm --kernel`,
// `tandem kernel`), through the parser and then the one validity rule every call applies.
//
// Properties: parse_params either returns or throws std::invalid_argument; what it returns
// prints back (describe) to text that parses to the same set; with_defaults throws only
// tandem::Error, for an unknown name; check never crashes on any set, however large its values
// (issue 16 item 1: MWG=100000 passed and crashed PoCL); a set it accepts keeps the kernel's own
// #error rules and fits the limits it was checked against, and one accepted for a complex
// precision is accepted for its real counterpart.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "base/precision.hpp"
#include "base/text.hpp"
#include "fuzz_check.hpp"
#include "gpu/gemm_params.hpp"
#include "tandem/tandem.hpp"

namespace {

namespace gpu = tandem::detail::gpu;
namespace text = tandem::detail::text;
using tandem::detail::Precision;

void check_accepted(const gpu::Params& p, const gpu::Limits& limits, Precision precision) {
  FUZZ_CHECK(p.at("MWG") > 0 && p.at("NWG") > 0 && p.at("KWG") > 0, "tile sizes positive");
  FUZZ_CHECK(p.at("MWG") % p.at("MDIMC") == 0 && p.at("NWG") % p.at("NDIMC") == 0,
             "tiles are multiples of the work-group");
  const uint64_t group = uint64_t(p.at("MDIMC")) * uint64_t(p.at("NDIMC"));
  FUZZ_CHECK(group <= limits.max_work_group, "work-group within the device's limit");
  FUZZ_CHECK(
      gpu::local_bytes(p, tandem::detail::element_bytes(precision)) <= limits.local_mem_bytes,
      "local memory within the device's");
  FUZZ_CHECK(gpu::row_tile(p) == p.at("MWG"), "row tile is MWG");
  FUZZ_CHECK(gpu::private_bytes(p, tandem::detail::element_bytes(precision)) > 0,
             "a work-item holds its register tile");
}

void check_all(const std::map<std::string, int>& overrides) {
  // A GPU and a CPU device as the library sees them, and one with room for anything (what
  // `tandem profile import` checks a profile for another device against).
  const gpu::Limits devices[] = {
      {1024, 49152, true}, {4096, 524288, false}, {UINT64_MAX, UINT64_MAX, true}};
  for (const gpu::Limits& limits : devices) {
    gpu::Params p;
    try {
      p = gpu::with_defaults(limits, overrides);
    } catch (const tandem::Error&) {
      return;  // an unknown parameter: refused by name
    }
    // The byte counts divide by the work-group's sides: only what check accepts has them. A
    // complex element is twice its real counterpart's size and the kernel's rules are the same,
    // so a set check accepts for c (z) it accepts for s (d).
    for (Precision precision : tandem::detail::kPrecisions) {
      const bool accepted = !gpu::check(p, limits, precision);
      if (accepted && tandem::detail::is_complex(precision))
        FUZZ_CHECK(!gpu::check(p, limits, tandem::detail::real_of(precision)),
                   "a set accepted for a complex precision is accepted for its real one");
      if (accepted) check_accepted(p, limits, precision);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::map<std::string, int> params;
  try {
    params = text::parse_params(input);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  // Reports, logs and `tandem profile show` print parameters with describe; what they print must
  // read back as the same set, whatever bytes the names hold.
  bool same = false;
  try {
    same = text::parse_params(text::describe(params)) == params;
  } catch (const std::invalid_argument&) {
  }
  FUZZ_CHECK(same, "describe(parse_params(text)) parses back to the same parameters");
  check_all(params);
  return 0;
}
