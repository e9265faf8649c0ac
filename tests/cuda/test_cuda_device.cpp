// Devices, streams and events; without a device, the API's entry points raise.
#include "cuda/cuda_test_util.h"

namespace kiln {
namespace {

using namespace cuda_test;
using testing::all_close;
using testing::throws_error;

TEST(CudaDevice, CountAndCurrent) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  EXPECT_GT(cuda::device_count(), 0);
  const int d = cuda::current_device();
  EXPECT_GE(d, 0);
  EXPECT_LT(d, cuda::device_count());
  cuda::set_device(d);
  cuda::synchronize();
  {
    cuda::DeviceGuard guard(cuda::device_count() - 1);
    EXPECT_EQ(cuda::current_device(), cuda::device_count() - 1);
  }
  EXPECT_EQ(cuda::current_device(), d);
}

TEST(CudaDevice, OutOfRangeIndexRaises) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const int n = cuda::device_count();
  EXPECT_TRUE(throws_error([&] { cuda::set_device(n); }, {"out of range", std::to_string(n)}));
  EXPECT_TRUE(throws_error([&] { cuda::set_device(-1); }, {"out of range"}));
  EXPECT_TRUE(throws_error([&] { (void)empty({4}, TensorOptions().device(Device::cuda(n))); },
                           {"out of range"}));
  EXPECT_TRUE(throws_error([&] { (void)ones({4}).to(Device::cuda(n)); }, {"out of range"}));
}

TEST(CudaDevice, TensorsLiveOnTheDevice) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  Tensor t = zeros({2, 3}, TensorOptions(DType::Int64).device(Device::cuda()));
  EXPECT_TRUE(t.is_cuda());
  EXPECT_EQ(t.device(), Device::cuda(cuda::current_device()));
  EXPECT_TRUE(same_values(cpu(t), zeros({2, 3}, DType::Int64)));
  Tensor f = full({3}, 2.5, TensorOptions().device(Device::cuda()));
  EXPECT_TRUE(same_values(cpu(f), full({3}, 2.5)));
  // item() of a GPU value copies it back first, as PyTorch's.
  EXPECT_EQ(f.sum().item<double>(), 7.5);
}

TEST(CudaStream, GuardQueryAndSynchronize) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  cuda::Stream s = cuda::Stream::create();
  EXPECT_NE(s.handle(), nullptr);
  EXPECT_EQ(cuda::current_stream(), cuda::Stream::default_stream());
  Tensor x = gpu(sample({256, 256}, DType::Float32, 1));
  Tensor y;
  {
    cuda::StreamGuard guard(s);
    EXPECT_EQ(cuda::current_stream(), s);
    y = x * 2 + 1;  // queued on s
    s.synchronize();
    EXPECT_TRUE(s.query());
  }
  EXPECT_EQ(cuda::current_stream(), cuda::Stream::default_stream());
  EXPECT_TRUE(all_close(cpu(y), cpu(x) * 2 + 1));
}

TEST(CudaEvent, RecordAndTime) {
  if (!kiln::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  cuda::Event start(true), end(true);
  Tensor x = gpu(sample({1024, 1024}, DType::Float32, 2));
  start.record();
  for (int i = 0; i < 10; ++i) x = x * 1.0001;
  end.record();
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_GE(start.elapsed_ms(end), 0.0f);
  cuda::Event untimed;
  untimed.record();
  untimed.synchronize();
  EXPECT_TRUE(throws_error([&] { (void)untimed.elapsed_ms(end); }, {"enable_timing"}));
}

// Runs where CI runs: without a device (or without CUDA) the API reports so and raises.
TEST(CudaNoDevice, EntryPointsRaise) {
  if (kiln::cuda::is_available()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_THROW((void)cuda::current_device(), Error);
  EXPECT_THROW((void)cuda::memory_allocated(), Error);
  EXPECT_THROW(cuda::empty_cache(), Error);
  EXPECT_THROW((void)cuda::Stream::create(), Error);
  EXPECT_THROW((void)ones({2}).to(Device::cuda()), Error);
}

}  // namespace
}  // namespace kiln
