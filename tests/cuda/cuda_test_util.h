#pragma once
// Helpers of the CUDA tests: the CPU ops are the reference, so every test builds its inputs on
// the CPU, runs the op on both devices and compares on the CPU.
#include "test_util.h"

#include <kiln/cuda/cuda.h>
#include <kiln/kiln.h>

#include <string>

namespace kiln::cuda_test {

using testing::all_close;
using testing::throws_error;

inline Tensor gpu(const Tensor& t) { return t.to(Device::cuda()); }
inline Tensor cpu(const Tensor& t) { return t.to(Device::cpu()); }

// Calls a registered op by name (table-driven tests).
inline Tensor call(const char* op, ops::Stack args) {
  return ops::call1(ops::OpRegistry::instance().get(op), std::move(args));
}

// Values of `dtype` on the CPU: normal floats, integers in [-20, 20) (unsigned: [0, 40)), or
// random bools.
inline Tensor sample(IntList sizes, DType dtype, uint64_t seed) {
  manual_seed(seed);
  if (is_floating_point(dtype)) return randn(sizes).to(dtype);
  if (dtype == DType::Bool) return randint(0, 2, sizes).to(DType::Bool);
  if (dtype == DType::UInt8) return randint(0, 40, sizes).to(dtype);
  return randint(-20, 20, sizes).to(dtype);
}

// Exact equality of values (and dtype and shape), NaNs equal.
inline ::testing::AssertionResult same_values(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(a.dtype()) << " vs " << dtype_name(b.dtype());
  }
  return all_close(a, b, 0.0, 0.0);
}

// The tolerance a float comparison of dtype needs when both sides compute the same formula
// (16-bit results may differ by one rounding of an intermediate).
inline double rtol_for(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 ? 1e-2 : 1e-5;
}

}  // namespace kiln::cuda_test
