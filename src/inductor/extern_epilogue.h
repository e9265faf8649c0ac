#pragma once
// Extern epilogues: an add after an extern product (mm, bmm, convolution, _mm_packed) folded into
// the extern call itself, as eager code does it (addmm's and linear's bias fused into the GEMM, a
// convolution's bias added by oneDNN), saving a pass over the product.
#include <kiln/graph/graph.h>

namespace kiln::inductor {

// Rewrites, in a graph of prims, where the product has no other reader:
//   add(bias, mm(a, b)) (either order, alpha 1)   -> addmm(bias, a, b)
//   add(bias, bmm(a, b))                           -> baddbmm(bias, a, b)
//   add(convolution(x, w, None, ...), per-channel) -> convolution(x, w, view(bias, [C]), ...)
//   add(_mm_packed(a, b, p, None), per-column)     -> _mm_packed(a, b, p, view(bias, [N]))
// `bias` broadcasts to the product without changing its sizes, strides or dtype (a scaled
// addend, beta * self, stays a pointwise op on the small addend). Returns the number of rewrites.
size_t fuse_extern_epilogues(graph::Graph& graph);

}  // namespace kiln::inductor
