// Elementwise unary ops against float64 references computed here with <cmath>.
#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace kiln {
namespace {

using testing::all_close;
using testing::throws_error;
using RefFn = std::function<double(double)>;
using KilnFn = std::function<Tensor(const Tensor&)>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A tensor of the given dtype holding values (written as float64, then converted).
Tensor vals(const std::vector<double>& v, DType dtype = kFloat32) {
  const int64_t n = static_cast<int64_t>(v.size());
  Tensor t = empty({n}, kFloat64);
  std::copy(v.begin(), v.end(), static_cast<double*>(t.data_ptr()));
  return t.to(dtype);
}
Tensor vals(const std::vector<double>& v, IntList shape, DType dtype) {
  Tensor t = empty(shape, kFloat64);
  std::copy(v.begin(), v.end(), static_cast<double*>(t.data_ptr()));
  return t.to(dtype);
}
Tensor ints(const std::vector<double>& v) { return vals(v, kInt64); }
Tensor bool_tensor(const std::vector<double>& v) { return vals(v, kBool); }

// The transpose of a 2-D tensor as a strided view of its storage (view ops live elsewhere).
Tensor transposed(const Tensor& t) {
  return from_blob(t.data_ptr(), {t.size(1), t.size(0)}, {1, t.size(1)}, t.dtype(),
                   [keep = t](void*) {});
}

// The reference applied to x's values, as a float64 tensor of x's shape.
Tensor reference(const Tensor& x, const RefFn& f) {
  std::vector<double> v = testing::values(x);
  for (double& e : v) e = f(e);
  return vals(v, x.sizes(), kFloat64);
}

Tensor sample(IntList sizes, DType dtype, double low, double high, uint64_t seed = 0) {
  std::vector<double> v(static_cast<size_t>(
      std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<>())));
  uint64_t s = 0x1234567 + seed;
  for (double& e : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    e = low + (high - low) * static_cast<double>(s >> 11) * 0x1.0p-53;
  }
  return vals(v, sizes, dtype);
}

double erfinv_ref(double y) {  // bisection on erf: slow but independent of the kernel's method
  if (std::isnan(y) || std::abs(y) > 1) return kNaN;
  if (std::abs(y) == 1) return std::copysign(kInf, y);
  double lo = -6, hi = 6;
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

struct FloatCase {
  const char* name;
  KilnFn fn;
  RefFn ref;
  double low, high;
  double rtol32 = 2e-6;  // SLEEF's 1-ulp functions, plus composition for activations
};

const std::vector<FloatCase>& float_cases() {
  static const std::vector<FloatCase> cases = {
      {"exp", [](const Tensor& t) { return exp(t); }, [](double x) { return std::exp(x); }, -10,
       10},
      {"exp2", [](const Tensor& t) { return exp2(t); }, [](double x) { return std::exp2(x); }, -10,
       10},
      {"expm1", [](const Tensor& t) { return expm1(t); }, [](double x) { return std::expm1(x); },
       -3, 3},
      {"log", [](const Tensor& t) { return log(t); }, [](double x) { return std::log(x); }, 0.1, 5},
      {"log2", [](const Tensor& t) { return log2(t); }, [](double x) { return std::log2(x); }, 0.1,
       5},
      {"log10", [](const Tensor& t) { return log10(t); }, [](double x) { return std::log10(x); },
       0.1, 5},
      {"log1p", [](const Tensor& t) { return log1p(t); }, [](double x) { return std::log1p(x); },
       -0.9, 5},
      {"sqrt", [](const Tensor& t) { return sqrt(t); }, [](double x) { return std::sqrt(x); }, 0,
       5},
      {"rsqrt", [](const Tensor& t) { return rsqrt(t); }, [](double x) { return 1 / std::sqrt(x); },
       0.1, 5},
      {"sin", [](const Tensor& t) { return sin(t); }, [](double x) { return std::sin(x); }, -3, 3},
      {"cos", [](const Tensor& t) { return cos(t); }, [](double x) { return std::cos(x); }, -3, 3},
      {"tan", [](const Tensor& t) { return tan(t); }, [](double x) { return std::tan(x); }, -1.4,
       1.4},
      {"asin", [](const Tensor& t) { return asin(t); }, [](double x) { return std::asin(x); },
       -0.95, 0.95},
      {"acos", [](const Tensor& t) { return acos(t); }, [](double x) { return std::acos(x); },
       -0.95, 0.95},
      {"atan", [](const Tensor& t) { return atan(t); }, [](double x) { return std::atan(x); }, -5,
       5},
      {"sinh", [](const Tensor& t) { return sinh(t); }, [](double x) { return std::sinh(x); }, -5,
       5},
      {"cosh", [](const Tensor& t) { return cosh(t); }, [](double x) { return std::cosh(x); }, -5,
       5},
      {"tanh", [](const Tensor& t) { return tanh(t); }, [](double x) { return std::tanh(x); }, -5,
       5},
      {"asinh", [](const Tensor& t) { return asinh(t); }, [](double x) { return std::asinh(x); },
       -5, 5},
      {"acosh", [](const Tensor& t) { return acosh(t); }, [](double x) { return std::acosh(x); }, 1,
       5},
      {"atanh", [](const Tensor& t) { return atanh(t); }, [](double x) { return std::atanh(x); },
       -0.9, 0.9},
      {"erf", [](const Tensor& t) { return erf(t); }, [](double x) { return std::erf(x); }, -3, 3},
      {"erfc", [](const Tensor& t) { return erfc(t); }, [](double x) { return std::erfc(x); }, -3,
       3, 5e-6},
      {"erfinv", [](const Tensor& t) { return erfinv(t); }, erfinv_ref, -0.99, 0.99},
      {"sigmoid", [](const Tensor& t) { return sigmoid(t); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, -10, 10},
      {"reciprocal", [](const Tensor& t) { return reciprocal(t); }, [](double x) { return 1 / x; },
       0.2, 3},
      {"frac", [](const Tensor& t) { return frac(t); }, [](double x) { return x - std::trunc(x); },
       -5, 5, 1e-5},
      {"silu", [](const Tensor& t) { return silu(t); },
       [](double x) { return x / (1 + std::exp(-x)); }, -10, 10, 1e-5},
      {"mish", [](const Tensor& t) { return mish(t); },
       [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }, -10, 10, 1e-5},
      {"hardsigmoid", [](const Tensor& t) { return hardsigmoid(t); },
       [](double x) { return std::min(std::max(x + 3, 0.0), 6.0) / 6; }, -5, 5},
      {"hardswish", [](const Tensor& t) { return hardswish(t); },
       [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; }, -5, 5},
      {"selu", [](const Tensor& t) { return selu(t); },
       [](double x) {
         const double alpha = 1.6732632423543772848170429916717;
         const double scale = 1.0507009873554804934193349852946;
         return x > 0 ? scale * x : scale * alpha * (std::exp(x) - 1);
       },
       -5, 5, 1e-5},
      {"gelu", [](const Tensor& t) { return gelu(t); },
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -5, 5, 1e-5},
      {"gelu_tanh", [](const Tensor& t) { return gelu(t, "tanh"); },
       [](double x) {
         return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
       },
       -5, 5, 1e-5},
      {"softplus", [](const Tensor& t) { return softplus(t); },
       [](double x) { return x > 20 ? x : std::log1p(std::exp(x)); }, -30, 30, 1e-5},
      {"softplus_beta", [](const Tensor& t) { return softplus(t, 2.0, 3.0); },
       [](double x) { return 2 * x > 3 ? x : std::log1p(std::exp(2 * x)) / 2; }, -5, 5, 1e-5},
      {"leaky_relu", [](const Tensor& t) { return leaky_relu(t, 0.2); },
       [](double x) { return x > 0 ? x : 0.2 * x; }, -5, 5},
      {"elu", [](const Tensor& t) { return elu(t, 0.5, 2.0, 1.5); },
       [](double x) { return x > 0 ? 2 * x : 0.5 * 2 * std::expm1(1.5 * x); }, -5, 5, 1e-5},
      {"logit", [](const Tensor& t) { return logit(t); },
       [](double x) { return std::log(x / (1 - x)); }, 0.05, 0.95, 1e-5},
      {"logit_eps", [](const Tensor& t) { return logit(t, 0.2); },
       [](double x) {
         double z = std::min(std::max(x, 0.2), 0.8);
         return std::log(z / (1 - z));
       },
       -0.5, 1.5, 1e-5},
      {"hardtanh", [](const Tensor& t) { return hardtanh(t, -0.5, 2.0); },
       [](double x) { return std::min(std::max(x, -0.5), 2.0); }, -5, 5},
      {"relu6", [](const Tensor& t) { return relu6(t); },
       [](double x) { return std::min(std::max(x, 0.0), 6.0); }, -3, 9},
      {"relu", [](const Tensor& t) { return relu(t); }, [](double x) { return x < 0 ? 0 : x; }, -3,
       3},
      {"neg", [](const Tensor& t) { return neg(t); }, [](double x) { return -x; }, -3, 3},
      {"abs", [](const Tensor& t) { return abs(t); }, [](double x) { return std::abs(x); }, -3, 3},
      {"sign", [](const Tensor& t) { return sign(t); },
       [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }, -3, 3},
      {"square", [](const Tensor& t) { return square(t); }, [](double x) { return x * x; }, -3, 3},
      {"floor", [](const Tensor& t) { return floor(t); }, [](double x) { return std::floor(x); },
       -5, 5},
      {"ceil", [](const Tensor& t) { return ceil(t); }, [](double x) { return std::ceil(x); }, -5,
       5},
      {"trunc", [](const Tensor& t) { return trunc(t); }, [](double x) { return std::trunc(x); },
       -5, 5},
      {"round", [](const Tensor& t) { return round(t); },
       [](double x) { return std::nearbyint(x); }, -5, 5},
  };
  return cases;
}

// Every op on float32 and float64, at sizes around the SIMD widths (tails), 2-D and transposed.
TEST(UnaryOps, FloatAndDoubleMatchReference) {
  for (const FloatCase& c : float_cases()) {
    for (DType dtype : {kFloat32, kFloat64}) {
      const double rtol = dtype == kFloat32 ? c.rtol32 : 1e-12;
      const double atol = dtype == kFloat32 ? 1e-6 : 1e-13;
      std::vector<Tensor> inputs;
      for (int64_t n : {1, 3, 15, 16, 17, 33, 1000})
        inputs.push_back(sample({n}, dtype, c.low, c.high, n));
      inputs.push_back(sample({7, 9}, dtype, c.low, c.high, 2));
      inputs.push_back(transposed(sample({9, 7}, dtype, c.low, c.high, 3)));  // non-contiguous
      for (const Tensor& x : inputs) {
        Tensor y = c.fn(x);
        ASSERT_EQ(y.dtype(), dtype) << c.name;
        EXPECT_TRUE(all_close(y, reference(x, c.ref), rtol, atol))
            << c.name << " " << dtype_name(dtype) << " size " << x.numel();
      }
    }
  }
}

// float32 exp, tanh, erf, sigmoid, silu and gelu use approximations of their own (not SLEEF):
// check them on a dense grid across every branch boundary.
TEST(UnaryOps, Float32ApproximationsOnDenseGrid) {
  const int64_t n = 240001;
  std::vector<double> grid(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    grid[static_cast<size_t>(i)] = -12.0 + 24.0 * double(i) / double(n - 1);
  Tensor x = vals(grid);
  for (const FloatCase& c : float_cases()) {
    const std::string name = c.name;
    if (name != "exp" && name != "tanh" && name != "erf" && name != "sigmoid" && name != "silu" &&
        name != "gelu" && name != "gelu_tanh") {
      continue;
    }
    EXPECT_TRUE(all_close(c.fn(x), reference(x, c.ref).to(kFloat32), 1e-6, 1e-6)) << name;
  }
}

// Results for NaN, infinities, signed zeros and magnitudes where exp overflows, through the SIMD
// body and the scalar tail (the specials repeat past several vector widths).
TEST(UnaryOps, SpecialValues) {
  const std::vector<double> specials = {kNaN, kInf,  -kInf, 0.0,  -0.0, 100.0, -100.0,
                                        1e30, -1e30, 1.0,   -1.0, 0.5,  -0.5};
  std::vector<double> v;
  for (int r = 0; r < 5; ++r) v.insert(v.end(), specials.begin(), specials.end());
  for (const FloatCase& c : float_cases()) {
    for (DType dtype : {kFloat32, kFloat64}) {
      Tensor x = vals(v, dtype);
      Tensor y = c.fn(x);
      // Round the float64 reference to the dtype so overflow to inf matches.
      Tensor ref = reference(x, c.ref).to(dtype);
      EXPECT_TRUE(all_close(y, ref, dtype == kFloat32 ? 1e-5 : 1e-12, 1e-30))
          << c.name << " " << dtype_name(dtype);
    }
  }
}

TEST(UnaryOps, SignedZerosAndNaN) {
  Tensor x = vals({-0.0, 0.0, NAN, -2.0, 3.0});
  Tensor a = abs(x);
  EXPECT_FALSE(std::signbit(a.tolist<float>()[0]));                   // abs(-0.0) is +0.0
  EXPECT_TRUE(all_close(sign(x), vals({0.0, 0.0, 0.0, -1.0, 1.0})));  // PyTorch: sign(nan) = 0
  Tensor r = reciprocal(vals({0.0, -0.0}));
  EXPECT_TRUE(all_close(r, vals({INFINITY, -INFINITY})));
  EXPECT_TRUE(all_close(relu(vals({NAN, -1.0, 2.0})), vals({NAN, 0.0, 2.0})));
  EXPECT_TRUE(all_close(hardtanh(vals({NAN, -3.0, 3.0})), vals({NAN, -1.0, 1.0})));
  // round is half to even.
  EXPECT_TRUE(all_close(round(vals({0.5, 1.5, 2.5, -0.5, -2.5, 2.6})),
                        vals({0.0, 2.0, 2.0, -0.0, -2.0, 3.0})));
}

TEST(UnaryOps, HalfAndBFloat16ComputeThroughFloat) {
  Tensor x = sample({37}, kFloat32, -3, 3);
  for (DType dtype : {kFloat16, kBFloat16}) {
    Tensor xh = x.to(dtype);
    const double rtol = dtype == kFloat16 ? 2e-3 : 1.6e-2;
    Tensor e = exp(xh);
    EXPECT_EQ(e.dtype(), dtype);
    EXPECT_TRUE(all_close(e, reference(xh, [](double v) { return std::exp(v); }), rtol, 1e-3));
    Tensor g = gelu(xh);
    EXPECT_TRUE(all_close(
        g, reference(xh, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }),
        rtol, 1e-2));
    EXPECT_TRUE(all_close(abs(xh), reference(xh, [](double v) { return std::abs(v); })));
    EXPECT_TRUE(all_close(floor(xh), reference(xh, [](double v) { return std::floor(v); })));
  }
}

TEST(UnaryOps, IntegerInputsPromoteToFloat32) {
  Tensor i = ints({0, 1, 2, 4});  // int64
  const std::vector<std::pair<KilnFn, RefFn>> cases = {
      {[](const Tensor& t) { return exp(t); }, [](double x) { return std::exp(x); }},
      {[](const Tensor& t) { return sqrt(t); }, [](double x) { return std::sqrt(x); }},
      {[](const Tensor& t) { return sin(t); }, [](double x) { return std::sin(x); }},
      {[](const Tensor& t) { return log(t); }, [](double x) { return std::log(x); }},
      {[](const Tensor& t) { return sigmoid(t); }, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {[](const Tensor& t) { return reciprocal(t); }, [](double x) { return 1 / x; }},
      {[](const Tensor& t) { return rsqrt(t); }, [](double x) { return 1 / std::sqrt(x); }},
      {[](const Tensor& t) { return erfinv(t); }, erfinv_ref},
      {[](const Tensor& t) { return logit(t); }, [](double x) { return std::log(x / (1 - x)); }},
  };
  for (DType dtype : {kInt64, kInt32, kUInt8, kInt8}) {
    for (const auto& [fn, ref] : cases) {
      Tensor y = fn(i.to(dtype));
      EXPECT_EQ(y.dtype(), kFloat32);
      EXPECT_TRUE(all_close(y, reference(i, ref).to(kFloat32), 1e-6, 1e-7));
    }
  }
  Tensor b = bool_tensor({1, 0});
  Tensor eb = exp(b);
  EXPECT_EQ(eb.dtype(), kFloat32);
  EXPECT_TRUE(all_close(eb, vals({M_E, 1.0})));
}

TEST(UnaryOps, IntegerInputsKeepDtype) {
  Tensor i = ints({-3, -1, 0, 2, 5});
  for (DType dtype : {kInt64, kInt32, kInt16, kInt8}) {
    Tensor x = i.to(dtype);
    auto check = [&](const Tensor& y, std::vector<double> expected) {
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_EQ(testing::values(y), expected) << dtype_name(dtype);
    };
    check(neg(x), {3, 1, 0, -2, -5});
    check(abs(x), {3, 1, 0, 2, 5});
    check(sign(x), {-1, -1, 0, 1, 1});
    check(square(x), {9, 1, 0, 4, 25});
    check(relu(x), {0, 0, 0, 2, 5});
    check(relu6(x), {0, 0, 0, 2, 5});
    check(hardtanh(x, -2, 3), {-2, -1, 0, 2, 3});
    for (const Tensor& r : {floor(x), ceil(x), round(x), trunc(x), nan_to_num(x)}) {
      check(r, {-3, -1, 0, 2, 5});
    }
  }
  Tensor u = vals({0, 3, 200}, kUInt8);
  EXPECT_EQ(testing::values(neg(u)), (std::vector<double>{0, 253, 56}));  // wraps
  EXPECT_EQ(testing::values(abs(u)), (std::vector<double>{0, 3, 200}));
  EXPECT_TRUE(throws_error([&] { hardtanh(u, -1, 1); }, {"hardtanh", "uint8"}));
}

TEST(UnaryOps, BoolInputs) {
  Tensor b = bool_tensor({1, 0, 1});
  Tensor s = square(b);
  EXPECT_EQ(s.dtype(), kInt64);  // pow(bool, 2) promotes, as in PyTorch
  EXPECT_EQ(testing::values(s), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(sign(b).dtype(), kBool);
  EXPECT_EQ(testing::values(sign(b)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(nan_to_num(b).dtype(), kBool);
  for (const auto& [name, fn] : std::vector<std::pair<std::string, KilnFn>>{
           {"neg", [](const Tensor& t) { return neg(t); }},
           {"abs", [](const Tensor& t) { return abs(t); }},
           {"floor", [](const Tensor& t) { return floor(t); }},
           {"relu", [](const Tensor& t) { return relu(t); }},
           {"hardtanh", [](const Tensor& t) { return hardtanh(t); }}}) {
    EXPECT_THROW(fn(b), TypeError) << name;
    const KilnFn& f = fn;  // clang 14 cannot capture structured bindings
    EXPECT_TRUE(throws_error([&] { f(b); }, {name})) << name;
  }
}

TEST(UnaryOps, FloatOnlyOpsRejectIntegers) {
  Tensor i = ints({1, 2});
  for (const auto& [name, fn] : std::vector<std::pair<std::string, KilnFn>>{
           {"gelu", [](const Tensor& t) { return gelu(t); }},
           {"silu", [](const Tensor& t) { return silu(t); }},
           {"mish", [](const Tensor& t) { return mish(t); }},
           {"softplus", [](const Tensor& t) { return softplus(t); }},
           {"elu", [](const Tensor& t) { return elu(t); }},
           {"selu", [](const Tensor& t) { return selu(t); }},
           {"leaky_relu", [](const Tensor& t) { return leaky_relu(t); }},
           {"hardsigmoid", [](const Tensor& t) { return hardsigmoid(t); }},
           {"hardswish", [](const Tensor& t) { return hardswish(t); }},
           {"frac", [](const Tensor& t) { return frac(t); }},
           {"round", [](const Tensor& t) { return round(t, 2); }}}) {
    EXPECT_THROW(fn(i), TypeError) << name;
    const KilnFn& f = fn;  // clang 14 cannot capture structured bindings
    EXPECT_TRUE(throws_error([&] { f(i); }, {name, "int64"}));
  }
}

TEST(UnaryOps, PredicatesAndLogicalNot) {
  Tensor x = vals({NAN, INFINITY, -INFINITY, 0.0, -1.5});
  auto bools = [](const Tensor& t) {
    EXPECT_EQ(t.dtype(), kBool);
    return testing::values(t);
  };
  EXPECT_EQ(bools(isnan(x)), (std::vector<double>{1, 0, 0, 0, 0}));
  EXPECT_EQ(bools(isinf(x)), (std::vector<double>{0, 1, 1, 0, 0}));
  EXPECT_EQ(bools(isfinite(x)), (std::vector<double>{0, 0, 0, 1, 1}));
  EXPECT_EQ(bools(logical_not(x)), (std::vector<double>{0, 0, 0, 1, 0}));
  EXPECT_EQ(bools(isnan(x.to(kFloat64))), (std::vector<double>{1, 0, 0, 0, 0}));
  EXPECT_EQ(bools(isinf(x.to(kFloat16))), (std::vector<double>{0, 1, 1, 0, 0}));
  Tensor i = ints({0, 7, -2});
  EXPECT_EQ(bools(isnan(i)), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(bools(isinf(i)), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(bools(isfinite(i)), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(bools(logical_not(i)), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(bools(logical_not(bool_tensor({1, 0}))), (std::vector<double>{0, 1}));
  // In place keeps the input dtype: logical_not_ on float writes 0/1.
  Tensor f = vals({0.0, 2.0});
  f.logical_not_();
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(testing::values(f), (std::vector<double>{1, 0}));
}

TEST(UnaryOps, BitwiseNot) {
  EXPECT_EQ(testing::values(bitwise_not(ints({0, 5, -1}))), (std::vector<double>{-1, -6, 0}));
  Tensor u = bitwise_not(vals({0, 255, 15}, kUInt8));
  EXPECT_EQ(u.dtype(), kUInt8);
  EXPECT_EQ(testing::values(u), (std::vector<double>{255, 0, 240}));
  Tensor b = bitwise_not(bool_tensor({1, 0}));
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(testing::values(b), (std::vector<double>{0, 1}));
  EXPECT_THROW(bitwise_not(vals({1.0})), TypeError);
  EXPECT_TRUE(throws_error([] { bitwise_not(vals({1.0})); }, {"bitwise_not", "float32"}));
}

TEST(UnaryOps, RoundDecimals) {
  Tensor x = vals({1234.5678, -0.125, 2.5, 0.0151}, kFloat64);
  EXPECT_TRUE(all_close(round(x, 2), vals({1234.57, -0.12, 2.5, 0.02}, kFloat64), 1e-12));
  EXPECT_TRUE(all_close(round(x, -2), vals({1200.0, -0.0, 0.0, 0.0}, kFloat64), 1e-12));
  Tensor f = vals({1.25f, 2.75f});
  f.round_(1);
  EXPECT_TRUE(all_close(f, vals({1.2, 2.8}), 1e-6));
  Tensor g = vals({1.5f, 2.5f});
  g.round_();
  EXPECT_TRUE(all_close(g, vals({2.0, 2.0})));
}

TEST(UnaryOps, NanToNum) {
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor x = vals({NAN, INFINITY, -INFINITY, 1.5f}).to(dtype);
    double max = dtype == kFloat32   ? std::numeric_limits<float>::max()
                 : dtype == kFloat64 ? std::numeric_limits<double>::max()
                 : dtype == kFloat16 ? 65504.0
                                     : 3.3895313892515355e38;
    Tensor y = nan_to_num(x);
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_EQ(testing::values(y), (std::vector<double>{0, max, -max, 1.5})) << dtype_name(dtype);
    EXPECT_EQ(testing::values(nan_to_num(x, 1.0, 2.0, -3.0)), (std::vector<double>{1, 2, -3, 1.5}));
    EXPECT_EQ(testing::values(nan_to_num(x, std::nullopt, 7.0)),
              (std::vector<double>{0, 7, -max, 1.5}));
  }
  // Long enough for the SIMD path.
  std::vector<double> v(37, 2.0);
  v[3] = NAN;
  v[20] = INFINITY;
  v[36] = -INFINITY;
  Tensor y = nan_to_num(vals(v), 9.0, 8.0, -8.0);
  v[3] = 9;
  v[20] = 8;
  v[36] = -8;
  EXPECT_TRUE(all_close(y, vals(v)));
}

TEST(UnaryOps, GeluRejectsUnknownApproximation) {
  EXPECT_TRUE(throws_error([] { gelu(vals({1.0}), "fast"); }, {"gelu", "fast"}));
}

TEST(UnaryOps, InPlace) {
  Tensor x = sample({5, 7}, kFloat32, -2, 2);
  Tensor expected = reference(x, [](double v) { return std::exp(v); });
  Tensor same = x;
  void* data = x.data_ptr();
  x.exp_();
  EXPECT_EQ(x.data_ptr(), data);
  EXPECT_TRUE(all_close(same, expected, 2e-6));

  // In place on a transposed (non-contiguous) tensor.
  Tensor t = transposed(sample({6, 4}, kFloat64, -2, 2));
  Tensor tref = reference(t, [](double v) { return std::tanh(v); });
  t.tanh_();
  EXPECT_TRUE(all_close(t, tref, 1e-12));

  // Parameterized in-place ops through the registry, as Tensor methods would call them.
  Tensor h = sample({33}, kFloat32, -3, 3);
  Tensor href = reference(h, [](double v) { return v > 0 ? v : 0.1 * v; });
  ops::call(ops::OpRegistry::instance().get("leaky_relu_"), {h, Scalar(0.1)});
  EXPECT_TRUE(all_close(h, href, 1e-6));

  Tensor i = ints({-2, 3});
  i.neg_();
  EXPECT_EQ(testing::values(i), (std::vector<double>{2, -3}));
  i.abs_();
  EXPECT_EQ(testing::values(i), (std::vector<double>{2, 3}));
}

TEST(UnaryOps, InPlaceRejectsFloatResultOnIntegers) {
  Tensor i = ints({1, 2});
  EXPECT_THROW(i.exp_(), TypeError);
  EXPECT_TRUE(throws_error([&] { i.exp_(); }, {"exp_", "float32", "int64"}));
  EXPECT_THROW(i.sigmoid_(), TypeError);
  Tensor b = bool_tensor({1});
  EXPECT_THROW(b.square_(), TypeError);  // int64 result into bool
}

// Every in-place op of the family exists and matches its functional form.
TEST(UnaryOps, EveryInPlaceVariantMatchesFunctional) {
  const auto& reg = ops::OpRegistry::instance();
  for (const char* name :
       {"neg",       "abs",        "sign",   "exp",        "exp2",     "expm1",
        "log",       "log2",       "log10",  "log1p",      "sqrt",     "rsqrt",
        "sin",       "cos",        "tan",    "asin",       "acos",     "atan",
        "sinh",      "cosh",       "tanh",   "asinh",      "acosh",    "atanh",
        "erf",       "erfc",       "erfinv", "sigmoid",    "logit",    "relu",
        "relu6",     "gelu",       "silu",   "mish",       "hardtanh", "hardsigmoid",
        "hardswish", "leaky_relu", "elu",    "selu",       "floor",    "ceil",
        "round",     "trunc",      "frac",   "reciprocal", "square",   "logical_not",
        "nan_to_num"}) {
    Tensor x = sample({3, 5}, kFloat32, 1.1, 1.9);  // inside every op's domain
    Tensor expected = ops::call1(reg.get(name), {x});
    ops::call(reg.get(std::string(name) + "_"), {x});
    EXPECT_TRUE(all_close(x, expected, 0, 0)) << name;
  }
  Tensor i = ints({3, 5});
  ops::call(reg.get("bitwise_not_"), {i});
  EXPECT_EQ(testing::values(i), (std::vector<double>{-4, -6}));
  EXPECT_EQ(reg.find("isnan_"), nullptr);
  EXPECT_EQ(reg.find("softplus_"), nullptr);
  EXPECT_NE(reg.find("round_.decimals"), nullptr);
  EXPECT_NE(reg.find("round.decimals_out"), nullptr);
}

TEST(UnaryOps, OutVariant) {
  const auto& reg = ops::OpRegistry::instance();
  Tensor x = sample({4, 6}, kFloat32, -2, 2);
  // A float64 out: the float32 result is cast into it; the out tensor is resized from [2].
  Tensor out = empty({2}, kFloat64);
  ops::call(reg.get("exp.out"), {x, out});
  EXPECT_EQ(out.sizes(), x.sizes());
  EXPECT_EQ(out.dtype(), kFloat64);
  EXPECT_TRUE(all_close(out, reference(x, [](double v) { return std::exp(v); }), 2e-6));

  Tensor out2 = empty({4, 6}, kFloat32);
  ops::call(reg.get("gelu.out"), {x, "tanh", out2});
  EXPECT_TRUE(all_close(
      out2,
      reference(x,
                [](double v) {
                  return 0.5 * v *
                         (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
                }),
      1e-5, 1e-6));

  Tensor out3 = empty({4, 6}, kFloat32);
  ops::call(reg.get("round.decimals_out"), {x, int64_t{1}, out3});
  EXPECT_TRUE(
      all_close(out3, reference(x, [](double v) { return std::nearbyint(v * 10) / 10; }), 1e-6));

  Tensor bout = empty({4, 6}, kBool);
  ops::call(reg.get("isnan.out"), {x, bout});
  EXPECT_EQ(testing::values(bout), std::vector<double>(24, 0.0));

  // A float result cannot go into an integer out.
  Tensor iout = empty({4, 6}, kInt64);
  EXPECT_THROW(ops::call(reg.get("sin.out"), {x, iout}), TypeError);
}

TEST(UnaryOps, LayoutZeroDimAndEmpty) {
  Tensor t = transposed(sample({5, 3}, kFloat32, -1, 1));  // [3, 5], strides [1, 3]
  Tensor y = sigmoid(t);
  EXPECT_EQ(y.sizes(), t.sizes());
  EXPECT_EQ(y.strides(), t.strides());  // the output follows the input's layout
  EXPECT_TRUE(all_close(y, reference(t, [](double v) { return 1 / (1 + std::exp(-v)); }), 2e-6));

  Tensor s = scalar_tensor(0.5);
  Tensor e = exp(s);
  EXPECT_EQ(e.dim(), 0);
  EXPECT_NEAR(e.item<double>(), std::exp(0.5), 1e-6);
  EXPECT_EQ(gelu(s).dim(), 0);

  Tensor z = empty({0, 4});
  Tensor ez = exp(z);
  EXPECT_EQ(ez.sizes(), z.sizes());
  EXPECT_EQ(isnan(z).dtype(), kBool);
  EXPECT_EQ(exp(empty({0}, kInt64)).dtype(), kFloat32);
}

TEST(UnaryOps, MetaTensors) {
  Tensor m = empty({2, 3}, TensorOptions(kInt64).device(Device::meta()));
  Tensor y = exp(m);
  EXPECT_TRUE(y.is_meta());
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_EQ(y.sizes(), m.sizes());
  EXPECT_EQ(isfinite(m).dtype(), kBool);
  EXPECT_THROW(gelu(m), TypeError);
}

// Large enough to split across threads.
TEST(UnaryOps, LargeTensorsMatchReference) {
  Tensor x = sample({1 << 20}, kFloat32, -5, 5);
  EXPECT_TRUE(all_close(exp(x), reference(x, [](double v) { return std::exp(v); }), 2e-6));
  EXPECT_TRUE(all_close(tanh(x), reference(x, [](double v) { return std::tanh(v); }), 2e-6, 1e-7));
}

}  // namespace
}  // namespace kiln
