// Row reductions (sum, mean) over a contiguous [m, n] input: the host moves the reduced dims
// last. Long rows get a block each (per-thread partial sums, then warp shuffles, then the warps'
// results through shared memory); short rows a warp each, so that many small rows still fill the
// device. Accumulation: float for float32/float16/bfloat16 (as the CPU kernels), double for
// float64, int64 for the integral types (a narrower integral result wraps as it would have).
#include "cuda/cuda_check.h"
#include "cuda/kernels/types.cuh"

namespace kiln::cuda::kernels {
namespace {

template <typename T>
using SumAcc = std::conditional_t<std::is_floating_point_v<Acc<T>>, Acc<T>, int64_t>;

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;

template <typename A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int d = kWarp / 2; d > 0; d /= 2) v += __shfl_down_sync(kFullMask, v, d);
  return v;
}

template <typename T>
__device__ __forceinline__ T finish(SumAcc<T> sum, int64_t n, bool mean) {
  if (mean) {
    if constexpr (std::is_floating_point_v<SumAcc<T>>) return convert<T>(sum / SumAcc<T>(n));
  }
  return convert<T>(sum);
}

// One block per row (grid-stride over rows).
template <typename T>
__global__ void reduce_block_per_row(T* out, const T* in, int64_t m, int64_t n, bool mean) {
  using A = SumAcc<T>;
  __shared__ A partial[kThreads / kWarp];
  for (int64_t row = blockIdx.x; row < m; row += gridDim.x) {
    const T* p = in + row * n;
    A sum = A(0);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += convert<A>(p[i]);
    sum = warp_sum(sum);
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    if (lane == 0) partial[warp] = sum;
    __syncthreads();
    if (warp == 0) {
      sum = lane < static_cast<int>(blockDim.x / kWarp) ? partial[lane] : A(0);
      sum = warp_sum(sum);
      if (lane == 0) out[row] = finish<T>(sum, n, mean);
    }
    __syncthreads();  // partial is rewritten by the next row
  }
}

// One warp per row.
template <typename T>
__global__ void reduce_warp_per_row(T* out, const T* in, int64_t m, int64_t n, bool mean) {
  using A = SumAcc<T>;
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
       row < m; row += warps) {
    const T* p = in + row * n;
    A sum = A(0);
    for (int64_t i = lane; i < n; i += kWarp) sum += convert<A>(p[i]);
    sum = warp_sum(sum);
    if (lane == 0) out[row] = finish<T>(sum, n, mean);
  }
}

}  // namespace

void reduce_rows(ScalarType type, void* out, const void* in, int64_t m, int64_t n, bool mean,
                 cudaStream_t stream) {
  if (m == 0) return;
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto* o = static_cast<T*>(out);
    const auto* x = static_cast<const T*>(in);
    if (n > 1024) {
      const unsigned blocks = static_cast<unsigned>(m < 65536 ? m : 65536);
      reduce_block_per_row<T><<<blocks, kThreads, 0, stream>>>(o, x, m, n, mean);
    } else {
      reduce_warp_per_row<T><<<blocks_for(m * kWarp), kThreads, 0, stream>>>(o, x, m, n, mean);
    }
    KILN_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace kiln::cuda::kernels
