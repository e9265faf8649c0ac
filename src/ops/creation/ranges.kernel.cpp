#include "ops/creation/range_kernels.h"

#include <kiln/core/parallel.h>

#include <cstring>
#include <type_traits>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

template <typename T>
T cast_to(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

void arange_kernel(void* data, DType dtype, int64_t n, const Scalar& start, const Scalar& step) {
  KILN_DISPATCH_ALL_NO_BOOL(dtype, "arange", [&]<typename T>() {
    T* out = static_cast<T*>(data);
    parallel_for(0, n, kGrainSize, [&](int64_t begin, int64_t end) {
      if constexpr (std::is_integral_v<T>) {
        const int64_t s = start.to<int64_t>(), d = step.to<int64_t>();
        for (int64_t i = begin; i < end; ++i) out[i] = static_cast<T>(s + i * d);
      } else {
        const double s = start.to<double>(), d = step.to<double>();
        for (int64_t i = begin; i < end; ++i) out[i] = cast_to<T>(s + static_cast<double>(i) * d);
      }
    });
  });
}

// The type linspace steps in: the dtype's own arithmetic for floats (float for half types),
// double for integers.
template <typename T>
using linspace_step_t =
    std::conditional_t<std::is_same_v<T, double>, double,
                       std::conditional_t<std::is_integral_v<T>, double, float>>;

void linspace_kernel(void* data, DType dtype, int64_t steps, const Scalar& start,
                     const Scalar& end) {
  KILN_DISPATCH_ALL_NO_BOOL(dtype, "linspace", [&]<typename T>() {
    using S = linspace_step_t<T>;
    T* out = static_cast<T*>(data);
    // Integral outputs start from the endpoints converted to the dtype, as PyTorch does.
    const S a = std::is_integral_v<T> ? static_cast<S>(start.to<int64_t>()) : start.to<S>();
    const S b = std::is_integral_v<T> ? static_cast<S>(end.to<int64_t>()) : end.to<S>();
    if (steps == 1) {
      out[0] = cast_to<T>(static_cast<double>(a));
      return;
    }
    const S step = (b - a) / static_cast<S>(steps - 1);
    const int64_t halfway = steps / 2;
    parallel_for(0, steps, kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const S v =
            i < halfway ? a + step * static_cast<S>(i) : b - step * static_cast<S>(steps - i - 1);
        out[i] = cast_to<T>(static_cast<double>(v));
      }
    });
  });
}

void eye_kernel(void* data, DType dtype, int64_t n, int64_t m) {
  std::memset(data, 0, static_cast<size_t>(n * m) * itemsize(dtype));
  KILN_DISPATCH_ALL(dtype, "eye", [&]<typename T>() {
    T* out = static_cast<T*>(data);
    const T one = cast_to<T>(1.0);
    for (int64_t i = 0; i < std::min(n, m); ++i) out[i * m + i] = one;
  });
}

}  // namespace
KILN_REGISTER_KERNEL(ops::arange_kernels, &arange_kernel);
KILN_REGISTER_KERNEL(ops::linspace_kernels, &linspace_kernel);
KILN_REGISTER_KERNEL(ops::eye_kernels, &eye_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
