// tril and triu: keep the lower or upper triangle of the last two dims (relative to a diagonal
// offset) and zero the rest.
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/shape.h>
#include <kiln/ops/sym_size_ops.h>

#include <algorithm>
#include <cstring>

namespace kiln::ops {
namespace {

template <bool Lower>
constexpr const char* triangle_name() {
  return Lower ? "tril" : "triu";
}

template <bool Lower>
std::vector<TensorMeta> triangle_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  KILN_CHECK(self.dim() >= 2, "{}: input tensor must have at least 2 dimensions, got {}",
             triangle_name<Lower>(), self.dim());
  return {TensorMeta::contiguous(self.sym_sizes().vec(), self.dtype(), self.device())};
}

// Zeroes (all-zero bytes are 0 for every dtype) the entries outside the triangle, in place, for
// any layout of out.
template <bool Lower>
void triangle_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  const int64_t k = args[1].to_int();
  Tensor out = outs[0];
  if (!out.is_same(self)) out.copy_(self);
  if (out.numel() == 0) return;
  const int64_t nd = out.dim();
  const int64_t rows = out.size(nd - 2), cols = out.size(nd - 1);
  const int64_t rs = out.stride(nd - 2), cs = out.stride(nd - 1);
  const auto item = static_cast<int64_t>(out.itemsize());
  char* base = static_cast<char*>(out.data_ptr());
  IntList batch_sizes(out.sizes().data(), static_cast<size_t>(nd - 2));
  IntList batch_strides(out.strides().data(), static_cast<size_t>(nd - 2));
  strided::for_each<1>(batch_sizes, {batch_strides}, [&](const std::array<int64_t, 1>& off) {
    for (int64_t i = 0; i < rows; ++i) {
      // tril zeroes j > i + k; triu zeroes j < i + k.
      const int64_t begin = Lower ? std::clamp<int64_t>(i + k + 1, 0, cols) : 0;
      const int64_t end = Lower ? cols : std::clamp<int64_t>(i + k, 0, cols);
      for (int64_t j = begin; j < end; ++j) {
        std::memset(base + (off[0] + i * rs + j * cs) * item, 0, static_cast<size_t>(item));
      }
    }
  });
}

// where(column - row <= k (tril) or >= k (triu), self, 0) over the last two dims.
template <bool Lower>
std::vector<Tensor> triangle_decomposition(const Stack& args) {
  triangle_meta<Lower>(args);  // the rank check
  const Tensor& self = args[0].to_tensor();
  const int64_t k = args[1].to_int();
  const SymIntList sizes = self.sym_sizes();
  const SymInt rows = sizes[sizes.size() - 2], cols = sizes.back();
  const TensorOptions index_options = TensorOptions(kInt64).device(self.device());
  // Positions 0..n-1 along a dim: arange for a plain size; for a symbolic one (arange takes no
  // symbols) a running count of ones.
  auto positions = [&](const SymInt& n, int64_t dim) {
    if (!n.is_symbolic()) {
      const Tensor p = arange(n.raw(), index_options);
      return dim == 0 ? p.unsqueeze(1) : p.unsqueeze(0);
    }
    const std::vector<SymInt> shape =
        dim == 0 ? std::vector<SymInt>{n, SymInt(1)} : std::vector<SymInt>{SymInt(1), n};
    return full_symint(shape, 1, index_options).cumsum(dim) - 1;
  };
  const Tensor offset = positions(cols, 1) - positions(rows, 0);
  const Tensor keep = Lower ? offset <= k : offset >= k;
  return {where(keep, self, full({}, 0, self.options()))};
}

template <bool Lower>
std::vector<Sample> triangle_samples() {
  return std::vector<Sample>{
      {{make_sample({4, 4}, kFloat32), 0}, "square"},
      {{make_sample({3, 5}, kFloat64), 1}, "wide, diagonal 1"},
      {{make_sample({5, 3}, kInt64), -2}, "tall, diagonal -2"},
      {{make_sample({2, 3, 3}, kFloat32), 0}, "batched"},
      {{make_noncontiguous_sample({4, 3}, kFloat32), -1}, "non-contiguous"},
      {{make_sample({3, 3}, kBool), 7}, "bool, diagonal past the end"},
      {{make_sample({0, 3}, kFloat32), 0}, "empty"},
  };
}

}  // namespace

KILN_OP("tril(Tensor self, int diagonal=0) -> Tensor")
    .meta(triangle_meta<true>)
    .cpu(triangle_impl<true>)
    .decomposition(triangle_decomposition<true>)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {a.grad_outputs[0].tril(a.inputs[1].to_int())};
        },
        DerivativeReads::Nothing)
    .inplace_variant()
    .out_variant()
    .samples(triangle_samples<true>);

KILN_OP("triu(Tensor self, int diagonal=0) -> Tensor")
    .meta(triangle_meta<false>)
    .cpu(triangle_impl<false>)
    .decomposition(triangle_decomposition<false>)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {a.grad_outputs[0].triu(a.inputs[1].to_int())};
        },
        DerivativeReads::Nothing)
    .inplace_variant()
    .out_variant()
    .samples(triangle_samples<false>);

}  // namespace kiln::ops

namespace kiln {

Tensor tril(const Tensor& self, int64_t diagonal, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("tril");
  return ops::call1(op, {self, diagonal}, &loc);
}
Tensor triu(const Tensor& self, int64_t diagonal, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("triu");
  return ops::call1(op, {self, diagonal}, &loc);
}
Tensor& tril_(Tensor& self, int64_t diagonal, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("tril_");
  ops::call(op, {self, diagonal}, &loc);
  return self;
}
Tensor& triu_(Tensor& self, int64_t diagonal, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("triu_");
  ops::call(op, {self, diagonal}, &loc);
  return self;
}

}  // namespace kiln
