#pragma once
// softmax and log_softmax along one dim (numerically stable: each slice is shifted by its max).
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>

namespace kiln {

// exp(x) / sum(exp(x)) along dim; dtype, when given, converts the input first (as PyTorch).
Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// x - log(sum(exp(x))) along dim.
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
