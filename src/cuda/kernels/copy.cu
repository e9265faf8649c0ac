// Strided copies with dtype conversion (up to kMaxDims dims) and fills.
#include "cuda/cuda_check.h"
#include "cuda/kernels/types.cuh"

namespace kiln::cuda::kernels {
namespace {

template <typename To, typename From>
__global__ void copy_kernel(Geometry g, To* dst, const From* src, Offsets<2> s) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel;
       i += stride) {
    if (g.contiguous) {
      dst[i] = convert<To>(src[i]);
    } else {
      int64_t off[2];
      offsets_of<2>(i, g, s, off);
      dst[off[0]] = convert<To>(src[off[1]]);
    }
  }
}

template <typename T>
__global__ void fill_kernel(Geometry g, T* dst, T value, Offsets<1> s) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel;
       i += stride) {
    if (g.contiguous) {
      dst[i] = value;
    } else {
      int64_t off[1];
      offsets_of<1>(i, g, s, off);
      dst[off[0]] = value;
    }
  }
}

template <typename T>
void launch_fill(const Geometry& g, const Operand& dst, uint64_t bits, cudaStream_t stream) {
  T value;
  static_assert(sizeof(T) <= sizeof(bits));
  __builtin_memcpy(&value, &bits, sizeof(T));  // little-endian: the low bytes hold the value
  const Operand* ops[1] = {&dst};
  fill_kernel<T><<<blocks_for(g.numel), kThreads, 0, stream>>>(g, static_cast<T*>(dst.data), value,
                                                               offsets_from<1>(ops));
  KILN_CUDA_CHECK_LAUNCH();
}

}  // namespace

void copy(const Geometry& g, const Operand& dst, const Operand& src, cudaStream_t stream) {
  if (g.numel == 0) return;
  const Operand* ops[2] = {&dst, &src};
  const Offsets<2> s = offsets_from<2>(ops);
  dispatch(dst.type, [&](auto to_tag) {
    using To = typename decltype(to_tag)::type;
    dispatch(src.type, [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      copy_kernel<To, From><<<blocks_for(g.numel), kThreads, 0, stream>>>(
          g, static_cast<To*>(dst.data), static_cast<const From*>(src.data), s);
      KILN_CUDA_CHECK_LAUNCH();
    });
  });
}

void fill(const Geometry& g, const Operand& dst, uint64_t bits, int itemsize, cudaStream_t stream) {
  if (g.numel == 0) return;
  switch (itemsize) {
    case 1:
      return launch_fill<uint8_t>(g, dst, bits, stream);
    case 2:
      return launch_fill<uint16_t>(g, dst, bits, stream);
    case 4:
      return launch_fill<uint32_t>(g, dst, bits, stream);
    default:
      return launch_fill<uint64_t>(g, dst, bits, stream);
  }
}

}  // namespace kiln::cuda::kernels
