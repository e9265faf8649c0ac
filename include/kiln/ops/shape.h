#pragma once
// Ops that rearrange or combine whole tensors (copies, not views): cat, stack, flip, roll,
// repeat, tile, tril, triu.
#include <kiln/core/tensor.h>

namespace kiln {

Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
Tensor flip(const Tensor& self, IntList dims);
// dims empty: rolls the flattened tensor (shifts must then have one entry).
Tensor roll(const Tensor& self, IntList shifts, IntList dims = {});
Tensor repeat(const Tensor& self, IntList repeats);
Tensor tile(const Tensor& self, IntList dims);
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);
Tensor& tril_(Tensor& self, int64_t diagonal = 0);
Tensor& triu_(Tensor& self, int64_t diagonal = 0);

}  // namespace kiln
