// where, clamp (Scalar and Tensor bounds), clamp_min/max, lerp, addcmul, addcdiv.
#include "ops/test_binary_util.h"

#include <cmath>
#include <limits>

namespace kiln {
namespace {

using testing::all_close;
using testing::bools;
using testing::f32;
using testing::f64;
using testing::i32;
using testing::i64;
using testing::ramp;
using testing::throws_error;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(BinaryTernary, Where) {
  Tensor c = bools({1, 0, 1, 0, 0, 1}, {2, 3});
  Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3}), b = f32({-1, -2, -3}, {3});
  EXPECT_TRUE(all_close(where(c, a, b), f32({1, -2, 3, -1, -2, 6}, {2, 3})));
  EXPECT_TRUE(all_close(where(c, a, Scalar(0.5)), f32({1, 0.5, 3, 0.5, 0.5, 6}, {2, 3})));
  EXPECT_TRUE(all_close(where(c, Scalar(1.0), Scalar(0.0)), f32({1, 0, 1, 0, 0, 1}, {2, 3})));
  // Broadcast of the condition as a column, mixed dtypes promote (int32, float64 -> float64).
  Tensor col = bools({1, 0}, {2, 1});
  Tensor r = where(col, i32({1, 2, 3}, {3}), f64({9, 8, 7, 6, 5, 4}, {2, 3}));
  EXPECT_EQ(r.dtype(), kFloat64);
  EXPECT_TRUE(all_close(r, f64({1, 2, 3, 6, 5, 4}, {2, 3})));
  // Non-contiguous, 0-dim, empty.
  Tensor t = testing::transposed(f32({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_TRUE(
      all_close(where(c, t, scalar_tensor(0.0, kFloat32)), f32({1, 0, 5, 0, 0, 6}, {2, 3})));
  EXPECT_EQ(where(scalar_tensor(true), scalar_tensor(1.0), scalar_tensor(2.0)).dim(), 0);
  EXPECT_EQ(where(zeros({0, 3}, kBool), zeros({3}), zeros({3})).sizes(), IntList({0, 3}));
  // The condition must be bool.
  EXPECT_TRUE(throws_error([&] { where(a, a, a); }, {"where", "boolean", "float32"}));
  static const auto& where_out = ops::OpRegistry::instance().get("where.out");
  Tensor out = empty({2, 3}, kFloat64);
  ops::call(where_out, {c, a, b, out});
  EXPECT_TRUE(all_close(out, f64({1, -2, 3, -1, -2, 6}, {2, 3})));
}

TEST(BinaryTernary, ClampScalar) {
  Tensor x = f32({-3, -1, 0, 1, 3, kNaN}, {6});
  EXPECT_TRUE(all_close(clamp(x, Scalar(-1.5), Scalar(2)), f32({-1.5, -1, 0, 1, 2, kNaN}, {6})));
  EXPECT_TRUE(all_close(clamp(x, Scalar(0)), f32({0, 0, 0, 1, 3, kNaN}, {6})));
  EXPECT_TRUE(all_close(clamp(x, std::nullopt, Scalar(0)), f32({-3, -1, 0, 0, 0, kNaN}, {6})));
  EXPECT_TRUE(all_close(clamp_min(x, Scalar(0.5)), f32({0.5, 0.5, 0.5, 1, 3, kNaN}, {6})));
  EXPECT_TRUE(all_close(clamp_max(x, Scalar(0.5)), f32({-3, -1, 0, 0.5, 0.5, kNaN}, {6})));
  // min > max gives max everywhere; a NaN bound gives NaN (PyTorch).
  EXPECT_TRUE(all_close(clamp(x, Scalar(2), Scalar(1)), f32({1, 1, 1, 1, 1, kNaN}, {6})));
  EXPECT_TRUE(all_close(clamp(x, Scalar(kNaN)), f32({kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}, {6})));
  // Integers stay integral with integral bounds; a float bound promotes to float32.
  Tensor n = i64({-5, 0, 5}, {3});
  EXPECT_EQ(clamp(n, Scalar(-2), Scalar(3)).tolist<int64_t>(), (std::vector<int64_t>{-2, 0, 3}));
  Tensor p = clamp(n, Scalar(0.5));
  EXPECT_EQ(p.dtype(), kFloat32);
  EXPECT_TRUE(all_close(p, f32({0.5, 0.5, 5}, {3})));
  // In place, non-contiguous and 0-dim.
  Tensor y = f32({-3, 1, 3, 5}, {2, 2});
  Tensor col = testing::strided(y, {2}, {2});
  col.clamp_(Scalar(0), Scalar(4));
  EXPECT_TRUE(all_close(y, f32({0, 1, 3, 5}, {2, 2})));
  EXPECT_EQ(clamp(scalar_tensor(7.0), Scalar(0), Scalar(1)).item<double>(), 1.0);
  EXPECT_EQ(clamp(zeros({0}), Scalar(0)).numel(), 0);
  // Errors.
  EXPECT_TRUE(throws_error([&] { clamp(x, std::nullopt, std::nullopt); },
                           {"At least one of 'min' or 'max'"}));
  EXPECT_TRUE(throws_error([&] { n.clamp_(Scalar(0.5)); }, {"float32", "int64"}));
  EXPECT_THROW(clamp(bools({1}, {1}), Scalar(true)), TypeError);
}

TEST(BinaryTernary, ClampTensor) {
  Tensor x = f32({-3, -1, 0, 1, 3, 5}, {2, 3});
  Tensor lo = f32({-2, 0, 1}, {3}), hi = f32({2, 4}, {2, 1});
  EXPECT_TRUE(all_close(clamp(x, lo, hi), f32({-2, 0, 1, 1, 3, 4}, {2, 3})));
  EXPECT_TRUE(all_close(clamp(x, lo, Tensor()), f32({-2, 0, 1, 1, 3, 5}, {2, 3})));
  EXPECT_TRUE(all_close(clamp(x, Tensor(), hi), f32({-3, -1, 0, 1, 3, 4}, {2, 3})));
  // A NaN bound gives NaN; min > max gives max (PyTorch).
  EXPECT_TRUE(all_close(clamp(f32({1, 2}, {2}), f32({kNaN, 3}, {2}), f32({5, 2}, {2})),
                        f32({kNaN, 2}, {2})));
  static const auto& cmin = ops::OpRegistry::instance().get("clamp_min.Tensor");
  EXPECT_TRUE(all_close(ops::call1(cmin, {x, lo}), f32({-2, 0, 1, 1, 3, 5}, {2, 3})));
  EXPECT_TRUE(throws_error([&] { clamp(x, Tensor(), Tensor()); }, {"At least one"}));
}

TEST(BinaryTernary, Lerp) {
  Tensor a = ramp({5, 40}, kFloat32, -3, 3, 1), b = ramp({5, 40}, kFloat32, -3, 3, 2);
  Tensor w = ramp({40}, kFloat32, -0.5, 1.5, 3);
  std::vector<double> va = testing::values(a), vb = testing::values(b), vw = testing::values(w);
  std::vector<double> ref(va.size()), ref_s(va.size());
  for (size_t i = 0; i < va.size(); ++i) {
    ref[i] = va[i] + vw[i % 40] * (vb[i] - va[i]);
    ref_s[i] = va[i] + 0.75 * (vb[i] - va[i]);
  }
  EXPECT_TRUE(all_close(lerp(a, b, w), f64(ref, {5, 40}), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(lerp(a, b, Scalar(0.75)), f64(ref_s, {5, 40}), 1e-5, 1e-5));
  // Exact at both ends.
  EXPECT_TRUE(all_close(lerp(a, b, Scalar(0.0)), a, 0, 0));
  EXPECT_TRUE(all_close(lerp(a, b, Scalar(1.0)), b, 0, 0));
  Tensor c = a.clone();
  c.lerp_(b, Scalar(0.75));
  EXPECT_TRUE(all_close(c, f64(ref_s, {5, 40}), 1e-5, 1e-5));
  EXPECT_TRUE(throws_error([&] { lerp(a, b.to(kFloat64), Scalar(0.5)); }, {"end", "float64"}));
  EXPECT_THROW(lerp(i64({1}, {1}), i64({2}, {1}), Scalar(0.5)), TypeError);
}

TEST(BinaryTernary, VectorLoopsComputeTheScalarFormulasExactly) {
  // lerp, addcmul and addcdiv run in vector lanes (with a scalar tail): each element must be the
  // float formula evaluated in the same order, both lerp branches and NaN included.
  const int64_t n = 1003;
  manual_seed(3);
  Tensor a = randn({n}), b = randn({n}), w = rand({n}) * 3 - 1, t = rand({n}) + 0.5;
  a.data_ptr<float>()[7] = std::numeric_limits<float>::quiet_NaN();
  w.data_ptr<float>()[8] = 0.5F;
  w.data_ptr<float>()[9] = -0.5F;
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  const float* pw = w.data_ptr<float>();
  const float* pt = t.data_ptr<float>();
  const Tensor lerped = lerp(a, b, w), lerped_s = lerp(a, b, Scalar(0.75));
  const Tensor mul = addcmul(a, b, t, 0.3), div = addcdiv(a, b, t, -0.7);
  const auto same = [](float got, float want) {
    return std::isnan(want) ? std::isnan(got) : got == want;
  };
  size_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float d = pb[i] - pa[i];
    const float l = std::abs(pw[i]) < 0.5F ? pa[i] + pw[i] * d : pb[i] - d * (1.0F - pw[i]);
    const float ls = pb[i] - d * (1.0F - 0.75F);
    wrong += !same(lerped.data_ptr<float>()[i], l) + !same(lerped_s.data_ptr<float>()[i], ls);
    wrong += !same(mul.data_ptr<float>()[i], pa[i] + 0.3F * pb[i] * pt[i]);
    wrong += !same(div.data_ptr<float>()[i], pa[i] + -0.7F * pb[i] / pt[i]);
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(BinaryTernary, AddcmulAddcdiv) {
  Tensor s = f32({1, 2, 3}, {3}), t1 = f32({2, 4}, {2, 1}), t2 = f32({1, 2, 4}, {3});
  // s + 0.5 * t1 * t2 and s + 0.5 * t1 / t2, broadcast to [2, 3].
  EXPECT_TRUE(all_close(addcmul(s, t1, t2, 0.5), f32({2, 4, 7, 3, 6, 11}, {2, 3})));
  EXPECT_TRUE(all_close(addcdiv(s, t1, t2, 0.5), f32({2, 2.5, 3.25, 3, 3, 3.5}, {2, 3})));
  EXPECT_TRUE(all_close(addcmul(s, s, s), f32({2, 6, 12}, {3})));
  Tensor c = s.clone();
  c.addcdiv_(s, s, 2);
  EXPECT_TRUE(all_close(c, f32({3, 4, 5}, {3})));
  // Integers: addcmul works, addcdiv of two integer tensors raises (PyTorch).
  EXPECT_EQ(addcmul(i64({1, 2}, {2}), i64({3, 4}, {2}), i64({5, 6}, {2}), 2).tolist<int64_t>(),
            (std::vector<int64_t>{31, 50}));
  EXPECT_TRUE(throws_error([] { addcdiv(i64({1}, {1}), i64({1}, {1}), i64({1}, {1})); },
                           {"Integer division with addcdiv"}));
  EXPECT_TRUE(throws_error(
      [&] {
        s.addcmul_(f32({1, 2}, {2, 1}), s);
      },
      {"addcmul_", "[3]", "[2, 3]"}));
}

}  // namespace
}  // namespace kiln
