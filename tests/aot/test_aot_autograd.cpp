// Compiled training through aot: gradients through the compiled backward node match eager ones,
// for some inputs requiring grad and not others, with dropout drawing eager's masks; the
// partitioners; errors for double backward and a second backward.
#include "aot/aot_test_util.h"

#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

namespace kiln {
namespace {

using testing::all_close;
using testing::GraphKeeper;
using testing::throws_error;

CompileOptions aot_eager() { return {.backend = std::string("aot_eager")}; }

TEST(AotAutograd, OnlyInputsThatRequireGradGetGradients) {
  auto body = [](const Tensor& a, const Tensor& b, const Tensor& c) {
    return ((a * b).sin() + c.exp() * a).sum();
  };
  auto f = compile(body, aot_eager());
  for (int call = 0; call < 2; ++call) {
    Tensor a = tensor({0.5, -1.0, 2.0}).requires_grad_();
    Tensor b = tensor({1.5, 0.25, -0.5});
    Tensor c = tensor({0.1, 0.2, 0.3}).requires_grad_();
    Tensor loss = f(a, b, c);
    ASSERT_TRUE(loss.grad_fn() != nullptr);
    EXPECT_EQ(loss.grad_fn()->name(), "CompiledFunctionBackward");
    loss.backward();
    // d/da = b cos(a b) + exp(c); d/dc = a exp(c): by hand.
    const double av[] = {0.5, -1.0, 2.0}, bv[] = {1.5, 0.25, -0.5}, cv[] = {0.1, 0.2, 0.3};
    std::vector<double> ga, gc;
    for (int i = 0; i < 3; ++i) {
      ga.push_back(bv[i] * std::cos(av[i] * bv[i]) + std::exp(cv[i]));
      gc.push_back(av[i] * std::exp(cv[i]));
    }
    EXPECT_TRUE(all_close(a.grad(), from_vector(ga).to(kFloat32), 1e-6, 1e-7)) << call;
    EXPECT_TRUE(all_close(c.grad(), from_vector(gc).to(kFloat32), 1e-6, 1e-7)) << call;
    EXPECT_FALSE(b.grad().defined());
  }
}

TEST(AotAutograd, ForwardOnlyWithoutGradMode) {
  auto f = compile([](const Tensor& a) { return a.tanh() * 2.0; }, aot_eager());
  Tensor a = tensor({0.5, -1.0}).requires_grad_();
  autograd::NoGradGuard no_grad;
  Tensor out = f(a);
  EXPECT_FALSE(out.requires_grad());
  EXPECT_TRUE(all_close(out, tensor({2 * std::tanh(0.5), 2 * std::tanh(-1.0)})));
}

TEST(AotAutograd, DropoutDrawsEagersMasks) {
  auto body = [](const Tensor& x, const Tensor& w) {
    return (nn::functional::dropout(x.matmul(w), 0.5, true) * 3.0).sigmoid().sum();
  };
  auto f = compile(body, aot_eager());
  manual_seed(21);
  const Tensor x = randn({8, 6});
  const Tensor w0 = randn({6, 5});
  for (int call = 0; call < 2; ++call) {
    Tensor we = w0.clone().requires_grad_();
    Tensor wc = w0.clone().requires_grad_();
    manual_seed(100 + call);
    Tensor eager = body(x, we);
    eager.backward();
    manual_seed(100 + call);
    Tensor compiled = f(x, wc);
    compiled.backward();
    EXPECT_TRUE(all_close(compiled, eager, 1e-6, 1e-6)) << call;
    EXPECT_TRUE(all_close(wc.grad(), we.grad(), 1e-5, 1e-7)) << call;
  }
}

TEST(AotAutograd, DoubleBackwardIsAClearError) {
  auto f = compile([](const Tensor& x) { return (x * x * x).sum(); }, aot_eager());
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = f(x);
  EXPECT_TRUE(
      throws_error([&] { autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true); },
                   {"double backward", "not supported", "backend=\"eager\""}));
}

TEST(AotAutograd, ASecondBackwardNeedsRetainGraph) {
  auto f = compile([](const Tensor& x) { return x.exp().sum(); }, aot_eager());
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = f(x);
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();  // retained: accumulates
  EXPECT_TRUE(all_close(x.grad(), tensor({2 * std::exp(1.0), 2 * std::exp(2.0)})));
  Tensor z = f(x);
  z.backward();
  EXPECT_TRUE(throws_error([&] { z.backward(); }, {"second time", "retain_graph=true"}));
}

TEST(AotAutograd, ASavedInputModifiedBeforeBackwardIsAnError) {
  auto f = compile([](const Tensor& x, const Tensor& w) { return (x * w).sum(); }, aot_eager());
  Tensor x = tensor({1.0, 2.0});
  Tensor w = tensor({3.0, 4.0}).requires_grad_();
  Tensor y = f(x, w);
  x.add_(1.0);  // the backward reads x
  EXPECT_TRUE(throws_error([&] { y.backward(); }, {"modified by an inplace operation"}));
}

// A pointwise chain on a product: min-cut saves the product's inputs and output only and
// recomputes the chain; save-all saves the chain's intermediates too.
TEST(AotAutograd, MinCutSavesLessThanSaveAllAndBothGiveEagersGradients) {
  auto body = [](const Tensor& x, const Tensor& w) {
    Tensor h = x.matmul(w);
    return (h.sin().exp() * h.cos()).tanh().sum();
  };
  GraphKeeper keeper;
  manual_seed(2);
  const Tensor x = randn({16, 32});
  const Tensor w0 = randn({32, 24}) * 0.1;
  compile(body, {.backend = keeper.backend()})(x, w0.clone().requires_grad_());
  const aot::JointGraph joint = aot::trace_joint(*keeper.graph, /*training=*/true);
  const aot::Partition min_cut = aot::partition(joint, aot::Partitioner::MinCut);
  const aot::Partition save_all = aot::partition(joint, aot::Partitioner::SaveAll);
  // min-cut: the product (16x24 floats) alone; save-all: the product and four chain values.
  EXPECT_EQ(min_cut.saved_bytes, 16 * 24 * 4) << min_cut.forward.str() << min_cut.backward.str();
  EXPECT_GT(save_all.saved_bytes, min_cut.saved_bytes);
  EXPECT_GT(min_cut.recomputed_ops, 0u);
  EXPECT_EQ(save_all.recomputed_ops, 0u);
  EXPECT_LT(aot::estimate_peak_bytes(min_cut), aot::estimate_peak_bytes(save_all));

  Tensor we = w0.clone().requires_grad_();
  body(x, we).backward();
  for (aot::Partitioner p : {aot::Partitioner::MinCut, aot::Partitioner::SaveAll}) {
    auto f = compile(body, {.backend = aot::aot_autograd(
                                {.forward_compiler = lookup_backend("eager"), .partitioner = p})});
    Tensor wc = w0.clone().requires_grad_();
    f(x, wc).backward();
    EXPECT_TRUE(all_close(wc.grad(), we.grad(), 1e-5, 1e-7));
  }
}

TEST(AotAutograd, RandomOpsAreNeverRecomputed) {
  GraphKeeper keeper;
  const Tensor x = randn({4, 4}).requires_grad_();
  compile([](const Tensor& t) { return nn::functional::dropout(t, 0.3, true).exp().sum(); },
          {.backend = keeper.backend()})(x);
  const aot::JointGraph joint = aot::trace_joint(*keeper.graph, true);
  const aot::Partition p = aot::partition(joint, aot::Partitioner::MinCut);
  for (const auto& n : p.backward.nodes()) {
    if (n->kind == graph::NodeKind::Op) {
      EXPECT_FALSE(n->op->is_random) << p.backward.str();
    }
  }
}

TEST(AotAutograd, GraphBreaksChainTheirCompiledBackwards) {
  auto body = [](const Tensor& x) {
    Tensor y = x.sin();
    const double s = y.sum().item<double>();  // a graph break
    return (y * s).exp().sum();
  };
  auto f = compile(body, aot_eager());
  for (int call = 0; call < 2; ++call) {
    Tensor xe = tensor({0.5, -0.25, 1.0}).requires_grad_();
    Tensor xc = tensor({0.5, -0.25, 1.0}).requires_grad_();
    body(xe).backward();
    Tensor out = f(xc);
    EXPECT_EQ(out.grad_fn()->name(), "CompiledFunctionBackward");
    out.backward();
    EXPECT_TRUE(all_close(xc.grad(), xe.grad(), 1e-6, 1e-7)) << call;
  }
}

TEST(AotAutograd, AotGraphsAreLogged) {
  testing::LogCapture logs("aot_graphs");
  auto f = compile([](const Tensor& x) { return x.exp().sum(); }, aot_eager());
  f(tensor({1.0, 2.0}).requires_grad_()).backward();
  EXPECT_EQ(logs.count("aot_graphs: forward of graph 0"), 1u) << logs.all();
  EXPECT_EQ(logs.count("aot_graphs: backward of graph 0"), 1u) << logs.all();
  EXPECT_EQ(logs.count("tangent 0"), 1u) << logs.all();
}

// The gradient of a compiled output arrives in whatever layout the code after it made: here
// transposed (the loss reads y.t()). The compiled backward, traced on a contiguous tangent, must
// read it by its layout. Reference by hand: y = (2 x) viewed [3, 2], so x's gradient at flat k is
// 2 dL/dy at flat k, and dL/dy = w.t().
TEST(AotAutograd, GradientsArrivingNonContiguousAreReadByTheirLayout) {
  auto body = [](const Tensor& x) { return (x * 2.0).reshape({3, 2}); };
  const std::vector<double> wv = {1, 2, 3, 4, 5, 6};  // w [2, 3]
  std::vector<double> want(6);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j)
      want[static_cast<size_t>(2 * i + j)] = 2 * wv[static_cast<size_t>(3 * j + i)];
  }
  for (const char* backend : {"aot_eager", "inductor"}) {
    auto f = compile(body, {.backend = std::string(backend)});
    for (int call = 0; call < 2; ++call) {
      Tensor x = tensor({0.5, -1.0, 2.0, 0.25, 1.5, -0.5}).view({2, 3}).detach().requires_grad_();
      const Tensor w = from_vector(wv).to(kFloat32).view({2, 3});
      Tensor y = f(x);
      (y.t() * w).sum().backward();
      EXPECT_TRUE(all_close(x.grad().flatten(), from_vector(want).to(kFloat32), 1e-6, 1e-7))
          << backend << " call " << call << ": " << x.grad();
    }
  }
}

// `return b` hands back b itself, as eager does: b stays a leaf (its gradient accumulates into it
// directly), and nothing keeps the compiled backward alive once its outputs and inputs are gone
// (it used to become b's grad_fn, owned back through b's gradient accumulator: a cycle). The
// first call returns the trace's proxy of b (sharing b's memory and autograd state); cached calls
// return b itself.
TEST(AotAutograd, AnOutputThatIsADifferentiableInputIsThatInput) {
  auto body = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0] * 2.0).sum(), in[1]};
  };
  for (const char* backend : {"aot_eager", "inductor"}) {
    for (bool dynamic : {false, true}) {
      auto f = compile(body, {.dynamic = dynamic, .backend = std::string(backend)});
      for (int call = 0; call < 2; ++call) {
        std::weak_ptr<autograd::Node> backward;
        {
          Tensor a = tensor({0.5, -1.0, 2.0}).requires_grad_();
          Tensor b = tensor({1.5, 0.25}).requires_grad_();
          const std::vector<Tensor> out = f(std::vector<Tensor>{a, b});
          if (call == 1) {
            EXPECT_EQ(out[1].impl(), b.impl()) << backend;
          }
          EXPECT_TRUE(b.is_leaf()) << backend;
          EXPECT_TRUE(out[1].is_leaf()) << backend;
          ASSERT_TRUE(out[0].grad_fn() != nullptr);
          backward = out[0].grad_fn();
          (out[0] + (out[1] * 3.0).sum()).backward();
          EXPECT_TRUE(all_close(a.grad(), full({3}, 2.0))) << backend << ": " << a.grad();
          EXPECT_TRUE(all_close(b.grad(), full({2}, 3.0))) << backend << ": " << b.grad();
        }
        EXPECT_TRUE(backward.expired()) << backend << " dynamic=" << dynamic << " call " << call;
      }
    }
  }
}

// `c = x.clone(); c.copy_(x)` functionalizes to x itself: the compiled graph returns its input,
// which must still come back as a fresh tensor (fuzz seed 213, found by LeakSanitizer).
TEST(AotAutograd, AnOutputTheGraphReducesToAnInputIsStillAFreshTensor) {
  auto body = [](const Tensor& x) {
    Tensor c = x.clone();
    c.copy_(x);
    return c;
  };
  for (const char* backend : {"aot_eager", "inductor"}) {
    auto f = compile(body, {.backend = std::string(backend)});
    for (int call = 0; call < 2; ++call) {
      std::weak_ptr<autograd::Node> backward;
      {
        Tensor x = tensor({0.5, -1.0, 2.0}).requires_grad_();
        Tensor c = f(x);
        EXPECT_NE(c.impl(), x.impl()) << backend;
        EXPECT_TRUE(x.is_leaf()) << backend;
        ASSERT_TRUE(c.grad_fn() != nullptr) << backend;
        backward = c.grad_fn();
        (c * 3.0).sum().backward();
        EXPECT_TRUE(all_close(x.grad(), full({3}, 3.0))) << backend << ": " << x.grad();
      }
      EXPECT_TRUE(backward.expired()) << backend << " call " << call;
    }
    // Without grad too: writing into the result leaves the input alone.
    Tensor x = tensor({0.5, -1.0, 2.0});
    Tensor c = f(x);
    c.add_(1.0);
    EXPECT_TRUE(all_close(x, tensor({0.5, -1.0, 2.0}))) << backend << ": " << x;
  }
}

// Inputs sharing memory, one written by the graph: aot cannot see the aliasing in its separate
// inputs, so the graph runs with the interpreter, with a hint; results stay eager's.
TEST(AotAutograd, AliasedInputsWithAWriteFallBackToTheInterpreter) {
  testing::LogCapture logs("perf_hints");
  auto body = [](Tensor a, const Tensor& b) {
    a.add_(1.0);
    return b * 2.0;
  };
  auto f = compile(body, aot_eager());
  Tensor base = zeros({4});
  Tensor result = f(base, base.view({2, 2}));
  EXPECT_TRUE(all_close(result, full({2, 2}, 2.0)));
  EXPECT_TRUE(all_close(base, ones({4})));
  EXPECT_EQ(logs.count("share memory"), 1u) << logs.all();
}

}  // namespace
}  // namespace kiln
