// sum and mean on CUDA against the CPU. Float32 sums are compared with rtol 1e-4 and atol 1e-4:
// the GPU's tree adds in another order than the CPU's vectorized loop, and a sum of n normal
// values carries an absolute error of about sqrt(n) * eps * its terms either way; float64 with
// 1e-10; 16-bit floats (accumulated in float on both) with 1e-2; integers exactly.
#include "cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cuda_test;
using testing::all_close;
using testing::throws_error;

::testing::AssertionResult close(const Tensor& on_gpu, const Tensor& reference) {
  return close_to_cpu(on_gpu, reference, {1e-4, 1e-4, 1e-10, 1e-2});
}

TEST(CudaReduce, SumAndMeanOverDims) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    const Tensor x = sample({7, 33, 129}, dtype, 31);
    const Tensor g = gpu(x);
    for (std::vector<int64_t> dims :
         std::vector<std::vector<int64_t>>{{}, {0}, {1}, {2}, {0, 2}, {-1, 0}, {0, 1, 2}}) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(fmt::format("{} dims [{}] keepdim {}", dtype_name(dtype),
                                 fmt::join(dims, ", "), keepdim));
        EXPECT_TRUE(close(g.sum(dims, keepdim), x.sum(dims, keepdim)));
        EXPECT_TRUE(close(g.mean(dims, keepdim), x.mean(dims, keepdim)));
      }
    }
  }
}

TEST(CudaReduce, LongAndShortRows) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor longs = sample({3, 70000}, DType::Float32, 32);  // a block per row
  EXPECT_TRUE(close(gpu(longs).sum({1}), longs.sum({1})));
  EXPECT_TRUE(close(gpu(longs).mean(), longs.mean()));
  const Tensor shorts = sample({5000, 3}, DType::Float64, 33);  // a warp per row
  EXPECT_TRUE(close(gpu(shorts).sum({1}), shorts.sum({1})));
  EXPECT_TRUE(close(gpu(shorts).t().sum({0}), shorts.t().sum({0})));  // strided input
}

TEST(CudaReduce, IntegralAndBool) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::Int32, DType::Int64, DType::Bool, DType::UInt8}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor x = sample({9, 300}, dtype, 34);
    EXPECT_TRUE(close(gpu(x).sum(), x.sum()));  // int64 results
    EXPECT_TRUE(close(gpu(x).sum({0}, true), x.sum({0}, true)));
  }
  const Tensor i = sample({4, 5}, DType::Int32, 35);
  EXPECT_TRUE(close(gpu(i).sum({1}, false, DType::Float64), i.sum({1}, false, DType::Float64)));
}

TEST(CudaReduce, EmptyAndScalar) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor e = zeros({0, 3});
  EXPECT_TRUE(close(gpu(e).sum({0}), e.sum({0})));
  EXPECT_TRUE(close(gpu(e).mean({0}), e.mean({0})));  // NaN, as on the CPU
  const Tensor s = full({}, 2.5);
  EXPECT_TRUE(close(gpu(s).sum(), s.sum()));
}

}  // namespace
}  // namespace kiln
