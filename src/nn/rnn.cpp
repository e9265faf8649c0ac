#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/nn/rnn.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/shape.h>

#include <cmath>

namespace kiln::nn {

LSTM::LSTM(int64_t input_size_, int64_t hidden_size_, int64_t num_layers_, bool bias_,
           bool batch_first_, double dropout_, bool bidirectional_)
    : Module("LSTM"),
      input_size(input_size_),
      hidden_size(hidden_size_),
      num_layers(num_layers_),
      bias(bias_),
      batch_first(batch_first_),
      dropout(dropout_),
      bidirectional(bidirectional_) {
  KILN_CHECK(hidden_size > 0, "LSTM: hidden_size must be greater than zero, got {}", hidden_size);
  KILN_CHECK(num_layers > 0, "LSTM: num_layers must be greater than zero, got {}", num_layers);
  KILN_CHECK(dropout >= 0.0 && dropout <= 1.0,
             "LSTM: dropout should be a number in range [0, 1] representing "
             "the probability of "
             "an element being zeroed, got {}",
             dropout);
  const int64_t dirs = bidirectional ? 2 : 1;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    const int64_t in = layer == 0 ? input_size : hidden_size * dirs;
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string suffix = fmt::format("_l{}{}", layer, d == 1 ? "_reverse" : "");
      std::vector<Tensor> w;
      w.push_back(register_parameter("weight_ih" + suffix, kiln::empty({4 * hidden_size, in})));
      w.push_back(
          register_parameter("weight_hh" + suffix, kiln::empty({4 * hidden_size, hidden_size})));
      if (bias) {
        w.push_back(register_parameter("bias_ih" + suffix, kiln::empty({4 * hidden_size})));
        w.push_back(register_parameter("bias_hh" + suffix, kiln::empty({4 * hidden_size})));
      } else {
        w.push_back(Tensor());
        w.push_back(Tensor());
      }
      all_weights.push_back(std::move(w));
    }
  }
  reset_parameters();
}

void LSTM::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (auto& w : all_weights)
    for (Tensor& t : w)
      if (t.defined()) init::uniform_(t, -bound, bound);
}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTM::forward(
    const Tensor& input_in, const std::optional<std::pair<Tensor, Tensor>>& state) {
  KILN_CHECK(input_in.dim() == 2 || input_in.dim() == 3,
             "LSTM: expected input to be 2D (unbatched) or 3D, got {}D", input_in.dim());
  const bool batched = input_in.dim() == 3;
  Tensor input = batched ? (batch_first ? input_in.transpose(0, 1) : input_in)
                         : input_in.unsqueeze(1);  // (L, N, in)
  KILN_CHECK(input.size(2) == input_size,
             "LSTM: input.size(-1) must be equal to input_size. "
             "Expected {}, got {}",
             input_size, input.size(2));
  const int64_t L = input.size(0), N = input.size(1);
  const int64_t dirs = bidirectional ? 2 : 1;
  Tensor h0, c0;
  if (state) {
    h0 = state->first;
    c0 = state->second;
    if (!batched) {
      h0 = h0.unsqueeze(1);
      c0 = c0.unsqueeze(1);
    }
    const std::vector<int64_t> expected{num_layers * dirs, N, hidden_size};
    KILN_CHECK(IntList(h0.sizes()) == IntList(expected) && IntList(c0.sizes()) == IntList(expected),
               "LSTM: expected hidden state sizes ({}, {}, {}), got [{}] and [{}]", expected[0],
               expected[1], expected[2], fmt::join(h0.sizes(), ", "), fmt::join(c0.sizes(), ", "));
  } else {
    h0 = zeros({num_layers * dirs, N, hidden_size}, input.dtype());
    c0 = h0;
  }

  std::vector<Tensor> h_n, c_n;
  Tensor layer_input = input;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<Tensor> dir_outputs;
    for (int64_t d = 0; d < dirs; ++d) {
      const auto& w = all_weights[static_cast<size_t>(layer * dirs + d)];
      // Input projections of every step at once: (L, N, 4H).
      Tensor x_proj = functional::linear(layer_input, w[0], w[2]);
      Tensor h = h0[layer * dirs + d], c = c0[layer * dirs + d];
      std::vector<Tensor> steps(static_cast<size_t>(L));
      for (int64_t s = 0; s < L; ++s) {
        const int64_t t = d == 0 ? s : L - 1 - s;
        Tensor gates = x_proj[t] + functional::linear(h, w[1], w[3]);
        auto g = gates.chunk(4, 1);
        Tensor i = g[0].sigmoid(), f = g[1].sigmoid(), cell = g[2].tanh(), o = g[3].sigmoid();
        c = f * c + i * cell;
        h = o * c.tanh();
        steps[static_cast<size_t>(t)] = h;
      }
      dir_outputs.push_back(stack(steps, 0));
      h_n.push_back(h);
      c_n.push_back(c);
    }
    layer_input = dirs == 1 ? dir_outputs[0] : cat(dir_outputs, 2);
    if (dropout > 0.0 && is_training() && layer + 1 < num_layers)
      layer_input = functional::dropout(layer_input, dropout, true);
  }
  Tensor output = layer_input, hn = stack(h_n, 0), cn = stack(c_n, 0);
  if (!batched) {
    output = output.squeeze(1);
    hn = hn.squeeze(1);
    cn = cn.squeeze(1);
  } else if (batch_first) {
    output = output.transpose(0, 1);
  }
  return {output, {hn, cn}};
}

Tensor LSTM::forward(const Tensor& input) { return std::get<0>(forward(input, std::nullopt)); }

std::string LSTM::extra_repr() const {
  std::string s = fmt::format("{}, {}", input_size, hidden_size);
  if (num_layers != 1) s += fmt::format(", num_layers={}", num_layers);
  if (!bias) s += ", bias=False";
  if (batch_first) s += ", batch_first=True";
  if (dropout != 0.0) s += ", dropout=" + py_float(dropout);
  if (bidirectional) s += ", bidirectional=True";
  return s;
}

}  // namespace kiln::nn
