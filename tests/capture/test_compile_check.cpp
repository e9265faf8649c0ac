// KILN_COMPILE_CHECK=1: compiled graphs also run eagerly; a difference (forward, an input written
// in place, or a gradient) raises naming the first differing node. Miscompilations are injected
// by test backends whose defect is known, so each report can be checked against it.
#include <kiln/graph/graph.h>
#include <kiln/models/models.h>
#include <kiln/nn/functional.h>
#include <kiln/optim/sgd.h>

#include <set>

#include "capture/capture_test_util.h"
#include "inductor/inductor_test_util.h"

namespace kiln {
namespace {

using testing::all_close;
using testing::ScopedEnv;
using testing::throws_error;

// The nodes that compute from an `op_name` node (it included).
std::set<const graph::Node*> downstream_of(const graph::Graph& g, std::string_view op_name) {
  std::set<const graph::Node*> reached;
  for (const auto& n : g.nodes()) {
    if (n->kind != graph::NodeKind::Op) continue;
    bool from = n->op->name() == op_name;
    for (const graph::TensorUse& u : n->uses) from = from || reached.count(u.value.node) > 0;
    if (from) reached.insert(n.get());
  }
  return reached;
}

// A backend whose `op_name` kernel is off by `error`: every graph output computed from such a
// node comes out `error` too large. Otherwise it runs the graph with eager kernels.
Backend off_by_after(std::string op_name, double error) {
  return [op_name, error](const graph::Graph& g, std::span<const Tensor>, const BackendContext&) {
    auto graph = std::make_shared<graph::Graph>(g.clone());
    std::vector<bool> wrong;
    const auto bad = downstream_of(*graph, op_name);
    for (const graph::Value& v : graph->outputs()) wrong.push_back(bad.count(v.node) > 0);
    return CompiledGraph([graph, wrong, error](std::span<const Tensor> inputs) {
      std::vector<Tensor> out = graph::interpret(*graph, inputs);
      for (size_t i = 0; i < out.size(); ++i) {
        if (wrong[i]) out[i] = out[i] + error;
      }
      return out;
    });
  };
}

const auto sin_mul_exp_sum = [](const Tensor& x, const Tensor& y) {
  Tensor a = x.sin();
  Tensor b = a * y;
  Tensor c = b.exp();  // the line the report must name
  return c.sum(1) * 2.0;
};
constexpr int kExpLine = __LINE__ - 3;

class CompileCheck : public ::testing::Test {
 protected:
  void SetUp() override { reset(); }
  void TearDown() override { reset(); }
  ScopedEnv check_{"KILN_COMPILE_CHECK", "1"};
  ScopedEnv rtol_{"KILN_COMPILE_CHECK_RTOL"};
  ScopedEnv atol_{"KILN_COMPILE_CHECK_ATOL"};
};

TEST_F(CompileCheck, CorrectCompilationsPassAndReturnTheirResults) {
  Tensor x = randn({4, 8}), y = randn({4, 8});
  const Tensor expected = sin_mul_exp_sum(x, y);
  for (const char* backend : {"inductor", "aot_eager", "eager"}) {
    auto f = compile(sin_mul_exp_sum, {.backend = backend});
    EXPECT_TRUE(all_close(f(x, y), expected, 1e-5, 1e-6)) << backend;
    EXPECT_TRUE(all_close(f(x, y), expected, 1e-5, 1e-6)) << backend;  // a cache hit
  }
}

TEST_F(CompileCheck, MiscompiledNodeIsNamedByBisection) {
  auto f = compile(sin_mul_exp_sum, {.backend = off_by_after("exp", 1.0)});
  Tensor x = randn({4, 8}), y = randn({4, 8});
  EXPECT_TRUE(throws_error([&] { f(x, y); },
                           {"KILN_COMPILE_CHECK: graph 0 of", "differs from eager: output 0",
                            "first differing node (bisection over 5 ops): %exp",
                            fmt::format("test_compile_check.cpp:{}", kExpLine), "graph:"}));
}

TEST_F(CompileCheck, WithoutTheVariableNothingIsChecked) {
  check_.unset();
  auto f = compile(sin_mul_exp_sum, {.backend = off_by_after("exp", 1.0)});
  Tensor x = randn({4, 8}), y = randn({4, 8});
  // The defect goes through unnoticed: the output, computed from exp, is 1 too large.
  EXPECT_TRUE(all_close(f(x, y), sin_mul_exp_sum(x, y) + 1.0, 1e-5, 1e-6));
}

TEST_F(CompileCheck, TolerancesComeFromTheEnvironment) {
  Tensor x = rand({4, 8}) + 1.0, y = rand({4, 8}) + 1.0;
  // Outputs of about 37 to 118 off by 1e-3 (relative 1e-5): beyond rtol 1e-6, within 1e-3.
  {
    auto f = compile(sin_mul_exp_sum, {.backend = off_by_after("exp", 1e-3)});
    rtol_.set("1e-6");
    EXPECT_TRUE(throws_error([&] { f(x, y); }, {"beyond rtol 1e-06 atol 1e-05"}));
  }
  reset();
  {
    auto f = compile(sin_mul_exp_sum, {.backend = off_by_after("exp", 1e-3)});
    rtol_.set("1e-3");
    EXPECT_TRUE(all_close(f(x, y), sin_mul_exp_sum(x, y) + 1e-3, 1e-6, 1e-6));
  }
  reset();
  rtol_.set("tight");
  auto f = compile(sin_mul_exp_sum);
  EXPECT_TRUE(throws_error([&] { f(x, y); },
                           {"KILN_COMPILE_CHECK_RTOL must be a number >= 0", "\"tight\""}));
}

TEST_F(CompileCheck, InputsWrittenInPlaceAreWrittenOnce) {
  auto f = compile([](Tensor x) {
    x.add_(1.0);
    return x * 2.0;
  });
  Tensor x = tensor({1.0f, 2.0f, 3.0f});
  Tensor y = f(x);
  EXPECT_TRUE(all_close(x, tensor({2.0f, 3.0f, 4.0f}), 0, 0));
  EXPECT_TRUE(all_close(y, tensor({4.0f, 6.0f, 8.0f}), 0, 0));
}

TEST_F(CompileCheck, AnInputWrittenWrongIsReported) {
  // A backend that forgets to write the input back: the output is right, the input is not.
  Backend forgets = [](const graph::Graph& g, std::span<const Tensor>, const BackendContext&) {
    auto graph = std::make_shared<graph::Graph>(g.clone());
    return CompiledGraph([graph](std::span<const Tensor> inputs) {
      std::vector<Tensor> copies;
      for (const Tensor& t : inputs) copies.push_back(t.clone());
      return graph::interpret(*graph, copies);
    });
  };
  auto f = compile(
      [](Tensor x) {
        x.mul_(3.0);
        return x + 1.0;
      },
      {.backend = forgets});
  Tensor x = tensor({1.0f, 2.0f});
  EXPECT_TRUE(throws_error([&] { f(x); },
                           {"input 0 after the call (written in place)", "compiled 2, eager 6"}));
}

TEST_F(CompileCheck, RandomDrawsAreTheCallsOwn) {
  auto body = [](const Tensor& x) { return nn::functional::dropout(x, 0.5, true) * 3.0; };
  auto f = compile(body);
  Tensor x = rand({64});
  manual_seed(7);
  Tensor compiled = f(x);
  Tensor next_compiled = rand({3});
  manual_seed(7);
  Tensor eager = body(x);
  Tensor next_eager = rand({3});
  EXPECT_TRUE(all_close(compiled, eager, 0, 0));
  // The generator ends where one call leaves it, not three calls further.
  EXPECT_TRUE(all_close(next_compiled, next_eager, 0, 0));
}

TEST_F(CompileCheck, AWrongGradientIsReported) {
  // Forward values right, gradients doubled: y' = 2y - y.detach().
  Backend doubles_gradients = [](const graph::Graph& g, std::span<const Tensor>,
                                 const BackendContext&) {
    auto graph = std::make_shared<graph::Graph>(g.clone());
    return CompiledGraph([graph](std::span<const Tensor> inputs) {
      std::vector<Tensor> out = graph::interpret(*graph, inputs);
      for (Tensor& t : out) {
        if (t.requires_grad()) t = t * 2.0 - t.detach();
      }
      return out;
    });
  };
  auto f = compile([](const Tensor& x, const Tensor& w) { return (x * w).tanh(); },
                   {.backend = doubles_gradients});
  Tensor x = randn({5}), w = randn({5}).requires_grad_(true);
  EXPECT_TRUE(
      throws_error([&] { f(x, w); }, {"the gradient of input 1 (%arg_1) in the backward pass"}));
  // Without grad there is no backward to check.
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(all_close(f(x, w), (x * w).tanh(), 1e-6, 1e-7));
}

TEST_F(CompileCheck, InductorTrainingStepsOfAnMlpPass) {
  // Real generated code, forward and backward, within the default tolerances.
  manual_seed(5);
  auto eager_model = models::mlp({.in_features = 8, .hidden_features = {16}, .out_features = 4});
  manual_seed(5);
  auto model = models::mlp({.in_features = 8, .hidden_features = {16}, .out_features = 4});
  auto compiled = compile(model);
  optim::SGD eager_opt(eager_model->parameters(), {.lr = 0.1});
  optim::SGD opt(compiled->parameters(), {.lr = 0.1});
  const Tensor x = randn({5, 8});
  const Tensor target = randn({5, 4});
  for (int step = 0; step < 2; ++step) {
    eager_opt.zero_grad();
    Tensor eager_loss = nn::functional::mse_loss(eager_model->forward(x), target);
    eager_loss.backward();
    eager_opt.step();
    opt.zero_grad();
    Tensor loss = nn::functional::mse_loss((*compiled)(x), target);
    loss.backward();
    opt.step();
    EXPECT_TRUE(all_close(loss, eager_loss, 1e-6, 1e-7)) << step;
    const auto p = model->parameters(), q = eager_model->parameters();
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(all_close(p[i], q[i], 1e-6, 1e-7)) << "step " << step << " param " << i;
    }
  }
}

}  // namespace
}  // namespace kiln
