#pragma once
// The random kernels (random.cu). Each writes n contiguous elements from the Philox4x32-10
// stream (seed, offset) with the CPU kernels' element-to-word mapping (src/ops/random/philox.h)
// and formulas (src/ops/random/random.kernel.cpp, src/ops/dropout/dropout.kernel.cpp), so the
// same seed and offset give the CPU's numbers: bit for bit but for normals. The host reserves the
// counters (philox_blocks(n, words) of them) before the launch; the words per element are the
// CPU's: two for float64 uniforms and normals, one otherwise; `words` for integers.
#include "cuda/kernels/launch.h"

#include <cstdint>

namespace kiln::cuda::kernels {

// Outside a CUDA graph, the seed and the first reserved counter, by value. In a draw captured into
// a graph (cuda/graph_rng.h), `graph_state` points at {seed, base offset} in device memory, written
// before each replay, and `offset` is the draw's first counter past that base: the kernel reads
// seed = graph_state[0], offset = graph_state[1] + offset, so each replay draws new numbers.
struct PhiloxArgs {
  uint64_t seed = 0;
  uint64_t offset = 0;
  const uint64_t* graph_state = nullptr;
};

// out[i] = from + width * u, u uniform in [0, 1) with as many bits as the floating type's
// mantissa, computed in double and rounded to the type.
void random_uniform(ScalarType type, void* out, int64_t n, double from, double width,
                    PhiloxArgs stream, cudaStream_t cuda_stream);
// out[i] = mean + std * z, z standard normal by Box-Muller in double (element 2k: r cos(theta),
// 2k + 1: r sin(theta)) rounded to the floating type first, as the CPU does. Not bit-exact:
// CUDA's log/sin/cos and glibc's differ in the last bits of a double (random.cu says how much).
void random_normal(ScalarType type, void* out, int64_t n, double mean, double std,
                   PhiloxArgs stream, cudaStream_t cuda_stream);
// out[i] = low + r % range, r one word (words = 1) or two (words = 2), for every type but bool.
void random_int(ScalarType type, void* out, int64_t n, int64_t low, uint64_t range, int words,
                PhiloxArgs stream, cudaStream_t cuda_stream);
// native_dropout: mask[i] = (word i >> 8) < threshold, out[i] = in[i] * (mask[i] ? scale : 0)
// computed in float (double for float64) as the CPU kernel does; in, out of a floating type.
void dropout(ScalarType type, const void* in, void* out, bool* mask, int64_t n, uint32_t threshold,
             double scale, PhiloxArgs stream, cudaStream_t cuda_stream);

// state[0] = seed, state[1] = offset of `stream` (resolved as the draws do: a graph replayed while
// another graph is captured takes its place in that one's draws), in stream order: a replay's
// graph state, written before the graph's launch.
void write_philox_state(uint64_t* state, PhiloxArgs stream, cudaStream_t cuda_stream);

}  // namespace kiln::cuda::kernels
