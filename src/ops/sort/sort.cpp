// sort and argsort along any dim: rows split across threads, each row gathered into a
// (key, index) buffer, stable-sorted (so `stable` always holds) and scattered back. NaN sorts as
// the largest value. Comparison sorts gain nothing from SIMD flags, so these loops live in a
// plain .cpp rather than a per-capability *.kernel.cpp.
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"
#include "ops/sort/sort_common.h"

#include <kiln/core/parallel.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/sorting.h>

#include <algorithm>

namespace kiln::ops {
namespace {

using namespace sorting;

// Sorts every row of self along dim into values (may be undefined: argsort) and indices.
template <typename T>
void sort_rows(const Tensor& self, int64_t dim, bool desc, const Tensor& values,
               const Tensor& indices) {
  using K = key_t<T>;
  const int64_t n = dim_size(self, dim);
  std::vector<IntList> strides{self.strides(), indices.strides()};
  if (values.defined()) strides.push_back(values.strides());
  const RowWalker rows(self.sizes(), dim, strides);
  const T* src = self.data_ptr<T>();
  int64_t* idx_out = indices.data_ptr<int64_t>();
  T* val_out = values.defined() ? values.data_ptr<T>() : nullptr;
  const int64_t s_in = dim_stride(self, dim), s_idx = dim_stride(indices, dim);
  const int64_t s_val = values.defined() ? dim_stride(values, dim) : 0;
  parallel_for(0, rows.rows(), std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)),
               [&](int64_t first, int64_t last) {
                 std::vector<std::pair<K, int64_t>> buf(static_cast<size_t>(n));
                 for (int64_t r = first; r < last; ++r) {
                   const T* in = src + rows.offset(0, r);
                   for (int64_t i = 0; i < n; ++i) {
                     buf[static_cast<size_t>(i)] = {static_cast<K>(in[i * s_in]), i};
                   }
                   if (desc) {
                     std::stable_sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) {
                       return descending(a.first, b.first);
                     });
                   } else {
                     std::stable_sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) {
                       return ascending(a.first, b.first);
                     });
                   }
                   int64_t* io = idx_out + rows.offset(1, r);
                   for (int64_t i = 0; i < n; ++i)
                     io[i * s_idx] = buf[static_cast<size_t>(i)].second;
                   if (val_out != nullptr) {
                     T* vo = val_out + rows.offset(2, r);
                     for (int64_t i = 0; i < n; ++i) {
                       vo[i * s_val] = static_cast<T>(buf[static_cast<size_t>(i)].first);
                     }
                   }
                 }
               });
}

void sort_into(const Tensor& self, int64_t dim, bool desc, const Tensor& values,
               const Tensor& indices) {
  if (self.numel() == 0) return;
  KILN_DISPATCH_ALL(self.dtype(), "sort",
                    [&]<typename T>() { sort_rows<T>(self, dim, desc, values, indices); });
}

TensorMeta same_shape(const Tensor& self, DType dtype) {
  return TensorMeta::contiguous(self.sym_sizes().vec(), dtype, self.device());
}

// args: self, dim, descending (sort / argsort) or self, stable, dim, descending (.stable).
std::vector<TensorMeta> sort_meta(const Stack& args, size_t dim_at, bool with_values) {
  const Tensor& self = args[0].to_tensor();
  wrap_dim(args[dim_at].to_int(), self.dim(), "sort");
  if (!with_values) return {same_shape(self, kInt64)};
  return {same_shape(self, self.dtype()), same_shape(self, kInt64)};
}

void sort_impl(const Stack& args, const std::vector<Tensor>& outs, size_t dim_at,
               bool with_values) {
  const Tensor& self = args[0].to_tensor();
  const int64_t dim = wrap_dim(args[dim_at].to_int(), self.dim(), "sort");
  const bool desc = args[dim_at + 1].to_bool();
  // out= tensors may have another (castable) dtype: the kernel writes self's dtype and int64.
  const Tensor& index_out = outs[with_values ? 1 : 0];
  Tensor values = with_values ? strided::dense_target(outs[0], self.dtype()) : Tensor();
  Tensor indices = strided::dense_target(index_out, kInt64);
  sort_into(self, dim, desc, values, indices);
  if (with_values) strided::commit(outs[0], values);
  strided::commit(index_out, indices);
}

// Samples with distinct values (an unstable sort may order ties in any way) unless stable.
std::vector<Sample> sort_samples(bool stable_overload) {
  auto args = [&](Tensor t, int64_t dim, bool desc, bool stable = true) {
    if (stable_overload) return Stack{std::move(t), stable, dim, desc};
    return Stack{std::move(t), dim, desc};
  };
  Tensor nan_row = from_vector<double>({2.0, NAN, -1.0, 5.0, NAN, 0.5}, {6});
  std::vector<Sample> s = {
      {args(make_sample({4, 7}, kFloat32), -1, false), "2-D, last dim"},
      {args(make_sample({5, 3, 4}, kFloat64, -3, 3, 1), 0, true), "dim 0, descending"},
      {args(make_sample({3, 6, 2}, kFloat32, -3, 3, 2), 1, false), "middle dim"},
      {args(make_noncontiguous_sample({3, 5}, kFloat32, -3, 3, 3), 1, true), "non-contiguous"},
      {args(make_sample({6, 4}, kFloat64, -3, 3, 4).t(), 0, false), "transposed"},
      {args(make_sample({100}, kFloat32, -3, 3, 5), 0, false), "long row"},
      {args(nan_row, 0, false), "NaN ascending"},
      {args(nan_row, 0, true), "NaN descending"},
      {args(make_sample({}, kFloat32), 0, false), "0-dim"},
      {args(make_sample({0, 3}, kFloat32), 1, false), "empty"},
      {args(make_sample({3, 4}, kFloat32), 2, false), "dim out of range (raises)"},
  };
  if (stable_overload) {
    // Ties: stable order is the only right answer, so PyTorch must agree.
    s.push_back({args(make_sample({4, 9}, kInt64, -2, 2, 6), 1, false), "int64 ties"});
    s.push_back({args(make_sample({4, 9}, kInt32, -2, 2, 7), 1, true), "int32 ties, descending"});
    s.push_back({args(make_sample({10}, kBool, 0, 1, 8), 0, false), "bool ties"});
    s.push_back({args(make_sample({8}, kFloat16, -2, 2, 9), 0, false), "float16"});
  }
  return s;
}

// sort/argsort as the sort.stable prim (the kernel is always stable). dim_at: where dim is.
std::vector<Tensor> sort_decomposition(const Stack& args, size_t dim_at, bool with_values) {
  static const OpDef& stable_sort = OpRegistry::instance().get("sort.stable");
  std::vector<Tensor> sorted = call(stable_sort, {args[0], true, args[dim_at], args[dim_at + 1]});
  if (with_values) return sorted;
  return {sorted[1]};
}

}  // namespace

KILN_OP("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)")
    .meta([](const Stack& args) { return sort_meta(args, 1, true); })
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) { sort_impl(args, outs, 1, true); })
    .decomposition([](const Stack& args) { return sort_decomposition(args, 1, true); })
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          const Tensor& self = a.inputs[0].to_tensor();
          const int64_t dim = self.dim() == 0 ? 0 : wrap_dim(a.inputs[1].to_int(), self.dim());
          return {scatter_back(self, dim, a.outputs[1], a.grad_outputs[0])};
        },
        DerivativeReads::Outputs)
    .out_variant()
    .samples([] { return sort_samples(false); });

KILN_OP(
    "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor "
    "values, Tensor indices)")
    .meta([](const Stack& args) { return sort_meta(args, 2, true); })
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) { sort_impl(args, outs, 2, true); })
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          const Tensor& self = a.inputs[0].to_tensor();
          const int64_t dim = self.dim() == 0 ? 0 : wrap_dim(a.inputs[2].to_int(), self.dim());
          return {scatter_back(self, dim, a.outputs[1], a.grad_outputs[0])};
        },
        DerivativeReads::Outputs)
    .out_variant()
    .samples([] { return sort_samples(true); });

KILN_OP("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor")
    .meta([](const Stack& args) { return sort_meta(args, 1, false); })
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) {
      sort_impl(args, outs, 1, false);
    })
    .decomposition([](const Stack& args) { return sort_decomposition(args, 1, false); })
    .not_differentiable()
    .samples([] { return sort_samples(false); });

KILN_OP("argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor")
    .meta([](const Stack& args) { return sort_meta(args, 2, false); })
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) {
      sort_impl(args, outs, 2, false);
    })
    .decomposition([](const Stack& args) { return sort_decomposition(args, 2, false); })
    .out_variant()
    .not_differentiable()
    .samples([] { return sort_samples(true); });

}  // namespace kiln::ops

namespace kiln {

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, bool stable,
                                const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("sort.stable");
  std::vector<Tensor> out = ops::call(op, {self, stable, dim, descending}, &loc);
  return {out[0], out[1]};
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable,
               const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("argsort.stable");
  return ops::call1(op, {self, stable, dim, descending}, &loc);
}

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending, bool stable,
                                        const kiln::SourceLocation& loc) const {
  return kiln::sort(*this, dim, descending, stable, loc);
}

Tensor Tensor::argsort(int64_t dim, bool descending, bool stable,
                       const kiln::SourceLocation& loc) const {
  return kiln::argsort(*this, dim, descending, stable, loc);
}

}  // namespace kiln
