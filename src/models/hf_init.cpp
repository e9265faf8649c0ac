#include "models/hf_init.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/models/gpt2.h>
#include <kiln/nn/embedding.h>
#include <kiln/nn/init.h>
#include <kiln/nn/linear.h>
#include <kiln/nn/normalization.h>

namespace kiln::models::detail {

void hf_init_weights(nn::Module& root, double std) {
  autograd::NoGradGuard no_grad;
  root.apply([std](nn::Module& m) {
    if (auto* linear = dynamic_cast<nn::Linear*>(&m)) {
      nn::init::normal_(linear->weight, 0.0, std);
      if (linear->bias.defined()) nn::init::zeros_(linear->bias);
    } else if (auto* conv1d = dynamic_cast<Conv1D*>(&m)) {
      nn::init::normal_(conv1d->weight, 0.0, std);
      nn::init::zeros_(conv1d->bias);
    } else if (auto* embedding = dynamic_cast<nn::Embedding*>(&m)) {
      nn::init::normal_(embedding->weight, 0.0, std);
      if (embedding->padding_idx) embedding->weight.select(0, *embedding->padding_idx).zero_();
    } else if (auto* norm = dynamic_cast<nn::LayerNorm*>(&m)) {
      if (norm->weight.defined()) nn::init::ones_(norm->weight);
      if (norm->bias.defined()) nn::init::zeros_(norm->bias);
    }
  });
}

}  // namespace kiln::models::detail
