// Pooling, losses, MultiheadAttention, TransformerEncoderLayer and LSTM against
// PyTorch (float64), with weights and inputs from the same deterministic
// sequences on both sides (see tests/nn/make_reference_values.py, which wrote
// reference_values.h).
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
                                         double rtol = 1e-7, double atol = 1e-9) {
  return all_close(out, torch_output(name), rtol, atol);
}

TEST(NnLayers, Pooling) {
  autograd::NoGradGuard no_grad;  // forward values only
  Tensor x = seq({2, 3, 6, 7}, 0.53, 0.1);
  MaxPool2d mp(3, 2, 1);
  EXPECT_TRUE(matches_torch(mp(x), "max_pool2d"));
  EXPECT_EQ(mp.repr(),
            "MaxPool2d(kernel_size=3, stride=2, padding=1, "
            "dilation=1, ceil_mode=False)");
  MaxPool2d mp_ceil({2, 3}, std::vector<int64_t>{2, 2}, 0, 1, true);
  EXPECT_TRUE(matches_torch(mp_ceil(x), "max_pool2d_ceil"));
  EXPECT_EQ(MaxPool2d(2).repr(),
            "MaxPool2d(kernel_size=2, stride=2, "
            "padding=0, dilation=1, ceil_mode=False)");
  AvgPool2d ap(3, std::vector<int64_t>{2}, 1, false,
               /*count_include_pad=*/false);
  EXPECT_TRUE(matches_torch(ap(x), "avg_pool2d"));
  EXPECT_EQ(ap.repr(), "AvgPool2d(kernel_size=3, stride=2, padding=1)");
  AdaptiveAvgPool2d aap({4, 3});
  EXPECT_TRUE(matches_torch(aap(x), "adaptive_avg_pool2d"));
  EXPECT_EQ(aap.repr(), "AdaptiveAvgPool2d(output_size=(4, 3))");
  EXPECT_EQ(AdaptiveAvgPool2d(1).repr(), "AdaptiveAvgPool2d(output_size=1)");
  EXPECT_TRUE(all_close(AdaptiveAvgPool2d(1)(x), x.mean({2, 3}, true), 1e-12, 1e-14));
  EXPECT_TRUE(throws_error([&] { mp(ones({4, 4})); }, {"MaxPool2d", "2D"}));
  // Flatten / Unflatten / Identity.
  Flatten flat;
  EXPECT_EQ(IntList(flat(x).sizes()), IntList({2, 126}));
  EXPECT_EQ(flat.repr(), "Flatten(start_dim=1, end_dim=-1)");
  EXPECT_EQ(IntList(Unflatten(1, {3, 42})(flat(x)).sizes()), IntList({2, 3, 42}));
  EXPECT_TRUE(Identity()(x).is_same(x));
}

TEST(NnLayers, Losses) {
  autograd::NoGradGuard no_grad;  // forward values only
  Tensor logits = seq({4, 5}, 0.9, 0.3) * 2.0;
  Tensor target = tensor({1, 0, 4, 2});
  Tensor cw = seq({5}, 0.4, 1.0).abs() + 0.5;
  Tensor tgt = seq({4, 5}, 0.6, 0.9);
  auto scalar = [](const Tensor& t) { return t.reshape({1}); };
  EXPECT_TRUE(matches_torch(scalar(CrossEntropyLoss()(logits, target)), "cross_entropy"));
  CrossEntropyLoss ce_opts({.weight = cw, .ignore_index = 4, .label_smoothing = 0.1});
  EXPECT_TRUE(matches_torch(scalar(ce_opts(logits, target)), "cross_entropy_opts"));
  EXPECT_EQ(ce_opts.named_buffers().keys(), std::vector<std::string>{"weight"});
  EXPECT_TRUE(matches_torch(scalar(NLLLoss({.reduction = "sum"})(logits.log_softmax(1), target)),
                            "nll_loss"));
  EXPECT_TRUE(matches_torch(scalar(MSELoss()(logits, tgt)), "mse_loss"));
  EXPECT_TRUE(matches_torch(scalar(L1Loss("sum")(logits, tgt)), "l1_loss"));
  EXPECT_TRUE(matches_torch(scalar(SmoothL1Loss({.beta = 0.5})(logits, tgt)), "smooth_l1_loss"));
  BCEWithLogitsLoss bce({.pos_weight = cw});
  EXPECT_TRUE(matches_torch(scalar(bce(logits, (tgt > 0.0).to(kFloat64))), "bce_with_logits"));
  EXPECT_EQ(bce.repr(), "BCEWithLogitsLoss()");
  EXPECT_EQ(MSELoss().repr(), "MSELoss()");
}

TEST(NnLayers, MultiheadAttention) {
  autograd::NoGradGuard no_grad;  // forward values only
  auto m = prepared(std::make_shared<MultiheadAttention>(8, 2), 0.11, 0.3);
  EXPECT_EQ(m->named_parameters().keys(),
            (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                      "out_proj.bias"}));
  EXPECT_EQ(m->repr(), R"(MultiheadAttention(
  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
))");
  Tensor xq = seq({3, 2, 8}, 0.29, 0.7), xk = seq({4, 2, 8}, 0.43, -0.2);
  auto [out, w] = m->forward(xq, xq, xq);
  EXPECT_TRUE(matches_torch(out, "mha_self_out"));
  EXPECT_TRUE(matches_torch(w, "mha_self_weights"));
  Tensor kpm = tensor({{false, false, true, false}, {false, true, false, false}});
  Tensor am =
      tensor({{0.0, -1.0, 0.5, 0.0}, {0.2, 0.0, 0.0, -0.3}, {0.0, 0.0, 0.0, 0.0}}, kFloat64);
  auto [out2, w2] = m->forward(xq, xk, xk * 0.5, kpm, true, am,
                               /*average_attn_weights=*/false);
  EXPECT_TRUE(matches_torch(out2, "mha_cross_out"));
  EXPECT_TRUE(matches_torch(w2, "mha_cross_weights"));
  auto mb = prepared(std::make_shared<MultiheadAttention>(8, 2, 0.0, true,
                                                          /*batch_first=*/true),
                     0.11, 0.3);
  Tensor causal = ones({3, 4}, kBool).triu(2);
  auto [out3, w3] = mb->forward(xq.transpose(0, 1), xk.transpose(0, 1), xk.transpose(0, 1),
                                Tensor(), /*need_weights=*/false, causal);
  EXPECT_FALSE(w3.defined());
  EXPECT_TRUE(matches_torch(out3, "mha_batch_first_out"));
  // Unbatched input gives the batched result's slice.
  auto [single, single_w] = m->forward(xq.select(1, 0), xq.select(1, 0), xq.select(1, 0));
  EXPECT_TRUE(all_close(single, torch_output("mha_self_out").select(1, 0), 1e-7, 1e-9));
  EXPECT_TRUE(throws_error([] { MultiheadAttention(10, 3); }, {"divisible"}));
}

TEST(NnLayers, TransformerEncoderLayer) {
  autograd::NoGradGuard no_grad;  // forward values only
  Tensor xq = seq({3, 2, 8}, 0.29, 0.7);
  Tensor kpm = tensor({{false, false, true}, {false, false, false}});
  for (bool norm_first : {false, true}) {
    const std::string act = norm_first ? "gelu" : "relu";
    auto m = prepared(
        std::make_shared<TransformerEncoderLayer>(8, 2, 16, 0.0, act, 1e-5, false, norm_first),
        0.13, 0.2);
    m->eval();
    EXPECT_TRUE(matches_torch(m->forward(xq, Tensor(), kpm), "transformer_" + act)) << act;
  }
  auto m = std::make_shared<TransformerEncoderLayer>(8, 2, 16);
  EXPECT_EQ(m->named_parameters().keys(),
            (std::vector<std::string>{
                "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"}));
  // print(nn.TransformerEncoderLayer(8, 2, 16)) in PyTorch 2.x.
  EXPECT_EQ(m->repr(), R"(TransformerEncoderLayer(
  (self_attn): MultiheadAttention(
    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
  )
  (linear1): Linear(in_features=8, out_features=16, bias=True)
  (dropout): Dropout(p=0.1, inplace=False)
  (linear2): Linear(in_features=16, out_features=8, bias=True)
  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (dropout1): Dropout(p=0.1, inplace=False)
  (dropout2): Dropout(p=0.1, inplace=False)
))");
}

TEST(NnLayers, LSTM) {
  autograd::NoGradGuard no_grad;  // forward values only
  Tensor xl = seq({5, 2, 3}, 0.31, 0.4);
  auto m = prepared(std::make_shared<LSTM>(3, 4), 0.17, 0.05);
  EXPECT_EQ(m->named_parameters().keys(),
            (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}));
  auto [out, state] = m->forward(xl, std::nullopt);
  EXPECT_TRUE(matches_torch(out, "lstm_out"));
  EXPECT_TRUE(matches_torch(std::get<0>(state), "lstm_h"));
  EXPECT_TRUE(matches_torch(std::get<1>(state), "lstm_c"));
  EXPECT_EQ(m->repr(), "LSTM(3, 4)");

  auto m2 =
      prepared(std::make_shared<LSTM>(3, 4, 2, true, /*batch_first=*/true, 0.0, true), 0.17, 0.05);
  EXPECT_EQ(m2->named_parameters().keys(),
            (std::vector<std::string>{
                "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse",
                "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_ih_l1",
                "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_ih_l1_reverse",
                "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"}));
  EXPECT_EQ(IntList(m2->get_parameter("weight_ih_l1").sizes()), IntList({16, 8}));
  Tensor h0 = seq({4, 5, 4}, 0.2, 0.0) * 0.5, c0 = seq({4, 5, 4}, 0.3, 1.0) * 0.5;
  auto [out2, state2] = m2->forward(xl.transpose(0, 1).reshape({5, 2, 3}), std::make_pair(h0, c0));
  EXPECT_TRUE(matches_torch(out2, "lstm2_out"));
  EXPECT_TRUE(matches_torch(std::get<0>(state2), "lstm2_h"));
  EXPECT_TRUE(matches_torch(std::get<1>(state2), "lstm2_c"));
  EXPECT_EQ(LSTM(3, 4, 2, true, true, 0.1, true).repr(),
            "LSTM(3, 4, num_layers=2, batch_first=True, dropout=0.1, "
            "bidirectional=True)");
  EXPECT_TRUE(throws_error([&] { m->forward(ones({5, 2, 7}, kFloat64)); }, {"input_size", "7"}));
}

TEST(NnGradients, LstmAndAttentionBackward) {
  // LSTM and MultiheadAttention (need_weights) are built from ops with
  // derivatives (linear, sigmoid, tanh, softmax, matmul...): every parameter
  // gets a gradient. Checked against float64 central differences on a few
  // entries.
  manual_seed(4);
  auto lstm = std::make_shared<LSTM>(3, 4);
  lstm->to(kFloat64);
  auto mha = std::make_shared<MultiheadAttention>(4, 2);
  mha->to(kFloat64);
  Tensor x = randn({5, 2, 3}, kFloat64);
  auto loss_fn = [&]() {
    Tensor h = lstm->forward(x);
    return std::get<0>(mha->forward(h, h, h)).square().sum();
  };
  loss_fn().backward();
  std::vector<Tensor> params = lstm->parameters();
  for (const Tensor& p : mha->parameters()) params.push_back(p);
  for (Tensor p : params) {
    ASSERT_TRUE(p.grad().defined());
    // Central difference of the first element.
    autograd::NoGradGuard no_grad;
    Tensor flat = p.view({-1});
    const double orig = flat[0].item<double>(), eps = 1e-6;
    flat[0].fill_(orig + eps);
    const double up = loss_fn().item<double>();
    flat[0].fill_(orig - eps);
    const double down = loss_fn().item<double>();
    flat[0].fill_(orig);
    EXPECT_NEAR(p.grad().view({-1})[0].item<double>(), (up - down) / (2 * eps), 1e-6);
  }
}

}  // namespace
}  // namespace kiln
