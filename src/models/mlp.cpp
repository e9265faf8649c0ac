#include <kiln/core/error.h>
#include <kiln/models/mlp.h>

namespace kiln::models {

std::shared_ptr<nn::Sequential> mlp(const MLPConfig& config) {
  KILN_CHECK(config.in_features > 0 && config.out_features > 0,
             "mlp: in_features ({}) and out_features ({}) must be positive", config.in_features,
             config.out_features);
  auto net = std::make_shared<nn::Sequential>();
  int64_t width = config.in_features;
  for (int64_t hidden : config.hidden_features) {
    KILN_CHECK(hidden > 0, "mlp: hidden layer widths must be positive, got {}", hidden);
    net->push_back(std::make_shared<nn::Linear>(width, hidden, config.bias));
    net->push_back(std::make_shared<nn::GELU>(config.gelu_approximate));
    width = hidden;
  }
  net->push_back(std::make_shared<nn::Linear>(width, config.out_features, config.bias));
  return net;
}

}  // namespace kiln::models
