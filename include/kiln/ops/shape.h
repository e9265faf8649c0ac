#pragma once
// Ops that rearrange or combine whole tensors (copies, not views): cat, stack, flip, roll,
// repeat, tile, tril, triu.
#include <kiln/core/source_location.h>
#include <kiln/core/tensor.h>

namespace kiln {

Tensor cat(TensorList tensors, int64_t dim = 0,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor stack(TensorList tensors, int64_t dim = 0,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor flip(const Tensor& self, IntList dims,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// dims empty: rolls the flattened tensor (shifts must then have one entry).
Tensor roll(const Tensor& self, IntList shifts, IntList dims = {},
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor repeat(const Tensor& self, IntList repeats,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor tile(const Tensor& self, IntList dims,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor tril(const Tensor& self, int64_t diagonal = 0,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor triu(const Tensor& self, int64_t diagonal = 0,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& tril_(Tensor& self, int64_t diagonal = 0,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor& triu_(Tensor& self, int64_t diagonal = 0,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
