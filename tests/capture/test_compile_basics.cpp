// kiln::compile on plain functions: results equal eager's, a second call reuses the compiled graph
// without calling the function again, arguments and results of several kinds, mutation of inputs,
// grad mode, and autograd through a compiled function.
#include "capture/capture_test_util.h"

namespace kiln {
namespace {

using testing::all_close;
using testing::RecordingBackend;
using testing::throws_error;

TEST(CompileBasics, OneOpFunctionTracesOnceAndMatchesEager) {
  int calls = 0;
  RecordingBackend rec;
  auto f = compile(
      [&calls](const Tensor& x) {
        ++calls;  // a host side effect: happens while tracing, not on cache hits
        return x.sin();
      },
      {.backend = rec.backend()});
  Tensor x = tensor({0.0, 0.5, 1.0, 2.0});
  Tensor y = f(x);
  EXPECT_TRUE(all_close(y, tensor({0.0, 0.479425538604203, 0.8414709848078965, 0.9092974268256817}),
                        1e-6, 1e-7));
  Tensor x2 = tensor({3.0, -1.0, 0.25, 4.0});
  Tensor y2 = f(x2);
  EXPECT_TRUE(all_close(
      y2,
      tensor({0.1411200080598672, -0.8414709848078965, 0.24740395925452294, -0.7568024953079282}),
      1e-6, 1e-7));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(f.core().cache_entries(), 1u);
  ASSERT_EQ(rec.op_counts->size(), 1u);
  EXPECT_EQ((*rec.op_counts)[0], 1u);
  EXPECT_NE((*rec.graphs)[0].find("sin("), std::string::npos) << (*rec.graphs)[0];
}

TEST(CompileBasics, ChainOfOpsWithScalarsAndFactories) {
  auto f = compile([](const Tensor& x, double scale) {
    Tensor ones = kiln::ones({x.size(0)});
    return (x * scale + ones).relu().sum();
  });
  Tensor x = tensor({-2.0, 1.0, 3.0});
  // (-2*2+1).relu()=0, (1*2+1)=3, (3*2+1)=7 -> 10
  EXPECT_TRUE(all_close(f(x, 2.0), tensor(10.0)));
  EXPECT_TRUE(all_close(f(tensor({1.0, 1.0, 1.0}), 2.0), tensor(9.0)));
  // A different scalar is a different guard: recompiled, and right.
  EXPECT_TRUE(all_close(f(x, -1.0), tensor(3.0)));  // relu(3, 0, -2) sums to 3
  EXPECT_EQ(f.core().cache_entries(), 2u);
}

TEST(CompileBasics, ResultsOfSeveralKinds) {
  auto pair_fn = compile(
      [](const Tensor& a, const Tensor& b) { return std::make_pair(a + b, a.size(0) * 10); });
  Tensor a = tensor({1.0, 2.0}), b = tensor({10.0, 20.0});
  for (int i = 0; i < 2; ++i) {
    auto [sum, n] = pair_fn(a, b);
    EXPECT_TRUE(all_close(sum, tensor({11.0, 22.0})));
    EXPECT_EQ(n, 20);
  }
  auto vec_fn = compile([](const std::vector<Tensor>& xs) {
    std::vector<Tensor> out;
    for (const Tensor& x : xs) out.push_back(x * 2.0);
    return std::make_tuple(out, xs.front() - xs.back());
  });
  for (int i = 0; i < 2; ++i) {
    auto [doubled, diff] = vec_fn(std::vector<Tensor>{a, b, a});
    ASSERT_EQ(doubled.size(), 3u);
    EXPECT_TRUE(all_close(doubled[1], tensor({20.0, 40.0})));
    EXPECT_TRUE(all_close(diff, tensor({0.0, 0.0})));
  }
  // A list of another length is another guard.
  auto [two, d2] = vec_fn(std::vector<Tensor>{a, b});
  EXPECT_EQ(two.size(), 2u);
  EXPECT_TRUE(all_close(d2, tensor({-9.0, -18.0})));
  EXPECT_EQ(vec_fn.core().cache_entries(), 2u);
}

TEST(CompileBasics, ReturningAnInputAndAView) {
  auto f = compile([](const Tensor& x) { return std::make_tuple(x, x.t(), x.reshape({-1})); });
  Tensor x = tensor({{1.0, 2.0}, {3.0, 4.0}});
  for (int i = 0; i < 2; ++i) {
    auto [same, t, flat] = f(x);
    EXPECT_EQ(same.data_ptr(), x.data_ptr());
    EXPECT_EQ(t.data_ptr(), x.data_ptr());  // views share the input's memory, as in eager
    EXPECT_TRUE(all_close(t, tensor({{1.0, 3.0}, {2.0, 4.0}})));
    EXPECT_TRUE(all_close(flat, tensor({1.0, 2.0, 3.0, 4.0})));
  }
}

TEST(CompileBasics, InPlaceChangesToInputsAreVisible) {
  auto f = compile([](const Tensor& x, Tensor acc) {
    acc.add_(x);  // mutates the caller's tensor
    return acc * 2.0;
  });
  Tensor x = tensor({1.0, 2.0});
  Tensor acc = tensor({0.0, 0.0});
  Tensor r1 = f(x, acc);
  EXPECT_TRUE(all_close(acc, tensor({1.0, 2.0})));
  EXPECT_TRUE(all_close(r1, tensor({2.0, 4.0})));
  Tensor r2 = f(x, acc);  // cache hit: the mutation still happens
  EXPECT_TRUE(all_close(acc, tensor({2.0, 4.0})));
  EXPECT_TRUE(all_close(r2, tensor({4.0, 8.0})));
  EXPECT_EQ(f.core().cache_entries(), 1u);
}

TEST(CompileBasics, CapturedTensorsAreReadAtCallTime) {
  Tensor bias = tensor({1.0, 1.0});
  auto f = compile([bias](const Tensor& x) { return x + bias; });
  Tensor x = tensor({1.0, 2.0});
  EXPECT_TRUE(all_close(f(x), tensor({2.0, 3.0})));
  bias.fill_(10.0);  // the same tensor, new values: the graph reads it as an input
  EXPECT_TRUE(all_close(f(x), tensor({11.0, 12.0})));
}

TEST(CompileBasics, GradientsThroughACompiledFunction) {
  auto f = compile([](const Tensor& x, const Tensor& w) { return (x * w).tanh().sum(); });
  for (int round = 0; round < 2; ++round) {
    Tensor x = tensor({0.5, -1.0, 2.0});
    Tensor w = tensor({1.0, 0.5, -0.25}).requires_grad_();
    Tensor loss = f(x, w);
    EXPECT_TRUE(loss.requires_grad());
    loss.backward();
    // d/dw tanh(x w) = x (1 - tanh^2(x w)), hand-computed.
    std::vector<double> want;
    const double xs[] = {0.5, -1.0, 2.0}, ws[] = {1.0, 0.5, -0.25};
    for (int i = 0; i < 3; ++i) {
      const double t = std::tanh(xs[i] * ws[i]);
      want.push_back(xs[i] * (1 - t * t));
    }
    EXPECT_TRUE(all_close(w.grad(), from_vector(want, {3}).to(kFloat32), 1e-5, 1e-6));
  }
}

// detach() of a traced tensor is the same value without gradient history: d/dx (stop(e^x) * x)
// = e^x, hand-computed; the result itself is sum(e^x * x). Every backend.
TEST(CompileBasics, DetachInsideACompiledFunctionStopsTheGradient) {
  for (const char* backend : {"eager", "aot_eager", "inductor"}) {
    SCOPED_TRACE(backend);
    auto f = compile([](const Tensor& x) { return (x.exp().detach() * x).sum(); },
                     {.backend = std::string(backend)});
    const std::vector<double> xs = {0.5, -1.0, 2.0};
    Tensor x = from_vector(xs, {3}).to(kFloat32).requires_grad_();
    Tensor y = f(x);
    y.backward();
    std::vector<double> grad;
    double value = 0;
    for (double v : xs) {
      grad.push_back(std::exp(v));
      value += std::exp(v) * v;
    }
    EXPECT_NEAR(y.item<float>(), value, 1e-5);
    EXPECT_TRUE(all_close(x.grad(), from_vector(grad, {3}).to(kFloat32), 1e-6, 1e-6));
    // Without gradients the detached value is the tensor's own.
    autograd::NoGradGuard no_grad;
    EXPECT_NEAR(f(x.detach()).item<float>(), value, 1e-5);
  }
}

TEST(CompileBasics, GradModeIsGuarded) {
  testing::LogCapture logs("recompiles");
  auto f = compile([](const Tensor& x) { return x * 3.0; });
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor with_grad = f(x);
  EXPECT_TRUE(with_grad.requires_grad());
  Tensor without;
  {
    autograd::NoGradGuard no_grad;
    without = f(x);
  }
  EXPECT_FALSE(without.requires_grad());
  EXPECT_TRUE(all_close(without, tensor({3.0, 6.0})));
  EXPECT_EQ(f.core().cache_entries(), 2u);
  EXPECT_EQ(logs.count("grad mode changed from enabled to disabled"), 1u) << logs.all();
}

TEST(CompileBasics, DisableRunsEagerly) {
  int calls = 0;
  auto f = compile(
      [&calls](const Tensor& x) {
        ++calls;
        return x + 1.0;
      },
      {.disable = true});
  f(tensor({1.0}));
  f(tensor({1.0}));
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(f.core().cache_entries(), 0u);
}

TEST(CompileBasics, ErrorsInsideTheFunctionAreEagerErrors) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return a.mm(b); });
  EXPECT_TRUE(throws_error([&] { f(kiln::ones({2, 3}), kiln::ones({2, 3})); }, {"mm"}));
  // The failed trace cached nothing, and a good call still works.
  EXPECT_EQ(f.core().cache_entries(), 0u);
  EXPECT_TRUE(all_close(f(kiln::ones({2, 3}), kiln::ones({3, 1})), tensor({{3.0}, {3.0}})));
}

TEST(CompileBasics, ResetDropsCompiledEntries) {
  auto f = compile([](const Tensor& x) { return x.exp(); });
  f(tensor({0.0}));
  EXPECT_EQ(f.core().cache_entries(), 1u);
  reset();
  EXPECT_EQ(f.core().cache_entries(), 0u);
  EXPECT_TRUE(all_close(f(tensor({0.0})), tensor({1.0})));
}

}  // namespace
}  // namespace kiln
