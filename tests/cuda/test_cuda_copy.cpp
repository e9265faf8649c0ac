// Copies: host to device and back for every dtype, dtype conversions on the device against the
// CPU's, strided and broadcast sources and destinations in every direction.
#include "cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cuda_test;
using testing::all_close;
using testing::throws_error;

constexpr DType kAll[] = {DType::Bool,    DType::UInt8,  DType::Int8,    DType::Int16,
                          DType::Int32,   DType::Int64,  DType::Float16, DType::BFloat16,
                          DType::Float32, DType::Float64};

TEST(CudaCopy, RoundTripEveryDtype) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : kAll) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor x = sample({7, 13}, dtype, 3);
    const Tensor g = gpu(x);
    EXPECT_TRUE(g.is_cuda());
    EXPECT_EQ(g.dtype(), dtype);
    EXPECT_TRUE(same_values(cpu(g), x));
    EXPECT_TRUE(same_values(cpu(gpu(x.view({-1}).narrow(0, 0, 1).view({}))), x.view({-1})[0]));
    EXPECT_EQ(cpu(gpu(empty({0, 3}, dtype))).numel(), 0);
  }
}

TEST(CudaCopy, ConversionsMatchTheCpu) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  // Halves in [0, 100): exact in every floating dtype, truncated alike into the integral ones.
  const Tensor base = arange(0, 200, 1, DType::Float64) * 0.5;
  for (DType from : kAll) {
    const Tensor x = base.to(from);
    const Tensor g = gpu(x);
    for (DType to : kAll) {
      SCOPED_TRACE(fmt::format("{} -> {}", dtype_name(from), dtype_name(to)));
      EXPECT_TRUE(same_values(cpu(g.to(to)), x.to(to)));
    }
  }
}

TEST(CudaCopy, StridedSources) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor x = sample({6, 8, 5}, DType::Float32, 4);
  // A transposed and sliced CPU source goes over as its values.
  const Tensor view = x.permute({2, 0, 1}).slice(2, 1, 8, 3);
  EXPECT_TRUE(same_values(cpu(gpu(view)), view.contiguous()));
  // A strided CUDA source comes back as its values, also converted.
  const Tensor g = gpu(x).permute({2, 0, 1}).slice(2, 1, 8, 3);
  EXPECT_FALSE(g.is_contiguous());
  EXPECT_TRUE(same_values(cpu(g), view.contiguous()));
  EXPECT_TRUE(same_values(cpu(g.to(DType::Float64)), view.to(DType::Float64)));
  EXPECT_TRUE(same_values(cpu(g.contiguous()), view.contiguous()));
  EXPECT_TRUE(same_values(cpu(g.clone()), view.clone()));
}

TEST(CudaCopy, StridedAndBroadcastDestinations) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor src = sample({6, 8}, DType::Float32, 5);
  // Host to a transposed device tensor.
  Tensor d = zeros({8, 6}, TensorOptions().device(Device::cuda())).t();
  d.copy_(src);
  EXPECT_TRUE(same_values(cpu(d), src));
  // Device to a transposed host tensor, converting to int64.
  Tensor h = zeros({8, 6}, DType::Int64).t();
  h.copy_(gpu(src * 10));
  EXPECT_TRUE(same_values(h, (src * 10).to(DType::Int64)));
  // A row broadcast over a device tensor, from the host and from the device.
  const Tensor row = sample({8}, DType::Int32, 6);
  Tensor b = empty({5, 8}, TensorOptions(DType::Float64).device(Device::cuda()));
  b.copy_(row);
  EXPECT_TRUE(same_values(cpu(b), row.expand({5, 8}).to(DType::Float64)));
  b.zero_();
  b.copy_(gpu(row));
  EXPECT_TRUE(same_values(cpu(b), row.expand({5, 8}).to(DType::Float64)));
  // Device to device into a slice.
  Tensor c = zeros({4, 10}, TensorOptions(DType::Int32).device(Device::cuda()));
  c.narrow(1, 2, 8).copy_(gpu(row));
  Tensor ref = zeros({4, 10}, DType::Int32);
  ref.narrow(1, 2, 8).copy_(row);
  EXPECT_TRUE(same_values(cpu(c), ref));
  // copy_'s shape check.
  EXPECT_TRUE(throws_error([&] { c.copy_(gpu(sample({3}, DType::Int32, 7))); }, {"copy_"}));
}

TEST(CudaCopy, ManyDims) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  // 8 dims, every one strided: the kernel's most.
  const Tensor x = sample({2, 3, 2, 3, 2, 3, 2, 3}, DType::Float32, 8);
  const Tensor t = x.permute({7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_TRUE(
      same_values(cpu(gpu(x).permute({7, 6, 5, 4, 3, 2, 1, 0}).contiguous()), t.contiguous()));
}

TEST(CudaCopy, PinnedStaging) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  Tensor pinned = cuda::pinned_empty({64, 3}, DType::Float32);
  EXPECT_TRUE(pinned.device().is_cpu());
  pinned.copy_(sample({64, 3}, DType::Float32, 9));
  const Tensor back = cpu(gpu(pinned));
  EXPECT_TRUE(same_values(back, pinned));
  Tensor into = cuda::pinned_empty({64, 3}, DType::Float32);
  into.copy_(gpu(pinned) * 2);
  EXPECT_TRUE(same_values(into, pinned * 2));
}

TEST(CudaCopy, BetweenDevices) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  if (cuda::device_count() < 2) GTEST_SKIP() << "one CUDA device";
  const Tensor x = sample({5, 7}, DType::Float32, 10);
  Tensor on1;
  {
    cuda::DeviceGuard guard(1);
    on1 = x.to(Device::cuda(1));
  }
  EXPECT_EQ(on1.device(), Device::cuda(1));
  Tensor on0 = zeros({7, 5}, TensorOptions().device(Device::cuda(0))).t();
  on0.copy_(on1);
  EXPECT_TRUE(same_values(cpu(on0), x));
}

// A gradient goes back to its input's device: x.to(cuda)'s backward gives a CPU leaf a CPU
// gradient, and a GPU leaf moved to the CPU gets a GPU one, with the values of the chain rule.
TEST(CudaCopy, GradientsGoBackToTheInputsDevice) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const Tensor x = sample({4, 6}, DType::Float32, 11).requires_grad_(true);
  (x.to(Device::cuda()).square() * 3).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(x.grad().device().is_cpu());
  EXPECT_TRUE(all_close(x.grad(), x.detach() * 6, 1e-6, 1e-6));

  const Tensor g = gpu(sample({3, 5}, DType::Float32, 12)).requires_grad_(true);
  (g.to(Device::cpu()) * 2).sum().backward();
  ASSERT_TRUE(g.grad().defined());
  EXPECT_TRUE(g.grad().device().is_cuda());
  EXPECT_TRUE(all_close(cpu(g.grad()), full({3, 5}, 2.0), 0, 0));
}

}  // namespace
}  // namespace kiln
