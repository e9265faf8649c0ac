// torch.result_type's rules; the expected dtypes are PyTorch 2.x's (looked up with
// torch.result_type).
#include "test_util.h"

namespace kiln {
namespace {

Tensor dim_tensor(DType d) { return ones({2}, d); }
Tensor zero_dim(DType d) { return scalar_tensor(1, d); }

TEST(BinaryTypePromotion, TableMatchesPyTorch) {
  struct Case {
    Tensor a, b;
    DType expected;
    const char* what;
  };
  std::vector<Case> cases = {
      // PyTorch: int32 tensor + 2.5 -> float32 (a Python float is the default dtype).
      {dim_tensor(kInt32), wrapped_scalar(2.5), kFloat32, "int32 + float number"},
      {dim_tensor(kInt32), wrapped_scalar(2), kInt32, "int32 + int number"},
      {dim_tensor(kUInt8), dim_tensor(kInt8), kInt16, "uint8 + int8"},
      {dim_tensor(kFloat16), zero_dim(kFloat32), kFloat16, "float16 + 0-dim float32"},
      {dim_tensor(kBool), dim_tensor(kBool), kBool, "bool + bool"},
      {dim_tensor(kInt32), zero_dim(kFloat64), kFloat64, "int32 + 0-dim float64"},
      {dim_tensor(kBool), wrapped_scalar(2), kInt64, "bool + int number"},
      {dim_tensor(kBool), wrapped_scalar(2.5), kFloat32, "bool + float number"},
      {zero_dim(kInt32), wrapped_scalar(2.5), kFloat32, "0-dim int32 + float number"},
      {zero_dim(kUInt8), zero_dim(kInt8), kInt16, "0-dim uint8 + 0-dim int8"},
      {dim_tensor(kUInt8), wrapped_scalar(300), kUInt8, "uint8 + int number"},
      {dim_tensor(kUInt8), zero_dim(kInt64), kUInt8, "uint8 + 0-dim int64"},
      {dim_tensor(kBFloat16), dim_tensor(kFloat16), kFloat32, "bfloat16 + float16"},
      {zero_dim(kBool), wrapped_scalar(2.5), kFloat32, "0-dim bool + float number"},
      {dim_tensor(kFloat32), dim_tensor(kFloat64), kFloat64, "float32 + float64"},
      {dim_tensor(kFloat32), zero_dim(kFloat64), kFloat32, "float32 + 0-dim float64"},
      {dim_tensor(kInt64), dim_tensor(kFloat16), kFloat16, "int64 + float16"},
      {wrapped_scalar(2), wrapped_scalar(2.5), kFloat32, "int number + float number"},
      {wrapped_scalar(true), wrapped_scalar(2), kInt64, "bool number + int number"},
      {zero_dim(kInt8), dim_tensor(kUInt8), kUInt8, "0-dim int8 + uint8"},
      {dim_tensor(kInt16), zero_dim(kBool), kInt16, "int16 + 0-dim bool"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(result_type(c.a, c.b), c.expected) << c.what;
    EXPECT_EQ(result_type(c.b, c.a), c.expected) << c.what << " (swapped)";
  }
}

TEST(BinaryTypePromotion, ScalarOverloadAndLists) {
  EXPECT_EQ(result_type(dim_tensor(kInt32), Scalar(2.5)), kFloat32);
  EXPECT_EQ(result_type(dim_tensor(kInt32), Scalar(2)), kInt32);
  EXPECT_EQ(result_type(dim_tensor(kBool), Scalar(true)), kBool);
  EXPECT_EQ(result_type(dim_tensor(kFloat16), Scalar(2.5)), kFloat16);
  // Three classes at once: int8 tensor, 0-dim int64, float number -> float32 (PyTorch).
  std::vector<Tensor> three{dim_tensor(kInt8), zero_dim(kInt64), wrapped_scalar(1.5)};
  EXPECT_EQ(result_type(three), kFloat32);
  std::vector<Tensor> ints{dim_tensor(kInt8), zero_dim(kInt64), wrapped_scalar(1)};
  EXPECT_EQ(result_type(ints), kInt8);
}

TEST(BinaryTypePromotion, OpsUsePromotedDtype) {
  EXPECT_EQ(add(dim_tensor(kInt32), Scalar(2.5)).dtype(), kFloat32);
  EXPECT_EQ(add(dim_tensor(kInt32), Scalar(2)).dtype(), kInt32);
  EXPECT_EQ(mul(dim_tensor(kUInt8), dim_tensor(kInt8)).dtype(), kInt16);
  EXPECT_EQ(sub(dim_tensor(kFloat16), zero_dim(kFloat32)).dtype(), kFloat16);
  EXPECT_EQ(add(dim_tensor(kInt32), zero_dim(kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(div(dim_tensor(kInt32), dim_tensor(kInt32)).dtype(), kFloat32);
  EXPECT_EQ(atan2(dim_tensor(kInt64), dim_tensor(kInt64)).dtype(), kFloat32);
  EXPECT_EQ(div(dim_tensor(kInt32), dim_tensor(kInt32), "floor").dtype(), kInt32);
  EXPECT_EQ(lt(dim_tensor(kInt32), dim_tensor(kFloat64)).dtype(), kBool);
  EXPECT_EQ(logical_and(dim_tensor(kFloat32), dim_tensor(kInt32)).dtype(), kBool);
  // pow: int ** int number stays int, int ** float number -> float32 (PyTorch).
  EXPECT_EQ(pow(dim_tensor(kInt32), Scalar(2)).dtype(), kInt32);
  EXPECT_EQ(pow(dim_tensor(kInt64), Scalar(2)).dtype(), kInt64);
  EXPECT_EQ(pow(dim_tensor(kInt32), Scalar(0.5)).dtype(), kFloat32);
  EXPECT_EQ(pow(Scalar(2), dim_tensor(kInt32)).dtype(), kInt32);
  EXPECT_EQ(pow(Scalar(2.5), dim_tensor(kInt32)).dtype(), kFloat32);
  EXPECT_EQ(where(zeros({2}, kBool), dim_tensor(kInt32), Scalar(0.5)).dtype(), kFloat32);
  EXPECT_EQ(where(zeros({2}, kBool), Scalar(1), Scalar(0)).dtype(), kInt64);
  EXPECT_EQ(where(zeros({2}, kBool), Scalar(1.0), Scalar(0.0)).dtype(), kFloat32);
  EXPECT_EQ(clamp(dim_tensor(kInt64), Scalar(2.5)).dtype(), kFloat32);
  EXPECT_EQ(clamp(dim_tensor(kBool), Scalar(0)).dtype(), kInt64);
  EXPECT_EQ(addcmul(dim_tensor(kInt32), dim_tensor(kFloat32), dim_tensor(kInt32)).dtype(),
            kFloat32);
}

}  // namespace
}  // namespace kiln
