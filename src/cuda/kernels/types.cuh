#pragma once
// Device-side types of kiln's dtypes, conversions matching the CPU kernels' (16-bit floats go
// through float, bool is "!= 0"), and the dtype switch the launchers use.
#include "cuda/kernels/launch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace kiln::cuda::kernels {

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for the C++ type of t.
template <typename F>
void dispatch(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Bool:
      return f(Tag<bool>{});
    case ScalarType::UInt8:
      return f(Tag<uint8_t>{});
    case ScalarType::Int8:
      return f(Tag<int8_t>{});
    case ScalarType::Int16:
      return f(Tag<int16_t>{});
    case ScalarType::Int32:
      return f(Tag<int32_t>{});
    case ScalarType::Int64:
      return f(Tag<int64_t>{});
    case ScalarType::Float16:
      return f(Tag<__half>{});
    case ScalarType::BFloat16:
      return f(Tag<__nv_bfloat16>{});
    case ScalarType::Float32:
      return f(Tag<float>{});
    case ScalarType::Float64:
      return f(Tag<double>{});
  }
}

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// The type arithmetic on T runs in: float for the 16-bit floats, T otherwise.
template <typename T>
using Acc = std::conditional_t<kIsHalf<T>, float, T>;

template <typename To, typename From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, __half>) {
    return convert<To>(__half2float(v));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return convert<To>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else {
    return static_cast<To>(v);
  }
}

// Strides of K operands over a Geometry's dims.
template <int K>
struct Offsets {
  int64_t strides[K][kMaxDims];
};

// Element offsets of operand k (of K) for the linear index i over g, dividing in `Index`. The
// loop over the dims is unrolled to kMaxDims with constant indices: a loop bounded by g.ndim
// indexes the parameter arrays at run time, which makes the compiler copy them (hundreds of
// bytes) into each thread's local memory (BERT's head split ran at 1/30 of the memory's speed).
template <typename Index, int K>
__device__ __forceinline__ void offsets_in(Index rest, const Geometry& g, const Offsets<K>& s,
                                           int64_t (&off)[K]) {
  for (int k = 0; k < K; ++k) off[k] = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d >= g.ndim) continue;
    const auto size = static_cast<Index>(g.sizes[d]);
    const Index idx = rest % size;
    rest /= size;
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] += static_cast<int64_t>(idx) * s.strides[k][d];
  }
}

// The same, in 32-bit divisions below 2^32 elements (64-bit division is a software routine on
// the GPU).
template <int K>
__device__ __forceinline__ void offsets_of(int64_t i, const Geometry& g, const Offsets<K>& s,
                                           int64_t (&off)[K]) {
  if (g.numel <= int64_t{0xffffffff}) {
    offsets_in<uint32_t, K>(static_cast<uint32_t>(i), g, s, off);
  } else {
    offsets_in<int64_t, K>(i, g, s, off);
  }
}

template <int K>
Offsets<K> offsets_from(const Operand* const (&ops)[K]) {
  Offsets<K> s{};
  for (int k = 0; k < K; ++k)
    for (int d = 0; d < kMaxDims; ++d) s.strides[k][d] = ops[k]->strides[d];
  return s;
}

inline constexpr int kThreads = 256;
// Enough blocks to fill an H100/H200 several times over; grid-stride loops cover the rest.
inline unsigned blocks_for(int64_t work) {
  const int64_t b = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

template <typename T, int V>
struct alignas(sizeof(T) * V) VecOf {
  T v[V];
};

inline bool aligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

}  // namespace kiln::cuda::kernels
