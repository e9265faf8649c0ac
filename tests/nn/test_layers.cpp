// Layer forward values against PyTorch (float64), with weights and inputs set to the same
// deterministic sequences on both sides: seq(shape, a, b) = sin(arange(numel) * a + b). The
// reference outputs come from tests/nn/make_reference_values.py (reference_values.h).
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include "nn/reference_values.h"
#include "test_util.h"

namespace kiln {
namespace {

using namespace kiln::nn;
using testing::all_close;
using testing::throws_error;

Tensor seq(IntList shape, double a, double b) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (arange(n, kFloat64) * a + b).sin().reshape(shape);
}

// The Python script's set_params: parameter i gets seq(shape, a + 0.05 i, b + 0.2 i).
template <typename M>
std::shared_ptr<M> prepared(std::shared_ptr<M> m, double a = 0.3, double b = 0.1) {
  m->to(kFloat64);
  autograd::NoGradGuard no_grad;
  int i = 0;
  for (Tensor p : m->parameters()) {
    p.copy_(seq(p.sizes(), a + 0.05 * i, b + 0.2 * i));
    ++i;
  }
  return m;
}

Tensor torch_output(const std::string& name) {
  const auto& ref = nn_reference::torch_outputs().at(name);
  return from_vector(ref.values, IntList(ref.shape), kFloat64);
}

::testing::AssertionResult matches_torch(const Tensor& out, const std::string& name,
                                         double rtol = 1e-7, double atol = 1e-8) {
  return all_close(out, torch_output(name), rtol, atol);
}

Tensor x4() { return seq({2, 4, 3, 3}, 0.37, 0.5); }

TEST(NnLayers, Linear) {
  autograd::NoGradGuard no_grad;  // forward values only
  auto m = prepared(std::make_shared<Linear>(3, 4));
  EXPECT_TRUE(matches_torch((*m)(seq({2, 3}, 0.7, 0.2)), "linear"));
  EXPECT_TRUE(throws_error([&] { (*m)(ones({2, 5}, kFloat64)); }, {"Linear", "3", "[2, 5]"}));
  EXPECT_EQ(m->repr(), "Linear(in_features=3, out_features=4, bias=True)");
}

TEST(NnLayers, Bilinear) {
  autograd::NoGradGuard no_grad;  // forward values only
  auto m = prepared(std::make_shared<Bilinear>(3, 2, 2));
  EXPECT_TRUE(matches_torch(m->forward(seq({2, 3}, 0.7, 0.2), seq({2, 2}, 0.4, 0.0)), "bilinear"));
  EXPECT_EQ(m->repr(), "Bilinear(in1_features=3, in2_features=2, out_features=2, bias=True)");
}

TEST(NnLayers, Conv2d) {
  autograd::NoGradGuard no_grad;  // forward values only
  auto m = prepared(std::make_shared<Conv2d>(4, 6, 3, /*stride=*/2, /*padding=*/1,
                                             /*dilation=*/1, /*groups=*/2));
  EXPECT_EQ(IntList(m->weight.sizes()), IntList({6, 2, 3, 3}));
  EXPECT_TRUE(matches_torch((*m)(x4()), "conv2d"));
  EXPECT_EQ(m->repr(), "Conv2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), groups=2)");
  auto r = prepared(std::make_shared<Conv2d>(4, 2, IntList({3, 2}), 1, 1, 1, 1, false, "reflect"));
  EXPECT_TRUE(matches_torch((*r)(x4()), "conv2d_reflect"));
  EXPECT_EQ(r->repr(),
            "Conv2d(4, 2, kernel_size=(3, 2), stride=(1, 1), padding=(1, 1), bias=False, "
            "padding_mode=reflect)");
  EXPECT_TRUE(throws_error([&] { (*m)(ones({2, 3, 5, 5}, kFloat64)); }, {"Conv2d", "4", "3"}));
  EXPECT_TRUE(throws_error([] { Conv2d(3, 4, 3, 1, 0, 1, 2); }, {"divisible", "groups"}));
}

TEST(NnLayers, ConvTranspose2dAndConv1d) {
  autograd::NoGradGuard no_grad;  // forward values only
  auto t = prepared(std::make_shared<ConvTranspose2d>(4, 2, 3, /*stride=*/2, /*padding=*/1,
                                                      /*output_padding=*/1));
  EXPECT_EQ(IntList(t->weight.sizes()), IntList({4, 2, 3, 3}));
  EXPECT_TRUE(matches_torch((*t)(x4().narrow(0, 0, 1)), "conv_transpose2d"));
  EXPECT_EQ(t->repr(),
            "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), "
            "output_padding=(1, 1))");
  auto c = prepared(std::make_shared<Conv1d>(3, 2, 3, /*stride=*/2, /*padding=*/0,
                                             /*dilation=*/2));
  EXPECT_TRUE(matches_torch((*c)(seq({2, 3, 7}, 0.21, 0.3)), "conv1d"));
  EXPECT_EQ(c->repr(), "Conv1d(3, 2, kernel_size=(3,), stride=(2,), dilation=(2,))");
}

TEST(NnLayers, BatchNorm2dTrainingUpdatesRunningStats) {
  autograd::NoGradGuard no_grad;  // forward values only
  auto m = prepared(std::make_shared<BatchNorm2d>(4, 1e-5, 0.3));
  Tensor x = x4();
  EXPECT_TRUE(matches_torch((*m)(x), "batchnorm2d_train"));
  EXPECT_TRUE(matches_torch(m->running_mean, "bn_running_mean"));
  EXPECT_TRUE(matches_torch(m->running_var, "bn_running_var"));
  EXPECT_EQ(m->num_batches_tracked.item<int64_t>(), 1);
  // Independently: running = 0.7 * initial + 0.3 * batch statistic, the variance unbiased.
  Tensor mean = x.mean({0, 2, 3});
  Tensor var_unbiased = x.var({0, 2, 3});
  EXPECT_TRUE(all_close(m->running_mean, mean * 0.3, 1e-12, 1e-14));
  EXPECT_TRUE(all_close(m->running_var, var_unbiased * 0.3 + 0.7, 1e-12, 1e-14));
  m->eval();
  EXPECT_TRUE(matches_torch((*m)(x), "batchnorm2d_eval"));
  EXPECT_EQ(m->num_batches_tracked.item<int64_t>(), 1);  // eval leaves the stats alone
  EXPECT_TRUE(throws_error([&] { (*m)(ones({2, 4, 3}, kFloat64)); }, {"4D", "3D"}));
}

TEST(NnLayers, BatchNormCumulativeAverageAndNoTracking) {
  autograd::NoGradGuard no_grad;  // forward values only
  // momentum nullopt: the running mean is the plain average of the batch means.
  auto m = std::make_shared<BatchNorm1d>(2, 1e-5, std::nullopt);
  m->to(kFloat64);
  Tensor a = seq({4, 2}, 0.9, 0.1), b = seq({4, 2}, 0.5, 1.0);
  (*m)(a);
  (*m)(b);
  EXPECT_TRUE(all_close(m->running_mean, (a.mean({0}) + b.mean({0})) / 2.0, 1e-12, 1e-14));
  EXPECT_EQ(m->repr(),
            "BatchNorm1d(2, eps=1e-05, momentum=None, affine=True, bias=True, "
            "track_running_stats=True)");
  // Without running statistics, eval normalizes with the batch's own statistics.
  auto n = std::make_shared<BatchNorm1d>(2, 1e-5, 0.1, false, false);
  n->to(kFloat64);
  n->eval();
  EXPECT_TRUE(n->buffers().empty());
  EXPECT_TRUE(n->parameters().empty());
  Tensor y = (*n)(a);
  Tensor expected = (a - a.mean({0}, true)) / (a.var({0}, 0, true) + 1e-5).sqrt();
  EXPECT_TRUE(all_close(y, expected, 1e-10, 1e-12));
}

TEST(NnLayers, LayerGroupRmsNorm) {
  autograd::NoGradGuard no_grad;  // forward values only
  auto ln = prepared(std::make_shared<LayerNorm>(3));
  EXPECT_TRUE(matches_torch((*ln)(x4()), "layernorm"));
  EXPECT_EQ(ln->repr(), "LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)");
  auto gn = prepared(std::make_shared<GroupNorm>(2, 4));
  EXPECT_TRUE(matches_torch((*gn)(x4()), "groupnorm"));
  EXPECT_EQ(gn->repr(), "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)");
  auto rms = prepared(std::make_shared<RMSNorm>(std::vector<int64_t>{3, 3}, 1e-6));
  EXPECT_TRUE(matches_torch((*rms)(x4()), "rmsnorm"));
  EXPECT_EQ(rms->repr(), "RMSNorm((3, 3), eps=1e-06, elementwise_affine=True)");
  EXPECT_TRUE(throws_error([&] { (*ln)(ones({2, 4}, kFloat64)); }, {"LayerNorm", "(3,)"}));
  // Default init: weight ones, bias zeros.
  auto fresh = std::make_shared<LayerNorm>(std::vector<int64_t>{2, 3});
  EXPECT_TRUE(all_close(fresh->weight, ones({2, 3}), 0, 0));
  EXPECT_TRUE(all_close(fresh->bias, zeros({2, 3}), 0, 0));
}

TEST(NnLayers, Embedding) {
  autograd::NoGradGuard no_grad;  // forward values only
  auto m = prepared(std::make_shared<Embedding>(6, 3, -2));
  EXPECT_EQ(m->padding_idx, 4);
  EXPECT_TRUE(matches_torch((*m)(tensor({{0, 4}, {5, 1}})), "embedding"));
  EXPECT_EQ(m->repr(), "Embedding(6, 3, padding_idx=4)");
  // A fresh table's padding row is zero.
  auto fresh = std::make_shared<Embedding>(10, 4, 0);
  EXPECT_TRUE(all_close(fresh->weight[0], zeros({4}), 0, 0));
  auto pre = Embedding::from_pretrained(seq({3, 2}, 1.0, 0.0));
  EXPECT_FALSE(pre->weight.requires_grad());
  EXPECT_TRUE(all_close((*pre)(tensor({2})), seq({3, 2}, 1.0, 0.0).narrow(0, 2, 1)));
  EXPECT_TRUE(Embedding::from_pretrained(ones({2, 2}), false)->weight.requires_grad());
}

TEST(NnLayers, Activations) {
  autograd::NoGradGuard no_grad;  // forward values only
  Tensor x = seq({2, 5}, 1.3, -0.4) * 3.0;
  struct Case {
    const char* name;
    ModulePtr module;
    const char* repr;
  };
  std::vector<Case> cases = {
      {"relu", std::make_shared<ReLU>(), "ReLU()"},
      {"gelu", std::make_shared<GELU>(), "GELU(approximate='none')"},
      {"gelu_tanh", std::make_shared<GELU>("tanh"), "GELU(approximate='tanh')"},
      {"silu", std::make_shared<SiLU>(), "SiLU()"},
      {"tanh", std::make_shared<Tanh>(), "Tanh()"},
      {"sigmoid", std::make_shared<Sigmoid>(), "Sigmoid()"},
      {"leaky_relu", std::make_shared<LeakyReLU>(0.2), "LeakyReLU(negative_slope=0.2)"},
      {"elu", std::make_shared<ELU>(0.7), "ELU(alpha=0.7)"},
      {"softmax", std::make_shared<Softmax>(1), "Softmax(dim=1)"},
      {"log_softmax", std::make_shared<LogSoftmax>(0), "LogSoftmax(dim=0)"},
      {"hardtanh", std::make_shared<Hardtanh>(-0.5, 1.5), "Hardtanh(min_val=-0.5, max_val=1.5)"},
      {"relu6", std::make_shared<ReLU6>(), "ReLU6()"},
      {"mish", std::make_shared<Mish>(), "Mish()"},
      {"softplus", std::make_shared<Softplus>(2.0, 1.0), "Softplus(beta=2.0, threshold=1.0)"},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(matches_torch(c.module->forward(x), c.name, 1e-7, 1e-9)) << c.name;
    EXPECT_EQ(c.module->repr(), c.repr);
  }
  // inplace writes into the input.
  Tensor y = x.clone();
  Tensor out = ReLU(true).forward(y);
  EXPECT_TRUE(out.is_same(y));
  EXPECT_TRUE(matches_torch(y, "relu"));
  EXPECT_EQ(ReLU(true).repr(), "ReLU(inplace=True)");
  EXPECT_EQ(Softmax().repr(), "Softmax(dim=None)");
}

}  // namespace
}  // namespace kiln
