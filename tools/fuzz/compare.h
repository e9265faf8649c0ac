#pragma once
// Compares a compiled result with eager's. Integer and bool results must be equal. Float results
// are compared against the float32 eager result with a tolerance that grows with eager's own
// rounding error, measured against the same program run in float64:
//   |got - eager32| <= rtol * |eager32| + rtol * 0.1 * scale + 4 * max|eager32 - eager64|
// where scale is the largest finite magnitude of the result (at least 1) and the last term is
// taken over the whole tensor: a long chain or a large sum, whose float32 results are inexact
// anyway, gets a proportionally looser bound, while a short chain stays near rtol. Non-finite
// elements must match exactly (NaN with NaN, an infinity with the same one).
#include <kiln/core/tensor.h>

#include <string>

namespace kiln::fuzz {

struct Tolerance {
  double rtol = 1e-5;
};

// Empty when they agree, else what differs (sizes, dtype, or the worst element); a float
// difference within 1% of the value's magnitude ends in " [slight]" (the shrinker keeps slight
// and gross mismatches apart).
std::string compare(const Tensor& got, const Tensor& eager32, const Tensor& eager64,
                    const Tolerance& tol);

}  // namespace kiln::fuzz
