// Convolution modules with padding="same" / "valid" (kSame / kValid, as libtorch spells them).
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "test_util.h"

namespace kiln {
namespace {

// padding="same" keeps the length, an even kernel padding one more on the right (as PyTorch);
// checked against explicit zero padding of the input and a "valid" convolution.
TEST(NnConvPaddingString, SameAndValidAgreeWithExplicitPadding) {
  using namespace kiln::nn;
  manual_seed(4);
  autograd::NoGradGuard no_grad;
  for (const std::string mode : {"zeros", "reflect"}) {
    SCOPED_TRACE(mode);
    Conv2d same(2, 3, std::vector<int64_t>{2, 3}, 1, kSame, 1, 1, true, mode);
    Conv2d valid(2, 3, std::vector<int64_t>{2, 3}, 1, kValid);
    valid.weight.copy_(same.weight);
    valid.bias.copy_(same.bias);
    Tensor x = randn({1, 2, 5, 6});
    // Height: kernel 2 -> 0 above, 1 below; width: kernel 3 -> 1 left, 1 right.
    Tensor padded = functional::pad(x, {1, 1, 0, 1}, mode == "zeros" ? "constant" : mode);
    Tensor expected = valid.forward(padded);
    Tensor got = same.forward(x);
    EXPECT_EQ(IntList(got.sizes()), IntList({1, 3, 5, 6}));
    EXPECT_TRUE(testing::all_close(got, expected, 1e-5, 1e-6));
  }
  EXPECT_TRUE(testing::throws_error([] { Conv2d(2, 3, 3, 2, kSame); }, {"strided"}));
  EXPECT_NE(Conv2d(2, 3, 3, 1, kSame).repr().find("padding=same"), std::string::npos);
  EXPECT_NE(Conv1d(2, 3, 3, 1, kValid).repr().find("padding=valid"), std::string::npos);
}

}  // namespace
}  // namespace kiln
