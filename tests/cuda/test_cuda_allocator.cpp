// The caching allocator: blocks come back from its cache, per stream, and empty_cache returns
// them to the driver.
#include "cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cuda_test;
using testing::all_close;
using testing::throws_error;

TensorOptions on_cuda(DType dtype = DType::Float32) {
  return TensorOptions(dtype).device(Device::cuda());
}

TEST(CudaAllocator, ReservedStaysFlatOverAllocFreeLoop) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const size_t allocated0 = cuda::memory_allocated();
  { Tensor warm = empty({1024, 1024}, on_cuda()); }  // the first block comes from cudaMalloc
  const size_t reserved = cuda::memory_reserved();
  for (int i = 0; i < 100; ++i) {
    Tensor a = empty({1024, 1024}, on_cuda());
    Tensor b = empty({1000}, on_cuda(DType::Int64));
    EXPECT_GE(cuda::memory_allocated(), allocated0 + a.nbytes() + b.nbytes());
  }
  EXPECT_EQ(cuda::memory_allocated(), allocated0);
  // The loop's small block was new once; the large one always came from the cache.
  EXPECT_LE(cuda::memory_reserved(), reserved + 8192);
  const size_t after_loop = cuda::memory_reserved();
  for (int i = 0; i < 100; ++i) Tensor c = empty({1000}, on_cuda(DType::Int64));
  EXPECT_EQ(cuda::memory_reserved(), after_loop);
}

// The high-water mark: the most held at once since the reset, as blocks of the cache's sizes
// (4 MiB tensors are 2 MiB multiples already).
TEST(CudaAllocator, PeakAllocatedSinceTheReset) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const size_t base = cuda::memory_allocated();
  cuda::reset_peak_memory_stats();
  EXPECT_EQ(cuda::max_memory_allocated(), base);
  {
    Tensor a = empty({1024, 1024}, on_cuda());
    Tensor b = empty({1024, 1024}, on_cuda());
  }
  Tensor c = empty({1024, 1024}, on_cuda());
  EXPECT_EQ(cuda::max_memory_allocated(), base + 2 * c.nbytes());
  cuda::reset_peak_memory_stats();
  EXPECT_EQ(cuda::max_memory_allocated(), base + c.nbytes());
}

TEST(CudaAllocator, SizesAreRounded) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  cuda::empty_cache();  // a cached block up to twice the size would serve the large request
  const size_t before = cuda::memory_allocated();
  Tensor small = empty({3}, on_cuda());  // 12 bytes: a 512-byte block
  EXPECT_EQ(cuda::memory_allocated(), before + 512);
  Tensor large = empty({(1 << 20) / 4 + 1}, on_cuda());  // just over 1 MiB: a 2 MiB block
  EXPECT_EQ(cuda::memory_allocated(), before + 512 + (size_t{2} << 20));
  Tensor none = empty({0}, on_cuda());
  EXPECT_EQ(cuda::memory_allocated(), before + 512 + (size_t{2} << 20));
}

TEST(CudaAllocator, EmptyCacheReturnsFreeBlocks) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  { Tensor t = empty({4 << 20}, on_cuda()); }  // 16 MiB, now cached
  EXPECT_GE(cuda::memory_reserved() - cuda::memory_allocated(), size_t{16} << 20);
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_reserved(), cuda::memory_allocated());
  // Blocks in use survive it.
  Tensor kept = full({1000}, 3.0, on_cuda());
  cuda::empty_cache();
  EXPECT_TRUE(same_values(cpu(kept), full({1000}, 3.0)));
}

TEST(CudaAllocator, BlocksAreReusedOnlyByTheirStream) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  cuda::empty_cache();
  { Tensor t = empty({1 << 20}, on_cuda()); }  // 4 MiB freed on the default stream
  const size_t reserved = cuda::memory_reserved();
  cuda::Stream s = cuda::Stream::create();
  {
    cuda::StreamGuard guard(s);
    Tensor u = empty({1 << 20}, on_cuda());  // another stream: a new block
    EXPECT_EQ(cuda::memory_reserved(), reserved + (size_t{4} << 20));
  }
  Tensor v = empty({1 << 20}, on_cuda());  // the default stream's block again
  EXPECT_EQ(cuda::memory_reserved(), reserved + (size_t{4} << 20));
}

TEST(CudaAllocator, OutOfMemoryRaisesWithSizes) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  // 1 PiB: more than any device has, after the cache has been emptied and the call retried.
  EXPECT_TRUE(throws_error([] { (void)empty({int64_t{1} << 48}, on_cuda(DType::Int32)); },
                           {"CUDA out of memory", "1125899906842624"}));
  Tensor still_works = ones({10}, on_cuda());
  EXPECT_TRUE(same_values(cpu(still_works), ones({10})));
}

}  // namespace
}  // namespace kiln
