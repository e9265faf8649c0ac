#pragma once
// The one GEMM entry point of the linalg ops: C = alpha * A @ B + beta * C on 2-D or batched
// (3-D) tensors of any strides and dtype, through oneDNN (float32) and OpenBLAS (float64).
#include <kiln/core/tensor.h>

#include <cstdint>
#include <optional>

namespace kiln::ops::linalg {

// How a row-major BLAS call reads a rows x cols matrix with strides (s0, s1): as is, or as the
// transpose of a row-major matrix (column-major storage), with leading dimension ld. Size-1 dims
// may carry any stride. nullopt: neither (the matrix must be copied first).
struct BlasLayout {
  bool transposed;
  int64_t ld;
};
std::optional<BlasLayout> blas_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1);

// out [m, n] or [B, m, n] (any strides); a [.., m, k]; b [.., k, n], all of out's dtype.
// When beta is zero out is only written (NaNs in it do not propagate), as in PyTorch.
void gemm_into(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha,
               const Scalar& beta);

// out = a @ b + bias, with bias broadcast to out's sizes (a linear layer's [n] or [1, n] bias;
// fused into the product where oneDNN can). bias has out's dtype and must not alias out.
void gemm_bias_into(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias);

// Makes OpenBLAS use n threads (calls into OpenBLAS only when n changed).
void set_blas_threads(int n);

}  // namespace kiln::ops::linalg
