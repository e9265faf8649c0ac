#pragma once
// Elements as unsigned keys whose integer order is the order of the CPU's sorting ops
// (src/ops/sort/sort_common.h): NaN greatest, all NaNs one key and -0.0 and 0.0 one key, as they
// compare equal there. Radix sorts then order any dtype, and a comparison of keys stands for the
// CPU's comparison of values. Shared by sort.cu, topk.cu and unique.cu; the CUB sorts and scans
// they use are instantiated once, in sort_cub.cu.
#include "cuda/kernels/scan_sort.h"
#include "cuda/kernels/types.cuh"

#include <cstdint>
#include <type_traits>

namespace kiln::cuda::kernels {

// Grid-stride loops: for (i = thread_index(); i < n; i += thread_count()).
__device__ __forceinline__ int64_t thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t thread_count() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

template <int Bytes>
struct UnsignedOfSize;
template <>
struct UnsignedOfSize<1> {
  using type = uint8_t;
};
template <>
struct UnsignedOfSize<2> {
  using type = uint16_t;
};
template <>
struct UnsignedOfSize<4> {
  using type = uint32_t;
};
template <>
struct UnsignedOfSize<8> {
  using type = uint64_t;
};
template <typename T>
using Bits = typename UnsignedOfSize<sizeof(T)>::type;

template <typename T>
inline constexpr bool kIsFloatType = std::is_floating_point_v<T> || kIsHalf<T>;

// The bits of +infinity: a float's magnitude above them is a NaN.
template <typename T>
__host__ __device__ constexpr Bits<T> inf_bits() {
  if constexpr (std::is_same_v<T, __half>) {
    return 0x7c00;
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return 0x7f80;
  } else if constexpr (std::is_same_v<T, float>) {
    return 0x7f800000u;
  } else {
    return 0x7ff0000000000000ull;
  }
}

// v's key in ascending order, in T's width.
template <typename T>
__device__ __forceinline__ Bits<T> ordered_bits(T v) {
  using U = Bits<T>;
  U bits;
  memcpy(&bits, &v, sizeof(T));
  constexpr U sign = U(U(1) << (8 * sizeof(T) - 1));
  if constexpr (std::is_unsigned_v<T>) {  // bool (0 or 1) and the unsigned integers
    return bits;
  } else if constexpr (std::is_integral_v<T>) {
    return U(bits ^ sign);
  } else {
    const U magnitude = U(bits & U(~sign));
    if (magnitude > inf_bits<T>()) return U(~U(0));
    if (magnitude == 0) return sign;
    return (bits & sign) ? U(~bits) : U(bits | sign);
  }
}

// Radix sorts use uint32_t keys up to 4-byte elements (8- and 16-bit types sort only their low
// bits), uint64_t for 8-byte ones.
inline int element_size(ScalarType t) {
  int size = 0;
  dispatch(t, [&](auto tag) { size = static_cast<int>(sizeof(typename decltype(tag)::type)); });
  return size;
}
inline bool wide_keys(ScalarType t) { return element_size(t) == 8; }
inline int key_bits(ScalarType t) { return 8 * element_size(t); }
inline bool is_float_type(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 || t == ScalarType::Float32 ||
         t == ScalarType::Float64;
}
// The key every NaN of a float type has (nothing else has it), widened.
inline uint64_t nan_key(ScalarType t) {
  return key_bits(t) == 64 ? ~uint64_t{0} : (uint64_t{1} << key_bits(t)) - 1;
}

// keys[i] = the key of in[i] (descending: its complement in the type's width, so that an
// ascending sort of keys is a descending sort of values, ties kept in order): uint32_t keys for
// elements of up to 4 bytes, uint64_t for 8-byte ones or for every type when `wide`.
void to_keys(ScalarType type, const void* in, void* keys, int64_t n, bool descending, bool wide,
             cudaStream_t stream);

// out[r * k + j] = in[r * n + indices[r * k + j]] for elements of `element_size` bytes.
void gather_rows(int element_size, const void* in, int64_t n, const int64_t* indices, int64_t k,
                 int64_t rows, void* out, cudaStream_t stream);

// Stable ascending sorts of (key, value) pairs (sort_cub.cu): one sequence of n (only the low
// end_bit bits of the keys differ), or `rows` rows of n each.
template <typename K>
void radix_sort_pairs(const K* keys_in, K* keys_out, const int64_t* values_in, int64_t* values_out,
                      int64_t n, int end_bit, Workspace& ws, cudaStream_t stream);
template <typename K>
void segmented_sort_pairs(const K* keys_in, K* keys_out, const int64_t* values_in,
                          int64_t* values_out, int64_t rows, int64_t n, Workspace& ws,
                          cudaStream_t stream);
// data[i] = data[0] + ... + data[i], in place.
void inclusive_sum(int64_t* data, int64_t n, Workspace& ws, cudaStream_t stream);

}  // namespace kiln::cuda::kernels
