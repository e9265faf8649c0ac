#pragma once
// A multilayer perceptron: Linear -> activation -> ... -> Linear, as BENCHMARKS.md's `mlp`
// (Linear(1024, 1024) -> GELU -> Linear(1024, 1024) -> GELU -> Linear(1024, 1024)).
#include <kiln/nn/activation.h>
#include <kiln/nn/container.h>
#include <kiln/nn/linear.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::models {

struct MLPConfig {
  int64_t in_features = 1024;
  // Width of each hidden layer; one activation follows each of them.
  std::vector<int64_t> hidden_features = {1024, 1024};
  int64_t out_features = 1024;
  // GELU's approximate: "none" (erf) or "tanh".
  std::string gelu_approximate = "none";
  bool bias = true;
};

// A Sequential of Linear and GELU modules named "0", "1", ... as nn.Sequential(...) would name
// them: with the default config, parameters 0.weight, 0.bias, 2.weight, 2.bias, 4.weight, 4.bias.
std::shared_ptr<nn::Sequential> mlp(const MLPConfig& config = {});

}  // namespace kiln::models
