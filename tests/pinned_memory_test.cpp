// tandem_malloc's pinned memory on a discrete device (src/gpu/pinned_memory.cpp), played by PoCL
// through the seam assume_discrete: blocks of their own from 1 MiB, and smaller ones cut from the
// arena's slabs and reused.
#include "gpu/pinned_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "gpu/device.hpp"
#include "seam_override.hpp"
#include "tandem/tandem.h"

namespace {

using namespace tandem;

// PoCL as a discrete device, with the library's own pinning threshold.
detail::seams::Values discrete_device() {
  detail::seams::Values v;
  v.assume_discrete = true;
  return v;
}

bool pinned(const void* p, size_t bytes) {
  return detail::gpu::in_pinned_block(*detail::gpu::open_device(""), p, bytes);
}

TEST(PinnedMemory, SmallBlocksAreCutFromSlabsAndDoNotOverlap) {
  detail::seams::Override seams(discrete_device());
  // More blocks of each size than one 4 MiB slab holds, so that the arena takes several.
  struct Block {
    unsigned char* p;
    size_t bytes;
  };
  std::vector<Block> blocks;
  for (size_t bytes : {size_t{4096}, size_t{5000}, size_t{65536}, size_t{300000}})
    for (size_t i = 0; i < (size_t{9} << 20) / bytes; ++i)
      blocks.push_back({static_cast<unsigned char*>(tandem_malloc(bytes)), bytes});
  for (size_t i = 0; i < blocks.size(); ++i) {
    ASSERT_NE(blocks[i].p, nullptr);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(blocks[i].p) % 4096, 0u) << "page-aligned";
    ASSERT_TRUE(pinned(blocks[i].p, blocks[i].bytes)) << blocks[i].bytes << " bytes";
    std::memset(blocks[i].p, static_cast<int>(i % 251), blocks[i].bytes);
  }
  // Each block kept what was written to it: none overlaps another.
  for (size_t i = 0; i < blocks.size(); ++i)
    for (size_t j = 0; j < blocks[i].bytes; j += 997)
      ASSERT_EQ(blocks[i].p[j], static_cast<unsigned char>(i % 251)) << "block " << i;
  for (const Block& b : blocks) tandem_free(b.p);
}

TEST(PinnedMemory, FreedBlocksAreReused) {
  detail::seams::Override seams(discrete_device());
  std::set<void*> first;
  for (int i = 0; i < 16; ++i) first.insert(tandem_malloc(100000));
  for (void* p : first) tandem_free(p);
  int reused = 0;
  std::vector<void*> second;
  for (int i = 0; i < 16; ++i) {
    second.push_back(tandem_malloc(70000));  // the same size class, 128 KiB
    reused += first.count(second.back()) ? 1 : 0;
  }
  EXPECT_EQ(reused, 16);
  for (void* p : second) tandem_free(p);
}

// A slab's first block has the slab's address: freeing it twice must not release the slab
// under its other blocks.
TEST(PinnedMemory, ASlabOutlivesADoubleFreeOfItsFirstBlock) {
  detail::seams::Override seams(discrete_device());
  // 32 KiB blocks, a size no other test here takes: the first comes from a new slab, at its
  // address.
  std::vector<unsigned char*> blocks;
  for (int i = 0; i < 128; ++i) blocks.push_back(static_cast<unsigned char*>(tandem_malloc(20000)));
  unsigned char* first = blocks.front();
  tandem_free(first);
  tandem_free(first);
  for (unsigned char* b : blocks)
    if (b != first) {
      EXPECT_TRUE(pinned(b, 20000));
      std::memset(b, 7, 20000);
    }
  for (unsigned char* b : blocks)
    if (b != first) tandem_free(b);
}

TEST(PinnedMemory, LargeBlocksHaveTheirOwnAndTinyOnesAreNotPinned) {
  detail::seams::Override seams(discrete_device());
  void* large = tandem_malloc(size_t{3} << 20);
  void* tiny = tandem_malloc(100);
  ASSERT_NE(large, nullptr);
  ASSERT_NE(tiny, nullptr);
  EXPECT_TRUE(pinned(large, size_t{3} << 20));
  EXPECT_FALSE(pinned(tiny, 100)) << "below a page: ordinary memory";
  tandem_free(large);
  tandem_free(tiny);
  EXPECT_FALSE(pinned(large, 1)) << "a block of its own is released at free";
}

TEST(PinnedMemory, NothingIsPinnedOnAUnifiedDevice) {
  if (!detail::gpu::info(*detail::gpu::open_device("")).unified_memory)
    GTEST_SKIP() << "the default device is discrete";
  void* p = tandem_malloc(65536);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(pinned(p, 65536));
  tandem_free(p);
}

}  // namespace
