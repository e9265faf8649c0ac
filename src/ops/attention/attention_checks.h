#pragma once
// Argument checks shared by scaled_dot_product_attention and its fused CPU op. Each raises
// kiln::Error (TypeError for dtypes) naming `op`, the sizes involved and what was expected.
// Sizes may be symbolic: the comparisons then record guards.
#include <kiln/core/tensor.h>

namespace kiln::ops::attention {

// query [..., L, E], key [..., S, E], value [..., S, Ev] of one floating dtype, each at least
// `min_rank`-dimensional.
void check_qkv(const Tensor& q, const Tensor& k, const Tensor& v, int64_t min_rank, const char* op);
void check_dropout(double dropout_p, const char* op);
// attn_mask must be bool, float32 or query's dtype (PyTorch's rule).
void check_mask_dtype(const Tensor& mask, DType query_dtype, const char* op);
// attn_mask must broadcast to `scores` ([..., L, S]) without growing it.
void check_mask_shape(const Tensor& mask, SymIntList scores, const char* op);
// Grouped-query attention: key's and value's head counts must divide query's.
void check_heads(const SymInt& q_heads, const SymInt& k_heads, const SymInt& v_heads,
                 const char* op);

}  // namespace kiln::ops::attention
