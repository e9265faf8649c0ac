#pragma once
// Ops that order the elements of a tensor: sort, argsort, topk, unique, searchsorted. NaN
// orders as the largest value (last ascending, first descending), as in PyTorch.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <string>
#include <tuple>

namespace kiln {

// (values, indices) along dim. Sorting is always stable on the CPU, so `stable` only documents
// the caller's need.
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false,
                                bool stable = false,
                                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false, bool stable = false,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// The k largest (or smallest) along dim; sorted=false leaves them in selection order.
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1,
                                bool largest = true, bool sorted = true,
                                const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// torch.unique: (values, inverse, counts). Without dim, the unique elements of the flattened
// tensor (inverse has self's shape); with dim, the unique slices along dim (inverse has
// size(dim) entries). inverse/counts are empty tensors unless asked for (always filled with a
// dim, as aten's unique_dim does). Values always come back sorted.
std::tuple<Tensor, Tensor, Tensor> unique(
    const Tensor& self, bool sorted = true, bool return_inverse = false, bool return_counts = false,
    std::optional<int64_t> dim = std::nullopt,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// Indices where `self`'s values would be inserted into sorted_sequence's innermost dim to keep
// it sorted. sorted_sequence is 1-D or has self's leading dims. side "left"/"right" (or right);
// sorter: int64 indices that sort sorted_sequence along its last dim.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32 = false,
                    bool right = false, std::optional<std::string> side = std::nullopt,
                    const Tensor& sorter = Tensor(),
                    const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32 = false,
                    bool right = false, std::optional<std::string> side = std::nullopt,
                    const Tensor& sorter = Tensor(),
                    const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
