#pragma once
// Building blocks of the indexing and resampling ops' derivative formulas, written in kiln ops
// (index_put with accumulate, gather, scatter) so that the formulas are differentiable themselves.
#include <kiln/core/tensor.h>

#include <string_view>
#include <vector>

namespace kiln::ops::indexing {

// The adjoint of index_select(dim, index): zeros of `sizes` with grad's slices along dim summed
// into the rows index names (duplicates accumulate). index is 1-D (or 0-dim), int64 or int32.
Tensor index_add_into_zeros(const Tensor& grad, int64_t dim, const Tensor& index, IntList sizes);
// The same with the rows given as a host table (resampling ops' source maps).
Tensor index_add_into_zeros(const Tensor& grad, int64_t dim, const std::vector<int64_t>& rows,
                            IntList sizes);

// t zero-padded at the end of every dim up to `sizes` (the gradient of a src argument of which
// only the index-shaped front was read).
Tensor zero_pad_to(const Tensor& t, IntList sizes);

// The front of src that a scatter with this index reads (src may be larger along any dim).
Tensor front_of(const Tensor& src, const Tensor& index);

// PyTorch's scatter_reduce_backward: the gradients of self and src (the front of src the index
// covers) of self.scatter_reduce(dim, index, src, reduce, include_self) = result, for reduce
// "sum", "prod", "mean", "amax" or "amin". Ties of amax/amin share the gradient evenly.
std::pair<Tensor, Tensor> scatter_reduce_backward(const Tensor& grad, const Tensor& self,
                                                  int64_t dim, const Tensor& index,
                                                  const Tensor& src, std::string_view reduce,
                                                  bool include_self, const Tensor& result);

}  // namespace kiln::ops::indexing
