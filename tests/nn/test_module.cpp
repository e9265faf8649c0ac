// Module core: registration, PyTorch's dotted names, state_dict round trips, strict/non-strict
// loading, train/eval, to(dtype), zero_grad, apply, printing, and gradients through a model.
#include <kiln/kiln.h>

#include <gtest/gtest.h>

#include <sstream>

#include "test_util.h"

namespace kiln {
namespace {

using namespace kiln::nn;
using testing::all_close;
using testing::throws_error;

// The structure of the Python model in the comment below; its names were printed by PyTorch 2.x:
//   class Block(nn.Module):
//       fc = nn.Linear(3, 4); bn = nn.BatchNorm1d(4)
//       layers = nn.ModuleList([nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2, bias=False)])
//       register_buffer("scale", torch.ones(2)); register_buffer("tmp", zeros(1), persistent=False)
//   class Net(nn.Module):
//       emb = nn.Embedding(5, 3); encoder = nn.Sequential(Block(), nn.Dropout())
//       heads = nn.ModuleDict({"cls": nn.Linear(2, 2)})
class Block : public Module {
 public:
  Block() : Module("Block") {
    scale = register_buffer("scale", ones({2}));
    register_buffer("tmp", zeros({1}), /*persistent=*/false);
    fc = register_module("fc", std::make_shared<Linear>(3, 4));
    bn = register_module("bn", std::make_shared<BatchNorm1d>(4));
    layers = register_module("layers", std::make_shared<ModuleList>(
                                           std::make_shared<Linear>(4, 4), std::make_shared<ReLU>(),
                                           std::make_shared<Linear>(4, 2, false)));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = bn->forward(fc->forward(x));
    for (const auto& m : *layers) h = m->forward(h);
    return h * scale;
  }
  Tensor scale;
  std::shared_ptr<Linear> fc;
  std::shared_ptr<BatchNorm1d> bn;
  std::shared_ptr<ModuleList> layers;
};

class Net : public Module {
 public:
  Net() : Module("Net") {
    emb = register_module("emb", std::make_shared<Embedding>(5, 3));
    encoder = register_module("encoder", std::make_shared<Sequential>(std::make_shared<Block>(),
                                                                      std::make_shared<Dropout>()));
    heads = register_module("heads", std::make_shared<ModuleDict>(OrderedDict<ModulePtr>{
                                         {"cls", std::make_shared<Linear>(2, 2)}}));
  }
  std::shared_ptr<Embedding> emb;
  std::shared_ptr<Sequential> encoder;
  std::shared_ptr<ModuleDict> heads;
};

std::vector<std::string> keys_of(const OrderedDict<Tensor>& d) { return d.keys(); }

TEST(NnModule, DottedNamesMatchPyTorch) {
  auto net = std::make_shared<Net>();
  EXPECT_EQ(keys_of(net->named_parameters()),
            (std::vector<std::string>{
                "emb.weight", "encoder.0.fc.weight", "encoder.0.fc.bias", "encoder.0.bn.weight",
                "encoder.0.bn.bias", "encoder.0.layers.0.weight", "encoder.0.layers.0.bias",
                "encoder.0.layers.2.weight", "heads.cls.weight", "heads.cls.bias"}));
  EXPECT_EQ(
      keys_of(net->named_buffers()),
      (std::vector<std::string>{"encoder.0.scale", "encoder.0.tmp", "encoder.0.bn.running_mean",
                                "encoder.0.bn.running_var", "encoder.0.bn.num_batches_tracked"}));
  EXPECT_EQ(keys_of(net->state_dict()),
            (std::vector<std::string>{
                "emb.weight", "encoder.0.scale", "encoder.0.fc.weight", "encoder.0.fc.bias",
                "encoder.0.bn.weight", "encoder.0.bn.bias", "encoder.0.bn.running_mean",
                "encoder.0.bn.running_var", "encoder.0.bn.num_batches_tracked",
                "encoder.0.layers.0.weight", "encoder.0.layers.0.bias", "encoder.0.layers.2.weight",
                "heads.cls.weight", "heads.cls.bias"}));
  EXPECT_EQ(
      net->named_modules().keys(),
      (std::vector<std::string>{"", "emb", "encoder", "encoder.0", "encoder.0.fc", "encoder.0.bn",
                                "encoder.0.layers", "encoder.0.layers.0", "encoder.0.layers.1",
                                "encoder.0.layers.2", "encoder.1", "heads", "heads.cls"}));
  EXPECT_EQ(net->named_children().keys(), (std::vector<std::string>{"emb", "encoder", "heads"}));
  EXPECT_EQ(net->parameters().size(), 10u);
  EXPECT_EQ(net->parameters(/*recurse=*/false).size(), 0u);
  EXPECT_EQ(net->modules().size(), 13u);
  EXPECT_EQ(net->children().size(), 3u);
  EXPECT_EQ(keys_of(net->emb->named_parameters("emb")), (std::vector<std::string>{"emb.weight"}));
  // Parameters are leaves that require grad; buffers are not; num_batches_tracked is int64.
  for (const Tensor& p : net->parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
  EXPECT_FALSE(net->named_buffers()["encoder.0.bn.running_mean"].requires_grad());
  EXPECT_EQ(net->named_buffers()["encoder.0.bn.num_batches_tracked"].dtype(), kInt64);
}

TEST(NnModule, MembersShareTheRegisteredTensors) {
  auto lin = std::make_shared<Linear>(3, 2);
  EXPECT_TRUE(lin->named_parameters()["weight"].is_same(lin->weight));
  EXPECT_TRUE(lin->get_parameter("bias").is_same(lin->bias));
  auto nobias = std::make_shared<Linear>(3, 2, false);
  EXPECT_EQ(keys_of(nobias->named_parameters()), std::vector<std::string>{"weight"});
  EXPECT_EQ(nobias->state_dict().size(), 1u);
}

TEST(NnModule, SharedParametersAreListedOnce) {
  // A tied weight (as GPT-2's wte / lm_head): named_parameters lists it once, state_dict twice.
  auto seq = std::make_shared<Sequential>(std::make_shared<Linear>(2, 2, false),
                                          std::make_shared<Linear>(2, 2, false));
  auto a = seq->at<Linear>(0), b = seq->at<Linear>(1);
  b->weight = b->register_parameter("weight", a->weight);
  EXPECT_EQ(keys_of(seq->named_parameters()), std::vector<std::string>{"0.weight"});
  EXPECT_EQ(keys_of(seq->state_dict()), (std::vector<std::string>{"0.weight", "1.weight"}));
  // A module registered twice is listed once by named_modules, as in PyTorch.
  auto shared = std::make_shared<ReLU>();
  auto twice = std::make_shared<Sequential>(shared, shared);
  EXPECT_EQ(twice->named_modules().keys(), (std::vector<std::string>{"", "0"}));
}

TEST(NnModule, RegistrationErrors) {
  Module m("Custom");
  m.register_parameter("w", zeros({2}));
  EXPECT_TRUE(throws_error([&] { m.register_buffer("w", zeros({2})); }, {"Custom", "\"w\""}));
  EXPECT_TRUE(throws_error([&] { m.register_parameter("a.b", zeros({2})); }, {"\".\""}));
  EXPECT_TRUE(throws_error([&] { m.register_parameter("", zeros({2})); }, {"empty"}));
  // Re-registering a parameter under its own name replaces it.
  m.register_parameter("w", ones({3}));
  EXPECT_EQ(m.get_parameter("w").numel(), 3);
  // A tensor with history becomes a leaf.
  Tensor x = ones({2}).requires_grad_();
  Tensor p = m.register_parameter("p", x * 2);
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  Tensor frozen = m.register_parameter("frozen", ones({2}), false);
  EXPECT_FALSE(frozen.requires_grad());
  // Default forward names the module type.
  EXPECT_TRUE(throws_error([&] { m.forward(ones({2})); }, {"Custom", "forward"}));
}

TEST(NnModule, StateDictRoundTrip) {
  auto a = std::make_shared<Net>();
  auto b = std::make_shared<Net>();
  {
    autograd::NoGradGuard g;
    a->encoder->at<Block>(0)->bn->running_mean.fill_(0.25);
    a->encoder->at<Block>(0)->bn->num_batches_tracked.fill_(7);
  }
  auto result = b->load_state_dict(a->state_dict());
  EXPECT_TRUE(result.missing_keys.empty());
  EXPECT_TRUE(result.unexpected_keys.empty());
  auto sa = a->state_dict(), sb = b->state_dict();
  ASSERT_EQ(sa.size(), sb.size());
  for (const auto& [key, t] : sa) {
    EXPECT_TRUE(all_close(sb[key], t, 0, 0)) << key;
    // Copied, not aliased.
    EXPECT_NE(sb[key].data_ptr(), t.data_ptr()) << key;
  }
  EXPECT_EQ(b->encoder->at<Block>(0)->bn->num_batches_tracked.item<int64_t>(), 7);
  // state_dict values are detached and share storage with the parameters.
  Tensor w = a->state_dict()["heads.cls.weight"];
  EXPECT_FALSE(w.requires_grad());
  EXPECT_EQ(w.data_ptr(), a->heads->at<Linear>("cls")->weight.data_ptr());
  // The non-persistent buffer stays out; parameters keep requires_grad after loading.
  EXPECT_FALSE(sa.contains("encoder.0.tmp"));
  EXPECT_TRUE(b->emb->weight.requires_grad());
  EXPECT_TRUE(b->emb->weight.is_leaf());
}

TEST(NnModule, LoadStateDictStrictAndNonStrict) {
  auto lin = std::make_shared<Linear>(3, 2);
  OrderedDict<Tensor> sd;
  sd.insert("weight", ones({2, 3}));
  sd.insert("extra", ones({1}));
  EXPECT_TRUE(throws_error(
      [&] { lin->load_state_dict(sd); },
      {"Error(s) in loading state_dict for Linear", "Missing key(s) in state_dict: \"bias\"",
       "Unexpected key(s) in state_dict: \"extra\""}));
  auto result = lin->load_state_dict(sd, /*strict=*/false);
  EXPECT_EQ(result.missing_keys, std::vector<std::string>{"bias"});
  EXPECT_EQ(result.unexpected_keys, std::vector<std::string>{"extra"});
  EXPECT_TRUE(all_close(lin->weight, ones({2, 3})));
  // A shape mismatch raises even when not strict, naming the key and both shapes.
  OrderedDict<Tensor> bad;
  bad.insert("weight", ones({4, 3}));
  EXPECT_TRUE(
      throws_error([&] { lin->load_state_dict(bad, false); },
                   {"size mismatch for weight", "torch.Size([4, 3])", "torch.Size([2, 3])"}));
  // Values of another dtype are converted on copy; a std::map works too (safetensors::load's).
  std::map<std::string, Tensor> f64 = {{"weight", full({2, 3}, 0.5, kFloat64)},
                                       {"bias", full({2}, -1.0, kFloat64)}};
  lin->load_state_dict(f64);
  EXPECT_EQ(lin->weight.dtype(), kFloat32);
  EXPECT_TRUE(all_close(lin->bias, full({2}, -1.0)));
}

TEST(NnModule, TrainEvalReachesEverySubmodule) {
  auto net = std::make_shared<Net>();
  for (const auto& m : net->modules()) EXPECT_TRUE(m->is_training());
  net->eval();
  for (const auto& m : net->modules()) EXPECT_FALSE(m->is_training());
  net->train();
  for (const auto& m : net->modules()) EXPECT_TRUE(m->is_training());
}

TEST(NnModule, DropoutFollowsTrainingMode) {
  auto drop = std::make_shared<Dropout>(0.5);
  Tensor x = ones({2000});
  Tensor y = (*drop)(x);
  auto v = y.tolist<double>();
  int64_t zeros_count = 0;
  for (double e : v) {
    EXPECT_TRUE(e == 0.0 || e == 2.0);  // kept values scaled by 1 / (1 - p)
    zeros_count += e == 0.0;
  }
  EXPECT_GT(zeros_count, 850);
  EXPECT_LT(zeros_count, 1150);
  drop->eval();
  EXPECT_TRUE((*drop)(x).is_same(x));  // the identity, as F.dropout(x, training=False) is x
  EXPECT_TRUE(throws_error([] { Dropout(1.5); }, {"between 0 and 1", "1.5"}));
}

TEST(NnModule, ToFloat64ConvertsInPlace) {
  auto net = std::make_shared<Net>();
  auto lin = net->heads->at<Linear>("cls");
  Tensor w = lin->weight;  // e.g. held by an optimizer
  auto before = w.tolist<double>();
  (w * 2.0).sum().backward();  // a float32 gradient to convert
  net->to(kFloat64);
  EXPECT_EQ(w.dtype(), kFloat64);
  EXPECT_TRUE(w.is_same(lin->weight));
  EXPECT_EQ(w.tolist<double>(), before);  // float32 -> float64 is exact
  EXPECT_EQ(w.grad().dtype(), kFloat64);
  EXPECT_TRUE(w.requires_grad());
  for (const auto& [name, t] : net->state_dict()) {
    EXPECT_EQ(t.dtype(), name == "encoder.0.bn.num_batches_tracked" ? kInt64 : kFloat64) << name;
  }
  // The converted module computes and trains in float64.
  lin->zero_grad();
  {
    autograd::NoGradGuard no_grad;
    EXPECT_EQ((*lin)(ones({1, 2}, kFloat64)).dtype(), kFloat64);
  }
  (lin->bias * lin->bias).sum().backward();
  EXPECT_TRUE(all_close(lin->bias.grad(), lin->bias.detach() * 2.0));
  EXPECT_EQ(lin->bias.grad().dtype(), kFloat64);
}

TEST(NnModule, ZeroGrad) {
  auto lin = std::make_shared<Linear>(2, 2);
  auto loss = [&] { return lin->weight.sum() + lin->bias.sum() * 3.0; };
  loss().backward();
  ASSERT_TRUE(lin->weight.grad().defined());
  lin->zero_grad(/*set_to_none=*/false);
  EXPECT_TRUE(all_close(lin->weight.grad(), zeros({2, 2})));
  EXPECT_TRUE(all_close(lin->bias.grad(), zeros({2})));
  loss().backward();
  EXPECT_TRUE(all_close(lin->bias.grad(), full({2}, 3.0)));
  lin->zero_grad();
  EXPECT_FALSE(lin->weight.grad().defined());
  EXPECT_FALSE(lin->bias.grad().defined());
}

TEST(NnModule, ApplyVisitsChildrenFirst) {
  auto net = std::make_shared<Net>();
  std::vector<std::string> order;
  net->apply([&](Module& m) { order.push_back(m.name()); });
  EXPECT_EQ(order, (std::vector<std::string>{"Embedding", "Linear", "BatchNorm1d", "Linear", "ReLU",
                                             "Linear", "ModuleList", "Block", "Dropout",
                                             "Sequential", "Linear", "ModuleDict", "Net"}));
  // A typical use: re-initialize every Linear.
  net->apply([](Module& m) {
    if (auto* lin = dynamic_cast<Linear*>(&m)) init::zeros_(lin->weight);
  });
  EXPECT_TRUE(all_close(net->heads->at<Linear>("cls")->weight, zeros({2, 2})));
}

TEST(NnModule, PrintsLikePyTorch) {
  auto net = std::make_shared<Net>();
  std::stringstream ss;
  ss << *net;
  // print(Net()) in PyTorch 2.x.
  EXPECT_EQ(ss.str(), R"(Net(
  (emb): Embedding(5, 3)
  (encoder): Sequential(
    (0): Block(
      (fc): Linear(in_features=3, out_features=4, bias=True)
      (bn): BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
      (layers): ModuleList(
        (0): Linear(in_features=4, out_features=4, bias=True)
        (1): ReLU()
        (2): Linear(in_features=4, out_features=2, bias=False)
      )
    )
    (1): Dropout(p=0.5, inplace=False)
  )
  (heads): ModuleDict(
    (cls): Linear(in_features=2, out_features=2, bias=True)
  )
))");
  // Runs of identical modules in a ModuleList print once.
  auto list = std::make_shared<ModuleList>();
  for (int i = 0; i < 3; ++i) list->push_back(std::make_shared<Linear>(2, 2));
  list->push_back(std::make_shared<ReLU>());
  EXPECT_EQ(list->repr(), R"(ModuleList(
  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
  (3): ReLU()
))");
  EXPECT_EQ(ModuleList().repr(), "ModuleList()");
}

TEST(NnModule, ContainersIndexAndErrors) {
  auto seq = std::make_shared<Sequential>(std::make_shared<Linear>(2, 3), std::make_shared<Tanh>());
  EXPECT_EQ(seq->size(), 2u);
  EXPECT_EQ((*seq)[-1]->name(), "Tanh");
  EXPECT_THROW((*seq)[2], IndexError);
  EXPECT_TRUE(throws_error([&] { seq->at<ReLU>(1); }, {"Tanh"}));
  auto dict = std::make_shared<ModuleDict>();
  dict->insert("a", std::make_shared<ReLU>());
  dict->insert("a", std::make_shared<Tanh>());  // replaces, keeping the position
  EXPECT_EQ(dict->size(), 1u);
  EXPECT_EQ((*dict)["a"]->name(), "Tanh");
  EXPECT_TRUE(throws_error([&] { (*dict)["b"]; }, {"\"b\""}));
  EXPECT_TRUE(throws_error([] { ModuleList().forward(ones({1})); }, {"ModuleList"}));
  // Named Sequential (PyTorch's Sequential(OrderedDict(...))).
  auto named = std::make_shared<Sequential>(OrderedDict<ModulePtr>{
      {"fc", std::make_shared<Linear>(2, 2)}, {"act", std::make_shared<ReLU>()}});
  EXPECT_EQ(keys_of(named->named_parameters()), (std::vector<std::string>{"fc.weight", "fc.bias"}));
}

TEST(NnModule, GradientsReachEveryParameter) {
  // Linear/Tanh/ReLU model with a cross-entropy loss: every parameter gets a gradient, and the
  // last layer's bias gradient is mean(softmax - onehot) over the batch.
  manual_seed(0);
  auto net = std::make_shared<Sequential>(std::make_shared<Linear>(4, 8), std::make_shared<Tanh>(),
                                          std::make_shared<Linear>(8, 8), std::make_shared<ReLU>(),
                                          std::make_shared<Linear>(8, 3));
  net->to(kFloat64);
  Tensor x = randn({5, 4}, kFloat64);
  Tensor y = tensor({0, 2, 1, 1, 0});
  Tensor logits = (*net)(x);
  Tensor loss = functional::cross_entropy(logits, y);
  loss.backward();
  for (const auto& [name, p] : net->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_EQ(IntList(p.grad().sizes()), IntList(p.sizes())) << name;
  }
  Tensor expected = ((logits.detach().softmax(1) - one_hot(y, 3).to(kFloat64)).sum({0}) / 5.0);
  EXPECT_TRUE(all_close(net->at<Linear>(4)->bias.grad(), expected, 1e-10, 1e-12));
}

}  // namespace
}  // namespace kiln
