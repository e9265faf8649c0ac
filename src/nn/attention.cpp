#include <kiln/nn/attention.h>
#include <kiln/nn/functional.h>
#include <kiln/nn/init.h>
#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>

#include <cmath>
#include <limits>

namespace kiln::nn {

MultiheadAttention::MultiheadAttention(int64_t embed_dim_, int64_t num_heads_, double dropout_,
                                       bool bias, bool batch_first_)
    : Module("MultiheadAttention"),
      embed_dim(embed_dim_),
      num_heads(num_heads_),
      head_dim(num_heads_ > 0 ? embed_dim_ / num_heads_ : 0),
      dropout(dropout_),
      batch_first(batch_first_) {
  KILN_CHECK(num_heads > 0 && embed_dim % num_heads == 0,
             "MultiheadAttention: embed_dim ({}) must be divisible by num_heads ({})", embed_dim,
             num_heads);
  in_proj_weight = register_parameter("in_proj_weight", kiln::empty({3 * embed_dim, embed_dim}));
  in_proj_bias = register_parameter("in_proj_bias", bias ? kiln::empty({3 * embed_dim}) : Tensor());
  out_proj = register_module(
      "out_proj", std::make_shared<NonDynamicallyQuantizableLinear>(embed_dim, embed_dim, bias));
  reset_parameters();
}

void MultiheadAttention::reset_parameters() {
  // As PyTorch's _reset_parameters: out_proj.weight keeps Linear's default
  // initialization.
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) init::zeros_(in_proj_bias);
  if (out_proj->bias.defined()) init::zeros_(out_proj->bias);
}

namespace {

// A bool mask (true = masked out) becomes an additive float mask of dtype; a
// float one is kept.
Tensor additive_mask(const Tensor& mask, DType dtype) {
  if (!mask.defined()) return mask;
  if (mask.dtype() == kBool) {
    return zeros(mask.sizes(), dtype).masked_fill(mask, -std::numeric_limits<double>::infinity());
  }
  return mask.to(dtype);
}

}  // namespace

std::tuple<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query_in, const Tensor& key_in,
                                                       const Tensor& value_in,
                                                       const Tensor& key_padding_mask,
                                                       bool need_weights, const Tensor& attn_mask,
                                                       bool average_attn_weights, bool is_causal) {
  const bool batched = query_in.dim() == 3;
  KILN_CHECK(query_in.dim() == 3 || query_in.dim() == 2,
             "MultiheadAttention: query should be unbatched 2D or batched 3D "
             "tensor, got {}D",
             query_in.dim());
  KILN_CHECK(key_in.dim() == query_in.dim() && value_in.dim() == query_in.dim(),
             "MultiheadAttention: key and value must have as many dims as "
             "query ({}), got {} "
             "and {}",
             query_in.dim(), key_in.dim(), value_in.dim());
  Tensor query = query_in, key = key_in, value = value_in;
  // To (L, N, E).
  if (!batched) {
    query = query.unsqueeze(1);
    key = key.unsqueeze(1);
    value = value.unsqueeze(1);
  } else if (batch_first) {
    query = query.transpose(0, 1);
    key = key.transpose(0, 1);
    value = value.transpose(0, 1);
  }
  const int64_t L = query.size(0), N = query.size(1), E = query.size(2), S = key.size(0);
  KILN_CHECK(E == embed_dim && key.size(2) == embed_dim && value.size(2) == embed_dim,
             "MultiheadAttention: expected query, key and value with {} "
             "features (embed_dim), "
             "got {}, {} and {}",
             embed_dim, E, key.size(2), value.size(2));
  KILN_CHECK(key.size(0) == value.size(0) && key.size(1) == N && value.size(1) == N,
             "MultiheadAttention: key [{}] and value [{}] must have the same "
             "length and query's "
             "batch size {}",
             fmt::join(key.sizes(), ", "), fmt::join(value.sizes(), ", "), N);

  // Input projections: one matmul when query, key and value are the same
  // tensor.
  Tensor q, k, v;
  if (query_in.is_same(key_in) && key_in.is_same(value_in)) {
    auto qkv = functional::linear(query, in_proj_weight, in_proj_bias).chunk(3, -1);
    q = qkv[0];
    k = qkv[1];
    v = qkv[2];
  } else {
    auto w = in_proj_weight.chunk(3, 0);
    std::vector<Tensor> b(3);
    if (in_proj_bias.defined()) b = in_proj_bias.chunk(3, 0);
    q = functional::linear(query, w[0], b[0]);
    k = functional::linear(key, w[1], b[1]);
    v = functional::linear(value, w[2], b[2]);
  }
  // (L, N, E) -> (N, H, L, hd).
  auto heads = [&](const Tensor& t, int64_t len) {
    return t.reshape({len, N, num_heads, head_dim}).permute({1, 2, 0, 3});
  };
  q = heads(q, L);
  k = heads(k, S);
  v = heads(v, S);

  // One additive mask broadcastable to (N, H, L, S).
  const DType dtype = q.dtype();
  Tensor mask;
  if (attn_mask.defined()) {
    Tensor m = additive_mask(attn_mask, dtype);
    if (m.dim() == 2) {
      KILN_CHECK(m.size(0) == L && m.size(1) == S,
                 "MultiheadAttention: the shape of the 2D attn_mask is [{}], "
                 "but should be "
                 "({}, {})",
                 fmt::join(m.sizes(), ", "), L, S);
      mask = m;
    } else {
      KILN_CHECK(m.dim() == 3 && m.size(0) == N * num_heads && m.size(1) == L && m.size(2) == S,
                 "MultiheadAttention: the shape of the 3D attn_mask is [{}], "
                 "but should be "
                 "({}, {}, {})",
                 fmt::join(m.sizes(), ", "), N * num_heads, L, S);
      mask = m.reshape({N, num_heads, L, S});
    }
  } else if (is_causal) {
    mask = full({L, S}, -std::numeric_limits<double>::infinity(), dtype).triu(1);
  }
  if (key_padding_mask.defined()) {
    Tensor kpm = key_padding_mask;
    if (!batched && kpm.dim() == 1) kpm = kpm.unsqueeze(0);
    KILN_CHECK(kpm.dim() == 2 && kpm.size(0) == N && kpm.size(1) == S,
               "MultiheadAttention: expected key_padding_mask of shape ({}, "
               "{}), got [{}]",
               N, S, fmt::join(kpm.sizes(), ", "));
    Tensor m = additive_mask(kpm, dtype).reshape({N, 1, 1, S});
    mask = mask.defined() ? mask + m : m;
  }

  const double p = is_training() ? dropout : 0.0;
  Tensor out, weights;
  if (need_weights) {
    // Explicit scores, so the weights can be returned.
    Tensor scores =
        q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(head_dim)));
    if (mask.defined()) scores = scores + mask;
    weights = scores.softmax(-1);
    // As PyTorch, the returned weights are the ones used (after dropout).
    if (p > 0.0) weights = functional::dropout(weights, p, true);
    out = weights.matmul(v);
    if (average_attn_weights) weights = weights.mean({1});
    if (!batched) weights = weights.squeeze(0);
  } else {
    out = functional::scaled_dot_product_attention(q, k, v, mask, p);
  }
  // (N, H, L, hd) -> (L, N, E), then the output projection.
  out = out.permute({2, 0, 1, 3}).reshape({L, N, embed_dim});
  out = (*out_proj)(out);
  if (!batched) {
    out = out.squeeze(1);
  } else if (batch_first) {
    out = out.transpose(0, 1);
  }
  return {out, weights};
}

}  // namespace kiln::nn
