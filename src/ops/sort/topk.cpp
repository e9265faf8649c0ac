// topk: the k largest (or smallest) elements along a dim, by partial selection per row — a
// partial sort when k is small against the row (k * 64 <= n), else nth_element and, when asked
// for sorted output, a sort of the first k — the same selection aten's CPU kernel makes, so
// unsorted results come out in the same order. NaN counts as the largest value.
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

template <typename T>
void topk_rows(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted,
               const Tensor& values, const Tensor& indices) {
  using K = key_t<T>;
  using Elem = std::pair<K, int64_t>;
  const int64_t n = dim_size(self, dim);
  const RowWalker rows(self.sizes(), dim, {self.strides(), values.strides(), indices.strides()});
  const T* src = self.data_ptr<T>();
  T* val_out = values.data_ptr<T>();
  int64_t* idx_out = indices.data_ptr<int64_t>();
  const int64_t s_in = dim_stride(self, dim), s_val = dim_stride(values, dim);
  const int64_t s_idx = dim_stride(indices, dim);
  auto select = [&](std::vector<Elem>& q, auto comp) {
    if (k * 64 <= n) {
      std::partial_sort(q.begin(), q.begin() + k, q.end(), comp);
    } else {
      std::nth_element(q.begin(), q.begin() + (k - 1), q.end(), comp);
      if (sorted) std::sort(q.begin(), q.begin() + (k - 1), comp);
    }
  };
  parallel_for(
      0, rows.rows(), std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1)),
      [&](int64_t first, int64_t last) {
        std::vector<Elem> q(static_cast<size_t>(n));
        for (int64_t r = first; r < last; ++r) {
          const T* in = src + rows.offset(0, r);
          for (int64_t i = 0; i < n; ++i) {
            q[static_cast<size_t>(i)] = {static_cast<K>(in[i * s_in]), i};
          }
          if (largest) {
            select(q, [](const Elem& a, const Elem& b) { return descending(a.first, b.first); });
          } else {
            select(q, [](const Elem& a, const Elem& b) { return ascending(a.first, b.first); });
          }
          T* vo = val_out + rows.offset(1, r);
          int64_t* io = idx_out + rows.offset(2, r);
          for (int64_t i = 0; i < k; ++i) {
            vo[i * s_val] = static_cast<T>(q[static_cast<size_t>(i)].first);
            io[i * s_idx] = q[static_cast<size_t>(i)].second;
          }
        }
      });
}

std::vector<TensorMeta> topk_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t k = args[1].to_int();
  const int64_t dim = wrap_dim(args[2].to_int(), self.dim(), "topk");
  KILN_CHECK_T(TypeError, self.dtype() != DType::Bool, "topk: bool inputs are not supported");
  const int64_t n = dim_size(self, dim);
  KILN_CHECK(k >= 0 && k <= n,
             "topk: selected index k out of range: k ({}) must be in [0, {}], the size of "
             "dimension {} of the input {}",
             k, n, dim, fmt::format("[{}]", fmt::join(self.sizes(), ", ")));
  SymDimVector sizes = self.sym_sizes().vec();
  if (!sizes.empty()) sizes[static_cast<size_t>(dim)] = SymInt(k);
  return {TensorMeta::contiguous(sizes, self.dtype(), self.device()),
          TensorMeta::contiguous(sizes, kInt64, self.device())};
}

void topk_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  // A 0-dim input's output is its one element whatever k (0 or 1), as PyTorch's.
  const int64_t k = self.dim() == 0 ? 1 : args[1].to_int();
  const int64_t dim = wrap_dim(args[2].to_int(), self.dim(), "topk");
  if (k == 0 || self.numel() == 0) return;
  // out= tensors may have another (castable) dtype: the kernel writes self's dtype and int64.
  Tensor values = strided::dense_target(outs[0], self.dtype());
  Tensor indices = strided::dense_target(outs[1], kInt64);
  KILN_DISPATCH_ALL_NO_BOOL(self.dtype(), "topk", [&]<typename T>() {
    topk_rows<T>(self, k, dim, args[3].to_bool(), args[4].to_bool(), values, indices);
  });
  strided::commit(outs[0], values);
  strided::commit(outs[1], indices);
}

}  // namespace

KILN_OP(
    "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor "
    "values, Tensor indices)")
    .meta(topk_meta)
    .cpu(topk_impl)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          const Tensor& self = a.inputs[0].to_tensor();
          const int64_t dim = self.dim() == 0 ? 0 : wrap_dim(a.inputs[2].to_int(), self.dim());
          return {scatter_back(self, dim, a.outputs[1], a.grad_outputs[0])};
        },
        DerivativeReads::Outputs)
    .out_variant()
    .samples([] {
      Tensor nan_row = from_vector<double>({2.0, NAN, -1.0, 5.0, NAN, 0.5}, {6});
      return std::vector<Sample>{
          {{make_sample({4, 9}, kFloat32), 3, -1, true, true}, "largest 3"},
          {{make_sample({4, 9}, kFloat64, -3, 3, 1), 2, 1, false, true}, "smallest 2"},
          {{make_sample({5, 3, 4}, kFloat32, -3, 3, 2), 2, 0, true, true}, "dim 0"},
          {{make_sample({200}, kFloat32, -3, 3, 3), 3, 0, true, true}, "partial sort path"},
          {{make_sample({200}, kFloat32, -3, 3, 4), 3, 0, false, false},
           "partial sort path, unsorted"},
          {{make_sample({3, 10}, kFloat32, -3, 3, 5), 4, 1, true, false}, "unsorted"},
          {{make_noncontiguous_sample({3, 8}, kFloat32, -3, 3, 6), 8, 1, true, true},
           "non-contiguous, k = n"},
          {{make_sample({3, 4}, kInt64, -100, 100, 7), 2, 1, true, true}, "int64"},
          {{nan_row, 3, 0, true, true}, "NaN largest"},
          {{nan_row, 3, 0, false, true}, "NaN smallest"},
          {{make_sample({}, kFloat32), 1, 0, true, true}, "0-dim"},
          {{make_sample({0, 3}, kFloat32), 2, 1, true, true}, "empty"},
          {{make_sample({3, 4}, kFloat32), 0, 1, true, true}, "k = 0"},
          {{make_sample({3, 4}, kFloat32), 5, 1, true, true}, "k too large (raises)"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                bool sorted, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("topk");
  std::vector<Tensor> out = ops::call(op, {self, SymInt(k), dim, largest, sorted}, &loc);
  return {out[0], out[1]};
}

std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted,
                                        const kiln::SourceLocation& loc) const {
  return kiln::topk(*this, k, dim, largest, sorted, loc);
}

}  // namespace kiln
