// Gradients through layers against float64 central differences.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <functional>

#include "test_util.h"

namespace kiln {
namespace {

using namespace kiln::nn;

// Compares each parameter's .grad (after one backward of loss()) with central
// differences on up to `entries` of its elements.
void expect_grads_match_finite_differences(Module& model, const std::function<Tensor()>& loss,
                                           int64_t entries = 3) {
  model.zero_grad();
  loss().backward();
  for (const auto& [name, p] : model.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    autograd::NoGradGuard no_grad;
    Tensor flat = p.view({-1});
    Tensor grad = p.grad().reshape({-1});
    for (int64_t i = 0; i < std::min(entries, flat.numel()); ++i) {
      const double orig = flat[i].item<double>(), eps = 1e-6;
      flat[i].fill_(orig + eps);
      const double up = loss().item<double>();
      flat[i].fill_(orig - eps);
      const double down = loss().item<double>();
      flat[i].fill_(orig);
      EXPECT_NEAR(grad[i].item<double>(), (up - down) / (2 * eps), 1e-6) << name << "[" << i << "]";
    }
  }
}

TEST(NnGradients, MlpWithLinearTanhReluSoftmax) {
  manual_seed(5);
  auto net = std::make_shared<Sequential>(
      std::make_shared<Linear>(3, 6), std::make_shared<Tanh>(), std::make_shared<Linear>(6, 6),
      std::make_shared<ReLU>(), std::make_shared<Linear>(6, 4), std::make_shared<LogSoftmax>(1));
  net->to(kFloat64);
  Tensor x = randn({7, 3}, kFloat64);
  Tensor y = tensor({0, 1, 2, 3, 0, 1, 2});
  expect_grads_match_finite_differences(*net, [&] { return NLLLoss()((*net)(x), y); });
}

TEST(NnGradients, ConvBatchNormPoolNeedsOpDerivatives) {
  manual_seed(6);
  auto net = std::make_shared<Sequential>(
      std::make_shared<Conv2d>(2, 4, 3, 1, 1), std::make_shared<BatchNorm2d>(4),
      std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2), std::make_shared<Conv2d>(4, 3, 2),
      std::make_shared<AdaptiveAvgPool2d>(1), std::make_shared<Flatten>());
  net->to(kFloat64);
  Tensor x = randn({2, 2, 6, 6}, kFloat64);
  // BatchNorm in training updates its running stats on every call; the loss
  // does not read them.
  expect_grads_match_finite_differences(*net, [&] { return (*net)(x).square().sum(); });
}

TEST(NnGradients, EmbeddingLayerNormGeluNeedsOpDerivatives) {
  manual_seed(7);
  auto emb = std::make_shared<Embedding>(10, 6);
  auto net = std::make_shared<Sequential>(std::make_shared<LayerNorm>(6), std::make_shared<GELU>(),
                                          std::make_shared<Linear>(6, 2),
                                          std::make_shared<GroupNorm>(1, 2));
  auto both = std::make_shared<Sequential>(emb, net);
  both->to(kFloat64);
  Tensor idx = tensor({{1, 0, 3}, {9, 3, 2}});
  expect_grads_match_finite_differences(*both, [&] {
    Tensor h = (*emb)(idx);  // (2, 3, 6)
    return (*net)(h.reshape({6, 6})).square().sum();
  });
  // The padding row gets no gradient although it is looked up (PyTorch's padding_idx).
  auto padded = std::make_shared<Embedding>(4, 3, 0);
  (*padded)(tensor({0, 1, 0})).sum().backward();
  EXPECT_TRUE(testing::all_close(padded->weight.grad()[0], zeros({3}), 0, 0));
  EXPECT_TRUE(testing::all_close(padded->weight.grad()[1], ones({3}), 0, 0));
}

}  // namespace
}  // namespace kiln
