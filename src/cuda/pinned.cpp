// Page-locked host tensors (cudaHostAlloc): copies from and to them run at full bus bandwidth
// and can overlap with kernels.
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"

#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>

namespace kiln::cuda {

Tensor pinned_empty(IntList sizes, DType dtype) {
  check_available("cuda::pinned_empty");
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const size_t nbytes = static_cast<size_t>(numel) * itemsize(dtype);
  void* ptr = nullptr;
  if (nbytes > 0) KILN_CUDA_CHECK(cudaHostAlloc(&ptr, nbytes, cudaHostAllocDefault));
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  return from_blob(ptr, sizes, strides, dtype, [](void* p) {
    if (p != nullptr) (void)cudaFreeHost(p);
  });
}

}  // namespace kiln::cuda
