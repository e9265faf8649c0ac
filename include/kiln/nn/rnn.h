#pragma once
// LSTM (torch.nn.LSTM): single or multi-layer, optionally bidirectional, with PyTorch's parameter
// names weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} (suffix "_reverse" for the
// backward direction) and gate order (input, forget, cell, output). Every weight and bias starts
// U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
#include <kiln/nn/module.h>

#include <optional>
#include <tuple>
#include <utility>

namespace kiln::nn {

class LSTM : public Module {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, int64_t num_layers = 1, bool bias = true,
       bool batch_first = false, double dropout = 0.0, bool bidirectional = false);
  void reset_parameters();

  // input (L, N, input_size), (N, L, input_size) when batch_first, or unbatched (L, input_size);
  // state (h_0, c_0), each (num_layers * num_directions, N, hidden_size) (no N when unbatched),
  // zeros when absent. Returns (output (L, N, num_directions * hidden_size) in input's layout,
  // (h_n, c_n)). Dropout (training only) applies to each layer's output but the last.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, const std::optional<std::pair<Tensor, Tensor>>& state);
  // The output only (state starts at zero).
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  int64_t input_size, hidden_size, num_layers;
  bool bias, batch_first;
  double dropout;
  bool bidirectional;

  // weights[layer * num_directions + direction] = {w_ih, w_hh, b_ih, b_hh}.
  std::vector<std::vector<Tensor>> all_weights;
};

}  // namespace kiln::nn
