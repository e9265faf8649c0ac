#include "ops/attention/attention_checks.h"
#include "ops/sizes_str.h"

#include "ops/iterator/tensor_iterator.h"

#include <kiln/core/error.h>

namespace kiln::ops::attention {

namespace {
std::string shape(const Tensor& t) { return sizes_str(t.sym_sizes()); }
}  // namespace

void check_qkv(const Tensor& q, const Tensor& k, const Tensor& v, int64_t min_rank,
               const char* op) {
  KILN_CHECK(q.dim() >= min_rank && k.dim() >= min_rank && v.dim() >= min_rank,
             "{}: expected query, key and value to be at least {}-dimensional, but got query {}, "
             "key {} and value {}",
             op, min_rank, shape(q), shape(k), shape(v));
  KILN_CHECK_T(TypeError, q.dtype() == k.dtype() && q.dtype() == v.dtype(),
               "{}: expected query, key and value to have the same dtype, but got query {}, key "
               "{} and value {}",
               op, dtype_name(q.dtype()), dtype_name(k.dtype()), dtype_name(v.dtype()));
  KILN_CHECK_T(TypeError, is_floating_point(q.dtype()),
               "{}: expected floating point query, key and value, but got {}", op,
               dtype_name(q.dtype()));
  KILN_CHECK(q.sym_size(-1) == k.sym_size(-1),
             "{}: query's embedding size (dim -1, {}) must match key's ({}): query {}, key {}", op,
             q.sym_size(-1).str(), k.sym_size(-1).str(), shape(q), shape(k));
  KILN_CHECK(k.sym_size(-2) == v.sym_size(-2),
             "{}: key and value must have the same sequence length (dim -2), but got key {} and "
             "value {}",
             op, shape(k), shape(v));
}

void check_dropout(double dropout_p, const char* op) {
  KILN_CHECK(dropout_p >= 0.0 && dropout_p < 1.0, "{}: expected 0 <= dropout_p < 1, but got {}", op,
             dropout_p);
}

void check_mask_dtype(const Tensor& mask, DType query_dtype, const char* op) {
  const DType d = mask.dtype();
  KILN_CHECK_T(TypeError, d == DType::Bool || d == DType::Float32 || d == query_dtype,
               "{}: expected attn_mask of dtype bool, float32 or query's dtype {}, but got {}", op,
               dtype_name(query_dtype), dtype_name(d));
}

void check_mask_shape(const Tensor& mask, SymIntList scores, const char* op) {
  bool ok = mask.dim() <= static_cast<int64_t>(scores.size());
  for (int64_t d = 1; ok && d <= mask.dim(); ++d) {
    const SymInt m = mask.sym_size(-d);
    const SymInt& s = scores[scores.size() - static_cast<size_t>(d)];
    ok = m == 1 || m == s;
  }
  KILN_CHECK(ok, "{}: attn_mask of shape {} cannot be broadcast to the attention scores' shape {}",
             op, shape(mask), sizes_str(scores));
}

void check_heads(const SymInt& q_heads, const SymInt& k_heads, const SymInt& v_heads,
                 const char* op) {
  const bool same = k_heads == q_heads && v_heads == q_heads;  // covers zero heads
  KILN_CHECK(
      same || (k_heads > 0 && v_heads > 0 && q_heads % k_heads == 0 && q_heads % v_heads == 0),
      "{}: the number of heads of key ({}) and of value ({}) must divide the number of "
      "heads of query ({})",
      op, k_heads.str(), v_heads.str(), q_heads.str());
}

}  // namespace kiln::ops::attention
