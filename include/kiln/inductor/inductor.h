#pragma once
// The inductor (DESIGN.md §5, TorchInductor's role) on the CPU: a graph of prims is lowered to
// loop nests, generated as one C++/OpenMP translation unit, compiled by the system compiler into a
// shared object kept in the on-disk code cache (KILN_CACHE_DIR, default ~/.cache/kiln), and run
// with extern calls (GEMM, convolution, random draws, indexing) in between. The `inductor`
// backend runs aot (functionalization, joint graph, min-cut partition, every op as prims) and
// compiles both halves this way.
#include <kiln/backends/backend.h>

namespace kiln::inductor {

// Compiles one graph of prims. A graph it cannot lower (a dtype or device without generated
// kernels yet) runs with the interpreter, said on the perf_hints channel. Options (from
// compile()'s `options`): "fallback" = "eager" turns a C++ compiler failure into a warning and
// interpreted execution instead of a kiln::Error; "extern_epilogues" = "false" keeps an add after
// mm/bmm/convolution a generated kernel instead of fusing it into the extern call;
// "autotune_force" = a variant label (max-autotune only: "default", "one_thread", "all_threads",
// "compiler_simd", "chunk_1024", "chunk_16384", "extern", "generated") uses that variant wherever
// it exists instead of timing (docs/INDUCTOR.md); "split_reductions" = "true" or "false" splits
// reductions with few outputs over long loops in two kernels (by default on GPUs only). On a GPU,
// "cudagraphs" = "true" or "false" replays each graph's calls from a CUDA graph or not (by default
// in "reduce-overhead" and "max-autotune", as PyTorch has them; docs/CUDA.md). On the CPU,
// "streaming_stores" = "auto" (the default), "true" or "false": kernels write outputs at least as
// large as the last-level cache with non-temporal stores ("auto"), any output they could ("true",
// for tests), or none.
CompiledGraph compile_graph(const graph::Graph& graph, std::span<const Tensor> example_inputs,
                            const BackendContext& context);

// Compiles an inference graph (no gradient wanted) frozen: batch norms folded into the preceding
// convolutions, and what is computed from parameters, buffers and captured tensors only folded
// into a constant graph run once and again only when one of those tensors changed (another
// tensor, or its version counter moved: new weights loaded, a training step), then the rest with
// compile_graph. Options: "freezing" = "false" compiles the graph as it is; "prepack_weights" =
// "false" leaves convolution and linear weights to be reordered into oneDNN's layout on every
// call, "true" packs linear layers' weights even where oneDNN reads them in a plain layout (by
// default only its blocked ones are packed);
// "layout_optimization" = "false" keeps convolutions on the activations' own layout (by default a
// convolution net runs channels-last inside, its outputs in the layouts eager code gives).
CompiledGraph compile_inference_graph(const graph::Graph& graph,
                                      std::span<const Tensor> example_inputs,
                                      const BackendContext& context);

// The inductor's rewrites of a training joint graph before aot partitions it: a convolution net
// runs channels-last inside, forward and backward (its saved activations in that layout), its
// outputs and gradients in the layouts eager code gives; option "layout_optimization" = "false"
// leaves the layouts as they are. On the CPU, 16-bit convolutions become float32 ones between
// casts first (conv_widening.h), as kiln's kernels compute them.
void optimize_joint_graph(graph::Graph& joint, const BackendContext& context);

}  // namespace kiln::inductor
