// The derivative of _scaled_dot_product_flash_attention_for_cpu, in kiln ops: the attention
// weights are recomputed from the saved logsumexp (P = exp(scores - lse), no second softmax), then
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dO * O)) [+ P * d lse],
//   dQ = dS K * scale,  dK = dS^T Q * scale,  d attn_mask (float) = dS.
// Key/value heads shared by several query heads (grouped-query attention) sum their heads'
// gradients. It materializes the [B, H, L, S] weights (the forward is tiled; this is not).
// Dropout cannot be replayed here: the forward's Philox offset is not among the op's outputs
// (aten's CPU kernel refuses dropout altogether), so scaled_dot_product_attention takes its math
// path when dropout meets inputs that require grad.
#include "ops/attention/attention_derivative.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/linalg.h>
#include <kiln/ops/unary.h>

#include <cmath>
#include <limits>

namespace kiln::ops::attention {
namespace {

// [B, Hk, S, D] -> [B, Hq, S, D]: query head h reads key/value head h / (Hq / Hk).
Tensor repeat_heads(const Tensor& t, int64_t q_heads) {
  const int64_t heads = t.size(1);
  if (heads == q_heads) return t;
  const int64_t r = q_heads / heads;
  return t.unsqueeze(2)
      .expand({t.size(0), heads, r, t.size(2), t.size(3)})
      .reshape({t.size(0), q_heads, t.size(2), t.size(3)});
}

// The gradient of repeat_heads: sums each group of query heads.
Tensor sum_heads(const Tensor& g, int64_t heads) {
  const int64_t q_heads = g.size(1);
  if (heads == q_heads) return g;
  return g.reshape({g.size(0), heads, q_heads / heads, g.size(2), g.size(3)}).sum({2});
}

}  // namespace

std::vector<Tensor> flash_attention_derivative(const BackwardArgs& a) {
  const Tensor &query = a.inputs[0].to_tensor(), &key = a.inputs[1].to_tensor(),
               &value = a.inputs[2].to_tensor();
  const double dropout_p = a.inputs[3].to_double();
  const bool is_causal = a.inputs[4].to_bool();
  const Tensor mask = a.inputs[5].to_optional_tensor();
  KILN_CHECK(dropout_p == 0.0,
             "_scaled_dot_product_flash_attention_for_cpu: backward with dropout_p={} > 0 cannot "
             "replay the dropout mask (use scaled_dot_product_attention, which takes its math path "
             "when inputs require grad)",
             dropout_p);
  const DType compute = query.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const int64_t q_heads = query.size(1), L = query.size(2), S = key.size(2);
  const double scale = a.inputs[6].to_optional_double().value_or(
      1.0 / std::sqrt(static_cast<double>(query.size(3))));
  const Tensor q = query.to(compute);
  const Tensor k = repeat_heads(key.to(compute), q_heads);
  const Tensor v = repeat_heads(value.to(compute), q_heads);

  Tensor scores = matmul(q, k.transpose(-2, -1)) * scale;
  if (mask.defined() && mask.dtype() != DType::Bool) scores = scores + mask.to(compute);
  Tensor keep;
  if (mask.defined() && mask.dtype() == DType::Bool) keep = mask;
  if (is_causal) {
    Tensor causal = ones({L, S}, TensorOptions(DType::Bool)).tril();
    keep = keep.defined() ? keep.logical_and(causal) : causal;
  }
  if (keep.defined()) {
    scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
  }
  // Rows with no key have lse 0 and scores -inf: their weights are exp(-inf) = 0.
  const Tensor lse = a.outputs[1].to(compute).unsqueeze(-1);
  const Tensor p = kiln::exp(scores - lse);

  const Tensor d_out = a.grad_outputs[0].to(compute);
  const Tensor out = a.outputs[0].to(compute);
  const Tensor d_value = matmul(p.transpose(-2, -1), d_out);
  const Tensor d_p = matmul(d_out, v.transpose(-2, -1));
  Tensor d_scores = p * (d_p - (d_out * out).sum({-1}, true));
  if (a.flowed(1)) d_scores = d_scores + p * a.grad_outputs[1].to(compute).unsqueeze(-1);
  const Tensor d_query = matmul(d_scores, k) * scale;
  const Tensor d_key = matmul(d_scores.transpose(-2, -1), q) * scale;
  Tensor d_mask;
  if (mask.defined() && mask.dtype() != DType::Bool) d_mask = d_scores;
  return {d_query, sum_heads(d_key, key.size(1)), sum_heads(d_value, value.size(1)), d_mask};
}

}  // namespace kiln::ops::attention
