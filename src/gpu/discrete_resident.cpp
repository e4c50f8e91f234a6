// A resident operand's copy on a discrete device (gpu::keep, share.hpp): the operand sent once, as
// a share sends it (B as discrete_b.cpp does, op(A)'s rows as discrete_operands.cpp does, all of
// them at once), into a panel of the layout the kernel reads, and kept; what a copy takes on the
// device; and whether a set of copies has one that a kernel reads as it is.
#include <memory>

#include "base/precision.hpp"
#include "cpu/topology.hpp"
#include "gpu/discrete_b_cl.hpp"
#include "gpu/discrete_commands_cl.hpp"
#include "gpu/discrete_operands_cl.hpp"
#include "gpu/share_cl.hpp"

namespace tandem::detail::gpu {
namespace {

// A resident operand's panel on the device (keep_discrete): whether the kernel reads the operand
// transposed, and the panel's rows and padded leading dimension. op(A) is m x k, B as the kernel
// reads it k x n; read transposed, each is its transpose.
struct Panel {
  bool transposed;
  int64_t rows, ld;
};
template <class T>
Panel panel_of(const KernelFacts& f, const Share<T>& s, bool a) {
  const bool t = a ? read_transposed(f.a_t, s.trans_a) : read_transposed(f.b_t, s.trans_b);
  const int64_t rows = a ? s.m : s.k, cols = a ? s.k : s.n;
  return {t, t ? cols : rows, padded(f, t ? rows : cols, f.vw)};
}

template <class T>
std::shared_ptr<KeptOperand> keep_discrete_b(Device& dev, const SharedParams& params,
                                             const Share<T>& s) {
  const KernelFacts f = facts_of(params);
  const Panel panel = panel_of(f, s, false);
  const bool ka = read_transposed(f.a_t, s.trans_a), kb = panel.transposed;
  int64_t bytes_in = 0, bytes_out = 0, bytes_packed = 0;
  Commands cmd(dev, bytes_in, bytes_out);
  std::unique_ptr<ShareB<T>> b = share_b(dev, s, f.direct, kb, panel.ld, CallB{}, bytes_packed);
  try {
    cmd.take_queues(1, 1);
    b->take_staging(dev.staging());
    if (b->device_b()->raw) {  // sent as stored, transposed on the device
      const bool long_index = long_indices(f, s);
      cmd.take_kernels(
          gemm_program(dev, precision_of<T>(), ka, kb, long_index, params, {s.conj_a, s.conj_b}),
          long_index, true);
    }
    b->plan_pieces(1);
    while (b->send_next(cmd, topology::physical_cores())) {
    }
    b->finish(cmd);
    cmd.flush();
    cl::WaitForEvents(b->device_b()->ready);
  } catch (...) {
    // Whatever was enqueued is finished before B's staging goes back; if it cannot be, the device
    // may still use it: it is kept aside, and the device retired, as a call's share would be.
    if (!drained(dev, [&] { cmd.finish(); })) b->lose();
    throw;
  }
  cmd.give_queues();
  cmd.give_kernels();
  DeviceB<T>& kept = *b->device_b();
  // B as stored was only the transpose's source.
  if (kept.raw) dev.staging().give(std::move(kept.raw));
  kept.count_as_resident(dev);
  return b->device_b();
}

template <class T>
std::shared_ptr<KeptOperand> keep_discrete_a(Device& dev, const SharedParams& params,
                                             const Share<T>& s) {
  const KernelFacts f = facts_of(params);
  const Panel panel = panel_of(f, s, true);
  const bool ka = panel.transposed;
  const int64_t dev_ld = panel.ld;
  int64_t bytes_in = 0, bytes_out = 0, bytes_packed = 0;
  Commands cmd(dev, bytes_in, bytes_out);
  std::unique_ptr<ARows<T>> a = a_rows(dev, s, f.direct, ka, bytes_packed);
  try {
    cmd.take_queues(1, 1);
    a->take_staging(dev.staging(), panel.rows * dev_ld);
    a->take_scratch(dev.staging());
    if (a->transposes()) {  // sent as stored, transposed on the device
      const bool long_index = long_indices(f, s);
      cmd.take_kernels(gemm_program(dev, precision_of<T>(), ka, read_transposed(f.b_t, s.trans_b),
                                    long_index, params, {s.conj_a, s.conj_b}),
                       long_index, true);
    }
    const Chunk whole{0, s.m, {}, {}, {}, 0, dev_ld};
    const cl::Event in = a->send(cmd, whole, topology::physical_cores());
    cmd.flush();
    in.wait();
  } catch (...) {
    // As keep_discrete_b's: what the device may still use is kept aside, the rest given back.
    if (drained(dev, [&] { cmd.finish(); })) {
      a->give_staging(dev.staging());
      a->give_scratch(dev.staging());
    } else {
      a->lose_staging(dev.staging());
      a->lose_scratch(dev.staging());
    }
    throw;
  }
  cmd.give_queues();
  cmd.give_kernels();
  a->give_scratch(dev.staging());
  auto kept = std::make_shared<DeviceA<T>>(dev, s, ka, f.vw, f.direct, dev_ld);
  kept->kept = a->release_staging();
  kept->count_as_resident(dev);
  return kept;
}

}  // namespace

template <class T>
std::shared_ptr<KeptOperand> keep_discrete(Device& dev, const SharedParams& params,
                                           const Share<T>& s, bool a) {
  return a ? keep_discrete_a(dev, params, s) : keep_discrete_b(dev, params, s);
}

template <class T>
int64_t kept_bytes(const SharedParams& params, const Share<T>& s, bool a) {
  const Panel panel = panel_of(facts_of(params), s, a);
  int64_t bytes = static_cast<int64_t>(staging_size(staging_bytes<T>(panel.rows * panel.ld)));
  if (panel.transposed != (a ? s.trans_a : s.trans_b))  // sent as stored, then transposed
    bytes += static_cast<int64_t>(staging_size(staging_bytes<T>(a ? s.m * s.k : s.k * s.n)));
  return bytes;
}

template <class T>
bool has_discrete_copy(const KeptOn& kept, const Device& dev, const SharedParams& params,
                       const Share<T>& s, bool a) {
  const KernelFacts f = facts_of(params);
  if (!a) {
    const Panel panel = panel_of(f, s, false);
    return kept_b_in(kept, dev, s, panel.transposed, panel.ld) != nullptr;
  }
  int64_t row0 = 0;
  return kept_a_in(kept, dev, s, read_transposed(f.a_t, s.trans_a), f, padded(f, s.k, f.vw),
                   &row0) != nullptr;
}

#define INSTANTIATE(T)                                                                  \
  template std::shared_ptr<KeptOperand> keep_discrete<T>(Device&, const SharedParams&,  \
                                                         const Share<T>&, bool);        \
  template int64_t kept_bytes<T>(const SharedParams&, const Share<T>&, bool);           \
  template bool has_discrete_copy<T>(const KeptOn&, const Device&, const SharedParams&, \
                                     const Share<T>&, bool);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::gpu
