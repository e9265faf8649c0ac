// Factory functions: arange, linspace, eye, *_like, tensor(NestedList), from_vector,
// scalar_tensor, checked against hand-computed values.
#include "test_util.h"

#include <cmath>
#include <vector>

namespace kiln {
namespace {

using testing::throws_error;
using testing::values;

std::vector<int64_t> sizes_of(const Tensor& t) { return t.sizes().vec(); }
std::vector<int64_t> strides_of(const Tensor& t) { return t.strides().vec(); }

// ---------------------------------------------------------------- arange

TEST(CreationArange, EndOnlyIsInt64) {
  Tensor t = arange(5);
  EXPECT_EQ(t.dtype(), kInt64);
  EXPECT_EQ(t.tolist<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(CreationArange, FloatBoundsGiveFloat32) {
  Tensor t = arange(0, 1, 0.25);
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(values(t), (std::vector<double>{0.0, 0.25, 0.5, 0.75}));
  Tensor u = arange(3.5);
  EXPECT_EQ(u.dtype(), kFloat32);
  EXPECT_EQ(values(u), (std::vector<double>{0, 1, 2, 3}));
}

TEST(CreationArange, LengthIsCeilOfSpanOverStep) {
  EXPECT_EQ(arange(0, 10, 3).tolist<int64_t>(), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(arange(10, -3, -4).tolist<int64_t>(), (std::vector<int64_t>{10, 6, 2, -2}));
  EXPECT_EQ(arange(1, 2.5, 0.5).numel(), 3);
  EXPECT_EQ(arange(0, 1, 0.1).numel(), 10);      // ceil(1 / 0.1) = 10: 1.0 itself is excluded
  EXPECT_EQ(arange(-1.0, 1.0, 0.3).numel(), 7);  // ceil(6.67)
  EXPECT_EQ(arange(0).numel(), 0);
  EXPECT_EQ(arange(3, 3, -1).numel(), 0);
}

TEST(CreationArange, FloatValuesAreStartPlusIndexTimesStep) {
  // Computed as start + i * step in float64 and rounded once, as PyTorch does; not by repeated
  // addition (which would drift).
  Tensor t = arange(0.1, 2.0, 0.1);
  auto v = values(t);
  ASSERT_EQ(v.size(), 19u);
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i], static_cast<double>(static_cast<float>(0.1 + static_cast<double>(i) * 0.1)));
  }
  Tensor d = arange(0.1, 2.0, 0.1, kFloat64);
  auto vd = values(d);
  for (size_t i = 0; i < vd.size(); ++i) EXPECT_EQ(vd[i], 0.1 + static_cast<double>(i) * 0.1);
}

TEST(CreationArange, DtypeOverride) {
  Tensor t = arange(1, 8, 3, kFloat64);
  EXPECT_EQ(t.dtype(), kFloat64);
  EXPECT_EQ(values(t), (std::vector<double>{1, 4, 7}));
  Tensor i = arange(0, 5, 1, kInt32);
  EXPECT_EQ(i.dtype(), kInt32);
  EXPECT_EQ(i.tolist<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  Tensor h = arange(0, 4, 1, kFloat16);
  EXPECT_EQ(values(h), (std::vector<double>{0, 1, 2, 3}));
}

TEST(CreationArange, BadStepRaises) {
  EXPECT_TRUE(throws_error([] { arange(0, 10, 0); }, {"arange", "step must be nonzero"}));
  EXPECT_TRUE(throws_error([] { arange(0, 10, -1); },
                           {"upper bound and larger bound inconsistent with step sign"}));
  EXPECT_TRUE(throws_error([] { arange(5.0, 1.0, 0.5); },
                           {"upper bound and larger bound inconsistent with step sign"}));
  // The step becomes 0 in int64.
  EXPECT_TRUE(throws_error([] { arange(0, 10, 0.5, kInt64); }, {"step must be nonzero"}));
  EXPECT_TRUE(throws_error([] { arange(0.0, INFINITY, 1.0); }, {"unsupported range"}));
}

TEST(CreationArange, MetaDevice) {
  Tensor t = arange(0, 10, 2, TensorOptions(Device::meta()));
  EXPECT_TRUE(t.is_meta());
  EXPECT_EQ(sizes_of(t), (std::vector<int64_t>{5}));
  EXPECT_EQ(t.dtype(), kInt64);
}

// ---------------------------------------------------------------- linspace

TEST(CreationLinspace, EndpointsAndInterior) {
  Tensor t = linspace(0, 1, 5);
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(values(t), (std::vector<double>{0, 0.25, 0.5, 0.75, 1.0}));
}

TEST(CreationLinspace, EndpointsAreExact) {
  for (int64_t steps : {2, 3, 7, 10, 101}) {
    Tensor t = linspace(0.1, 0.7, steps);
    auto v = values(t);
    ASSERT_EQ(static_cast<int64_t>(v.size()), steps);
    EXPECT_EQ(v.front(), static_cast<double>(0.1f));
    EXPECT_EQ(v.back(), static_cast<double>(0.7f));
    for (int64_t i = 0; i < steps; ++i) {
      double ref = 0.1 + (0.7 - 0.1) * static_cast<double>(i) / static_cast<double>(steps - 1);
      EXPECT_NEAR(v[static_cast<size_t>(i)], ref, 1e-6);
    }
  }
  Tensor d = linspace(-3.0, 11.0, 13, kFloat64);
  auto vd = values(d);
  EXPECT_EQ(vd.front(), -3.0);
  EXPECT_EQ(vd.back(), 11.0);
  for (size_t i = 0; i < vd.size(); ++i) EXPECT_NEAR(vd[i], -3.0 + 14.0 * i / 12.0, 1e-12);
}

TEST(CreationLinspace, SymmetricHalvesMatchPyTorch) {
  // PyTorch: step = (end - start) / (steps - 1); i < steps/2 counts from start, else from end.
  Tensor t = linspace(0.0, 1.0, 7, kFloat64);
  const double step = 1.0 / 6.0;
  std::vector<double> ref{0.0, step, 2 * step, 1.0 - 3 * step, 1.0 - 2 * step, 1.0 - step, 1.0};
  EXPECT_EQ(values(t), ref);
}

TEST(CreationLinspace, IntegralTruncates) {
  Tensor t = linspace(0, 10, 4, kInt64);
  EXPECT_EQ(t.tolist<int64_t>(), (std::vector<int64_t>{0, 3, 6, 10}));
}

TEST(CreationLinspace, OneZeroAndNegativeSteps) {
  EXPECT_EQ(values(linspace(2.0, 5.0, 1)), (std::vector<double>{2.0}));
  EXPECT_EQ(linspace(2.0, 5.0, 0).numel(), 0);
  EXPECT_TRUE(throws_error([] { linspace(0, 1, -1); }, {"linspace", "non-negative"}));
}

TEST(CreationLinspace, Decreasing) {
  EXPECT_EQ(values(linspace(4, -4, 5)), (std::vector<double>{4, 2, 0, -2, -4}));
}

// ---------------------------------------------------------------- eye

TEST(CreationEye, SquarePattern) {
  Tensor t = eye(3);
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(sizes_of(t), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(values(t), (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
}

TEST(CreationEye, RectangularAndDtypes) {
  EXPECT_EQ(values(eye(2, 4)), (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0}));
  Tensor tall = eye(3, 2, kInt32);
  EXPECT_EQ(tall.dtype(), kInt32);
  EXPECT_EQ(tall.tolist<int32_t>(), (std::vector<int32_t>{1, 0, 0, 1, 0, 0}));
  Tensor b = eye(2, kBool);
  EXPECT_EQ(b.tolist<bool>(), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(eye(0).numel(), 0);
  EXPECT_EQ(sizes_of(eye(0, 3)), (std::vector<int64_t>{0, 3}));
}

TEST(CreationEye, NegativeRaises) {
  EXPECT_TRUE(throws_error([] { eye(-1); }, {"eye", "n must be greater or equal to 0, got -1"}));
  EXPECT_TRUE(throws_error([] { eye(2, -3); }, {"eye", "m must be greater or equal to 0"}));
}

// ---------------------------------------------------------------- *_like

// Built with empty_strided so the test needs no view ops: sizes [3, 2], strides [1, 3] (a
// transposed 2x3 matrix).
Tensor transposed_float64() {
  Tensor t = empty_strided({3, 2}, {1, 3}, kFloat64);
  double* p = t.data_ptr<double>();
  for (int i = 0; i < 6; ++i) p[i] = i + 1;
  return t;
}

TEST(CreationLike, KeepsDenseLayout) {
  Tensor x = transposed_float64();
  for (Tensor y : {empty_like(x), zeros_like(x), ones_like(x), full_like(x, 2.5)}) {
    EXPECT_EQ(sizes_of(y), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(strides_of(y), (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(y.dtype(), kFloat64);
  }
  EXPECT_EQ(values(zeros_like(x)), std::vector<double>(6, 0.0));
  EXPECT_EQ(values(ones_like(x)), std::vector<double>(6, 1.0));
  EXPECT_EQ(values(full_like(x, 2.5)), std::vector<double>(6, 2.5));
}

TEST(CreationLike, ContiguousInputGivesContiguousOutput) {
  Tensor x = zeros({2, 3, 4});
  Tensor y = ones_like(x);
  EXPECT_EQ(strides_of(y), (std::vector<int64_t>{12, 4, 1}));
}

TEST(CreationLike, OptionsOverrideDtype) {
  Tensor x = transposed_float64();
  Tensor y = ones_like(x, kInt32);
  EXPECT_EQ(y.dtype(), kInt32);
  EXPECT_EQ(strides_of(y), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(y.tolist<int32_t>(), std::vector<int32_t>(6, 1));
  // full_like takes its dtype from the input, not from the fill value.
  Tensor f = full_like(from_vector<int64_t>({1, 2, 3}), 7.9);
  EXPECT_EQ(f.dtype(), kInt64);
  EXPECT_EQ(f.tolist<int64_t>(), (std::vector<int64_t>{7, 7, 7}));
  Tensor b = full_like(x, true, kBool);
  EXPECT_EQ(b.tolist<bool>(), std::vector<bool>(6, true));
}

TEST(CreationLike, ZeroDimAndEmpty) {
  Tensor s = scalar_tensor(3.0);
  Tensor z = zeros_like(s);
  EXPECT_EQ(z.dim(), 0);
  EXPECT_EQ(z.item<double>(), 0.0);
  Tensor e = ones_like(empty({0, 4}));
  EXPECT_EQ(sizes_of(e), (std::vector<int64_t>{0, 4}));
}

TEST(CreationLike, NonDenseInputGetsDenseOutput) {
  // Every other column: not dense, so the output is a fresh dense tensor of the same sizes.
  Tensor x = empty_strided({4, 3}, {1, 8}, kFloat32);  // a gap after each column
  Tensor y = zeros_like(x);
  EXPECT_EQ(sizes_of(y), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(y.numel(), 12);
  EXPECT_EQ(static_cast<int64_t>(y.storage()->nbytes()), 12 * 4);
}

// ---------------------------------------------------------------- tensor(NestedList)

TEST(CreationTensor, InfersDtypeFromLeaves) {
  Tensor i = tensor({1, 2, 3});
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.tolist<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  Tensor f = tensor({1.5, 2});
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(values(f), (std::vector<double>{1.5, 2.0}));
  Tensor b = tensor({true, false});
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.tolist<bool>(), (std::vector<bool>{true, false}));
  Tensor bi = tensor({true, 2});  // bool and int: int64, as torch.tensor([True, 2])
  EXPECT_EQ(bi.dtype(), kInt64);
  EXPECT_EQ(bi.tolist<int64_t>(), (std::vector<int64_t>{1, 2}));
}

TEST(CreationTensor, NestedShapes) {
  Tensor t = tensor({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(sizes_of(t), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.tolist<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  Tensor c = tensor({{{1.0}, {2.0}}, {{3.0}, {4.5}}});
  EXPECT_EQ(sizes_of(c), (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(values(c), (std::vector<double>{1, 2, 3, 4.5}));
  Tensor s = tensor(2.5);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 2.5);
}

TEST(CreationTensor, OptionsOverrideDtype) {
  Tensor t = tensor({{1, 2}, {3, 4}}, kFloat64);
  EXPECT_EQ(t.dtype(), kFloat64);
  EXPECT_EQ(values(t), (std::vector<double>{1, 2, 3, 4}));
  Tensor h = tensor({0.5, 1.5}, kFloat16);
  EXPECT_EQ(values(h), (std::vector<double>{0.5, 1.5}));
}

TEST(CreationTensor, RaggedListsRaise) {
  EXPECT_TRUE(throws_error(
      [] {
        tensor({{1, 2}, {3}});
      },
      {"tensor", "expected sequence of length 2 at dim 1, got 1"}));
  EXPECT_TRUE(throws_error(
      [] {
        tensor({{{1, 2}, {3, 4}}, {{1, 2}, {3, 4, 5}}});
      },
      {"expected sequence of length 2 at dim 2, got 3"}));
  EXPECT_TRUE(throws_error([] { tensor({{1, 2}, 3}); }, {"dim 1", "got a number"}));
  EXPECT_TRUE(throws_error([] { tensor({1, {2, 3}}); }, {"dim 1", "expected a number"}));
}

// ---------------------------------------------------------------- from_vector

TEST(CreationFromVector, EachElementType) {
  Tensor f = from_vector<float>({1.5f, -2.0f, 3.0f, 4.0f}, {2, 2});
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(sizes_of(f), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values(f), (std::vector<double>{1.5, -2.0, 3.0, 4.0}));
  EXPECT_EQ(from_vector<double>({0.1}, {1}).dtype(), kFloat64);
  EXPECT_EQ(values(from_vector<double>({0.1}, {1}))[0], 0.1);
  EXPECT_EQ(from_vector<int64_t>({1, 2, 3}).tolist<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  Tensor i32 = from_vector<int32_t>({-7, 8}, {2});
  EXPECT_EQ(i32.dtype(), kInt32);
  EXPECT_EQ(i32.tolist<int32_t>(), (std::vector<int32_t>{-7, 8}));
  Tensor u8 = from_vector<uint8_t>({0, 255}, {2, 1});
  EXPECT_EQ(u8.dtype(), kUInt8);
  EXPECT_EQ(values(u8), (std::vector<double>{0, 255}));
  Tensor b = from_vector<bool>({true, false, true}, {3});
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.tolist<bool>(), (std::vector<bool>{true, false, true}));
}

TEST(CreationFromVector, ZeroDimAndEmpty) {
  Tensor s = from_vector<float>({4.0f}, {});
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 4.0);
  EXPECT_EQ(sizes_of(from_vector<float>({}, {0, 3})), (std::vector<int64_t>{0, 3}));
}

TEST(CreationFromVector, OptionsOverrideDtype) {
  Tensor t = from_vector<int64_t>({1, 2, 3}, {3}, kFloat32);
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(values(t), (std::vector<double>{1, 2, 3}));
}

TEST(CreationFromVector, NumelMismatchRaises) {
  EXPECT_TRUE(throws_error(
      [] {
        from_vector<float>({1, 2, 3}, {2, 2});
      },
      {"from_vector", "[2, 2]", "4 elements", "3 values"}));
  EXPECT_TRUE(throws_error([] { from_vector<float>({}, {-1}); }, {"negative dimension"}));
}

// ---------------------------------------------------------------- scalar_tensor and sizes

TEST(CreationScalarTensor, ZeroDimWithInferredOrGivenDtype) {
  Tensor f = scalar_tensor(3.5);
  EXPECT_EQ(f.dim(), 0);
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(f.item<double>(), 3.5);
  EXPECT_EQ(scalar_tensor(4).dtype(), kInt64);
  EXPECT_EQ(scalar_tensor(true).dtype(), kBool);
  Tensor d = scalar_tensor(2, kFloat64);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_EQ(d.item<double>(), 2.0);
}

TEST(CreationScalarTensor, RegisteredOpDefaultsToFloat32) {
  // aten::scalar_tensor defaults to the default float dtype even for integers.
  const auto& op = ops::OpRegistry::instance().get("scalar_tensor");
  Tensor t = ops::call1(op, {Scalar(int64_t{4})});
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.item<double>(), 4.0);
}

TEST(CreationSizes, NegativeSizesRaise) {
  EXPECT_TRUE(throws_error([] { zeros({2, -1}); }, {"negative dimension -1"}));
  EXPECT_TRUE(throws_error([] { empty({-3}); }, {"negative dimension"}));
  EXPECT_TRUE(throws_error([] { rand({-2}); }, {"rand", "negative dimension"}));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The op-info samples of this family's ops run eagerly, and on the meta device give the same
// sizes, strides and dtypes without touching data.
Tensor meta_like(const Tensor& t) {
  return empty_strided(t.sizes(), t.strides(), TensorOptions(t.dtype()).device(Device::meta()));
}

TEST(CreationSamples, EagerMatchesMeta) {
  const char* names[] = {"full",
                         "arange",
                         "arange.start",
                         "arange.start_step",
                         "linspace",
                         "eye",
                         "eye.m",
                         "zeros_like",
                         "ones_like",
                         "full_like",
                         "scalar_tensor",
                         "rand",
                         "randn",
                         "randint",
                         "randint.low",
                         "normal.float_float",
                         "normal.Tensor_Tensor",
                         "normal.Tensor_float",
                         "normal.float_Tensor",
                         "bernoulli",
                         "bernoulli.p",
                         "randperm",
                         "rand_like",
                         "randn_like"};
  for (const char* name : names) {
    const auto& op = ops::OpRegistry::instance().get(name);
    ASSERT_TRUE(static_cast<bool>(op.samples)) << name;
    for (const ops::Sample& s : op.samples()) {
      Tensor eager = ops::call1(op, s.args);
      ops::Stack meta_args = s.args;
      bool has_device_arg = false;
      for (auto& a : meta_args) {
        if (a.is_tensor()) a = meta_like(a.to_tensor());
      }
      // Factories take the device as their last argument.
      const auto& schema_args = op.schema.arguments;
      if (!schema_args.empty() && schema_args.back().name == "device") {
        has_device_arg = true;
        while (meta_args.size() < schema_args.size()) meta_args.emplace_back();
        meta_args.back() = Device::meta();
      }
      Tensor meta = ops::call1(op, meta_args);
      EXPECT_TRUE(meta.is_meta() || !has_device_arg) << name << ": " << s.description;
      EXPECT_EQ(meta.sizes().vec(), eager.sizes().vec()) << name << ": " << s.description;
      EXPECT_EQ(meta.strides().vec(), eager.strides().vec()) << name << ": " << s.description;
      EXPECT_EQ(meta.dtype(), eager.dtype()) << name << ": " << s.description;
    }
  }
}

}  // namespace
}  // namespace kiln
