#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/view.h>

#include <cmath>

namespace kiln::ops {

Tensor make_sample(IntList sizes, DType dtype, double low, double high, uint64_t seed) {
  Tensor t = empty(sizes, dtype);
  int64_t n = t.numel();
  uint64_t state = 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull) ^
                   static_cast<uint64_t>(n) * 0x94D049BB133111EBull;
  auto next = [&state] {  // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  KILN_DISPATCH_ALL(dtype, "make_sample", [&]<typename T>() {
    T* p = static_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      double u = static_cast<double>(next() >> 11) * 0x1.0p-53;  // [0, 1)
      double v = low + (high - low) * u;
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = u < 0.5;
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(std::floor(v));
      } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        p[i] = T(static_cast<float>(v));
      } else {
        p[i] = static_cast<T>(v);
      }
    }
  });
  return t;
}

Tensor make_noncontiguous_sample(IntList sizes, DType dtype, double low, double high,
                                 uint64_t seed) {
  // Twice as wide in the last dim, then every other element: a strided, non-contiguous view.
  DimVector big(sizes);
  if (big.empty()) return make_sample(sizes, dtype, low, high, seed);
  big.back() *= 2;
  Tensor t = make_sample(big, dtype, low, high, seed);
  return slice(t, -1, 0, std::nullopt, 2);
}

std::vector<Sample> unary_samples(DType dtype, double low, double high) {
  return {
      {{make_sample({4, 5}, dtype, low, high)}, "2-D"},
      {{make_sample({1000}, dtype, low, high, 1)}, "1-D crossing SIMD width"},
      {{make_noncontiguous_sample({3, 7}, dtype, low, high, 2)}, "non-contiguous"},
      {{make_sample({6, 4}, dtype, low, high, 3).t()}, "transposed"},
      {{make_sample({}, dtype, low, high, 4)}, "0-dim"},
      {{make_sample({0, 3}, dtype, low, high)}, "empty"},
  };
}

std::vector<Sample> binary_samples(DType dtype, double low, double high, const Stack& extra) {
  std::vector<Sample> s = {
      {{make_sample({4, 5}, dtype, low, high, 1), make_sample({4, 5}, dtype, low, high, 2)},
       "same shape"},
      {{make_sample({1000}, dtype, low, high, 3), make_sample({1000}, dtype, low, high, 4)},
       "1-D crossing SIMD width"},
      {{make_sample({4, 5}, dtype, low, high, 5), make_sample({5}, dtype, low, high, 6)},
       "broadcast row"},
      {{make_sample({4, 1}, dtype, low, high, 7), make_sample({1, 5}, dtype, low, high, 8)},
       "broadcast both"},
      {{make_sample({3, 4}, dtype, low, high, 9), make_sample({}, dtype, low, high, 10)},
       "0-dim other"},
      {{make_noncontiguous_sample({3, 6}, dtype, low, high, 11),
        make_sample({6, 3}, dtype, low, high, 12).t()},
       "non-contiguous"},
      {{make_sample({0, 4}, dtype, low, high), make_sample({4}, dtype, low, high)}, "empty"},
  };
  for (auto& sample : s) sample.args.insert(sample.args.end(), extra.begin(), extra.end());
  return s;
}

}  // namespace kiln::ops
