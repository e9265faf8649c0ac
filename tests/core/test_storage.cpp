#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <cstdint>

#include "test_util.h"

namespace kiln {
namespace {

TEST(CpuAllocator, BlocksAre64ByteAligned) {
  for (size_t n : {1u, 7u, 64u, 100u, 4096u, 1u << 20}) {
    Storage s = make_storage(n, Device::cpu());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data()) % 64, 0u) << n;
    EXPECT_EQ(s->nbytes(), n);
  }
}

TEST(CpuAllocator, FreedBlocksAreReused) {
  void* first = nullptr;
  {
    Storage s = make_storage(3 << 20, Device::cpu());
    first = s->data();
  }
  AllocatorStats before = cpu_allocator_stats();
  Storage again = make_storage(3 << 20, Device::cpu());
  AllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
  EXPECT_EQ(after.system_allocations, before.system_allocations);
}

TEST(CpuAllocator, TracksAllocatedAndPeakBytes) {
  reset_cpu_allocator_peak();
  AllocatorStats base = cpu_allocator_stats();
  {
    Storage a = make_storage(1 << 20, Device::cpu());
    Storage b = make_storage(1 << 20, Device::cpu());
    EXPECT_GE(cpu_allocator_stats().allocated_bytes, base.allocated_bytes + (2 << 20));
  }
  AllocatorStats end = cpu_allocator_stats();
  EXPECT_EQ(end.allocated_bytes, base.allocated_bytes);
  EXPECT_GE(end.peak_allocated_bytes, base.allocated_bytes + (2 << 20));
  cpu_allocator_empty_cache();
  EXPECT_EQ(cpu_allocator_stats().cached_bytes, 0u);
}

// ASan refuses an impossible allocation by aborting (allocator_may_return_null=0) before the
// allocator could report it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

TEST(CpuAllocator, ImpossibleAllocationIsAClearErrorAndLeavesNothingBehind) {
  if (kUnderAddressSanitizer) GTEST_SKIP() << "ASan aborts on the allocation instead";
  const AllocatorStats before = cpu_allocator_stats();
  // 2^50 float32 elements: 4 PiB, more than any machine's memory and swap.
  EXPECT_TRUE(testing::throws_error([] { empty({int64_t{1} << 50}); },
                                    {"out of memory allocating 4503599627370496 bytes"}));
  EXPECT_EQ(cpu_allocator_stats().allocated_bytes, before.allocated_bytes);
  // The allocator still serves.
  EXPECT_EQ(ones({4}).sum().item<float>(), 4.0f);
}

TEST(Storage, MetaStorageHasNoMemory) {
  Storage s = make_storage(1024, Device::meta());
  EXPECT_EQ(s->data(), nullptr);
  EXPECT_EQ(s->nbytes(), 1024u);
  EXPECT_TRUE(s->device().is_meta());
}

TEST(Storage, FromBlobCallsDeleterOnce) {
  int calls = 0;
  float buffer[6] = {1, 2, 3, 4, 5, 6};
  {
    Tensor t = from_blob(buffer, {2, 3}, {3, 1}, kFloat32, [&](void* p) {
      EXPECT_EQ(p, buffer);
      ++calls;
    });
    Tensor view = t;
    EXPECT_EQ(t.data_ptr<float>()[4], 5.0f);
  }
  EXPECT_EQ(calls, 1);
}

TEST(Device, ParsesAndPrints) {
  EXPECT_EQ(Device("cpu"), Device::cpu());
  EXPECT_EQ(Device("cuda:1"), Device::cuda(1));
  EXPECT_EQ(Device("cuda:1").str(), "cuda:1");
  EXPECT_EQ(Device("meta").str(), "meta");
  EXPECT_THROW(Device("tpu"), Error);
  EXPECT_THROW(Device("cuda:x"), Error);
}

}  // namespace
}  // namespace kiln
