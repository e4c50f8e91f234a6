// The few settings that tests and benchmarks change to reach paths this machine would not take
// on its own: a discrete GPU's pipeline played by PoCL, small shares cut into chunks, small
// blocks pinned, the CPU share as row panels, a model of how long a call lasts. The library only
// reads them; tests and benchmarks set them for a scope through tests/support/seam_override.hpp,
// outside the library, which alone calls store() (the ctest test `structure` checks that).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tandem::detail::seams {

// How the CPU share runs inside its oneTBB arena: one OpenBLAS call on all the arena's threads
// (the default: faster on every machine measured), or row panels, one single-threaded call per
// arena thread.
enum class CpuMode { SingleCall, Panels };

using CallEnds = void (*)(int64_t started_ns, int64_t gpu_rows, int64_t cpu_rows, int64_t n,
                          int64_t k);

struct Values {
  // Treat every OpenCL device as discrete: operands staged in pinned memory and copied.
  bool assume_discrete = false;
  // Treat every OpenCL device as sharing memory with the host, as an APU does: operands in place
  // or in staging buffers of their exact size. Oclgrind (tests/oclgrind_test.cpp) checks each
  // access against its buffer, and a discrete share's staging buffers are whole MiB, so only
  // this way does it see a kernel read or write just past an operand's end.
  // assume_discrete wins where both are set.
  bool assume_unified = false;
  // Count every OpenCL device as a GPU where tandem picks devices by their kind: the set auto
  // offers a call when the caller names none (plan.cpp), every GPU rather than the first device.
  bool assume_gpus = false;
  // A discrete share whose copies (A, B and C together) are smaller than this runs as one chunk:
  // overlapping copies that small with the kernel does not pay.
  size_t overlap_from = size_t{16} << 20;
  // A discrete share pads its rows on the device to the kernel's vector widths, writing them with
  // rectangle copies (discrete_share.cpp). Off only for Oclgrind's uninitialised-value check,
  // which does not see a rectangle write set the bytes it writes (tests/oclgrind_preload.c).
  bool pad_rows = true;
  // tandem_malloc pins blocks of at least this many bytes on a discrete device (the small ones
  // from an arena, pinned_memory.cpp): a block under a page is copied in no time.
  size_t pinned_from = size_t{4096};
  CpuMode cpu_mode = CpuMode::SingleCall;
  // Every kernel build fails as a compiler error would (an #error in the source): how tests reach
  // the build-failure paths now that invalid parameters never get as far as the compiler.
  bool fail_builds = false;
  // The matrix-engine codelet (kernels/gemm_engine.cl) runs on every device with its warp's
  // exchange of fragments played in local memory (ENGINE_EMULATE), and the engine counts as
  // proven for both instruction shapes without a probe: how tests check the codelet's indexing
  // on a device without NVIDIA's matrix instructions. probe_any: the probe is built and run on
  // every device, each time it is asked, not only where the architecture says the instructions
  // may exist (the test that a device without them says no); with emulate_engine too, the probe
  // runs the emulation (the test that the probe's expected result is the layout's).
  bool emulate_engine = false;
  bool probe_any = false;
  // The cores' small kernel (cpu/small_kernel.cpp) runs its baseline build even where the
  // processor has AVX2 and FMA: how tests reach the loop such a processor never runs.
  bool small_kernel_baseline = false;
  // The share on the device of this index (as list_devices() numbers it) fails as a device lost
  // mid-call would, at its first launch or chunk at or past row `fail_after_rows`: a unified
  // share's launch as it is waited for, after writing NaN over the rows of C that launch writes
  // in place (a kernel cut short); a discrete share's chunk as it is waited for, its kernel never
  // enqueued (a failed kernel, whose rows never come back to C) and the chunks after it run as
  // usual. -1: none.
  int fail_device = -1;
  int64_t fail_after_rows = 0;
  // Where set (not -1), that device's discrete share fails instead as it sends B's piece of this
  // index (after packing it), as a failed copy would, and nowhere else: the shares that copy B
  // from its staging must pack the rest of B themselves.
  int fail_b_piece = -1;
  // Where set (not -1), a discrete share on the device of this index finishes its queues but
  // reports that it could not, as a wedged device's share would: it keeps aside for good whatever
  // the device might still use, and its C counts as touched wherever the device writes it.
  int fail_drain = -1;
  // Called as each call ends, with when it started (steady clock, ns), the rows its devices and
  // the CPU computed and its n and k: a test's model of a machine (tests/support/simulated_apu.hpp)
  // waits there until the call has lasted as long as that machine would take. None: off.
  CallEnds call_ends = nullptr;
  // A discrete device's feed from ordinary memory (feed_cost.hpp) as if measured: seconds per
  // call and bytes per second. 0: measured on the device.
  double feed_seconds = 0, feed_rate = 0;
};

bool assume_discrete();
bool assume_unified();
bool assume_gpus();
size_t overlap_from();
bool pad_rows();
size_t pinned_from();
CpuMode cpu_mode();
bool fail_builds();
bool emulate_engine();
bool probe_any();
bool small_kernel_baseline();
int fail_device();
int64_t fail_after_rows();
int fail_b_piece();
int fail_drain();
// Changes whenever a test overrides the seams (tests/support/seam_override.hpp), and never
// otherwise: what the process keeps about its devices for good (a device taken out of use,
// gpu::retire) holds for one generation, so that each test's scope starts with every device.
uint64_t generation();
// Whether a test has the seams overridden now (an Override is alive).
bool overridden();
CallEnds call_ends();
double feed_seconds();
double feed_rate();

// The values in force, and their replacement by a scope's (`depth` +1 as a scope starts, -1 as it
// ends, which bumps generation()): for tests/support/seam_override.cpp alone.
Values current();
void store(const Values& values, int depth);

}  // namespace tandem::detail::seams
