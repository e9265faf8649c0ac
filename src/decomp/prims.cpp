// The prim set. Chosen so that the inductor has one lowering per pointwise function, one per
// reduction kind and one per movement pattern, while ops whose fast paths live in libraries
// (GEMM, convolution, sort) stay extern calls.
#include <kiln/core/error.h>
#include <kiln/decomp/prims.h>

#include <string>
#include <unordered_map>

namespace kiln::decomp {

namespace {

using enum PrimClass;

constexpr PrimInfo kPrims[] = {
    // Elementwise: unary floating math.
    {"abs", Elementwise},
    {"neg", Elementwise},
    {"exp", Elementwise},
    {"exp2", Elementwise},
    {"expm1", Elementwise},
    {"log", Elementwise},
    {"log2", Elementwise},
    {"log10", Elementwise},
    {"log1p", Elementwise},
    {"sin", Elementwise},
    {"cos", Elementwise},
    {"tan", Elementwise},
    {"asin", Elementwise},
    {"acos", Elementwise},
    {"atan", Elementwise},
    {"sinh", Elementwise},
    {"cosh", Elementwise},
    {"tanh", Elementwise},
    {"asinh", Elementwise},
    {"acosh", Elementwise},
    {"atanh", Elementwise},
    {"erf", Elementwise},
    {"erfc", Elementwise},
    {"erfinv", Elementwise},
    {"sqrt", Elementwise},
    {"rsqrt", Elementwise},
    {"floor", Elementwise},
    {"ceil", Elementwise},
    {"round", Elementwise},
    {"trunc", Elementwise},
    {"sign", Elementwise},
    {"bitwise_not", Elementwise},
    // Elementwise: binary and ternary.
    {"add", Elementwise},
    {"sub", Elementwise},
    {"mul", Elementwise},
    {"div", Elementwise},
    {"pow", Elementwise},
    {"maximum", Elementwise},
    {"minimum", Elementwise},
    {"atan2", Elementwise},
    {"fmod", Elementwise},
    {"remainder", Elementwise},
    {"bitwise_and", Elementwise},
    {"bitwise_or", Elementwise},
    {"bitwise_xor", Elementwise},
    {"bitwise_left_shift", Elementwise},
    {"bitwise_right_shift", Elementwise},
    {"eq", Elementwise},
    {"ne", Elementwise},
    {"lt", Elementwise},
    {"le", Elementwise},
    {"gt", Elementwise},
    {"ge", Elementwise},
    {"where", Elementwise},
    // Conversion.
    {"_to_copy", Conversion},
    // Reductions (var_mean is the welford-style one).
    {"sum", Reduction},
    {"prod.dim_int", Reduction},
    {"amax", Reduction},
    {"amin", Reduction},
    {"argmax", Reduction},
    {"argmin", Reduction},
    {"var_mean.correction", Reduction},
    {"cumsum", Scan},
    {"cumprod", Scan},
    // Views and movement.
    {"view", View},
    {"as_strided", View},
    {"permute", View},
    {"expand", View},
    {"detach", View},  // an alias that cuts the gradient
    {"slice.Tensor", View},
    {"squeeze.dims", View},
    {"unsqueeze", View},
    {"cat", Movement},
    {"flip", Movement},
    // Indexing.
    {"gather", Indexing},
    {"scatter.src", Indexing},
    {"scatter_reduce.two", Indexing},
    {"index.Tensor", Indexing},
    {"index_put", Indexing},
    // Creation.
    {"full", Creation},
    {"empty_strided", Creation},
    {"arange.start_step", Creation},
    // Random (Philox).
    {"rand", Random},
    {"randn", Random},
    {"randint.low", Random},
    {"randperm", Random},
    // Mutation.
    {"copy_", Mutation},
    // Extern: library calls and data-dependent outputs.
    {"mm", Extern},
    {"bmm", Extern},
    {"convolution", Extern},
    // Inference freezing's weight pre-packing (src/ops/conv/packed_convolution.cpp,
    // src/ops/linalg/packed_matmul.cpp).
    {"_pack_convolution_weight", Extern},
    {"_convolution_packed", Extern},
    {"_pack_mm_weight", Extern},
    {"_mm_packed", Extern},
    // Fused attention: one pass over tiles in cache, where its decomposition (bmm, softmax, bmm)
    // writes and reads the [B, H, L, S] weights.
    {"_scaled_dot_product_flash_attention_for_cpu", Extern},
    // Backward kernels of eager's that beat their decompositions (a weight gradient as a
    // convolution over permuted tensors; a pool gradient as a scatter); their decompositions
    // remain what autograd differentiates.
    {"convolution_backward", Extern},
    {"max_pool2d_with_indices_backward", Extern},
    {"sort.stable", Extern},
    {"topk", Extern},
    {"searchsorted.Tensor", Extern},
    {"nonzero", Extern},
    {"_unique2", Extern},
    {"unique_dim", Extern},
    {"_embedding_bag", Extern},
    {"max_pool2d_with_indices", Extern},
    {"_max_pool2d_values", Extern},
    {"adaptive_max_pool2d", Extern},
};

const std::unordered_map<std::string, PrimClass>& prim_index() {
  static const std::unordered_map<std::string, PrimClass> index = [] {
    std::unordered_map<std::string, PrimClass> m;
    for (const PrimInfo& p : kPrims) m.emplace(std::string(p.name), p.cls);
    return m;
  }();
  return index;
}

}  // namespace

std::string_view class_name(PrimClass c) {
  switch (c) {
    case Elementwise:
      return "elementwise";
    case Conversion:
      return "conversion";
    case Reduction:
      return "reduction";
    case Scan:
      return "scan";
    case View:
      return "view";
    case Movement:
      return "movement";
    case Indexing:
      return "indexing";
    case Creation:
      return "creation";
    case Random:
      return "random";
    case Mutation:
      return "mutation";
    case Extern:
      return "extern";
  }
  return "?";
}

std::span<const PrimInfo> prim_table() { return kPrims; }

std::optional<PrimClass> prim_class(const ops::OpDef& op) {
  const ops::OpDef& f = op.functional != nullptr ? *op.functional : op;
  const auto& index = prim_index();
  auto it = index.find(f.full_name());
  if (it == index.end()) return std::nullopt;
  return it->second;
}

bool is_decomposable(const ops::OpDef& op) {
  const ops::OpDef& f = op.functional != nullptr ? *op.functional : op;
  return f.kind == ops::OpKind::Composite || static_cast<bool>(f.decomposition);
}

}  // namespace kiln::decomp
