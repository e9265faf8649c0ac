// index_select and embedding: whole slices of a tensor picked by a list of indices.
#include "ops/indexing/index_common.h"
#include "ops/indexing/index_grad.h"
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

using namespace indexing;

std::vector<TensorMeta> index_select_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& index = args[2].to_tensor();
  check_index_dtype(index, /*allow_int32=*/true, "index_select");
  KILN_CHECK(index.dim() <= 1, "index_select(): Index is supposed to be a vector, got {} dims",
             index.dim());
  const int64_t dim = wrap_dim(args[1].to_int(), self.dim(), "index_select");
  if (self.dim() == 0) {
    KILN_CHECK(index.numel() == 1,
               "index_select(): Index to scalar can have only 1 value, got {} value(s)",
               index.numel());
    return {TensorMeta::contiguous({}, self.dtype(), self.device())};
  }
  SymDimVector sizes = self.sym_sizes().vec();
  sizes[static_cast<size_t>(dim)] = index.sym_numel();
  return {TensorMeta::contiguous(std::move(sizes), self.dtype(), self.device())};
}

// dst = src with positions `rows` picked along dim (dst contiguous, src any layout).
void select_rows(const Tensor& dst, const Tensor& src, int64_t dim,
                 const std::vector<int64_t>& rows) {
  if (src.is_contiguous()) {
    // View both as [outer, size, inner]: each picked row is then one contiguous block of inner
    // elements (a memcpy), whatever the rank.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= src.size(d);
    for (int64_t d = dim + 1; d < src.dim(); ++d) inner *= src.size(d);
    const auto n = static_cast<int64_t>(rows.size());
    if (inner == 1) {
      const Tensor s2 = src.view({outer, src.size(dim)});
      strided::remap_copy(dst.view({outer, n}), s2, s2.strides(),
                          {strided::identity_map(outer), rows});
    } else {
      const Tensor s3 = src.view({outer, src.size(dim), inner});
      strided::remap_copy(dst.view({outer, n, inner}), s3, s3.strides(),
                          {strided::identity_map(outer), rows, strided::identity_map(inner)});
    }
    return;
  }
  std::vector<std::vector<int64_t>> maps;
  for (int64_t d = 0; d < src.dim(); ++d) {
    maps.push_back(d == dim ? rows : strided::identity_map(src.size(d)));
  }
  strided::remap_copy(dst, src, src.strides(), maps);
}

void index_select_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor self = at_least_1d(args[0].to_tensor());
  const int64_t dim = wrap_dim(args[1].to_int(), self.dim(), "index_select");
  const std::vector<int64_t> rows =
      read_indices(args[2].to_tensor(), dim, self.size(dim), "index_select");
  Tensor target = strided::dense_target(outs[0], self.dtype());
  select_rows(at_least_1d(target), self, dim, rows);
  strided::commit(outs[0], target);
}

std::vector<TensorMeta> embedding_meta(const Stack& args) {
  const Tensor& weight = args[0].to_tensor();
  const Tensor& indices = args[1].to_tensor();
  KILN_CHECK(weight.dim() == 2, "embedding(): 'weight' must be 2-D, got {} dims", weight.dim());
  check_index_dtype(indices, /*allow_int32=*/true, "embedding");
  SymDimVector sizes = indices.sym_sizes().vec();
  sizes.push_back(weight.sym_sizes()[1]);
  return {TensorMeta::contiguous(std::move(sizes), weight.dtype(), weight.device())};
}

void embedding_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& weight = args[0].to_tensor();
  const Tensor& indices = args[1].to_tensor();
  const std::vector<int64_t> rows = read_indices(indices, 0, weight.size(0), "embedding");
  Tensor target = strided::dense_target(outs[0], weight.dtype());
  select_rows(target.view({indices.numel(), weight.size(1)}), weight, 0, rows);
  strided::commit(outs[0], target);
}

Tensor index_tensor(std::vector<int64_t> values, DType dtype = kInt64) {
  const auto n = static_cast<int64_t>(values.size());
  return from_vector(values, {n}).to(dtype);
}

std::vector<Tensor> index_select_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const int64_t dim =
      self.dim() == 0 ? 0 : wrap_dim(a.inputs[1].to_int(), self.dim(), "index_select");
  return {index_add_into_zeros(a.grad_outputs[0], dim, a.inputs[2].to_tensor(), self.sizes()),
          Tensor()};
}

// Through embedding_dense_backward (a fast kernel; differentiable through its decomposition).
std::vector<Tensor> embedding_derivative(const BackwardArgs& a) {
  static const OpDef& backward = OpRegistry::instance().get("embedding_dense_backward");
  const Tensor& weight = a.inputs[0].to_tensor();
  return {call1(backward,
                {a.grad_outputs[0], a.inputs[1], SymInt(weight.size(0)), a.inputs[2], a.inputs[3]}),
          Tensor()};
}

// ---- decompositions: advanced indexing (index.Tensor) with one index tensor ----

std::vector<Tensor> index_select_decomposition(const Stack& args) {
  index_select_meta(args);  // the index's dtype, rank and count checks
  const Tensor& self = args[0].to_tensor();
  const Tensor index = args[2].to_tensor().reshape({-1}).to(kInt64);
  if (self.dim() == 0) return {self.reshape({1}).index({index}).view({})};
  std::vector<Tensor> indices(static_cast<size_t>(wrap_dim(args[1].to_int(), self.dim())));
  indices.push_back(index);
  return {self.index(indices)};
}

std::vector<Tensor> embedding_decomposition(const Stack& args) {
  embedding_meta(args);  // weight's rank, the indices' dtype
  return {args[0].to_tensor().index({args[1].to_tensor().to(kInt64)})};
}

}  // namespace

KILN_OP("index_select(Tensor self, int dim, Tensor index) -> Tensor")
    .meta(index_select_meta)
    .cpu(index_select_impl)
    .decomposition(index_select_decomposition)
    .derivative(index_select_derivative)
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({5, 3}, kFloat32), 0, index_tensor({4, 0, 2, 2})}, "dim 0, repeats"},
          {{make_sample({3, 5}, kFloat64), -1, index_tensor({1, 3}, kInt32)}, "int32 index"},
          {{make_noncontiguous_sample({4, 3}, kInt64), 1, index_tensor({2, 0})}, "non-contiguous"},
          {{make_sample({}, kFloat32), 0, index_tensor({0})}, "0-dim self"},
          {{make_sample({4, 3}, kFloat32), 0, make_sample({}, kInt64, 0, 4)}, "0-dim index"},
          {{make_sample({4, 3}, kBool), 0, index_tensor({})}, "empty index"},
      };
    });

KILN_OP(
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool "
    "scale_grad_by_freq=False, "
    "bool sparse=False) -> Tensor")
    .meta(embedding_meta)
    .cpu(embedding_impl)
    .decomposition(embedding_decomposition)
    .derivative(embedding_derivative)
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({6, 4}, kFloat32), make_sample({2, 3}, kInt64, 0, 6)}, "2-D indices"},
          {{make_noncontiguous_sample({5, 3}, kFloat64), index_tensor({4, 4, 0}, kInt32)},
           "int32 indices, non-contiguous weight"},
          {{make_sample({6, 4}, kFloat32), make_sample({}, kInt64, 0, 6), 2}, "0-dim index"},
          {{make_sample({6, 4}, kFloat32), index_tensor({})}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index,
                    const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("index_select");
  return ops::call1(op, {self, dim, index}, &loc);
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("embedding");
  return ops::call1(op, {weight, indices, SymInt(padding_idx), scale_grad_by_freq, sparse}, &loc);
}

}  // namespace kiln
