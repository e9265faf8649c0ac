#include "inductor/gemm_alternative.h"

#include <kiln/core/tensor_impl.h>

#include <fmt/format.h>

#include <string>
#include <vector>

namespace kiln::inductor {

namespace {

const ExternCall::Input* input_at(const ExternCall& call, int arg) {
  for (const ExternCall::Input& in : call.inputs) {
    if (in.arg == arg && in.element < 0) return &in;
  }
  return nullptr;
}

std::vector<Index> vars(size_t n) {
  std::vector<Index> v;
  for (size_t i = 0; i < n; ++i) v.push_back(var(static_cast<int64_t>(i)));
  return v;
}

Expr load_input(const ExternCall::Input& in, const std::vector<Index>& idx, DType dtype) {
  return load(in.buffer, strided_offset(idx, in.strides, in.offset), dtype);
}

// `in` broadcast to an output indexed by `idx` (trailing dims aligned, size-1 dims at 0).
Expr load_broadcast(const ExternCall::Input& in, const std::vector<Index>& idx, DType dtype) {
  std::vector<Index> sub;
  const size_t lead = idx.size() - in.sizes.size();
  for (size_t d = 0; d < in.sizes.size(); ++d) {
    sub.push_back(in.sizes[d] == Size(1) ? constant(0) : idx[lead + d]);
  }
  return load_input(in, sub, dtype);
}

LoopNest nest_of(Kernel k) {
  LoopNest nest;
  nest.parts.push_back(std::move(k));
  return nest;
}

}  // namespace

std::optional<ExternOrGenerated> gemm_alternative(const ExternCall& extern_call, Program& program) {
  const std::string op = extern_call.op->full_name();
  const bool with_self = op == "addmm" || op == "baddbmm";
  if (!(op == "mm" || op == "bmm" || with_self) || extern_call.outputs.size() != 1)
    return std::nullopt;
  const int out = extern_call.outputs[0];
  const Buffer out_buffer = program.buffers.at(static_cast<size_t>(out));
  const DType dtype = out_buffer.dtype;
  if (dtype != DType::Float32 && dtype != DType::Float64) return std::nullopt;
  const ExternCall::Input* a = input_at(extern_call, with_self ? 1 : 0);
  const ExternCall::Input* b = input_at(extern_call, with_self ? 2 : 1);
  const ExternCall::Input* self = with_self ? input_at(extern_call, 0) : nullptr;
  if (a == nullptr || b == nullptr || (with_self && self == nullptr)) return std::nullopt;
  for (const ExternCall::Input* in : {a, b, self}) {
    if (in != nullptr && program.buffers.at(static_cast<size_t>(in->buffer)).dtype != dtype) {
      return std::nullopt;
    }
  }
  const size_t rank = out_buffer.sizes.size();  // 2, or 3 with a batch
  if (rank < 2 || a->sizes.size() != rank || b->sizes.size() != rank) return std::nullopt;
  // Small products only: a symbolic size is not known to be small.
  if (!is_static(out_buffer.sizes) || !is_static(a->sizes)) return std::nullopt;
  const int64_t k_size = a->sizes[rank - 1].value();
  int64_t work = k_size;
  for (const Size& s : out_buffer.sizes) work *= s.value();
  if (work > kSmallGemmWork || work == 0) return std::nullopt;

  double alpha = 1, beta = 1;
  if (with_self) {
    beta = extern_call.args.at(3).to_scalar().to<double>();
    alpha = extern_call.args.at(4).to_scalar().to<double>();
  }
  // The loops: the output's (batch, i, j), then k.
  const std::vector<Index> out_index = vars(rank);
  const Index k = var(static_cast<int64_t>(rank));
  std::vector<Index> a_index(out_index.begin(), out_index.end() - 1);
  a_index.push_back(k);  // [batch,] i, k
  std::vector<Index> b_index(out_index.begin(), out_index.end() - 2);
  b_index.push_back(k);
  b_index.push_back(out_index[rank - 1]);  // [batch,] k, j
  Expr term = call("mul", {load_input(*a, a_index, dtype), load_input(*b, b_index, dtype)}, dtype);
  if (alpha != 1) term = call("mul", {term, constant_of(alpha, dtype)}, dtype);

  Kernel product;
  product.kind = Kernel::Kind::Reduction;
  product.ranges = out_buffer.sizes;
  product.reduction_ranges = {k_size};
  product.reduction = "sum";
  product.body = term;
  ExternOrGenerated choice{.extern_call = extern_call, .generated = {}};
  const Index out_store = strided_offset(out_index, out_buffer.strides, out_buffer.offset);
  if (!with_self || beta == 0) {
    product.output = out;
    product.store = out_store;
    choice.generated.push_back(nest_of(std::move(product)));
    return choice;
  }
  // The product in a contiguous buffer of its own, then the epilogue.
  Buffer sum;
  sum.sizes = out_buffer.sizes;
  const DimVector contiguous =
      contiguous_strides(IntList(static_ints(sum.sizes, "a small matrix product")));
  sum.strides.assign(contiguous.begin(), contiguous.end());
  sum.dtype = dtype;
  sum.name = fmt::format("buf{}", program.buffers.size());
  const Sizes sum_strides = sum.strides;
  program.buffers.push_back(std::move(sum));
  const int sum_buffer = static_cast<int>(program.buffers.size()) - 1;
  product.output = sum_buffer;
  product.store = strided_offset(out_index, sum_strides, 0);
  choice.generated.push_back(nest_of(std::move(product)));

  Expr addend = load_broadcast(*self, out_index, dtype);
  if (beta != 1) addend = call("mul", {addend, constant_of(beta, dtype)}, dtype);
  Kernel epilogue;
  epilogue.kind = Kernel::Kind::Pointwise;
  epilogue.ranges = out_buffer.sizes;
  epilogue.body = call(
      "add", {addend, load(sum_buffer, strided_offset(out_index, sum_strides, 0), dtype)}, dtype);
  epilogue.output = out;
  epilogue.store = out_store;
  choice.generated.push_back(nest_of(std::move(epilogue)));
  return choice;
}

}  // namespace kiln::inductor
