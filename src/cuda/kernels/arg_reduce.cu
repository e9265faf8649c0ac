// argmax/argmin over contiguous rows (the host moves the dim last, or flattens). The CPU's rule
// (reduce.kernel.cpp's ArgReducer): an element replaces the best so far only when it beats it, a
// NaN beating everything but a NaN, so the first extreme wins. In parallel the candidates
// (value, index) are merged by that rule and, between equal values, by the smaller index, which
// gives the same first index whatever the order of merging. Short rows take a warp each; long
// rows a block each, split over several blocks (a second pass merges their candidates) when
// there are too few rows to fill the device.
#include "cuda/cuda_check.h"
#include "cuda/kernels/scan_sort.h"
#include "cuda/kernels/types.cuh"

#include <algorithm>

namespace kiln::cuda::kernels {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;

// The type elements compare in: float for the 16-bit floats (as the CPU's opmath), int64 for the
// integers (order-preserving, and shuffled as one word).
template <typename T>
using ArgAcc = std::conditional_t<std::is_floating_point_v<Acc<T>>, Acc<T>, int64_t>;

template <typename A>
struct Best {
  A value;
  int64_t index;  // -1: no candidate
};

template <typename A>
__device__ __forceinline__ bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return v != v;
  } else {
    (void)v;
    return false;
  }
}

// Whether x strictly beats v.
template <bool Largest, typename A>
__device__ __forceinline__ bool beats(A x, A v) {
  if (is_nan(v)) return false;
  if (is_nan(x)) return true;
  return Largest ? x > v : x < v;
}

template <bool Largest, typename A>
__device__ __forceinline__ Best<A> pick(const Best<A>& a, const Best<A>& b) {
  if (b.index < 0) return a;
  if (a.index < 0) return b;
  if (beats<Largest>(b.value, a.value)) return b;
  if (beats<Largest>(a.value, b.value)) return a;
  return b.index < a.index ? b : a;
}

template <bool Largest, typename A>
__device__ __forceinline__ Best<A> warp_pick(Best<A> v) {
#pragma unroll
  for (int d = kWarp / 2; d > 0; d /= 2) {
    const Best<A> other{__shfl_down_sync(kFullMask, v.value, d),
                        __shfl_down_sync(kFullMask, v.index, d)};
    v = pick<Largest>(v, other);
  }
  return v;
}

// Groups of G threads (a warp, or the whole block) each take segments of `chunk` elements: one
// per row when chunks == 1 (the index goes to out), else `chunks` per row (candidates go to
// partials).
template <int G, bool Largest, typename T>
__global__ void arg_segments(const T* in, int64_t rows, int64_t n, int64_t chunks, int64_t chunk,
                             int64_t* out, Best<ArgAcc<T>>* partials) {
  using A = ArgAcc<T>;
  constexpr int kGroups = kThreads / G;
  __shared__ Best<A> warp_best[kThreads / kWarp];
  const int lane = static_cast<int>(threadIdx.x % G);
  const int64_t segments = rows * chunks;
  for (int64_t s = static_cast<int64_t>(blockIdx.x) * kGroups + threadIdx.x / G; s < segments;
       s += static_cast<int64_t>(gridDim.x) * kGroups) {
    const int64_t row = s / chunks, begin = (s % chunks) * chunk;
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    const T* p = in + row * n;
    Best<A> best{A(0), -1};
    for (int64_t i = begin + lane; i < end; i += G) {
      const A x = convert<A>(p[i]);
      if (best.index < 0 || beats<Largest>(x, best.value)) best = {x, i};
    }
    best = warp_pick<Largest>(best);
    if constexpr (G > kWarp) {
      const int warp = lane / kWarp, warp_lane = lane % kWarp;
      if (warp_lane == 0) warp_best[warp] = best;
      __syncthreads();
      if (warp == 0) {
        best = warp_lane < G / kWarp ? warp_best[warp_lane] : Best<A>{A(0), -1};
        best = warp_pick<Largest>(best);
      }
      __syncthreads();  // warp_best is rewritten by the next segment
    }
    if (lane == 0) {
      if (chunks == 1) {
        out[row] = best.index;
      } else {
        partials[s] = best;
      }
    }
  }
}

// A warp per row merges its `chunks` candidates.
template <bool Largest, typename A>
__global__ void arg_merge(const Best<A>* partials, int64_t rows, int64_t chunks, int64_t* out) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kThreads / kWarp);
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * (kThreads / kWarp) + threadIdx.x / kWarp;
       row < rows; row += warps) {
    Best<A> best{A(0), -1};
    for (int64_t c = lane; c < chunks; c += kWarp) {
      best = pick<Largest>(best, partials[row * chunks + c]);
    }
    best = warp_pick<Largest>(best);
    if (lane == 0) out[row] = best.index;
  }
}

template <bool Largest, typename T>
void launch(const T* in, int64_t* out, int64_t rows, int64_t n, Workspace& ws,
            cudaStream_t stream) {
  using A = ArgAcc<T>;
  if (n <= 1024) {
    arg_segments<kWarp, Largest, T>
        <<<blocks_for(rows * kWarp), kThreads, 0, stream>>>(in, rows, n, 1, n, out, nullptr);
    KILN_CUDA_CHECK_LAUNCH();
    return;
  }
  // About 1024 blocks in all, none with less than 4096 elements.
  int64_t chunks = std::min<int64_t>((n + 4095) / 4096, (1024 + rows - 1) / rows);
  chunks = std::max<int64_t>(chunks, 1);
  const int64_t chunk = (n + chunks - 1) / chunks;
  chunks = (n + chunk - 1) / chunk;
  Best<A>* partials = nullptr;
  if (chunks > 1) {
    partials =
        static_cast<Best<A>*>(ws.bytes(static_cast<size_t>(rows * chunks) * sizeof(Best<A>)));
  }
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows * chunks, 65536));
  arg_segments<kThreads, Largest, T>
      <<<blocks, kThreads, 0, stream>>>(in, rows, n, chunks, chunk, out, partials);
  KILN_CUDA_CHECK_LAUNCH();
  if (chunks > 1) {
    arg_merge<Largest, A>
        <<<blocks_for(rows * kWarp), kThreads, 0, stream>>>(partials, rows, chunks, out);
    KILN_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

void arg_reduce_rows(ScalarType type, const void* in, int64_t* out, int64_t rows, int64_t n,
                     bool largest, Workspace& ws, cudaStream_t stream) {
  if (rows == 0) return;
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* x = static_cast<const T*>(in);
    if (largest) {
      launch<true, T>(x, out, rows, n, ws, stream);
    } else {
      launch<false, T>(x, out, rows, n, ws, stream);
    }
  });
}

}  // namespace kiln::cuda::kernels
