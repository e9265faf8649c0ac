#include "ops/random/random_kernels.h"
// loops.h after the kernels header: it needs capability.h's namespace macro.
#include "ops/cpu/loops.h"

#include <kiln/core/parallel.h>

#include <cmath>
#include <limits>
#include <numbers>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using random_detail::philox_block;
using random_detail::PhiloxBlock;
using random_detail::PhiloxStream;

// Calls f(i, words) for every element, words pointing at element i's `words_per_element` words.
template <typename F>
void for_each_draw(int64_t n, int words_per_element, PhiloxStream stream, const F& f) {
  parallel_for(0, n, kGrainSize, [&](int64_t begin, int64_t end) {
    uint64_t cached = std::numeric_limits<uint64_t>::max();
    PhiloxBlock block{};
    for (int64_t i = begin; i < end; ++i) {
      const uint64_t word = static_cast<uint64_t>(i) * static_cast<uint64_t>(words_per_element);
      const uint64_t b = word / 4;
      if (b != cached) {
        block = philox_block(stream.offset + b, 0, stream.seed);
        cached = b;
      }
      f(i, block.data() + word % 4);
    }
  });
}

template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// mean + std * z with z first rounded to T: a standard normal draw of dtype T widened to
// float64, as normal's decompositions (mean + std * randn) compute it, so both agree exactly.
template <typename T>
T affine_normal(double mean, double std, double z) {
  return from_double<T>(mean + std * to_double(from_double<T>(z)));
}

uint64_t word64(const uint32_t* w) { return (static_cast<uint64_t>(w[0]) << 32) | w[1]; }

// Mantissa bits of each floating dtype: uniforms with this many bits are exact in it, so
// [0, 1) never rounds up to 1.
template <typename T>
constexpr int mantissa_digits() {
  if constexpr (std::is_same_v<T, Half>)
    return 11;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return 8;
  else if constexpr (std::is_same_v<T, double>)
    return 53;
  else
    return 24;
}

// A uniform in [0, 1) from one word (at most 32 bits) or, for float64, two words (53 bits).
template <typename T>
double unit_uniform(const uint32_t* w) {
  constexpr int digits = mantissa_digits<T>();
  if constexpr (digits > 32) {
    return static_cast<double>(word64(w) >> (64 - digits)) * std::ldexp(1.0, -digits);
  } else {
    return static_cast<double>(w[0] >> (32 - digits)) * std::ldexp(1.0, -digits);
  }
}

void uniform_fill(void* data, DType dtype, int64_t n, double from, double to, PhiloxStream stream) {
  KILN_DISPATCH_FLOATING(dtype, "uniform_", [&]<typename T>() {
    T* out = static_cast<T*>(data);
    const double width = to - from;
    for_each_draw(n, ops::uniform_words(dtype), stream, [&](int64_t i, const uint32_t* w) {
      out[i] = from_double<T>(from + width * unit_uniform<T>(w));
    });
  });
}

// Box-Muller turns the two uniforms of pair k (elements 2k and 2k+1) into r*cos(theta) for the
// even element and r*sin(theta) for the odd one. Pair k reads the 2 * words_per_element words
// starting at word 2k * words_per_element; each element is still a function of its index alone,
// and a pair whose elements fall in two chunks is simply computed by both.
void normal_fill(void* data, DType dtype, int64_t n, double mean, double std, PhiloxStream stream) {
  KILN_DISPATCH_FLOATING(dtype, "normal_", [&]<typename T>() {
    T* out = static_cast<T*>(data);
    const uint64_t words = static_cast<uint64_t>(ops::normal_words(dtype));
    parallel_for(0, n, kGrainSize, [&](int64_t begin, int64_t end) {
      uint64_t cached = std::numeric_limits<uint64_t>::max();
      PhiloxBlock block{};
      for (int64_t i = begin; i < end;) {
        const uint64_t pair = static_cast<uint64_t>(i) / 2;
        const uint64_t word = pair * 2 * words;
        if (word / 4 != cached) {
          cached = word / 4;
          block = philox_block(stream.offset + cached, 0, stream.seed);
        }
        const uint32_t* w = block.data() + word % 4;
        double u1, u2;  // u1 in (0, 1] so its log is finite
        if constexpr (std::is_same_v<T, double>) {
          u1 = static_cast<double>((word64(w) >> 11) + 1) * 0x1.0p-53;
          u2 = static_cast<double>(word64(w + 2) >> 11) * 0x1.0p-53;
        } else {
          u1 = static_cast<double>((w[0] >> 8) + 1) * 0x1.0p-24;
          u2 = static_cast<double>(w[1] >> 8) * 0x1.0p-24;
        }
        const double r = std::sqrt(-2.0 * std::log(u1));
        const double theta = 2.0 * std::numbers::pi * u2;
        if (i % 2 == 0) {
          out[i] = affine_normal<T>(mean, std, r * std::cos(theta));
          ++i;
        }
        if (i < end) {
          out[i] = affine_normal<T>(mean, std, r * std::sin(theta));
          ++i;
        }
      }
    });
  });
}

void randint_fill(void* data, DType dtype, int64_t n, int64_t low, uint64_t range,
                  PhiloxStream stream) {
  KILN_DISPATCH_ALL_NO_BOOL(dtype, "randint", [&]<typename T>() {
    T* out = static_cast<T*>(data);
    const int words = ops::randint_words(range);
    for_each_draw(n, words, stream, [&](int64_t i, const uint32_t* w) {
      const uint64_t r = words == 2 ? word64(w) : w[0];
      // Unsigned arithmetic: low + r % range wraps correctly even when range spans int64.
      const auto v = static_cast<int64_t>(static_cast<uint64_t>(low) + r % range);
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        out[i] = T(static_cast<float>(v));
      } else {
        out[i] = static_cast<T>(v);
      }
    });
  });
}

void randperm_fill(int64_t* data, int64_t n, PhiloxStream stream) {
  for (int64_t i = 0; i < n; ++i) data[i] = i;
  uint64_t cached = std::numeric_limits<uint64_t>::max();
  PhiloxBlock block{};
  for (int64_t i = n - 1; i > 0; --i) {
    const uint64_t word = static_cast<uint64_t>(i) * ops::kRandpermWords;
    if (word / 4 != cached) {
      cached = word / 4;
      block = philox_block(stream.offset + cached, 0, stream.seed);
    }
    const auto j =
        static_cast<int64_t>(word64(block.data() + word % 4) % static_cast<uint64_t>(i + 1));
    std::swap(data[i], data[j]);
  }
}

void normal_affine(ops::TensorIterator& iter) {
  cpu_kernel(iter, [](double mean, double std, double z) { return mean + std * z; });
}

void bernoulli(ops::TensorIterator& iter) {
  cpu_kernel(iter, [](double p, double u) { return u < p ? 1.0 : 0.0; });
}

}  // namespace
KILN_REGISTER_KERNEL(ops::uniform_fill_kernels, &uniform_fill);
KILN_REGISTER_KERNEL(ops::normal_fill_kernels, &normal_fill);
KILN_REGISTER_KERNEL(ops::randint_fill_kernels, &randint_fill);
KILN_REGISTER_KERNEL(ops::randperm_fill_kernels, &randperm_fill);
KILN_REGISTER_KERNEL(ops::normal_affine_kernels, &normal_affine);
KILN_REGISTER_KERNEL(ops::bernoulli_kernels, &bernoulli);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
