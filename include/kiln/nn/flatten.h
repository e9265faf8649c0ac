#pragma once
// Flatten and Unflatten layers (torch.nn.Flatten, Unflatten).
#include <kiln/nn/module.h>

#include <vector>

namespace kiln::nn {

// Flattens dims start_dim..end_dim into one.
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& input) override { return input.flatten(start_dim, end_dim); }
  std::string extra_repr() const override {
    return fmt::format("start_dim={}, end_dim={}", start_dim, end_dim);
  }
  int64_t start_dim, end_dim;
};

// Splits dim into unflattened_size.
class Unflatten : public Module {
 public:
  Unflatten(int64_t dim, std::vector<int64_t> unflattened_size)
      : Module("Unflatten"), dim(dim), unflattened_size(std::move(unflattened_size)) {}
  Tensor forward(const Tensor& input) override { return input.unflatten(dim, unflattened_size); }
  std::string extra_repr() const override {
    return fmt::format("dim={}, unflattened_size={}", dim, py_tuple(unflattened_size));
  }
  int64_t dim;
  std::vector<int64_t> unflattened_size;
};

}  // namespace kiln::nn
