// Arithmetic binary ops: values against float64 references, broadcasting, layouts, 0-dim,
// empty, wrapped scalars, in-place and out= forms, and division edge cases.
#include "ops/test_binary_util.h"

#include <cmath>
#include <limits>

namespace kiln {
namespace {

using testing::all_close;
using testing::f32;
using testing::f64;
using testing::i32;
using testing::i64;
using testing::ramp;
using testing::reference;
using testing::throws_error;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Python's floor division and modulo on doubles (the reference for floor/remainder).
double py_floordiv(double a, double b) { return std::floor(a / b); }
double py_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}

TEST(BinaryArith, HandComputedValues) {
  Tensor a = f32({1, 2, 3, 4}, {4}), b = f32({10, 20, 30, 40}, {4});
  EXPECT_TRUE(all_close(add(a, b), f32({11, 22, 33, 44}, {4})));
  EXPECT_TRUE(all_close(add(a, b, 2), f32({21, 42, 63, 84}, {4})));
  EXPECT_TRUE(all_close(sub(a, b), f32({-9, -18, -27, -36}, {4})));
  EXPECT_TRUE(all_close(sub(a, b, 0.5), f32({-4, -8, -12, -16}, {4})));
  EXPECT_TRUE(all_close(rsub(a, Scalar(10)), f32({9, 8, 7, 6}, {4})));
  EXPECT_TRUE(all_close(rsub(a, Scalar(10), 2), f32({8, 6, 4, 2}, {4})));
  EXPECT_TRUE(all_close(mul(a, b), f32({10, 40, 90, 160}, {4})));
  EXPECT_TRUE(all_close(div(b, a), f32({10, 10, 10, 10}, {4})));
  EXPECT_TRUE(all_close(pow(a, Scalar(2)), f32({1, 4, 9, 16}, {4})));
  EXPECT_TRUE(all_close(pow(Scalar(2), a), f32({2, 4, 8, 16}, {4})));
  EXPECT_TRUE(all_close(maximum(a, f32({0, 5, 3, -1}, {4})), f32({1, 5, 3, 4}, {4})));
  EXPECT_TRUE(all_close(minimum(a, f32({0, 5, 3, -1}, {4})), f32({0, 2, 3, -1}, {4})));
  // Operators.
  EXPECT_TRUE(all_close(a + 1, f32({2, 3, 4, 5}, {4})));
  EXPECT_TRUE(all_close(Scalar(1) - a, f32({0, -1, -2, -3}, {4})));
  EXPECT_TRUE(all_close(a * a / 2, f32({0.5, 2, 4.5, 8}, {4})));
}

// Every arithmetic op in float32 and float64 against <cmath> in float64.
TEST(BinaryArith, FloatReferences) {
  struct Op {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> run;
    std::function<double(double, double)> ref;
    bool positive_b = false;
  };
  std::vector<Op> ops = {
      {"add", [](auto& x, auto& y) { return add(x, y); }, [](double x, double y) { return x + y; }},
      {"add alpha", [](auto& x, auto& y) { return add(x, y, 2.5); },
       [](double x, double y) { return x + 2.5 * y; }},
      {"sub", [](auto& x, auto& y) { return sub(x, y); }, [](double x, double y) { return x - y; }},
      {"mul", [](auto& x, auto& y) { return mul(x, y); }, [](double x, double y) { return x * y; }},
      {"div", [](auto& x, auto& y) { return div(x, y); }, [](double x, double y) { return x / y; }},
      {"div trunc", [](auto& x, auto& y) { return div(x, y, "trunc"); },
       [](double x, double y) { return std::trunc(x / y); }},
      {"div floor", [](auto& x, auto& y) { return div(x, y, "floor"); }, py_floordiv},
      {"floor_divide", [](auto& x, auto& y) { return floor_divide(x, y); }, py_floordiv},
      {"remainder", [](auto& x, auto& y) { return remainder(x, y); }, py_mod},
      {"fmod", [](auto& x, auto& y) { return fmod(x, y); },
       [](double x, double y) { return std::fmod(x, y); }},
      {"pow", [](auto& x, auto& y) { return pow(x, y); },
       [](double x, double y) { return std::pow(x, y); }, true},
      {"atan2", [](auto& x, auto& y) { return atan2(x, y); },
       [](double x, double y) { return std::atan2(x, y); }},
      {"maximum", [](auto& x, auto& y) { return maximum(x, y); },
       [](double x, double y) { return std::max(x, y); }},
      {"minimum", [](auto& x, auto& y) { return minimum(x, y); },
       [](double x, double y) { return std::min(x, y); }},
  };
  for (DType d : {kFloat32, kFloat64}) {
    for (const Op& op : ops) {
      // pow takes a positive base; the others a signed one. Divisors avoid (-0.5, 0.5).
      Tensor a = op.positive_b ? ramp({37, 19}, d, 0.5, 3, 1) : ramp({37, 19}, d, -5, 5, 1);
      Tensor b = ramp({37, 19}, d, 0.5, 3, 2);
      Tensor bn = ramp({37, 19}, d, -3, -0.5, 3);
      double rtol = d == kFloat32 ? 1e-5 : 1e-12;
      EXPECT_TRUE(all_close(op.run(a, b), reference(a, b, op.ref), rtol, 1e-6)) << op.name;
      if (!op.positive_b) {
        EXPECT_TRUE(all_close(op.run(a, bn), reference(a, bn, op.ref), rtol, 1e-6))
            << op.name << " negative";
      }
      // Broadcasting both sides: [37, 1] with [19].
      Tensor col = ramp({37, 1}, d, op.positive_b ? 0.5 : -5, 5, 4), row = ramp({19}, d, 0.5, 3, 5);
      Tensor r = op.run(col, row);
      EXPECT_EQ(r.sizes(), IntList({37, 19})) << op.name;
      EXPECT_TRUE(all_close(r, reference(col, row, op.ref), rtol, 1e-6)) << op.name << " bcast";
      // Non-contiguous (transposed) inputs.
      Tensor ta = testing::transposed(ramp({19, 37}, d, op.positive_b ? 0.5 : -5, 5, 6));
      EXPECT_FALSE(ta.is_contiguous());
      EXPECT_TRUE(all_close(op.run(ta, b), reference(ta, b, op.ref), rtol, 1e-6)) << op.name;
      // 0-dim and empty.
      Tensor s = scalar_tensor(1.5, d);
      EXPECT_TRUE(all_close(op.run(a, s), reference(a, s, op.ref), rtol, 1e-6)) << op.name;
      EXPECT_EQ(op.run(s, s).dim(), 0) << op.name;
      Tensor e = op.run(zeros({0, 19}, d), row);
      EXPECT_EQ(e.sizes(), IntList({0, 19})) << op.name;
      EXPECT_EQ(e.dtype(), d) << op.name;
    }
  }
}

TEST(BinaryArith, HalfAndBFloat16) {
  for (DType d : {kFloat16, kBFloat16}) {
    Tensor a = f32({1.5, -2, 3.25, 100}, {4}).to(d), b = f32({0.5, 4, -2, 0.25}, {4}).to(d);
    Tensor r = add(a, b);
    EXPECT_EQ(r.dtype(), d);
    EXPECT_TRUE(all_close(r, f64({2, 2, 1.25, 100.25}, {4}), 1e-2));
    EXPECT_TRUE(all_close(mul(a, b), f64({0.75, -8, -6.5, 25}, {4}), 1e-2));
    EXPECT_TRUE(all_close(div(a, b), f64({3, -0.5, -1.625, 400}, {4}), 1e-2));
    EXPECT_EQ(add(a, Scalar(2.5)).dtype(), d);
  }
}

TEST(BinaryArith, IntegerValues) {
  Tensor a = i64({7, -7, 7, -7, 0}, {5}), b = i64({2, 2, -2, -2, 3}, {5});
  EXPECT_EQ(add(a, b).tolist<int64_t>(), (std::vector<int64_t>{9, -5, 5, -9, 3}));
  EXPECT_EQ(add(a, b, 3).tolist<int64_t>(), (std::vector<int64_t>{13, -1, 1, -13, 9}));
  EXPECT_EQ(sub(a, b).tolist<int64_t>(), (std::vector<int64_t>{5, -9, 9, -5, -3}));
  EXPECT_EQ(mul(a, b).tolist<int64_t>(), (std::vector<int64_t>{14, -14, -14, 14, 0}));
  // Python semantics: floor division rounds down, remainder takes the divisor's sign.
  EXPECT_EQ(floor_divide(a, b).tolist<int64_t>(), (std::vector<int64_t>{3, -4, -4, 3, 0}));
  EXPECT_EQ(div(a, b, "floor").tolist<int64_t>(), (std::vector<int64_t>{3, -4, -4, 3, 0}));
  EXPECT_EQ(div(a, b, "trunc").tolist<int64_t>(), (std::vector<int64_t>{3, -3, -3, 3, 0}));
  EXPECT_EQ(remainder(a, b).tolist<int64_t>(), (std::vector<int64_t>{1, 1, -1, -1, 0}));
  // C semantics: fmod takes the dividend's sign.
  EXPECT_EQ(fmod(a, b).tolist<int64_t>(), (std::vector<int64_t>{1, -1, 1, -1, 0}));
  Tensor q = div(a, b);
  EXPECT_EQ(q.dtype(), kFloat32);
  EXPECT_TRUE(all_close(q, f64({3.5, -3.5, -3.5, 3.5, 0}, {5})));
  EXPECT_EQ(maximum(a, b).tolist<int64_t>(), (std::vector<int64_t>{7, 2, 7, -2, 3}));
  // Integer pow; negative tensor exponents truncate 1/a^n (PyTorch: [0, 1, -1, 0]).
  EXPECT_EQ(pow(i64({2, 1, -1, 0}, {4}), i64({-1, -2, -3, -1}, {4})).tolist<int64_t>(),
            (std::vector<int64_t>{0, 1, -1, 0}));
  EXPECT_EQ(pow(i64({3, -2, 5}, {3}), Scalar(3)).tolist<int64_t>(),
            (std::vector<int64_t>{27, -8, 125}));
  EXPECT_EQ(pow(Scalar(2), i32({0, 1, 10}, {3})).tolist<int64_t>(),
            (std::vector<int64_t>{1, 2, 1024}));
  // Smaller integer types wrap like C (int8: 100 + 100 = -56).
  Tensor c = testing::make<int64_t>({100, -128}, {2}, kInt8);
  EXPECT_EQ(add(c, c).tolist<int64_t>(), (std::vector<int64_t>{-56, 0}));
  EXPECT_EQ(div(c, testing::make<int64_t>({-1, -1}, {2}, kInt8), "trunc").tolist<int64_t>(),
            (std::vector<int64_t>{-100, -128}));
  // uint8 compares in uint8: -1 is 255 (as PyTorch).
  EXPECT_EQ(sub(testing::make<int64_t>({5}, {1}, kUInt8), Scalar(10)).tolist<int64_t>(),
            (std::vector<int64_t>{251}));
}

TEST(BinaryArith, BoolArithmetic) {
  Tensor t = testing::bools({1, 1, 0, 0}, {4}), f = testing::bools({1, 0, 1, 0}, {4});
  Tensor s = add(t, f);
  EXPECT_EQ(s.dtype(), kBool);
  EXPECT_EQ(s.tolist<int64_t>(), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(mul(t, f).tolist<int64_t>(), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(add(t, f, true).tolist<int64_t>(), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(maximum(t, f).tolist<int64_t>(), (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(add(t, Scalar(2)).dtype(), kInt64);
  EXPECT_EQ(add(t, Scalar(2)).tolist<int64_t>(), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(div(t, f).dtype(), kFloat32);
}

TEST(BinaryArith, DivisionEdgeCases) {
  // Float division by zero follows IEEE.
  Tensor q = div(f32({1, -1, 0}, {3}), f32({0, 0, 0}, {3}));
  EXPECT_TRUE(all_close(q, f64({kInf, -kInf, kNaN}, {3})));
  EXPECT_TRUE(
      all_close(div(i64({1, -1, 0}, {3}), i64({0, 0, 0}, {3})), f64({kInf, -kInf, kNaN}, {3})));
  EXPECT_TRUE(all_close(div(f32({1, -1, 0}, {3}), f32({0, 0, 0}, {3}), "floor"),
                        f64({kInf, -kInf, kNaN}, {3})));
  EXPECT_TRUE(
      all_close(div(f32({1, -1}, {2}), f32({0, 0}, {2}), "trunc"), f64({kInf, -kInf}, {2})));
  // PyTorch: floor(-0.5 / 2) = -1; -7 // 2 = -4 and 7 // -2 = -4 in float too.
  EXPECT_TRUE(all_close(div(f32({-0.5, -7, 7}, {3}), f32({2, 2, -2}, {3}), "floor"),
                        f64({-1, -4, -4}, {3})));
  EXPECT_TRUE(
      all_close(remainder(f32({-3, 3, 5.5}, {3}), f32({2, -2, 2}, {3})), f64({1, -1, 1.5}, {3})));
  EXPECT_TRUE(
      all_close(fmod(f32({-3, 3, 5.5}, {3}), f32({2, -2, 2}, {3})), f64({-1, 1, 1.5}, {3})));
  EXPECT_TRUE(all_close(remainder(f32({1}, {1}), f32({0}, {1})), f64({kNaN}, {1})));
  // Integer division or modulo by zero raises, as PyTorch's "ZeroDivisionError".
  Tensor one = i64({1, 2}, {2}), zero = i64({1, 0}, {2});
  EXPECT_TRUE(throws_error([&] { floor_divide(one, zero); }, {"ZeroDivisionError"}));
  EXPECT_TRUE(throws_error([&] { remainder(one, zero); }, {"ZeroDivisionError"}));
  EXPECT_TRUE(throws_error([&] { fmod(one, zero); }, {"ZeroDivisionError"}));
  EXPECT_TRUE(throws_error([&] { div(one, zero, "trunc"); }, {"ZeroDivisionError"}));
  EXPECT_TRUE(throws_error([&] { div(one, zero, "floor"); }, {"ZeroDivisionError"}));
  EXPECT_TRUE(throws_error([&] { remainder(one, Scalar(0)); }, {"ZeroDivisionError"}));
  EXPECT_TRUE(throws_error([&] { div(one, one, "round"); },
                           {"rounding_mode", "'trunc'", "'floor'", "'round'"}));
}

// A broadcast -0.0 keeps its sign on the SIMD path (PyTorch: 2 / -0.0 is -inf, 2 * -0.0 is -0.0).
TEST(BinaryArith, BroadcastNegativeZeroKeepsItsSign) {
  const Tensor x = ramp({70}, kFloat32).abs() + 1.0;
  for (const Tensor& minus_zero : {scalar_tensor(-0.0, kFloat32), f32({-0.0}, {1})}) {
    for (double q : testing::values(div(x, minus_zero))) EXPECT_EQ(q, -kInf);
    for (double p : testing::values(mul(x, minus_zero))) {
      EXPECT_TRUE(p == 0 && std::signbit(p)) << p;
    }
  }
  for (double q : testing::values(div(x, Scalar(-0.0)))) EXPECT_EQ(q, -kInf);
}

TEST(BinaryArith, NaNPropagation) {
  Tensor a = f32({1, kNaN, kNaN, 3}, {4}), b = f32({kNaN, 2, kNaN, 1}, {4});
  EXPECT_TRUE(all_close(maximum(a, b), f64({kNaN, kNaN, kNaN, 3}, {4})));
  EXPECT_TRUE(all_close(minimum(a, b), f64({kNaN, kNaN, kNaN, 1}, {4})));
  // The SIMD path too (more elements than a vector).
  Tensor big = ramp({100}, kFloat32);
  std::vector<double> v = testing::values(big);
  v[37] = kNaN;
  Tensor withnan = f32(v, {100});
  std::vector<double> mx = testing::values(maximum(withnan, scalar_tensor(0.0)));
  EXPECT_TRUE(std::isnan(mx[37]));
  EXPECT_EQ(mx[36], std::max(v[36], 0.0));
}

TEST(BinaryArith, WrappedScalarsAndZeroDim) {
  Tensor a = ramp({3, 70}, kFloat32);
  // A float32 tensor + a Python-like float stays float32, on the SIMD path.
  Tensor r = add(a, Scalar(0.25));
  EXPECT_EQ(r.dtype(), kFloat32);
  EXPECT_TRUE(all_close(
      r, reference(a, scalar_tensor(0.25, kFloat64), [](double x, double y) { return x + y; })));
  EXPECT_TRUE(all_close(
      mul(Scalar(3) * a, Scalar(0.5)),
      reference(a, scalar_tensor(1.5, kFloat64), [](double x, double y) { return x * y; })));
  // 0-dim with 0-dim gives 0-dim; a 0-dim int64 doesn't raise an int32 tensor's dtype.
  Tensor z = add(scalar_tensor(2, kInt64), scalar_tensor(3, kInt64));
  EXPECT_EQ(z.dim(), 0);
  EXPECT_EQ(z.item<int64_t>(), 5);
  EXPECT_EQ(add(i32({1, 2}, {2}), scalar_tensor(3, kInt64)).dtype(), kInt32);
  // Integer alpha on integers; float alpha on floats.
  EXPECT_EQ(add(i64({1}, {1}), i64({2}, {1}), 3).item<int64_t>(), 7);
}

TEST(BinaryArith, InPlaceAndOut) {
  Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor row = f32({10, 20, 30}, {3});
  Tensor b = a.clone();
  b.add_(row);
  EXPECT_TRUE(all_close(b, f32({11, 22, 33, 14, 25, 36}, {2, 3})));
  b.sub_(row, 2);
  EXPECT_TRUE(all_close(b, f32({-9, -18, -27, -6, -15, -24}, {2, 3})));
  b.mul_(Scalar(-1));
  EXPECT_TRUE(all_close(b, f32({9, 18, 27, 6, 15, 24}, {2, 3})));
  b.div_(Scalar(3));
  EXPECT_TRUE(all_close(b, f32({3, 6, 9, 2, 5, 8}, {2, 3})));
  b.pow_(Scalar(2));
  EXPECT_TRUE(all_close(b, f32({9, 36, 81, 4, 25, 64}, {2, 3})));
  b.remainder_(Scalar(7));
  EXPECT_TRUE(all_close(b, f32({2, 1, 4, 4, 4, 1}, {2, 3})));
  b += 1;
  b *= b;
  EXPECT_TRUE(all_close(b, f32({9, 4, 25, 25, 25, 4}, {2, 3})));
  // A float32 self accumulates a float64 operand in its own dtype.
  Tensor c = f32({1, 2}, {2});
  c.add_(f64({0.5, 0.25}, {2}));
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_TRUE(all_close(c, f32({1.5, 2.25}, {2})));
  // An int tensor accepts int operands in place; an in-place write into a non-contiguous view.
  Tensor ints = i64({1, 2, 3, 4}, {2, 2});
  Tensor col = testing::strided(ints, {2}, {2});  // column 0
  col.add_(Scalar(10));
  EXPECT_EQ(ints.tolist<int64_t>(), (std::vector<int64_t>{11, 2, 13, 4}));

  // out=: written into the given tensor, resized when empty, cast to a wider dtype.
  static const auto& add_out = ops::OpRegistry::instance().get("add.out");
  Tensor out = empty({0}, kFloat64);
  ops::call(add_out, {a, row, Scalar(1), out});
  EXPECT_EQ(out.sizes(), IntList({2, 3}));
  EXPECT_TRUE(all_close(out, f64({11, 22, 33, 14, 25, 36}, {2, 3})));
  static const auto& div_out = ops::OpRegistry::instance().get("div.out");
  Tensor qout = empty({2}, kFloat32);
  ops::call(div_out, {i64({7, -7}, {2}), i64({2, 2}, {2}), std::string("floor"), qout});
  EXPECT_TRUE(all_close(qout, f32({3, -4}, {2})));
  // out= of an integral dtype can't take a float result.
  Tensor iout = empty({2}, kInt64);
  EXPECT_TRUE(throws_error(
      [&] {
        ops::call(div_out, {i64({7, -7}, {2}), i64({2, 2}, {2}), std::nullopt, iout});
      },
      {"float32", "int64"}));
}

TEST(BinaryArith, Errors) {
  // Shapes that don't broadcast: the message names both sizes and the dim.
  EXPECT_TRUE(throws_error(
      [] {
        add(ones({2, 3}), ones({2, 4}));
      },
      {"add", "3", "4", "dimension 1"}));
  EXPECT_TRUE(throws_error([] { mul(ones({5}), ones({3, 4})); }, {"5", "4", "dimension 1"}));
  // In place, self can't grow to the broadcast shape.
  Tensor small = ones({3});
  EXPECT_TRUE(throws_error([&] { small.add_(ones({2, 3})); }, {"add_", "[3]", "[2, 3]"}));
  // In place, an int tensor can't hold a float result.
  Tensor ints = i64({1, 2}, {2});
  EXPECT_TRUE(throws_error([&] { ints.add_(Scalar(1.5)); }, {"float32", "int64"}));
  EXPECT_TRUE(throws_error([&] { ints.div_(Scalar(2)); }, {"float32", "int64"}));
  // alpha rules (PyTorch's alpha_check).
  EXPECT_TRUE(throws_error([&] { add(ints, ints, 1.5); }, {"alpha must not be a floating point"}));
  EXPECT_TRUE(throws_error([] { add(ones({2}), ones({2}), true); }, {"Boolean alpha"}));
  // sub on bool.
  Tensor b = testing::bools({1, 0}, {2});
  EXPECT_TRUE(throws_error([&] { sub(b, b); }, {"two bool tensors"}));
  EXPECT_TRUE(throws_error([&] { sub(ints, b); }, {"with a bool tensor"}));
  EXPECT_TRUE(throws_error([&] { rsub(b, Scalar(1)); }, {"with a bool tensor"}));
  // Ops without bool kernels raise TypeError.
  EXPECT_THROW(remainder(b, b), TypeError);
  EXPECT_THROW(floor_divide(b, b), TypeError);
  EXPECT_THROW(pow(b, b), TypeError);
  // Negative integer powers of integers (Python-number exponent).
  EXPECT_TRUE(throws_error([&] { pow(ints, Scalar(-1)); }, {"negative integer powers"}));
  EXPECT_TRUE(all_close(pow(ints, Scalar(-1.0)), f32({1, 0.5}, {2})));
}

TEST(BinaryArith, MetaDevice) {
  // Meta inputs give shapes and dtypes without data.
  Tensor a = empty({4, 1}, TensorOptions().dtype(kInt32).device(Device::meta()));
  Tensor b = empty({3}, TensorOptions().dtype(kFloat64).device(Device::meta()));
  Tensor r = add(a, b);
  EXPECT_TRUE(r.device().is_meta());
  EXPECT_EQ(r.sizes(), IntList({4, 3}));
  EXPECT_EQ(r.dtype(), kFloat64);
  EXPECT_EQ(lt(a, Scalar(2.5)).dtype(), kBool);
  EXPECT_TRUE(throws_error([&] { add(a, empty({5}, TensorOptions().device(Device::meta()))); },
                           {"3", "5"}) ||
              throws_error([&] { add(b, empty({5}, TensorOptions().device(Device::meta()))); },
                           {"3", "5"}));
}

TEST(BinaryArith, ErrorsFromParallelLoops) {
  // A zero divisor deep inside a tensor large enough to run on several threads still raises.
  Tensor a = ramp({200000}, kInt64, 1, 100, 1);
  Tensor b = ramp({200000}, kInt64, 1, 100, 2);
  b.data_ptr<int64_t>()[150000] = 0;
  EXPECT_TRUE(throws_error([&] { floor_divide(a, b); }, {"ZeroDivisionError"}));
  EXPECT_TRUE(throws_error([&] { remainder(a, b); }, {"ZeroDivisionError"}));
}

TEST(BinaryArith, OutIntoNonContiguous) {
  // out= into a transposed view writes through its strides.
  Tensor base = zeros({3, 2});
  Tensor out = testing::transposed(base);  // [2, 3] view of base
  static const auto& mul_out = ops::OpRegistry::instance().get("mul.out");
  ops::call(mul_out, {f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({10}, {1}), out});
  EXPECT_TRUE(all_close(base, f32({10, 40, 20, 50, 30, 60}, {3, 2})));
  // In place on a transposed view with a broadcast operand.
  Tensor base2 = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor view = testing::transposed(base2);
  view.add_(f32({100, 200, 300}, {3}));
  EXPECT_TRUE(all_close(base2, f32({101, 102, 203, 204, 305, 306}, {3, 2})));
}

TEST(BinaryArith, LargeParallelAdd) {
  // Large enough to split across threads, with a broadcast row and a wrapped scalar.
  Tensor a = ramp({300, 1000}, kFloat32, -1, 1, 1), row = ramp({1000}, kFloat32, -1, 1, 2);
  auto plus = [](double x, double y) { return x + y; };
  EXPECT_TRUE(all_close(add(a, row), reference(a, row, plus)));
  EXPECT_TRUE(all_close(mul(a, Scalar(2.0)), reference(a, scalar_tensor(2.0, kFloat64),
                                                       [](double x, double y) { return x * y; })));
}

}  // namespace
}  // namespace kiln
