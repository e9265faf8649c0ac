#pragma once
// C++ source for the generated kernels: float32 exp, tanh, erf, erfc, sin and cos written inline
// over the prelude's VecF. SLEEF's versions are out-of-line calls (each call spills the vector
// registers and its tanh/erf cost several exps), which left softmax, GELU and the pointwise
// workload compute-bound; these are the algorithms of kiln's eager kernels
// (src/ops/unary/unary_math.h): exp within 2 ulp, tanh within 3 ulp, erf within 3e-7 relative, erfc
// within about 2.5e-7 relative (Numerical Recipes' Chebyshev fit), NaN propagating.
#include <string>

namespace kiln::inductor {

// Defines kiln_fast_exp, kiln_fast_tanh, kiln_fast_erf, kiln_fast_erfc, kiln_fast_sin and
// kiln_fast_cos (VecF -> VecF) and kiln_fast_sincos; expects VecF, MaskF, vec_where, vec_abs,
// vec_minimum, kiln_vf_native and SLEEF's sincos (KILN_SLEEF_SINCOSF) declared before it.
const char* vec_fast_math();

}  // namespace kiln::inductor
