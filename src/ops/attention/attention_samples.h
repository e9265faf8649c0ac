#pragma once
// Op-info samples for the attention ops (dropout_p = 0: dropout draws cannot match PyTorch's).
#include "ops/samples.h"

namespace kiln::ops {

std::vector<Sample> sdpa_samples();
// Only inputs aten's CPU kernel accepts: 4-D, one head dim, float masks of query's dtype, L > 0.
std::vector<Sample> flash_attention_samples();

}  // namespace kiln::ops
