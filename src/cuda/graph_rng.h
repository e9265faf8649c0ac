#pragma once
// Graph-safe Philox state (PyTorch's PhiloxCudaState): random kernels captured into a CUDA graph
// must not keep the (seed, offset) of their capture, or every replay would draw the same numbers.
// While a kiln::cuda::Graph captures a stream, a draw on it reserves nothing from the generator:
// it takes its place within the graph (the counters the capture's earlier draws used) and reads
// seed and base offset from the graph's slot of device memory. Each replay reserves the graph's
// total from the device's default generator at once and writes (seed, first counter) into the
// slot in stream order, so replay k draws what the same calls would draw uncaptured at that point
// of the generator's stream. Slots come from small per-device buffers allocated once and never
// freed (graphs may outlive anything else); each graph has its own, so graphs replayed on
// different streams never read each other's state. Implemented in graph.cpp.
#include "cuda/kernels/random.h"

#include <cstdint>
#include <optional>

namespace kiln::cuda {

// Capture side (Graph). Starts counting the draws queued on `captured`, a stream of `device`
// about to be captured, and returns the capture's slot (two words). Raises when `captured` is
// counted already.
uint64_t* begin_graph_rng(int device, cudaStream_t captured);
// Stops counting the draws on `captured`; returns the counters they used (0 when none, or when
// `captured` was not counted).
uint64_t end_graph_rng(cudaStream_t captured) noexcept;
// Gives a slot back (its graph is gone).
void release_graph_rng(int device, uint64_t* slot) noexcept;

// Draw side (the random ops). The Philox arguments of a draw of `counters` counters on the
// current stream of `device` when a Graph captures that stream; nullopt otherwise (the draw
// reserves from its generator as usual). Cheap when nothing is captured: one atomic load.
std::optional<kernels::PhiloxArgs> graph_rng_draw(int device, uint64_t counters);

// Replay side: reserves `counters` counters from `device`'s default generator (or, while another
// graph captures `stream`, takes them within that graph) and writes them into `slot` on `stream`.
void prepare_graph_rng(int device, uint64_t* slot, uint64_t counters, cudaStream_t stream);

}  // namespace kiln::cuda
