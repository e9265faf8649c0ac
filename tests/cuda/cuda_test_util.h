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

// Tolerances of a GPU result against the CPU's by dtype: float32 (rtol, atol), float64 (both),
// float16/bfloat16 (both); other dtypes compare exactly.
struct Tolerances {
  double float32_rtol, float32_atol, float64, half;
};

// `on_gpu` (on CUDA, then copied back) against the CPU's `reference`: the same dtype, and the
// values within the dtype's tolerance.
inline ::testing::AssertionResult close_to_cpu(const Tensor& on_gpu, const Tensor& reference,
                                               const Tolerances& t) {
  if (!on_gpu.device().is_cuda()) return ::testing::AssertionFailure() << "result not on CUDA";
  const Tensor back = cpu(on_gpu);
  if (back.dtype() != reference.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(back.dtype()) << " vs " << dtype_name(reference.dtype());
  }
  switch (reference.dtype()) {
    case DType::Float32:
      return all_close(back, reference, t.float32_rtol, t.float32_atol);
    case DType::Float64:
      return all_close(back, reference, t.float64, t.float64);
    case DType::Float16:
    case DType::BFloat16:
      return all_close(back, reference, t.half, t.half);
    default:
      return same_values(back, reference);
  }
}

// The tolerance a float comparison of dtype needs when both sides compute the same formula
// (16-bit results may differ by one rounding of an intermediate).
inline double rtol_for(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 ? 1e-2 : 1e-5;
}

}  // namespace kiln::cuda_test
