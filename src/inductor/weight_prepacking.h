#pragma once
// Weight pre-packing for inference freezing: kiln's float32 convolutions run through oneDNN, whose
// direct kernels read the weight in a blocked layout; eager code reorders the weight into it on
// every call. A convolution with a constant weight becomes _convolution_packed, reading a copy
// packed by _pack_convolution_weight, a constant node that constant folding then moves into the
// constant graph (packed once, and again only when the weight changes).
#include <kiln/graph/graph.h>

namespace kiln::inductor {

// Rewrites the float32 convolutions whose weight is constant (computed from parameters, buffers
// and captured tensors only) and row-major: those of channels-last activations, and those of
// row-major activations with a kernel larger than 1x1 (oneDNN reads those 1x1 weights as they
// are). Returns the number rewritten.
size_t prepack_convolution_weights(graph::Graph& graph);

// The same for linear layers: an mm (float32, above kSmallGemmWork multiply-adds) of a row-major
// non-constant self and a constant mat2 (a linear layer's weight.t()) becomes _mm_packed, reading
// mat2 packed by _pack_mm_weight for the traced number of rows (other row counts compute from mat2
// itself). A following bias add folds into it later (extern_epilogue.h). Only where oneDNN reads
// the weight in a blocked layout (onednn_blocks_matmul_weight: brgemm on AVX-512), unless
// `plain_too`. Returns the number rewritten.
size_t prepack_matmul_weights(graph::Graph& graph, bool plain_too = false);

}  // namespace kiln::inductor
