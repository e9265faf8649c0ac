// Guards: each kind recompiles with its reason logged; the cache size limit falls back to eager
// with one warning.
#include "capture/capture_test_util.h"

namespace kiln {
namespace {

using testing::all_close;
using testing::LogCapture;
using testing::WarningCapture;

Tensor reference_double_plus_one(const Tensor& x) {
  std::vector<double> v = x.contiguous().tolist<double>();
  for (double& e : v) e = 2 * e + 1;
  return from_vector(v, x.sizes()).to(x.dtype());
}

// A number wrapped as a 0-dim tensor (what ops make of a Scalar) traces as one: it does not
// promote an integer tensor past the default float, as a 0-dim float64 tensor does, and the
// guards tell the two apart.
TEST(CompileGuards, WrappedNumbersTraceAsNumbers) {
  LogCapture logs("recompiles");
  auto f = compile([](const Tensor& x, const Tensor& s) { return x * s; });
  const Tensor x = arange(4);
  const Tensor number = wrapped_scalar(2.5), tensor = scalar_tensor(2.5, kFloat64);
  EXPECT_EQ(f(x, number).dtype(), x.mul(number).dtype());
  EXPECT_EQ(f(x, number).dtype(), kFloat32);
  EXPECT_EQ(f(x, tensor).dtype(), kFloat64);
  EXPECT_EQ(logs.count("arg 1: wrapped number changed from true to false"), 1u) << logs.all();
  // An op whose meta accepts only a wrapped number of another dtype (lerp's weight) compiles.
  auto g = compile([](const Tensor& a, const Tensor& b, const Tensor& w) { return a.lerp(b, w); });
  const Tensor a = arange(4).to(kFloat32), b = ones({4});
  EXPECT_TRUE(all_close(g(a, b, wrapped_scalar(0.25)), a.lerp(b, 0.25), 1e-6, 1e-6));
}

TEST(CompileGuards, EachTensorGuardRecompilesWithItsReason) {
  LogCapture logs("recompiles");
  // Static guards only: with automatic dynamic the size change would make dim 1 a symbol.
  CompileOptions o;
  o.dynamic = false;
  auto f = compile([](const Tensor& x) { return x * 2.0 + 1.0; }, o);
  const Tensor base = arange(8).to(kFloat32).reshape({2, 4});
  struct Case {
    Tensor input;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {base, ""},
      {arange(6).to(kFloat32).reshape({2, 3}), "arg 0: size of dim 1 changed from 4 to 3"},
      {arange(6).to(kFloat64).reshape({2, 3}), "arg 0: dtype changed from float32 to float64"},
      {arange(6).to(kFloat64).reshape({3, 2}).t(), "arg 0: strides changed from [3, 1] to [1, 2]"},
      {arange(6).to(kFloat64).reshape({6}), "arg 0: rank changed from 2 to 1"},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(all_close(f(c.input), reference_double_plus_one(c.input)));
    if (!c.reason.empty()) {
      EXPECT_EQ(logs.count(c.reason), 1u) << c.reason << "\n" << logs.all();
    }
  }
  EXPECT_EQ(f.core().cache_entries(), cases.size());
  // Every earlier entry still serves its inputs without a new compile.
  const size_t records = logs.records.size();
  for (const Case& c : cases)
    EXPECT_TRUE(all_close(f(c.input), reference_double_plus_one(c.input)));
  EXPECT_EQ(logs.records.size(), records);
  EXPECT_EQ(f.core().cache_entries(), cases.size());
}

TEST(CompileGuards, RequiresGradAndScalarValues) {
  LogCapture logs("recompiles");
  auto f = compile([](const Tensor& x, int64_t k, bool flip) { return flip ? -x * k : x * k; });
  Tensor x = tensor({1.0, 2.0});
  EXPECT_TRUE(all_close(f(x, 3, false), tensor({3.0, 6.0})));
  EXPECT_TRUE(all_close(f(x, 4, false), tensor({4.0, 8.0})));
  EXPECT_EQ(logs.count("arg 1: changed from 3 to 4"), 1u) << logs.all();
  EXPECT_TRUE(all_close(f(x, 4, true), tensor({-4.0, -8.0})));
  EXPECT_EQ(logs.count("arg 2: changed from false to true"), 1u) << logs.all();
  Tensor xg = tensor({1.0, 2.0}).requires_grad_();
  EXPECT_TRUE(f(xg, 4, true).requires_grad());
  EXPECT_EQ(logs.count("arg 0: requires_grad changed from false to true"), 1u) << logs.all();
}

TEST(CompileGuards, CacheSizeLimitFallsBackToEagerWithOneWarning) {
  const int saved = cache_size_limit();
  set_cache_size_limit(2);
  WarningCapture warnings;
  int traces = 0;
  // One entry per size (automatic dynamic would serve sizes from 2 on with one entry).
  CompileOptions o;
  o.dynamic = false;
  auto f = compile(
      [&traces](const Tensor& x) {
        ++traces;
        return x.sum(0);
      },
      o);
  for (int64_t n = 1; n <= 5; ++n) {
    Tensor x = kiln::ones({n, 2});
    EXPECT_TRUE(all_close(f(x), full({2}, static_cast<double>(n))));
  }
  EXPECT_EQ(f.core().cache_entries(), 2u);
  ASSERT_EQ(warnings.warnings.size(), 1u);
  EXPECT_NE(warnings.warnings[0].find("cache size limit (2"), std::string::npos)
      << warnings.warnings[0];
  EXPECT_NE(warnings.warnings[0].find("size of dim 0 changed"), std::string::npos)
      << warnings.warnings[0];
  EXPECT_EQ(traces, 5);  // two traces, then three eager runs
  // Cached shapes still hit.
  EXPECT_TRUE(all_close(f(kiln::ones({1, 2})), full({2}, 1.0)));
  EXPECT_EQ(traces, 5);
  set_cache_size_limit(saved);
}

TEST(CompileGuards, GuardsAreLogged) {
  LogCapture logs("guards");
  auto f = compile([](const Tensor& x, double s) { return x * s; });
  f(kiln::ones({3, 2}), 0.5);
  EXPECT_EQ(logs.count("arg 0: tensor float32 on cpu, sizes [3, 2], strides [2, 1], "
                       "requires_grad=false"),
            1u)
      << logs.all();
  EXPECT_EQ(logs.count("arg 1 == 0.5"), 1u) << logs.all();
  EXPECT_EQ(logs.count("grad mode is enabled"), 1u) << logs.all();
}

TEST(CompileGuards, ModuleTrainingFlagAndParameterIdentity) {
  LogCapture logs("recompiles");
  auto bn = std::make_shared<nn::BatchNorm1d>(2);
  auto compiled = compile(bn);
  Tensor x = tensor({{1.0, 2.0}, {3.0, 6.0}});
  Tensor train_out = (*compiled)(x);
  // Batch statistics: mean (2, 4), biased var (1, 4): (x - mean) / sqrt(var + eps).
  const double e = 1e-5;
  EXPECT_TRUE(all_close(train_out,
                        tensor({{-1 / std::sqrt(1 + e), -2 / std::sqrt(4 + e)},
                                {1 / std::sqrt(1 + e), 2 / std::sqrt(4 + e)}}),
                        1e-5, 1e-6));
  compiled->eval();
  EXPECT_FALSE(bn->is_training());
  Tensor eval_out = (*compiled)(x);
  EXPECT_EQ(logs.count("module.training changed from true to false"), 1u) << logs.all();
  // Running stats after one update with momentum 0.1: mean 0.1 * (2, 4), var 0.9 + 0.1 * (2, 8)
  // (unbiased batch variance).
  const double m0 = 0.2, m1 = 0.4, v0 = 0.9 + 0.2, v1 = 0.9 + 0.8;
  EXPECT_TRUE(all_close(eval_out,
                        tensor({{(1 - m0) / std::sqrt(v0 + e), (2 - m1) / std::sqrt(v1 + e)},
                                {(3 - m0) / std::sqrt(v0 + e), (6 - m1) / std::sqrt(v1 + e)}}),
                        1e-5, 1e-6));
  // Converting the module's tensors in place changes their metadata: another guard (the call
  // itself then fails as eager would, on mixed dtypes, or succeeds; either way the reason is
  // logged).
  bn->to(kFloat64);
  try {
    (*compiled)(x);
  } catch (const Error&) {
  }
  EXPECT_EQ(logs.count("weight (module tensor): dtype changed from float32 to float64"), 1u)
      << logs.all();
}

}  // namespace
}  // namespace kiln
