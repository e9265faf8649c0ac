#pragma once
// Ops that rearrange or combine whole tensors (copies, not views): cat, stack, flip, roll,
// repeat, tile, tril, triu.
#include <kiln/core/tensor.h>
#include <source_location>

namespace kiln {

Tensor cat(TensorList tensors, int64_t dim = 0,
           const std::source_location& loc = std::source_location::current());
Tensor stack(TensorList tensors, int64_t dim = 0,
             const std::source_location& loc = std::source_location::current());
Tensor flip(const Tensor& self, IntList dims,
            const std::source_location& loc = std::source_location::current());
// dims empty: rolls the flattened tensor (shifts must then have one entry).
Tensor roll(const Tensor& self, IntList shifts, IntList dims = {},
            const std::source_location& loc = std::source_location::current());
Tensor repeat(const Tensor& self, IntList repeats,
              const std::source_location& loc = std::source_location::current());
Tensor tile(const Tensor& self, IntList dims,
            const std::source_location& loc = std::source_location::current());
Tensor tril(const Tensor& self, int64_t diagonal = 0,
            const std::source_location& loc = std::source_location::current());
Tensor triu(const Tensor& self, int64_t diagonal = 0,
            const std::source_location& loc = std::source_location::current());
Tensor& tril_(Tensor& self, int64_t diagonal = 0,
              const std::source_location& loc = std::source_location::current());
Tensor& triu_(Tensor& self, int64_t diagonal = 0,
              const std::source_location& loc = std::source_location::current());

}  // namespace kiln
