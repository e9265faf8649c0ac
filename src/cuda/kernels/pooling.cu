// Max pooling with indices (windowed and adaptive) and its backward. Forward: a thread per output
// element walks its window in the CPU kernels' order (rows, then columns), so values and indices
// are the CPU's bit for bit. Backward: a thread per grad_output element adds it at its index;
// windows overlap when stride < kernel, hence the atomic adds.
#include "cuda/cuda_check.h"
#include "cuda/kernels/pooling.h"
#include "cuda/kernels/types.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln::cuda::kernels {
namespace {

// Output element o's row and column, and where its channel's input plane lies: input (h, w) of
// that plane is in[base + (h * W + w) * step]. I is the index type: 32-bit where the input and
// output fit (64-bit divisions are emulated, and were most of the forward kernel's time).
template <typename I>
struct Site {
  I base, step, oh, ow;
};

template <typename I>
__device__ __forceinline__ Site<I> site_of(const MaxPool2d& g, I o) {
  const I channels = static_cast<I>(g.channels), out_h = static_cast<I>(g.out_h),
          out_w = static_cast<I>(g.out_w);
  const I hw = static_cast<I>(g.in_h) * static_cast<I>(g.in_w);
  if (g.channels_last) {
    const I c = o % channels;
    I t = o / channels;
    const I ow = t % out_w;
    t /= out_w;
    const I oh = t % out_h;
    const I n = t / out_h;
    return {n * hw * channels + c, channels, oh, ow};
  }
  const I ow = o % out_w;
  const I t = o / out_w;
  return {(t / out_h) * hw, 1, t % out_h, ow};
}

// The positions [start, end) step `step` of output `o`'s window along one axis: PyTorch's
// windows (the first tap moved past the padding by whole dilations), or the adaptive ones.
template <typename I>
struct Span {
  I start, end, step;
};

template <typename I>
__device__ __forceinline__ Span<I> span_of(bool adaptive, I o, I in, I out, I kernel, I stride,
                                           I pad, I dilation) {
  if (adaptive) return {(o * in) / out, ((o + 1) * in + out - 1) / out, 1};
  I start = o * stride - pad;
  const I last = start + (kernel - 1) * dilation + 1;
  const I end = last < in ? last : in;
  if (start < 0) start += ((-start + dilation - 1) / dilation) * dilation;
  return {start, end, dilation};
}

template <typename A>
__device__ __forceinline__ bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return isnan(v);
  } else {
    return false;
  }
}

template <typename T, typename I>
__global__ void max_pool2d_kernel(MaxPool2d g, const T* in, T* out, int64_t* indices, T lowest,
                                  I total) {
  using A = Acc<T>;
  const I grid = static_cast<I>(gridDim.x) * static_cast<I>(blockDim.x);
  const I in_h = static_cast<I>(g.in_h), in_w = static_cast<I>(g.in_w);
  for (I o = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
       o < total; o += grid) {
    const Site<I> s = site_of<I>(g, o);
    const Span<I> rows = span_of<I>(g.adaptive, s.oh, in_h, static_cast<I>(g.out_h),
                                    static_cast<I>(g.kernel_h), static_cast<I>(g.stride_h),
                                    static_cast<I>(g.pad_h), static_cast<I>(g.dilation_h));
    const Span<I> cols = span_of<I>(g.adaptive, s.ow, in_w, static_cast<I>(g.out_w),
                                    static_cast<I>(g.kernel_w), static_cast<I>(g.stride_w),
                                    static_cast<I>(g.pad_w), static_cast<I>(g.dilation_w));
    T best = lowest;
    A best_value = convert<A>(lowest);
    I at = rows.start * in_w + cols.start;  // the CPU's index for an all -inf window
    for (I h = rows.start; h < rows.end; h += rows.step) {
      for (I w = cols.start; w < cols.end; w += cols.step) {
        const I position = h * in_w + w;
        const T v = in[s.base + position * s.step];
        const A value = convert<A>(v);
        if (value > best_value || is_nan(value)) {
          best = v;
          best_value = value;
          at = position;
        }
      }
    }
    out[o] = best;
    if (indices != nullptr) indices[o] = at;
  }
}

template <typename T>
__global__ void max_pool2d_backward_kernel(MaxPool2d g, const T* grad_out, const int64_t* indices,
                                           T* grad_in, int64_t total) {
  const int64_t hw = g.in_h * g.in_w;
  const int64_t grid = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += grid) {
    const Site<int64_t> s = site_of<int64_t>(g, o);
    const int64_t i = indices[o];
    // Indices come from the caller; one outside the plane is skipped rather than written
    // outside grad_in (the CPU kernel's behaviour there is undefined).
    if (i < 0 || i >= hw) continue;
    atomicAdd(grad_in + s.base + i * s.step, grad_out[o]);
  }
}

// The value every window starts from: -inf for floating types, the lowest value otherwise.
template <typename T>
T lowest_of() {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(-std::numeric_limits<float>::infinity());
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(-std::numeric_limits<float>::infinity());
  } else if constexpr (std::is_floating_point_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

}  // namespace

void max_pool2d(ScalarType type, const MaxPool2d& g, const void* in, void* out, int64_t* indices,
                cudaStream_t stream) {
  const int64_t total = g.batch * g.channels * g.out_h * g.out_w;
  if (total == 0) return;
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // 32-bit where every value the kernel forms fits: element offsets (at most the input's or
    // the output's count), a window's first and last row or column (an output position times
    // its stride, plus the window's reach), and the adaptive windows' o * in products.
    const int64_t in_numel = g.batch * g.channels * g.in_h * g.in_w;
    const int64_t rows = (g.out_h + 1) * std::max({g.in_h, g.stride_h, g.kernel_h * g.dilation_h});
    const int64_t cols = (g.out_w + 1) * std::max({g.in_w, g.stride_w, g.kernel_w * g.dilation_w});
    if (std::max({in_numel, total, rows, cols}) < std::numeric_limits<int32_t>::max()) {
      max_pool2d_kernel<T, int32_t><<<blocks_for(total), kThreads, 0, stream>>>(
          g, static_cast<const T*>(in), static_cast<T*>(out), indices, lowest_of<T>(),
          static_cast<int32_t>(total));
    } else {
      max_pool2d_kernel<T, int64_t><<<blocks_for(total), kThreads, 0, stream>>>(
          g, static_cast<const T*>(in), static_cast<T*>(out), indices, lowest_of<T>(), total);
    }
    KILN_CUDA_CHECK_LAUNCH();
  });
}

void max_pool2d_backward(ScalarType type, const MaxPool2d& g, const void* grad_out,
                         const int64_t* indices, void* grad_in, cudaStream_t stream) {
  const int64_t in_numel = g.batch * g.channels * g.in_h * g.in_w;
  const int64_t total = g.batch * g.channels * g.out_h * g.out_w;
  const size_t itemsize = type == ScalarType::Float64 ? sizeof(double) : sizeof(float);
  if (in_numel == 0) return;
  KILN_CUDA_CHECK(cudaMemsetAsync(grad_in, 0, static_cast<size_t>(in_numel) * itemsize, stream));
  if (total == 0) return;
  if (type == ScalarType::Float64) {
    max_pool2d_backward_kernel<double><<<blocks_for(total), kThreads, 0, stream>>>(
        g, static_cast<const double*>(grad_out), indices, static_cast<double*>(grad_in), total);
  } else {
    max_pool2d_backward_kernel<float><<<blocks_for(total), kThreads, 0, stream>>>(
        g, static_cast<const float*>(grad_out), indices, static_cast<float*>(grad_in), total);
  }
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace kiln::cuda::kernels
