#pragma once
// softmax and log_softmax along one dim (numerically stable: each slice is shifted by its max).
#include <kiln/core/tensor.h>

#include <optional>
#include <source_location>

namespace kiln {

// exp(x) / sum(exp(x)) along dim; dtype, when given, converts the input first (as PyTorch).
Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
               const std::source_location& loc = std::source_location::current());
// x - log(sum(exp(x))) along dim.
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
                   const std::source_location& loc = std::source_location::current());

}  // namespace kiln
