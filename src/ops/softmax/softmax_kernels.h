#pragma once
// Per-capability kernels behind _softmax, _log_softmax and the fused cross-entropy forward
// (src/ops/softmax/softmax.kernel.cpp). They read and write contiguous float32/float64 buffers.
#include "ops/cpu/capability.h"

#include <kiln/core/dtype.h>

#include <cstdint>

namespace kiln::ops {

// Softmax (or log-softmax when `log`) of a contiguous (outer, dim_size, inner) buffer along its
// middle dim, into `out` of the same geometry. inner == 1 is the row-wise fast path.
using SoftmaxKernel = void(const void* in, void* out, DType dtype, int64_t outer, int64_t dim_size,
                           int64_t inner, bool log);

// Cross entropy of each of n contiguous rows of c logits against a class index:
// row_loss[i] = -w[t] * log_softmax(row i)[t] and row_weight[i] = w[t] with t = target[i]
// (w = 1 without a weight), both 0 where t == ignore_index. Targets are already range-checked.
using CrossEntropyRowsKernel = void(const void* logits, DType dtype, int64_t n, int64_t c,
                                    const int64_t* target, const void* weight, int64_t ignore_index,
                                    double* row_loss, double* row_weight);

extern cpu::KernelDispatch<SoftmaxKernel> softmax_kernels;
extern cpu::KernelDispatch<CrossEntropyRowsKernel> cross_entropy_rows_kernels;

}  // namespace kiln::ops
