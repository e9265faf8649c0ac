#pragma once
// Per-capability kernels behind arange, linspace and eye (src/ops/creation/ranges.kernel.cpp).
// Each writes a contiguous output of `dtype`.
#include "ops/cpu/capability.h"

#include <kiln/core/scalar.h>

#include <cstdint>

namespace kiln::ops {

// out[i] = start + i * step, computed in float64 (floating dtypes) or int64 (integral ones).
using ArangeKernel = void(void* data, DType dtype, int64_t n, const Scalar& start,
                          const Scalar& step);
// PyTorch's symmetric linspace: the first half counts up from start, the second half down from
// end, so both endpoints are exact.
using LinspaceKernel = void(void* data, DType dtype, int64_t steps, const Scalar& start,
                            const Scalar& end);
// An n x m matrix with ones on the main diagonal.
using EyeKernel = void(void* data, DType dtype, int64_t n, int64_t m);

extern cpu::KernelDispatch<ArangeKernel> arange_kernels;
extern cpu::KernelDispatch<LinspaceKernel> linspace_kernels;
extern cpu::KernelDispatch<EyeKernel> eye_kernels;

}  // namespace kiln::ops
