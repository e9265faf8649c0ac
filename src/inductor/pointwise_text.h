#pragma once
// The C++ spelling of pointwise ops that the CPU and CUDA code generators share: operators,
// `where`, bitwise ops, and the integer cases of rounding and abs. Math functions and NaN-aware
// helpers differ between the two (libm and SLEEF, the CUDA math library) and stay with each.
#include <kiln/core/dtype.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::inductor {

// `op` applied to the argument texts `a` (values of dtype `in`, the last argument's), giving a
// value of dtype `out`; nullopt when the op is not one of the shared ones.
std::optional<std::string> shared_pointwise_text(const std::string& op,
                                                 const std::vector<std::string>& a, DType in,
                                                 DType out);

}  // namespace kiln::inductor
