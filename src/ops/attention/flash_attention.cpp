// _scaled_dot_product_flash_attention_for_cpu: the fused attention op on 4-D inputs, aten's CPU
// flash kernel's schema and outputs (output in query's layout, logsumexp [B, H, L] laid out as
// [B, L, H]). Wider than aten's: value's head dim may differ from query's, masks may be bool,
// key/value batch may be 1, and dropout runs (aten's kernel refuses dropout > 0).
#include "ops/attention/attention_checks.h"
#include "ops/attention/attention_derivative.h"
#include "ops/attention/attention_kernels.h"
#include "ops/attention/attention_samples.h"
#include "ops/random/generator_scope.h"

#include <kiln/ops/attention.h>
#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/linalg.h>
#include <kiln/ops/random.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/unary.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kiln::ops {

cpu::KernelDispatch<FlashAttentionKernel> flash_attention_kernels;

namespace {

constexpr const char* kFlashAttention = "_scaled_dot_product_flash_attention_for_cpu";

// Strides for `sizes` in the dim order of t's strides when t is dense (as empty_like(query)
// keeps query's layout), else row-major.
SymDimVector layout_like(IntList sizes, const Tensor& t) {
  const size_t n = sizes.size();
  if (!t.impl()->is_non_overlapping_and_dense()) return to_sym(IntList(contiguous_strides(sizes)));
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  IntList st = t.strides();
  std::stable_sort(perm.begin(), perm.end(), [&](size_t x, size_t y) { return st[x] > st[y]; });
  SymDimVector strides(n);
  int64_t s = 1;
  for (size_t i = n; i-- > 0;) {
    strides[perm[i]] = s;
    s *= std::max<int64_t>(1, sizes[perm[i]]);
  }
  return strides;
}

struct Inputs {
  Tensor q, k, v, mask;
  double dropout_p;
  bool is_causal;
  std::optional<double> scale;
};

Inputs unpack_flash_attention(const Stack& args) {
  return {args[0].to_tensor(),          args[1].to_tensor(), args[2].to_tensor(),
          args[5].to_optional_tensor(), args[3].to_double(), args[4].to_bool(),
          args[6].to_optional_double()};
}

// layout_like for symbolic sizes or strides: the same rule, its comparisons recording guards.
bool is_dense_symbolic(const Tensor& t) {
  const SymIntList sizes = t.sym_sizes(), strides = t.sym_strides();
  std::vector<size_t> perm(sizes.size());
  std::iota(perm.begin(), perm.end(), 0);
  // Innermost first; dims of size 0 or 1 last (their strides do not matter).
  std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  SymInt expected = 1;
  for (size_t d : perm) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected = expected * sizes[d];
  }
  return true;
}

SymDimVector layout_like(SymIntList sizes, const Tensor& t) {
  if (!t.impl()->has_symbolic_sizes_strides()) {
    DimVector concrete;
    bool all_concrete = true;
    for (const SymInt& s : sizes) {
      all_concrete = all_concrete && !s.is_symbolic();
      concrete.push_back(s.raw());
    }
    if (all_concrete) return layout_like(IntList(concrete), t);
  }
  const size_t n = sizes.size();
  if (!is_dense_symbolic(t)) return contiguous_strides(sizes);
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  const SymIntList st = t.sym_strides();
  std::stable_sort(perm.begin(), perm.end(), [&](size_t x, size_t y) { return st[x] > st[y]; });
  SymDimVector strides(n);
  SymInt s = 1;
  for (size_t i = n; i-- > 0;) {
    strides[perm[i]] = s;
    const SymInt& size = sizes[perm[i]];
    s = s * (size < 1 ? SymInt(1) : size);
  }
  return strides;
}

std::vector<TensorMeta> flash_meta(const Stack& args) {
  const Inputs in = unpack_flash_attention(args);
  const Tensor &q = in.q, &k = in.k, &v = in.v;
  KILN_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4,
             "{}: expected 4-D query, key and value [batch, heads, seq, dim], but got {}-D, {}-D "
             "and {}-D",
             kFlashAttention, q.dim(), k.dim(), v.dim());
  attention::check_qkv(q, k, v, 4, kFlashAttention);
  const SymInt batch = q.sym_size(0), heads = q.sym_size(1), q_len = q.sym_size(2),
               kv_len = k.sym_size(2);
  const SymInt k_batch = k.sym_size(0), v_batch = v.sym_size(0);
  KILN_CHECK((k_batch == 1 || k_batch == batch) && (v_batch == 1 || v_batch == batch),
             "{}: key's batch size ({}) and value's ({}) must be query's ({}) or 1",
             kFlashAttention, k_batch.str(), v_batch.str(), batch.str());
  attention::check_heads(heads, k.sym_size(1), v.sym_size(1), kFlashAttention);
  attention::check_dropout(in.dropout_p, kFlashAttention);
  if (in.mask.defined()) {
    attention::check_mask_dtype(in.mask, q.dtype(), kFlashAttention);
    const SymInt scores[] = {batch, heads, q_len, kv_len};
    attention::check_mask_shape(in.mask, SymIntList(scores, 4), kFlashAttention);
  }
  const SymDimVector out_sizes{batch, heads, q_len, v.sym_size(3)};
  TensorMeta out;
  out.sizes = out_sizes;
  out.strides = layout_like(SymIntList(out_sizes), q);
  out.dtype = q.dtype();
  out.device = q.device();
  // logsumexp [B, H, L] stored as [B, L, H], in the accumulation dtype.
  TensorMeta lse;
  lse.sizes = {batch, heads, q_len};
  lse.strides = {q_len * heads, 1, heads};
  lse.dtype = q.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  lse.device = q.device();
  return {out, lse};
}

void flash_impl(const Stack& args, const std::vector<Tensor>& outputs) {
  const Inputs in = unpack_flash_attention(args);
  const Tensor &out = outputs[0], &lse = outputs[1];
  if (lse.numel() == 0) return;
  const int64_t batch = in.q.size(0), heads = in.q.size(1), q_len = in.q.size(2),
                kv_len = in.k.size(2);
  // float16/bfloat16 compute in float32.
  const DType compute = in.q.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  auto batched = [&](const Tensor& t) {
    Tensor c = t.to(compute);
    return c.expand({batch, c.size(1), c.size(2), c.size(3)});
  };
  FlashAttentionArgs a;
  a.q = batched(in.q);
  a.k = batched(in.k);
  a.v = batched(in.v);
  if (in.mask.defined()) {
    Tensor m = in.mask.dtype() == DType::Bool ? in.mask : in.mask.to(compute);
    a.mask = m.expand({batch, heads, q_len, kv_len});
  }
  a.out = out.dtype() == compute
              ? out
              : empty_strided(out.sizes(), out.strides(), TensorOptions(compute));
  a.lse = lse;
  a.scale = in.scale.value_or(1.0 / std::sqrt(static_cast<double>(in.q.size(3))));
  a.is_causal = in.is_causal;
  a.dropout_p = in.dropout_p;
  if (in.dropout_p > 0) {
    const int64_t words = batch * heads * q_len * kv_len;
    auto [seed, offset] =
        random_detail::current_generator().seed_and_reserve(random_detail::philox_blocks(words, 1));
    a.dropout_stream = {seed, offset};
  }
  flash_attention_kernels(a);
  if (!a.out.is_same(out)) {
    Tensor dst = out;
    dst.copy_(a.out);
  }
}

}  // namespace

KILN_OP(
    "_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, float "
    "dropout_p=0., bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) -> "
    "(Tensor output, Tensor logsumexp)")
    .meta(flash_meta)
    .cpu(flash_impl)
    .derivative(attention::flash_attention_derivative, DerivativeReads::InputsAndOutputs)
    .tolerance(1e-4, 1e-5)
    .samples(flash_attention_samples);

}  // namespace kiln::ops

namespace kiln {

std::tuple<Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu(
    const Tensor& query, const Tensor& key, const Tensor& value, double dropout_p, bool is_causal,
    const Tensor& attn_mask, std::optional<double> scale, Generator* gen,
    const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op =
      ops::OpRegistry::instance().get("_scaled_dot_product_flash_attention_for_cpu");
  random_detail::GeneratorScope scope(gen);
  ops::Stack args{query, key, value, dropout_p, is_causal};
  args.emplace_back(attn_mask.defined() ? ops::IValue(attn_mask) : ops::IValue());
  args.emplace_back(scale ? ops::IValue(*scale) : ops::IValue());
  std::vector<Tensor> r = ops::call(op, std::move(args), &loc);
  return {r[0], r[1]};
}

}  // namespace kiln
