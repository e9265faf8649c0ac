// scaled_dot_product_attention: PyTorch's public op as a composite. It checks the arguments,
// broadcasts the batch dims, views the inputs as [batch, heads, seq, dim] and runs the fused
// _scaled_dot_product_flash_attention_for_cpu, whose memory stays O(block) per thread.
#include "ops/attention/attention_checks.h"
#include "ops/attention/attention_samples.h"
#include "ops/iterator/tensor_iterator.h"
#include "ops/random/generator_scope.h"

#include <kiln/ops/attention.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/dropout.h>
#include <kiln/ops/linalg.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/softmax.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/view.h>

#include <cmath>
#include <limits>

namespace kiln::ops {

namespace {

constexpr const char* kSdpa = "scaled_dot_product_attention";

// Sizes are SymInts throughout, so that a trace with symbolic sizes stays symbolic.

// The dims of t before its last `keep` dims.
SymIntList leading(const Tensor& t, int64_t keep) {
  return SymIntList(t.sym_sizes().data(), static_cast<size_t>(t.dim() - keep));
}

SymDimVector concat_sizes(SymIntList a, SymIntList b) {
  SymDimVector r(a.begin(), a.end());
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

// [B, Hk, S, D] -> [B, Hq, S, D]: query head h reads key/value head h / (Hq / Hk).
Tensor repeat_heads(const Tensor& t, const SymInt& q_heads) {
  const SymInt heads = t.sym_size(1);
  if (heads == q_heads) return t;
  const SymInt batch = t.sym_size(0), rows = t.sym_size(2), cols = t.sym_size(3);
  return reshape_symint(expand_symint(t.unsqueeze(2), {batch, heads, q_heads / heads, rows, cols}),
                        {batch, q_heads, rows, cols});
}

// The default scale 1/sqrt(E) needs E as a number: a symbolic head dim cannot be traced.
double default_scale(const Tensor& q) {
  const SymInt e = q.sym_size(-1);
  KILN_CHECK(!e.is_symbolic(),
             "{}: the default scale 1/sqrt(E) needs a concrete embedding size E, got the symbolic "
             "size {}; pass scale",
             kSdpa, e.str());
  return 1.0 / std::sqrt(static_cast<double>(e.raw()));
}

// softmax(q k^T * scale + mask) with dropout, times v, in differentiable ops: the path taken when
// dropout meets inputs that require grad, since the fused op's backward cannot replay its
// dropout mask (PyTorch's CPU dispatch also takes its math path then). `core` holds the fused
// op's arguments.
Tensor math_attention(const Stack& core) {
  const Tensor& q = core[0].to_tensor();
  const Tensor k = repeat_heads(core[1].to_tensor(), q.sym_size(1));
  const Tensor v = repeat_heads(core[2].to_tensor(), q.sym_size(1));
  const double dropout_p = core[3].to_double();
  const bool is_causal = core[4].to_bool();
  const Tensor mask = core[5].to_optional_tensor();
  const double scale = core[6].is_none() ? default_scale(q) : core[6].to_double();
  Tensor scores = matmul(q, k.transpose(-2, -1)) * scale;
  Tensor keep;
  if (mask.defined()) {
    if (mask.dtype() == DType::Bool) {
      keep = mask;
    } else {
      scores = scores + mask;
    }
  }
  if (is_causal) {
    Tensor causal = full_symint({q.sym_size(2), k.sym_size(2)}, true,
                                TensorOptions(DType::Bool).device(q.device()))
                        .tril();
    keep = keep.defined() ? keep.logical_and(causal) : causal;
  }
  if (keep.defined()) {
    scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
  }
  Tensor weights = softmax(scores, -1);
  // A row with no key gives zeros, as the fused kernel does (not softmax's NaN).
  if (keep.defined()) weights = weights.masked_fill(keep.logical_not(), 0.0);
  return matmul(dropout(weights, dropout_p, true), v);
}

std::vector<Tensor> sdpa_composite(const Stack& args) {
  const Tensor &q = args[0].to_tensor(), &k = args[1].to_tensor(), &v = args[2].to_tensor();
  const Tensor mask = args[3].to_optional_tensor();
  const double dropout_p = args[4].to_double();
  const bool is_causal = args[5].to_bool();
  const bool enable_gqa = args[7].to_bool();
  attention::check_qkv(q, k, v, 2, kSdpa);
  attention::check_dropout(dropout_p, kSdpa);
  KILN_CHECK(!(is_causal && mask.defined()),
             "{}: attn_mask must not be given together with is_causal=True", kSdpa);
  if (mask.defined()) attention::check_mask_dtype(mask, q.dtype(), kSdpa);

  // Batch dims = outer dims + an optional heads dim; heads may differ between q and k/v (GQA).
  SymDimVector outer;
  SymInt q_heads = 1, k_heads = 1, v_heads = 1;
  bool has_heads = true;
  if (enable_gqa) {
    KILN_CHECK(q.dim() >= 3 && k.dim() >= 3 && v.dim() >= 3,
               "{}: enable_gqa needs a heads dim (-3) in query, key and value, but got {}-D, "
               "{}-D and {}-D",
               kSdpa, q.dim(), k.dim(), v.dim());
    q_heads = q.sym_size(-3);
    k_heads = k.sym_size(-3);
    v_heads = v.sym_size(-3);
    attention::check_heads(q_heads, k_heads, v_heads, kSdpa);
    outer = broadcast_sym_shapes(broadcast_sym_shapes(leading(q, 3), leading(k, 3), kSdpa),
                                 leading(v, 3), kSdpa);
  } else {
    SymDimVector batch = broadcast_sym_shapes(
        broadcast_sym_shapes(leading(q, 2), leading(k, 2), kSdpa), leading(v, 2), kSdpa);
    has_heads = !batch.empty();
    if (has_heads) {
      q_heads = k_heads = v_heads = batch.back();
      outer.assign(batch.begin(), batch.end() - 1);
    }
  }
  const SymInt q_len = q.sym_size(-2), kv_len = k.sym_size(-2), v_dim = v.sym_size(-1);
  SymDimVector out_batch = outer;
  if (has_heads) out_batch.push_back(q_heads);
  SymInt flat = 1;
  for (const SymInt& d : outer) flat = flat * d;

  // [outer..., heads, rows, cols] (or [outer..., rows, cols]) viewed as [flat, heads, rows, cols].
  auto as_4d = [&](const Tensor& t, const SymInt& heads, const SymInt& rows, const SymInt& cols) {
    SymDimVector full = outer;
    if (has_heads) full.push_back(heads);
    full.push_back(rows);
    full.push_back(cols);
    return reshape_symint(expand_symint(t, full), {flat, heads, rows, cols});
  };
  Stack core{as_4d(q, q_heads, q_len, q.sym_size(-1)), as_4d(k, k_heads, kv_len, k.sym_size(-1)),
             as_4d(v, v_heads, kv_len, v_dim), dropout_p, is_causal};
  if (mask.defined()) {
    attention::check_mask_shape(mask, concat_sizes(out_batch, {q_len, kv_len}), kSdpa);
    core.emplace_back(as_4d(mask, q_heads, q_len, kv_len));
  } else {
    core.emplace_back();
  }
  core.push_back(args[6]);
  // The fused op is the CPU's; other devices compute attention from its parts (matmuls and a
  // softmax, which the inductor fuses on a GPU).
  if (!q.device().is_cpu() ||
      (dropout_p > 0 && (q.requires_grad() || k.requires_grad() || v.requires_grad() ||
                         (mask.defined() && mask.requires_grad())))) {
    Tensor out = math_attention(core);
    return {reshape_symint(out, concat_sizes(out_batch, {q_len, v_dim}))};
  }
  static const OpDef& flash =
      OpRegistry::instance().get("_scaled_dot_product_flash_attention_for_cpu");
  Tensor out = call(flash, std::move(core))[0];
  return {reshape_symint(out, concat_sizes(out_batch, {q_len, v_dim}))};
}

}  // namespace

KILN_OP(
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
    "float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> "
    "Tensor")
    .composite(sdpa_composite)
    .tolerance(1e-4, 1e-5)
    .samples(sdpa_samples);

}  // namespace kiln::ops

namespace kiln {

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa, Generator* gen,
                                    const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("scaled_dot_product_attention");
  random_detail::GeneratorScope scope(gen);
  ops::Stack args{query, key, value};
  args.emplace_back(attn_mask.defined() ? ops::IValue(attn_mask) : ops::IValue());
  args.emplace_back(dropout_p);
  args.emplace_back(is_causal);
  args.emplace_back(scale);
  args.emplace_back(enable_gqa);
  return ops::call1(op, std::move(args), &loc);
}

}  // namespace kiln
