#pragma once
// Attention: PyTorch's scaled_dot_product_attention, computed on the CPU by a tiled ("flash")
// kernel that never holds a full [L, S] score matrix, and that kernel's own op, which also returns
// the per-row log-sum-exp a backward pass needs.
#include <kiln/core/tensor.h>
#include <kiln/ops/random.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <tuple>

namespace kiln {

// softmax(query @ key^T * scale + mask) @ value over the last two dims, batch dims broadcast:
// query [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev].
//  attn_mask: bool (true = may attend) or float (added to the scores), broadcastable to [..., L,
//  S]. is_causal: query i attends keys j <= i (top-left aligned, as torch.ones(L, S).tril()).
//  scale: defaults to 1 / sqrt(E). enable_gqa: key/value may have fewer heads (dim -3) than query.
//  dropout_p: attention weights dropped with this probability (Philox, from gen or the default
//  generator) and the kept ones scaled by 1 / (1 - dropout_p).
// A query row with every key masked out gives zeros, as PyTorch does.
Tensor scaled_dot_product_attention(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask = Tensor(),
    double dropout_p = 0.0, bool is_causal = false, std::optional<double> scale = std::nullopt,
    bool enable_gqa = false, Generator* gen = nullptr,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// The fused kernel on 4-D inputs: query [B, Hq, L, E], key [B, Hk, S, E], value [B, Hv, S, Ev]
// (Hk and Hv divide Hq; query head h reads key head h / (Hq / Hk)); a causal mask and attn_mask
// (bool or float, broadcastable to [B, Hq, L, S]) both apply when given. Returns
// {output [B, Hq, L, Ev] in query's layout, logsumexp [B, Hq, L] (float32, float64 for float64
// inputs) of the scaled, masked scores; 0 for a fully masked row, as aten's CPU kernel gives}.
std::tuple<Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu(
    const Tensor& query, const Tensor& key, const Tensor& value, double dropout_p = 0.0,
    bool is_causal = false, const Tensor& attn_mask = Tensor(),
    std::optional<double> scale = std::nullopt, Generator* gen = nullptr,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
