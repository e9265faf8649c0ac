// A module's state to and from a safetensors file: values survive the round trip under PyTorch's
// dotted names, and a file for another architecture is refused naming the offending keys.
#include <kiln/kiln.h>
#include <kiln/nn/checkpoint.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "test_util.h"

namespace kiln {
namespace {

using namespace kiln::nn;
namespace fs = std::filesystem;

std::shared_ptr<Sequential> small_net(int64_t hidden) {
  return std::make_shared<Sequential>(std::make_shared<Linear>(3, hidden),
                                      std::make_shared<BatchNorm1d>(hidden),
                                      std::make_shared<Linear>(hidden, 2));
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_checkpoint_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CheckpointTest, RoundTripRestoresEveryParameterAndBuffer) {
  manual_seed(1);
  auto saved = small_net(4);
  {
    autograd::NoGradGuard no_grad;
    saved->train();
    saved->forward(randn({8, 3}));  // moves the running statistics off their initial values
  }
  const std::string path = (dir_ / "net.safetensors").string();
  save_safetensors(*saved, path);

  manual_seed(2);
  auto loaded = small_net(4);
  LoadStateDictResult r = load_safetensors(*loaded, path);
  EXPECT_TRUE(r.missing_keys.empty());
  EXPECT_TRUE(r.unexpected_keys.empty());
  OrderedDict<Tensor> expected = saved->state_dict();
  OrderedDict<Tensor> got = loaded->state_dict();
  ASSERT_EQ(got.size(), 9u);  // 2 x (weight, bias) + BatchNorm's weight, bias, 3 buffers
  for (const auto& [name, tensor] : expected) {
    SCOPED_TRACE(name);
    ASSERT_NE(got.find(name), nullptr);
    EXPECT_EQ(got[name].dtype(), tensor.dtype());
    EXPECT_TRUE(testing::all_close(got[name], tensor, 0.0, 0.0));
  }
  // The loaded values are the module's own tensors: parameters still require grad.
  EXPECT_TRUE(loaded->parameters()[0].requires_grad());
}

TEST_F(CheckpointTest, AnotherArchitectureIsRefusedByName) {
  const std::string path = (dir_ / "wide.safetensors").string();
  save_safetensors(*small_net(5), path);
  auto narrow = small_net(4);
  EXPECT_TRUE(testing::throws_error([&] { load_safetensors(*narrow, path); },
                                    {"0.weight", "[5, 3]", "[4, 3]"}));
  auto linear = std::make_shared<Linear>(3, 5);
  LoadStateDictResult r = load_safetensors(*linear, path, /*strict=*/false);
  EXPECT_EQ(r.missing_keys, (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(r.unexpected_keys.size(), 9u);
}

}  // namespace
}  // namespace kiln
