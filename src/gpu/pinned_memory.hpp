// tandem_malloc's memory on a discrete device: pinned (page-locked) host blocks from the device's
// context, which the device copies at the bus's full speed, straight from and into the caller's
// arrays with no packing.
#pragma once

#include <cstddef>
#include <memory>

#include "base/problem.hpp"
#include "gpu/device.hpp"

namespace tandem::detail::gpu {

// Pinned memory from `device`'s context, page-aligned and mapped for its lifetime. nullptr if the
// device cannot give it.
void* pinned_alloc(const std::shared_ptr<Device>& device, size_t bytes);

// Releases memory from pinned_alloc, after the device is done with it; false if `p` is not such
// memory (then nothing happens).
bool pinned_free(void* p);

// Whether the process holds any pinned block (of any device).
bool any_pinned_block();

// Whether [p, p + bytes) lies inside one pinned block of `device`'s context (its platform's).
bool in_pinned_block(const Device& device, const void* p, size_t bytes);

// The context (its handle, as an identity only) whose pinned block holds all of [p, p + bytes),
// else null: what a plan kept for operands in pinned memory is kept by (api/plan.cpp).
const void* pinned_context(const void* p, size_t bytes);

// Whether a share's A, B and C all lie in `device`'s pinned memory: such a share is copied with no
// packing, and auto uses the split tuned for it.
template <class T>
bool operands_pinned(const Device& device, const Problem<T>& share) {
  return in_pinned_block(device, share.a, share.a_bytes()) &&
         in_pinned_block(device, share.b, share.b_bytes()) &&
         in_pinned_block(device, share.c, share.c_bytes());
}

}  // namespace tandem::detail::gpu
