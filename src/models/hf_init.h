#pragma once
// Hugging Face's PreTrainedModel._init_weights for BERT and GPT-2: Linear and Conv1D weights and
// Embedding tables normal(0, std) with zero biases and the padding row zeroed, LayerNorm weight 1
// bias 0.
#include <kiln/nn/module.h>

namespace kiln::models::detail {

void hf_init_weights(nn::Module& root, double std);

}  // namespace kiln::models::detail
