#include "ops/copy/copy_kernels.h"
#include "ops/cpu/loops.h"

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<float>(v) != 0.0f || (std::is_integral_v<From> && v != From(0));
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return static_cast<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

void copy_kernel(ops::TensorIterator& iter) {
  DType to = iter.dtype(0), from = iter.dtype(1);
  KILN_DISPATCH_ALL(to, "copy_", [&]<typename To>() {
    KILN_DISPATCH_ALL(from, "copy_", [&]<typename From>() {
      if constexpr (std::is_same_v<To, From> && kVectorizable<To>) {
        cpu_kernel_vec(
            iter, [](To v) { return v; }, [](Vec<To> v) { return v; });
      } else {
        cpu_kernel(iter, [](From v) { return convert<To>(v); });
      }
    });
  });
}

void fill_kernel(ops::TensorIterator& iter, const Scalar& value) {
  KILN_DISPATCH_ALL(iter.dtype(0), "fill_", [&]<typename T>() {
    const T v = value.to<T>();
    iter.for_each([&](char** data, const int64_t* strides, int64_t n, int64_t rows) {
      for (int64_t r = 0; r < rows; ++r) {
        char* p = data[0] + r * strides[1];
        if (strides[0] == static_cast<int64_t>(sizeof(T))) {
          T* o = reinterpret_cast<T*>(p);
          for (int64_t i = 0; i < n; ++i) o[i] = v;
        } else {
          for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p + i * strides[0]) = v;
        }
      }
    });
  });
}

}  // namespace
KILN_REGISTER_KERNEL(ops::copy_kernels, &copy_kernel);
KILN_REGISTER_KERNEL(ops::fill_kernels, &fill_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
