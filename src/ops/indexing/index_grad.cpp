// Derivative building blocks shared by the indexing and resampling ops (see index_grad.h).
#include "ops/indexing/index_grad.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/resample.h>

namespace kiln::ops::indexing {

Tensor index_add_into_zeros(const Tensor& grad, int64_t dim, const Tensor& index, IntList sizes) {
  Tensor out = zeros(sizes, grad.options());
  if (sizes.empty()) return out + grad.sum();  // 0-dim self: every pick reads its one element
  std::vector<Tensor> indices(static_cast<size_t>(dim));  // full slices before dim
  indices.push_back(index.reshape({-1}));
  return out.index_put(indices, grad, /*accumulate=*/true);
}

Tensor index_add_into_zeros(const Tensor& grad, int64_t dim, const std::vector<int64_t>& rows,
                            IntList sizes) {
  const auto n = static_cast<int64_t>(rows.size());
  return index_add_into_zeros(grad, dim, from_vector(rows, IntList(&n, 1)), sizes);
}

Tensor zero_pad_to(const Tensor& t, IntList sizes) {
  if (t.sizes() == sizes) return t;
  std::vector<int64_t> pad;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    pad.push_back(0);
    pad.push_back(sizes[static_cast<size_t>(d)] - t.size(d));
  }
  return constant_pad_nd(t, pad, 0);
}

Tensor front_of(const Tensor& src, const Tensor& index) {
  Tensor front = src;
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (front.size(d) != index.size(d)) front = front.narrow(d, 0, index.size(d));
  }
  return front;
}

std::pair<Tensor, Tensor> scatter_reduce_backward(const Tensor& grad, const Tensor& self,
                                                  int64_t dim, const Tensor& index,
                                                  const Tensor& src, std::string_view reduce,
                                                  bool include_self, const Tensor& result) {
  Tensor grad_self, grad_src;
  if (reduce == "sum") {
    grad_self = grad;
    grad_src = grad.gather(dim, index);
  } else if (reduce == "prod") {
    // Products of the other factors, computed without dividing by a zero factor: a zero self
    // is replaced by 1 before reducing; a src that is the only zero of its group gets the
    // product of the rest by reducing with it replaced by 1.
    const Tensor masked_self = self.where(self != 0, Scalar(1.0));
    const Tensor masked_self_result =
        masked_self.scatter_reduce(dim, index, src, "prod", include_self);
    grad_self = grad * masked_self_result / masked_self;
    const Tensor src_zero = src == 0;
    const Tensor zeros_per_group =
        zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype())).gather(dim, index);
    const Tensor single_zero = src_zero.logical_and(zeros_per_group == 1);
    const Tensor masked_src = src.where(single_zero.logical_not(), Scalar(1.0));
    const Tensor masked_src_result =
        self.scatter_reduce(dim, index, masked_src, "prod", include_self);
    grad_src =
        where(single_zero, (grad * masked_src_result).gather(dim, index),
              (grad * result).gather(dim, index) / src.where(src_zero.logical_not(), Scalar(1.0)));
  } else if (reduce == "mean") {
    Tensor count = include_self ? ones_like(grad) : zeros_like(grad);
    count = count.scatter_add(dim, index, ones_like(src));
    count = count.where(count != 0, Scalar(1.0));
    grad_self = grad / count;
    grad_src = grad.gather(dim, index) / count.gather(dim, index);
  } else {
    KILN_CHECK(reduce == "amax" || reduce == "amin", "scatter_reduce backward: unknown reduce '{}'",
               reduce);
    const Tensor value = result.gather(dim, index);
    const Tensor self_is_result = (self == result).to(grad.dtype());
    const Tensor src_is_result = (src == value).to(grad.dtype());
    const Tensor share = grad / self_is_result.scatter_add(dim, index, src_is_result);
    grad_self = self_is_result * share;
    grad_src = src_is_result * share.gather(dim, index);
  }
  // Without include_self, the positions that received src values never read self.
  if (!include_self) grad_self = grad_self.scatter(dim, index, Scalar(0.0));
  return {grad_self, grad_src};
}

}  // namespace kiln::ops::indexing
