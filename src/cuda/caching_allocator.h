#pragma once
// The CUDA caching allocator's internals shared with the rest of the layer.
#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace kiln::cuda {

// Sizes the cache hands out: up to 1 MiB rounded up to 512 bytes, larger ones to 2 MiB.
inline constexpr size_t kSmallLimit = size_t{1} << 20;
inline constexpr size_t kSmallRound = 512;
inline constexpr size_t kLargeRound = size_t{2} << 20;
constexpr size_t rounded_size(size_t nbytes) {
  const size_t r = nbytes <= kSmallLimit ? kSmallRound : kLargeRound;
  return (nbytes + r - 1) / r * r;
}

// Private pools of CUDA graphs (graph.h). While `captured` is being captured into `pool`, the
// allocations made on it come from that pool, and its freed blocks go back to it, not to the
// shared cache: a replay writes the addresses the capture used, so no other tensor may get them.
// The blocks are recorded on `origin`, the stream the graph is replayed on.
uint64_t create_graph_pool();
void begin_pool_allocations(uint64_t pool, CUstream_st* captured, CUstream_st* origin);
void end_pool_allocations(CUstream_st* captured);
// The pool's free blocks return to the shared cache; blocks still held return when freed.
void release_graph_pool(uint64_t pool);
// Whether `ptr` lies in a block that `pool` allocated (0: any live pool).
bool graph_pool_owns(uint64_t pool, const void* ptr);

}  // namespace kiln::cuda
