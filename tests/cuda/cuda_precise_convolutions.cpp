// The GPU tests compare float32 convolutions against the CPU's to float32 rounding: the test
// binary turns cuDNN's TF32 off (PyTorch's default, which kiln keeps, is on), after recording the
// default for the test below. Static initialization, before any test runs.
#include <gtest/gtest.h>
#include <kiln/cuda/cuda.h>

namespace kiln {
namespace {

const bool kCudnnTf32ByDefault = kiln::cuda::cudnn_allow_tf32();
const bool kCudnnTf32Off = [] {
  kiln::cuda::set_cudnn_allow_tf32(false);
  return true;
}();

TEST(CudaSwitches, CudnnDefaultsAreTorchs) {
  // torch.backends.cudnn.allow_tf32 is True and benchmark False by default.
  EXPECT_TRUE(kCudnnTf32ByDefault);
  EXPECT_TRUE(kCudnnTf32Off);
  EXPECT_FALSE(kiln::cuda::cudnn_benchmark());
  // torch.backends.cuda.matmul.allow_tf32 is False by default.
  EXPECT_FALSE(kiln::cuda::matmul_allow_tf32());
}

}  // namespace
}  // namespace kiln
