#pragma once
// The unary kernel's functions written in kiln ops: the decompositions of the unary ops whose
// function is not a prim (sigmoid, relu, gelu, softplus, isnan, ...). Each mirrors the kernel's
// formula and computes in float32 for 16-bit floats, as the kernel does.
#include "ops/unary/unary_kernels.h"

namespace kiln::ops {

// Whether the kernel function `id` has a decomposition (the others are prims: exp, floor, ...).
bool has_unary_decomposition(UnaryOpId id);

// The kernel function `id` with `params` on self, in kiln ops. `result` is the op's result dtype
// for self's (unary_result_dtype, which has raised for unsupported dtypes already).
Tensor unary_decomposition(const Tensor& self, UnaryOpId id, const UnaryParams& params,
                           DType result);

}  // namespace kiln::ops
