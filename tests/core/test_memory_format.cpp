// Memory formats: the NHWC / NDHWC stride orders and the contiguous(fmt) copy.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "test_util.h"

namespace kiln {
namespace {

TEST(MemoryFormat, ChannelsLastStridesPutChannelsInnermost) {
  // (N, C, H, W) = (2, 3, 4, 5) in NHWC order: C stride 1, W stride C, H stride W*C, N stride HWC.
  EXPECT_EQ(strides_for_memory_format(IntList{2, 3, 4, 5}, MemoryFormat::ChannelsLast),
            (DimVector{60, 1, 15, 3}));
  EXPECT_EQ(strides_for_memory_format(IntList{2, 3, 4, 5, 6}, MemoryFormat::ChannelsLast3d),
            (DimVector{360, 1, 90, 18, 3}));
  EXPECT_EQ(strides_for_memory_format(IntList{2, 3, 4}, MemoryFormat::Contiguous),
            (DimVector{12, 4, 1}));
  EXPECT_TRUE(testing::throws_error(
      [] {
        strides_for_memory_format(IntList{2, 3, 4}, MemoryFormat::ChannelsLast);
      },
      {"channels_last", "4-d", "3 dims"}));
}

TEST(MemoryFormat, ContiguousInFormatKeepsValuesAndChangesLayout) {
  Tensor x = arange(2 * 3 * 2 * 2, kFloat32).reshape({2, 3, 2, 2});
  EXPECT_EQ(x.suggest_memory_format(), MemoryFormat::Contiguous);
  Tensor y = x.contiguous(MemoryFormat::ChannelsLast);
  EXPECT_TRUE(y.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_FALSE(y.is_contiguous());
  EXPECT_EQ(y.suggest_memory_format(), MemoryFormat::ChannelsLast);
  EXPECT_EQ(y.strides(), (IntList{12, 1, 6, 3}));
  // Element (n, c, h, w) keeps the value n*12 + c*4 + h*2 + w.
  EXPECT_EQ(y[1][2][1][0].item<float>(), 1 * 12 + 2 * 4 + 1 * 2 + 0);
  EXPECT_TRUE(testing::all_close(y, x, 0, 0));
  // Already in the format: returned as is (same storage), and back to row-major.
  EXPECT_EQ(y.contiguous(MemoryFormat::ChannelsLast).data_ptr(), y.data_ptr());
  Tensor z = y.contiguous(MemoryFormat::Contiguous);
  EXPECT_TRUE(z.is_contiguous());
  EXPECT_TRUE(testing::all_close(z, x, 0, 0));
}

TEST(MemoryFormat, SizeOneDimsMayHaveAnyStride) {
  Tensor x = empty_strided({2, 1, 3, 3}, {9, 100, 3, 1}, {});
  EXPECT_TRUE(x.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_EQ(x.suggest_memory_format(), MemoryFormat::Contiguous);
}

}  // namespace
}  // namespace kiln
