// MLP and ResNet against torch.nn.Sequential and torchvision's ResNet-18 (reference data from
// tests/models/export_reference.py), plus their structure against torchvision's parameter counts.
#include "models/reference_check.h"

#include <kiln/models/models.h>

namespace kiln {
namespace {

using models_testing::expect_gradients_match;
using models_testing::matches_reference;
using models_testing::ReferenceData;
using models_testing::weighted_sum;

int64_t parameter_count(nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

TEST(ModelsMLP, StructureFollowsConfig) {
  auto net = models::mlp();
  // Linear(1024,1024) -> GELU -> Linear -> GELU -> Linear, as BENCHMARKS.md's mlp.
  EXPECT_EQ(net->size(), 5u);
  EXPECT_EQ(parameter_count(*net), 3 * (1024 * 1024 + 1024));
  auto keys = net->state_dict().keys();
  EXPECT_EQ(keys, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias", "4.weight",
                                            "4.bias"}));
  EXPECT_TRUE(testing::throws_error([] { models::mlp({0, {4}, 2}); }, {"mlp", "positive"}));
}

TEST(ModelsReference, MLPOutputMatchesTorch) {
  ReferenceData data("mlp");
  KILN_REQUIRE_REFERENCE(data);
  auto net = models::mlp({32, {48, 40}, 16});
  net->load_state_dict(data.with_prefix("state"));
  autograd::NoGradGuard no_grad;
  EXPECT_TRUE(matches_reference(net->forward(data["input.x"]), data["output.y"]));
}

TEST(ModelsReference, MLPGradientsMatchTorch) {
  ReferenceData data("mlp");
  KILN_REQUIRE_REFERENCE(data);
  auto net = models::mlp({32, {48, 40}, 16});
  net->load_state_dict(data.with_prefix("state"));
  weighted_sum(data, "y", net->forward(data["input.x"])).backward();
  expect_gradients_match(data, *net);
}

TEST(ModelsResNet, ParameterCountsMatchTorchvision) {
  // torchvision: sum(p.numel() for p in resnetXX().parameters()).
  EXPECT_EQ(parameter_count(*models::resnet18()), 11689512);
  EXPECT_EQ(parameter_count(*models::resnet34()), 21797672);
  EXPECT_EQ(parameter_count(*models::resnet50()), 25557032);
}

TEST(ModelsResNet, TorchvisionNamesAndInit) {
  auto net = models::resnet50(10);
  auto sd = net->state_dict();
  for (const char* key : {"conv1.weight", "bn1.running_var", "layer1.0.downsample.0.weight",
                          "layer1.0.downsample.1.num_batches_tracked", "layer3.5.conv3.weight",
                          "layer4.2.bn3.bias", "fc.weight", "fc.bias"}) {
    EXPECT_TRUE(sd.contains(key)) << key;
  }
  EXPECT_EQ(sd.size(), 320u);  // len(torchvision.models.resnet50().state_dict())
  EXPECT_EQ(IntList(net->fc->weight.sizes()), IntList({10, 2048}));
  // kaiming_normal(fan_out, relu): std sqrt(2 / (64 * 7 * 7)) for conv1.
  Tensor w = net->conv1->weight;
  double std_expected = std::sqrt(2.0 / (64 * 49));
  EXPECT_NEAR(w.std().item<double>(), std_expected, 0.05 * std_expected);
  EXPECT_EQ(net->layer2->at<models::Bottleneck>(0)->bn2->weight.sum().item<double>(), 128.0);
  EXPECT_EQ(net->layer2->at<models::Bottleneck>(0)->bn2->bias.abs().sum().item<double>(), 0.0);
}

TEST(ModelsResNet, RejectsBadInput) {
  auto net = models::resnet18(4);
  EXPECT_TRUE(testing::throws_error(
      [&] {
        net->forward(zeros({1, 1, 32, 32}));
      },
      {"ResNet", "channels"}));
}

std::shared_ptr<models::ResNet> loaded_resnet18(const ReferenceData& data) {
  auto net = models::resnet18(10);
  net->load_state_dict(data.with_prefix("state"));
  return net;
}

TEST(ModelsReference, ResNet18OutputsMatchTorchvision) {
  ReferenceData data("resnet18");
  KILN_REQUIRE_REFERENCE(data);
  auto net = loaded_resnet18(data);
  autograd::NoGradGuard no_grad;
  net->eval();
  EXPECT_TRUE(matches_reference(net->forward(data["input.x"]), data["output.eval"]));
  // Training mode: batch statistics normalize and the running statistics move.
  net->train();
  EXPECT_TRUE(matches_reference(net->forward(data["input.x"]), data["output.train"]));
  auto buffers = net->named_buffers();
  auto after = data.with_prefix("after");
  for (const auto& [name, expected] : after.items()) {
    EXPECT_TRUE(matches_reference(buffers[name], expected)) << name;
  }
}

TEST(ModelsReference, ResNet18GradientsMatchTorchvision) {
  ReferenceData data("resnet18");
  KILN_REQUIRE_REFERENCE(data);
  auto net = loaded_resnet18(data);
  net->train();
  weighted_sum(data, "train", net->forward(data["input.x"])).backward();
  expect_gradients_match(data, *net);
}

}  // namespace
}  // namespace kiln
