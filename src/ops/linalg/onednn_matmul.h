#pragma once
// float32 matrix products through oneDNN's matmul primitive, built once per geometry and cached.
// Its brgemm kernels outrun dnnl_sgemm's older JIT GEMM on AVX-512 machines by up to 1.5x for a
// linear layer's x @ weight.t() (64x1024x1024: 0.55 vs 0.83 ms on 2 threads, docs/PERF.md) and
// fuse the layer's bias; gemm.cpp decides which products come here.
#include <kiln/core/tensor.h>

namespace kiln::ops::linalg {

// c = alpha * a @ b + beta * c (+ bias), all float32 and 3-D ([B, m, k] @ [B, k, n] -> [B, m, n]),
// each matrix row- or column-major with any leading dimension; a batch stride of 0 broadcasts.
// bias, when given, is a contiguous [n] added to every row (only with alpha 1 and beta 0).
// Returns false, having done nothing, when oneDNN has no optimized kernel for these layouts.
bool onednn_matmul(const Tensor& c, const Tensor& a, const Tensor& b, const Tensor* bias,
                   float alpha, float beta);

}  // namespace kiln::ops::linalg
