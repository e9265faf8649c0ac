#include "ops/attention/attention_samples.h"

namespace kiln::ops {

namespace {

Tensor sample(IntList sizes, uint64_t seed, DType dtype = kFloat32) {
  return make_sample(sizes, dtype, -2.0, 2.0, seed);
}

// [B, H, n, d] viewed from a [B, n, H, d] tensor, the layout transformers produce.
Tensor heads_view(int64_t b, int64_t h, int64_t n, int64_t d, uint64_t seed,
                  DType dtype = kFloat32) {
  return sample({b, n, h, d}, seed, dtype).transpose(1, 2);
}

// A bool mask, about 70% of the positions taking part.
Tensor bool_mask(IntList sizes) { return make_sample(sizes, kFloat32, 0.0, 1.0, 7).gt(0.3); }

}  // namespace

std::vector<Sample> sdpa_samples() {
  const auto none = IValue();
  std::vector<Sample> s;
  s.push_back({{sample({2, 3, 5, 8}, 1), sample({2, 3, 7, 8}, 2), sample({2, 3, 7, 4}, 3)},
               "4-D, L != S, Ev != E"});
  s.push_back(
      {{sample({2, 3, 5, 8}, 1), sample({2, 3, 7, 8}, 2), sample({2, 3, 7, 8}, 3), none, 0.0, true},
       "causal, L < S"});
  s.push_back(
      {{sample({1, 2, 9, 4}, 1), sample({1, 2, 4, 4}, 2), sample({1, 2, 4, 4}, 3), none, 0.0, true},
       "causal, L > S"});
  s.push_back({{sample({2, 3, 5, 8}, 1), sample({2, 3, 7, 8}, 2), sample({2, 3, 7, 8}, 3),
                bool_mask({5, 7})},
               "bool mask broadcast over batch and heads"});
  s.push_back({{sample({2, 3, 5, 8}, 1), sample({2, 3, 7, 8}, 2), sample({2, 3, 7, 8}, 3),
                sample({2, 1, 1, 7}, 4)},
               "float mask [B, 1, 1, S]"});
  {
    Tensor m = make_sample({4, 6}, kFloat32, 0.0, 1.0, 9).gt(0.5);
    m.select(0, 1).fill_(0);
    s.push_back({{sample({4, 8}, 1), sample({6, 8}, 2), sample({6, 3}, 3), m},
                 "2-D with a fully masked row"});
  }
  s.push_back({{sample({1, 4, 3, 8}, 1), sample({1, 2, 5, 8}, 2), sample({1, 2, 5, 8}, 3), none,
                0.0, false, 0.3, true},
               "grouped-query attention with scale"});
  s.push_back(
      {{sample({6, 5, 8}, 1), sample({6, 7, 8}, 2), sample({6, 7, 8}, 3), none, 0.0, false, 1.5},
       "3-D, custom scale"});
  s.push_back({{sample({2, 1, 3, 4, 8}, 1), sample({3, 6, 8}, 2), sample({1, 3, 6, 8}, 3)},
               "5-D query, broadcast key and value"});
  s.push_back({{heads_view(2, 3, 5, 8, 1), heads_view(2, 3, 7, 8, 2), heads_view(2, 3, 7, 8, 3)},
               "transposed from [B, L, H, E]"});
  s.push_back({{sample({2, 3, 70, 16}, 1), sample({2, 3, 600, 16}, 2), sample({2, 3, 600, 16}, 3),
                none, 0.0, true},
               "causal over several query and key blocks"});
  s.push_back({{sample({2, 3, 5, 8}, 1, kFloat64), sample({2, 3, 7, 8}, 2, kFloat64),
                sample({2, 3, 7, 8}, 3, kFloat64), sample({5, 7}, 4, kFloat64)},
               "float64 with float mask"});
  s.push_back({{sample({2, 3, 5, 8}, 1, kBFloat16), sample({2, 3, 7, 8}, 2, kBFloat16),
                sample({2, 3, 7, 8}, 3, kBFloat16)},
               "bfloat16"});
  s.push_back({{sample({2, 0, 8}, 1), sample({2, 7, 8}, 2), sample({2, 7, 8}, 3)}, "empty L"});
  s.push_back({{sample({2, 3, 5, 8}, 1), sample({2, 3, 7, 8}, 2), sample({2, 3, 7, 8}, 3),
                bool_mask({5, 7}), 0.0, true},
               "error: is_causal with attn_mask"});
  return s;
}

std::vector<Sample> flash_attention_samples() {
  std::vector<Sample> s;
  s.push_back(
      {{sample({2, 3, 5, 8}, 1), sample({2, 3, 7, 8}, 2), sample({2, 3, 7, 8}, 3)}, "L != S"});
  s.push_back(
      {{sample({2, 3, 5, 8}, 1), sample({2, 3, 7, 8}, 2), sample({2, 3, 7, 8}, 3), 0.0, true},
       "causal"});
  s.push_back({{sample({2, 3, 5, 8}, 1), sample({2, 3, 7, 8}, 2), sample({2, 3, 7, 8}, 3), 0.0,
                false, sample({5, 7}, 4), 0.5},
               "2-D float mask, scale"});
  s.push_back({{sample({2, 3, 5, 8}, 1), sample({2, 3, 7, 8}, 2), sample({2, 3, 7, 8}, 3), 0.0,
                true, sample({2, 1, 5, 7}, 4)},
               "causal and a 4-D mask"});
  s.push_back({{sample({1, 4, 3, 8}, 1), sample({1, 1, 5, 8}, 2), sample({1, 1, 5, 8}, 3)},
               "one key/value head for four query heads"});
  s.push_back({{heads_view(2, 3, 5, 8, 1), heads_view(2, 3, 7, 8, 2), heads_view(2, 3, 7, 8, 3)},
               "transposed from [B, L, H, E]"});
  s.push_back({{sample({1, 2, 70, 16}, 1), sample({1, 2, 600, 16}, 2), sample({1, 2, 600, 16}, 3),
                0.0, true},
               "causal over several query and key blocks"});
  s.push_back({{sample({2, 3, 5, 8}, 1, kFloat64), sample({2, 3, 7, 8}, 2, kFloat64),
                sample({2, 3, 7, 8}, 3, kFloat64)},
               "float64"});
  return s;
}

}  // namespace kiln::ops
