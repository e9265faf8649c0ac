#pragma once
// How far compiled outputs are from eager ones.
#include <kiln/core/tensor.h>

#include <vector>

namespace kiln_bench {

// The largest |compiled - eager| over every compared tensor, divided by that tensor's largest
// |eager| (an elementwise ratio would blow up wherever the reference is near zero). Infinity when
// the outputs differ in number or shape; NaN when compiled produced a NaN that eager did not.
double max_rel_err(const std::vector<kiln::Tensor>& eager,
                   const std::vector<kiln::Tensor>& compiled);

}  // namespace kiln_bench
