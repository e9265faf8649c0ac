#pragma once
// The interface between the CUDA layer's C++ (op registration, shapes, dtypes) and its kernels
// (*.cu). Plain structs only: the .cu files include no kiln headers, so nvcc never parses fmt or
// the op registry.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda::kernels {

inline constexpr int kMaxDims = 8;

// kiln::DType's values, in its order (checked by a static_assert in elementwise_ops.cpp).
enum class ScalarType : uint8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64
};

// The iteration space shared by an op's operands: sizes after merging dims that every operand
// walks contiguously together. `contiguous`: one dim and every stride 1 (the vectorized path).
struct Geometry {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t numel = 0;
  bool contiguous = false;
};

// One operand: its data (at the storage offset) and strides in elements over Geometry's dims
// (0 along broadcast dims).
struct Operand {
  void* data = nullptr;
  ScalarType type = ScalarType::Float32;
  int64_t strides[kMaxDims] = {};
};

// dst = src converted to dst's type.
void copy(const Geometry& g, const Operand& dst, const Operand& src, cudaStream_t stream);
// Writes the `itemsize`-byte pattern `bits` into every element of dst.
void fill(const Geometry& g, const Operand& dst, uint64_t bits, int itemsize, cudaStream_t stream);

// Fmod and Remainder: C's fmod and Python's modulo; integer divisors of 0 are the host's to
// refuse. ShiftLeft/ShiftRight: integers only, PyTorch's rules for out-of-range amounts.
enum class BinaryKind : int {
  Add,
  Mul,
  Div,
  Maximum,
  Minimum,
  Fmod,
  Remainder,
  ShiftLeft,
  ShiftRight,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge
};
constexpr bool is_comparison(BinaryKind k) { return k >= BinaryKind::Eq; }
// out = a (kind) b, with a and b of one type T; out is T, or bool for comparisons. Add computes
// a + alpha * b (alpha as a double for floating T, as an integer otherwise).
void binary(BinaryKind kind, const Geometry& g, const Operand& out, const Operand& a,
            const Operand& b, double alpha, int64_t alpha_int, cudaStream_t stream);

enum class UnaryKind : int {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tanh,
  Sigmoid,
  Relu,
  GeluErf,
  GeluTanh,
  Sign,   // (0 < x) - (x < 0): NaN and -0.0 give 0, as PyTorch
  Erfinv  // computed in double, as the CPU kernel
};
// out = kind(in), both of one type.
void unary(UnaryKind kind, const Geometry& g, const Operand& out, const Operand& in,
           cudaStream_t stream);

// out = cond ? a : b; cond is bool, a, b and out one type.
void where(const Geometry& g, const Operand& out, const Operand& cond, const Operand& a,
           const Operand& b, cudaStream_t stream);

// out[m] = sum (or mean) of in[m * n .. m * n + n), in and out of one type, contiguous.
void reduce_rows(ScalarType type, void* out, const void* in, int64_t m, int64_t n, bool mean,
                 cudaStream_t stream);

}  // namespace kiln::cuda::kernels
