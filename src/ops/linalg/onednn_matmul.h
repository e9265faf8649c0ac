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

// Inference freezing's weight pre-packing: a constant right operand b [k, n] reordered once into
// the layout the primitive for row-major [m, k] @ [k, n] -> row-major [m, n] reads (brgemm
// otherwise copies b into its blocks on every call: 1.18x the time at 64x1024x1024, 1.03-1.07x
// at bert's shapes; docs/PERF.md). A packed b is a uint8 buffer: the layout's descriptor, then b.
//
// Its size in bytes for these sizes, or 0 when oneDNN has no optimized kernel (nothing to pack).
int64_t onednn_packed_matmul_bytes(int64_t m, int64_t k, int64_t n);
// Whether that layout is one of oneDNN's blocked ones (brgemm's, on AVX-512 CPUs), where packing
// saves a copy per call. A plain one is not worth it: on an AVX2 EPYC oneDNN 2.6 runs gemm:jit,
// picks [k, n] row-major, and that product took 1.47 ms at 64x1024x1024 against 0.85 ms reading
// a linear layer's weight in its own [n, k] layout (mlp inference 4.9 against 2.9 ms; PERF.md).
bool onednn_blocks_matmul_weight(int64_t m, int64_t k, int64_t n);
// Fills `packed` (onednn_packed_matmul_bytes long; otherwise its header matches no layout).
void onednn_pack_matmul_weight(const Tensor& packed, const Tensor& b, int64_t m);
// c [m, n] = a [m, k] @ b (+ bias [n]) from b packed by onednn_pack_matmul_weight; float32, a
// row-major and c contiguous. Returns false, having done nothing, when these sizes' primitive
// reads another layout than `packed` holds (packed for other sizes or threads, or not at all).
bool onednn_matmul_packed(const Tensor& c, const Tensor& a, const Tensor& packed,
                          const Tensor* bias);

}  // namespace kiln::ops::linalg
