// mm/matmul for float32 and float64 through cuBLAS against the CPU (float64 to 1e-12). With TF32
// off the results agree to float32 rounding (rtol 1e-4, atol 1e-4 for sums of 300 products of
// normals); TF32's 10-bit mantissa would miss by about 1e-3 relative and fail this test.
#include "cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cuda_test;
using testing::all_close;
using testing::throws_error;

TEST(CudaMatmul, MmMatchesCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor a = sample({65, 300}, DType::Float32, 41);
  const Tensor b = sample({300, 97}, DType::Float32, 42);
  EXPECT_TRUE(all_close(cpu(mm(gpu(a), gpu(b))), mm(a, b), 1e-4, 1e-4));
  EXPECT_TRUE(all_close(cpu(matmul(gpu(a), gpu(b))), matmul(a, b), 1e-4, 1e-4));
  // Transposed operands are made contiguous first.
  EXPECT_TRUE(all_close(cpu(mm(gpu(b).t(), gpu(a).t())), mm(b.t(), a.t()), 1e-4, 1e-4));
}

TEST(CudaMatmul, EdgeSizes) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor a = sample({4, 0}, DType::Float32, 43);
  const Tensor b = sample({0, 5}, DType::Float32, 44);
  EXPECT_TRUE(same_values(cpu(mm(gpu(a), gpu(b))), zeros({4, 5})));
  EXPECT_EQ(
      cpu(mm(gpu(sample({0, 3}, DType::Float32, 45)), gpu(sample({3, 2}, DType::Float32, 46))))
          .numel(),
      0);
  const Tensor v = sample({1, 1}, DType::Float32, 47);
  EXPECT_TRUE(all_close(cpu(mm(gpu(v), gpu(v))), mm(v, v)));
}

TEST(CudaMatmul, Float64MatchesCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor a = sample({33, 70}, DType::Float64, 49), b = sample({70, 12}, DType::Float64, 50);
  EXPECT_TRUE(all_close(cpu(mm(gpu(a), gpu(b))), mm(a, b), 1e-12, 1e-12));
}

TEST(CudaMatmul, BmmMatchesCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor a = sample({5, 17, 40}, DType::Float32, 51),
               b = sample({5, 40, 9}, DType::Float32, 52);
  EXPECT_TRUE(all_close(cpu(bmm(gpu(a), gpu(b))), bmm(a, b), 1e-4, 1e-4));
  // Transposed operands, and matmul's batched broadcasting through bmm.
  EXPECT_TRUE(all_close(cpu(bmm(gpu(b).transpose(1, 2), gpu(a).transpose(1, 2))),
                        bmm(b.transpose(1, 2), a.transpose(1, 2)), 1e-4, 1e-4));
  const Tensor c = sample({40, 9}, DType::Float32, 53);
  EXPECT_TRUE(all_close(cpu(matmul(gpu(a), gpu(c))), matmul(a, c), 1e-4, 1e-4));
  const Tensor d = sample({3, 4, 6}, DType::Float64, 54), e = sample({3, 6, 2}, DType::Float64, 55);
  EXPECT_TRUE(all_close(cpu(bmm(gpu(d), gpu(e))), bmm(d, e), 1e-12, 1e-12));
  EXPECT_EQ(cpu(bmm(gpu(sample({0, 3, 4}, DType::Float32, 56)),
                    gpu(sample({0, 4, 2}, DType::Float32, 57))))
                .numel(),
            0);
}

TEST(CudaMatmul, OtherDtypesRaise) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor a = sample({3, 3}, DType::Int64, 48);
  EXPECT_TRUE(throws_error([&] { (void)mm(gpu(a), gpu(a)); },
                           {"mm", "no kernel for device cuda", "int64"}));
}

}  // namespace
}  // namespace kiln
