#pragma once
// BERT as the bert and bert-dynamic workloads build it: BERT-base, or a tiny one for smoke runs.
#include <kiln/models/bert.h>

#include "case.h"

namespace kiln_bench {

inline kiln::models::BertConfig bert_config(Shapes shapes) {
  if (shapes == Shapes::full) return {};
  return {.vocab_size = 100,
          .hidden_size = 32,
          .num_hidden_layers = 2,
          .num_attention_heads = 2,
          .intermediate_size = 64,
          .max_position_embeddings = 64};
}

}  // namespace kiln_bench
