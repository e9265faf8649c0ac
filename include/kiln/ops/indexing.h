#pragma once
// Ops that read or write tensor elements at positions given by index or mask tensors:
// index_select, gather, scatter(_add/_reduce), take_along_dim, advanced indexing (index,
// index_put), masked_fill, masked_select, nonzero, one_hot, embedding, embedding_bag. Every index
// is bounds-checked (kiln::IndexError naming the op, the index and the size).
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index,
                    const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad = false,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// reduce is "add" or "multiply".
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const std::string& reduce,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const std::string& reduce,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// reduce: "sum", "prod", "mean", "amax" or "amin"; include_self=false leaves self's value out of
// every position that receives a src value. Integer means round toward -inf.
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self = true,
                      const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, bool include_self = true,
                        const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// gather after broadcasting self and indices over every dim but dim; dim nullopt: over the
// flattened tensors.
Tensor take_along_dim(const Tensor& self, const Tensor& indices,
                      std::optional<int64_t> dim = std::nullopt,
                      const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// Advanced indexing, self[indices...]: one entry per leading dim of self (fewer entries leave the
// trailing dims whole); an undefined Tensor is a full slice. Entries are int64/int32 index tensors
// (negative values wrap), or bool/uint8 masks that cover as many dims as they have. The index
// tensors broadcast together; their broadcast dims replace the indexed dims in place when those
// are adjacent, and go first when slices separate them.
Tensor index(const Tensor& self, TensorList indices,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// self with self[indices] = values (values broadcast to the indexed shape, self's dtype);
// accumulate=true sums into the positions, duplicates included, deterministically.
Tensor index_put(const Tensor& self, TensorList indices, const Tensor& values,
                 bool accumulate = false,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& index_put_(Tensor& self, TensorList indices, const Tensor& values, bool accumulate = false,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// The coordinates of the nonzero elements of self, int64 [count, self.dim()], row-major order.
Tensor nonzero(const Tensor& self,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor argwhere(const Tensor& self,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// The elements of self where mask (bool; the two broadcast) is true, as a 1-D tensor.
Tensor masked_select(const Tensor& self, const Tensor& mask,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// value must be 0-dim.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// num_classes -1: one more than the largest value.
Tensor one_hot(const Tensor& self, int64_t num_classes = -1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// Per-bag sum (mode 0), mean (1) or max (2) of embedding rows: 1-D indices with offsets (bag k is
// indices[offsets[k]:offsets[k+1]], the last running to the end; include_last_offset treats the
// final offset as the end marker), or 2-D indices [bags, length] with no offsets. Empty bags give
// zeros. per_sample_weights (indices' shape) scale rows in mode 0; rows equal to padding_idx
// (negative counts from the end) are left out. Returns [bags, weight.size(1)].
Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets = {},
                     int64_t mode = 0, const Tensor& per_sample_weights = {},
                     bool include_last_offset = false,
                     std::optional<int64_t> padding_idx = std::nullopt,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
