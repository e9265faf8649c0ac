// Multi-tensor Adam(W) and SGD updates (optimizer.h). A launch takes up to kPerLaunch updates in
// its parameters (__grid_constant__: read in place from the parameter bank, not copied into each
// thread's local memory when indexed at run time); a block takes chunks of their elements in
// turn, finding a chunk's update by binary search over the chunk starts.
#include "cuda/cuda_check.h"
#include "cuda/kernels/optimizer.h"

#include <algorithm>

namespace kiln::cuda::kernels {
namespace {

using optim::detail::AdamUpdateArgs;
using optim::detail::SGDUpdateArgs;

constexpr int kOptimizerThreads = 256;
// Elements a block updates at a time.
constexpr int64_t kOptimizerChunk = 4096;
// Blocks enough to fill an H100/H200 several times over; the kernel strides over the rest.
constexpr int64_t kMaxOptimizerBlocks = 4096;

// Updates of one launch: update k covers the launch's chunks [chunk_starts[k],
// chunk_starts[k + 1]), chunk j of it the elements [j * kOptimizerChunk, (j + 1) * ...).
template <typename Args, int N>
struct Launch {
  Args updates[N];
  int64_t chunk_starts[N + 1];
  int count;
};
// As many as fit the 4 KiB of kernel parameters every CUDA version accepts.
constexpr int kAdamPerLaunch = 36;
constexpr int kSGDPerLaunch = 48;
using AdamLaunch = Launch<AdamUpdateArgs, kAdamPerLaunch>;
using SGDLaunch = Launch<SGDUpdateArgs, kSGDPerLaunch>;
static_assert(sizeof(AdamLaunch) <= 4000 && sizeof(SGDLaunch) <= 4000);

// The update whose chunks hold `chunk`: the last k with chunk_starts[k] <= chunk.
template <typename L>
__device__ int update_of(const L& l, int64_t chunk) {
  int lo = 0, hi = l.count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (l.chunk_starts[mid] <= chunk) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Explicitly rounded operations: nvcc would otherwise contract a * b + c into one FMA, which the
// CPU kernels (and the elementwise ops they reproduce) do not.
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }

// PyTorch's lerp with the weight's branch (as adam.kernel.cpp).
__device__ __forceinline__ float lerp_uniform(float a, float b, float w) {
  return fabsf(w) < 0.5F ? add(a, mul(w, sub(b, a))) : sub(b, mul(sub(b, a), sub(1.0F, w)));
}

struct AdamElement {
  __device__ void operator()(const AdamUpdateArgs& a, int64_t i) const {
    float p = a.param[i];
    const float g = a.grad[i];
    float m = a.exp_avg[i], v = a.exp_avg_sq[i];
    if (a.decay_param) p = mul(p, a.param_scale);
    float d = g;
    if (a.decay_grad) d = add(a.negate_grad ? -g : g, mul(a.grad_decay, p));
    if (a.lerp_form) {
      m = lerp_uniform(m, d, a.lerp_weight);
    } else {
      m = mul(m, a.beta1);
      m = add(m, mul(a.first_scale, d));
    }
    v = mul(v, a.beta2);
    v = add(v, mul(mul(a.second_scale, d), d));
    const float denom = add(__fdiv_rn(__fsqrt_rn(v), a.bias_correction2_sqrt), a.eps);
    p = add(p, __fdiv_rn(mul(a.neg_step_size, m), denom));
    a.param[i] = p;
    a.exp_avg[i] = m;
    a.exp_avg_sq[i] = v;
  }
};

struct SGDElement {
  __device__ void operator()(const SGDUpdateArgs& a, int64_t i) const {
    float p = a.param[i], buf = a.momentum_buffer[i];
    const float g = a.grad[i];
    float d = g;
    if (a.decay_grad) d = add(a.negate_grad ? -g : g, mul(a.grad_decay, p));
    buf = mul(buf, a.momentum);
    buf = add(buf, mul(a.buf_scale, d));
    if (a.nesterov) p = add(p, mul(a.grad_step, d));
    p = add(p, mul(a.buf_step, buf));
    a.param[i] = p;
    a.momentum_buffer[i] = buf;
  }
};

template <typename L, typename Element>
__global__ void multi_tensor_kernel(const __grid_constant__ L l, Element element) {
  const int64_t chunks = l.chunk_starts[l.count];
  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const int k = update_of(l, chunk);
    const auto& a = l.updates[k];
    const int64_t begin = (chunk - l.chunk_starts[k]) * kOptimizerChunk;
    const int64_t end = begin + kOptimizerChunk < a.n ? begin + kOptimizerChunk : a.n;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) element(a, i);
  }
}

template <typename L, typename Args, typename Element>
void launch_all(const Args* updates, int64_t count, cudaStream_t stream, Element element) {
  constexpr int per_launch = static_cast<int>(sizeof(L::updates) / sizeof(Args));
  for (int64_t first = 0; first < count; first += per_launch) {
    L l{};
    l.count = static_cast<int>(std::min<int64_t>(per_launch, count - first));
    l.chunk_starts[0] = 0;
    for (int k = 0; k < l.count; ++k) {
      l.updates[k] = updates[first + k];
      l.chunk_starts[k + 1] =
          l.chunk_starts[k] + (l.updates[k].n + kOptimizerChunk - 1) / kOptimizerChunk;
    }
    const int64_t chunks = l.chunk_starts[l.count];
    if (chunks == 0) continue;
    const auto blocks = static_cast<unsigned>(std::min(chunks, kMaxOptimizerBlocks));
    multi_tensor_kernel<<<blocks, kOptimizerThreads, 0, stream>>>(l, element);
    KILN_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

void adam_updates(const AdamUpdateArgs* updates, int64_t count, cudaStream_t stream) {
  launch_all<AdamLaunch>(updates, count, stream, AdamElement{});
}

void sgd_updates(const SGDUpdateArgs* updates, int64_t count, cudaStream_t stream) {
  launch_all<SGDLaunch>(updates, count, stream, SGDElement{});
}

}  // namespace kiln::cuda::kernels
