// Random kernels: one thread per Philox block of four words, which holds the 4 / W consecutive
// elements of a draw with W words each (philox.h's mapping: element i reads block offset +
// i * W / 4). Values use the CPU kernels' formulas in the same precision: double, with the
// products and sums that the CPU rounds separately (it builds with -ffp-contract=off) written as
// __dmul_rn/__dadd_rn, which nvcc never fuses into an FMA. Uniforms and integers are therefore
// bit-identical to the CPU's. Normals go through log, sqrt, sin and cos in double: sqrt is
// correctly rounded on both, but CUDA's log (1 ulp) and sin/cos (2 ulp) and glibc's (below 1 ulp)
// may differ in the last bits of a double, so a float64 normal may differ from the CPU's by a few
// ulps; rounded to float32 or narrower, that shows only where the double lies within those ulps of
// a rounding boundary (about one element in 10^8), and then by one ulp of the output type.
#include "cuda/cuda_check.h"
#include "cuda/kernels/random.h"
#include "cuda/kernels/types.cuh"
#include "ops/random/philox.h"  // the round constants (its functions are host-only)

#include <numbers>

namespace kiln::cuda::kernels {
namespace {

using random_detail::kPhiloxM0;
using random_detail::kPhiloxM1;
using random_detail::kPhiloxW0;
using random_detail::kPhiloxW1;

struct Words {
  uint32_t w[4];
};

// philox.h's philox4x32_10 on plain words: std::array's accessors are host-only constexpr
// functions to nvcc (without --expt-relaxed-constexpr), so that one cannot run on the device.
// The known answers below and the CPU's RandomPhilox.KnownAnswers test tie the two together.
__host__ __device__ constexpr Words philox(uint64_t counter_lo, uint64_t counter_hi, uint64_t key) {
  uint32_t c0 = static_cast<uint32_t>(counter_lo), c1 = static_cast<uint32_t>(counter_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c2;
    const uint32_t next0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t next2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = next0;
    c2 = next2;
  }
  return {{c0, c1, c2, c3}};
}

constexpr bool same(Words a, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
  return a.w[0] == w0 && a.w[1] == w1 && a.w[2] == w2 && a.w[3] == w3;
}
// Random123's kat_vectors for philox4x32_10, as tests/ops/test_random.cpp checks the CPU's.
static_assert(same(philox(0, 0, 0), 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8));
static_assert(same(philox(~0ull, ~0ull, ~0ull), 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd));
static_assert(same(philox(0x85a308d3243f6a88ull, 0x0370734413198a2eull, 0x299f31d0a4093822ull),
                   0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1));

__device__ __forceinline__ uint64_t word64(const uint32_t* w) {
  return (static_cast<uint64_t>(w[0]) << 32) | w[1];
}

// The seed and first counter of a draw: by value, or (captured in a CUDA graph) read from the
// graph state that the replay wrote. Outside graphs this reads no memory.
__device__ __forceinline__ PhiloxArgs resolved(PhiloxArgs s) {
  if (s.graph_state == nullptr) return s;
  return {s.graph_state[0], s.graph_state[1] + s.offset, nullptr};
}

// Calls f(i, words of element i) for the n elements of W words each, a thread per block.
template <int W, typename F>
__global__ void for_each_draw(int64_t n, PhiloxArgs stream, F f) {
  constexpr int kPerBlock = 4 / W;
  const PhiloxArgs s = resolved(stream);
  const int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < blocks;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Words block = philox(s.offset + static_cast<uint64_t>(b), 0, s.seed);
#pragma unroll
    for (int k = 0; k < kPerBlock; ++k) {
      const int64_t i = b * kPerBlock + k;
      if (i < n) f(i, block.w + k * W);
    }
  }
}

template <int W, typename F>
void launch_draw(int64_t n, PhiloxArgs s, cudaStream_t stream, F f) {
  for_each_draw<W><<<blocks_for((n + 4 / W - 1) / (4 / W)), kThreads, 0, stream>>>(n, s, f);
  KILN_CUDA_CHECK_LAUNCH();
}

template <typename T>
inline constexpr bool kFloatingType = kIsHalf<T> || std::is_floating_point_v<T>;

// Mantissa bits of each floating type (the CPU's mantissa_digits()): uniforms with this many bits
// are exact in it, so [0, 1) never rounds up to 1.
template <typename T>
inline constexpr int kMantissaDigits = std::is_same_v<T, __half>          ? 11
                                       : std::is_same_v<T, __nv_bfloat16> ? 8
                                       : std::is_same_v<T, double>        ? 53
                                                                          : 24;

template <typename T>
__device__ __forceinline__ double unit_uniform(const uint32_t* w) {
  constexpr int digits = kMantissaDigits<T>;
  if constexpr (digits > 32) {
    return static_cast<double>(word64(w) >> (64 - digits)) * 0x1.0p-53;
  } else {
    return static_cast<double>(w[0] >> (32 - digits)) * (1.0 / (1ull << digits));
  }
}

template <typename T>
struct UniformOp {
  T* out;
  double from, width;
  __device__ void operator()(int64_t i, const uint32_t* w) const {
    out[i] = convert<T>(__dadd_rn(from, __dmul_rn(width, unit_uniform<T>(w))));
  }
};

// The CPU's affine_normal: z rounded to T, then mean + std * z in double, rounded to T.
template <typename T>
__device__ __forceinline__ T affine_normal(double mean, double std, double z) {
  return convert<T>(__dadd_rn(mean, __dmul_rn(std, convert<double>(convert<T>(z)))));
}

// Box-Muller over pairs: pair k (elements 2k, 2k + 1) reads 2 * W words from word 2k * W, so a
// block holds 2 / W pairs.
template <typename T>
__global__ void normal_kernel(T* out, int64_t n, double mean, double std, PhiloxArgs stream) {
  constexpr int W = std::is_same_v<T, double> ? 2 : 1;
  const PhiloxArgs s = resolved(stream);
  constexpr int kPerBlock = 4 / W;
  constexpr double kTwoPi = 2.0 * std::numbers::pi;  // exact: the CPU's 2.0 * pi
  const int64_t blocks = (n + kPerBlock - 1) / kPerBlock;
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < blocks;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Words block = philox(s.offset + static_cast<uint64_t>(b), 0, s.seed);
#pragma unroll
    for (int pair = 0; pair < 2 / W; ++pair) {
      const uint32_t* w = block.w + pair * 2 * W;
      double u1, u2;  // u1 in (0, 1] so its log is finite
      if constexpr (W == 2) {
        u1 = static_cast<double>((word64(w) >> 11) + 1) * 0x1.0p-53;
        u2 = static_cast<double>(word64(w + 2) >> 11) * 0x1.0p-53;
      } else {
        u1 = static_cast<double>((w[0] >> 8) + 1) * 0x1.0p-24;
        u2 = static_cast<double>(w[1] >> 8) * 0x1.0p-24;
      }
      const double r = sqrt(-2.0 * log(u1));
      const double theta = __dmul_rn(kTwoPi, u2);
      const int64_t i = b * kPerBlock + 2 * pair;
      if (i < n) out[i] = affine_normal<T>(mean, std, __dmul_rn(r, cos(theta)));
      if (i + 1 < n) out[i + 1] = affine_normal<T>(mean, std, __dmul_rn(r, sin(theta)));
    }
  }
}

// r is one word, or two (W = 2) for ranges above 2^32.
template <typename T, int W>
struct IntOp {
  T* out;
  int64_t low;
  uint64_t range;
  __device__ void operator()(int64_t i, const uint32_t* w) const {
    const uint64_t r = W == 2 ? word64(w) : w[0];
    // Unsigned arithmetic: low + r % range wraps correctly even when range spans int64.
    out[i] = convert<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + r % range));
  }
};

template <typename T>
struct DropoutOp {
  const T* in;
  T* out;
  bool* mask;
  uint32_t threshold;
  Acc<T> scale;
  __device__ void operator()(int64_t i, const uint32_t* w) const {
    const bool keep = (w[0] >> 8) < threshold;
    mask[i] = keep;
    out[i] = convert<T>(convert<Acc<T>>(in[i]) * (keep ? scale : Acc<T>(0)));
  }
};

__global__ void write_philox_state_kernel(uint64_t* state, PhiloxArgs stream) {
  const PhiloxArgs s = resolved(stream);
  state[0] = s.seed;
  state[1] = s.offset;
}

}  // namespace

void random_uniform(ScalarType type, void* out, int64_t n, double from, double width,
                    PhiloxArgs stream, cudaStream_t cuda_stream) {
  if (n == 0) return;
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kFloatingType<T>) {
      const UniformOp<T> op{static_cast<T*>(out), from, width};
      launch_draw<std::is_same_v<T, double> ? 2 : 1>(n, stream, cuda_stream, op);
    }
  });
}

void random_normal(ScalarType type, void* out, int64_t n, double mean, double std,
                   PhiloxArgs stream, cudaStream_t cuda_stream) {
  if (n == 0) return;
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kFloatingType<T>) {
      constexpr int kPerBlock = std::is_same_v<T, double> ? 2 : 4;
      normal_kernel<T><<<blocks_for((n + kPerBlock - 1) / kPerBlock), kThreads, 0, cuda_stream>>>(
          static_cast<T*>(out), n, mean, std, stream);
      KILN_CUDA_CHECK_LAUNCH();
    }
  });
}

void random_int(ScalarType type, void* out, int64_t n, int64_t low, uint64_t range, int words,
                PhiloxArgs stream, cudaStream_t cuda_stream) {
  if (n == 0) return;
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      if (words == 2) {
        launch_draw<2>(n, stream, cuda_stream, IntOp<T, 2>{static_cast<T*>(out), low, range});
      } else {
        launch_draw<1>(n, stream, cuda_stream, IntOp<T, 1>{static_cast<T*>(out), low, range});
      }
    }
  });
}

void dropout(ScalarType type, const void* in, void* out, bool* mask, int64_t n, uint32_t threshold,
             double scale, PhiloxArgs stream, cudaStream_t cuda_stream) {
  if (n == 0) return;
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kFloatingType<T>) {
      const DropoutOp<T> op{static_cast<const T*>(in), static_cast<T*>(out), mask, threshold,
                            static_cast<Acc<T>>(scale)};
      launch_draw<1>(n, stream, cuda_stream, op);
    }
  });
}

void write_philox_state(uint64_t* state, PhiloxArgs stream, cudaStream_t cuda_stream) {
  write_philox_state_kernel<<<1, 1, 0, cuda_stream>>>(state, stream);
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::cuda::kernels
