#pragma once
// Per-capability kernels behind copy_ and fill_ (src/ops/copy/copy.kernel.cpp).
#include "ops/cpu/capability.h"
#include "ops/iterator/tensor_iterator.h"

namespace kiln::ops {

// Copies iter's input (operand 1) into its output (operand 0), converting dtype.
using CopyKernel = void(TensorIterator& iter);
// Fills iter's only operand with value converted to its dtype.
using FillKernel = void(TensorIterator& iter, const Scalar& value);
extern cpu::KernelDispatch<CopyKernel> copy_kernels;
extern cpu::KernelDispatch<FillKernel> fill_kernels;

}  // namespace kiln::ops
