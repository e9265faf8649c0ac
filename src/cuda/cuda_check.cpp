#include "cuda/cuda_check.h"

#include <kiln/core/error.h>

namespace kiln::cuda {

void raise_cuda_error(cudaError_t status, const char* call) {
  // Clears a non-sticky error so that the next checked call is not blamed for this one.
  (void)cudaGetLastError();
  throw_error(fmt::format("CUDA error: {} failed: {} ({})", call, cudaGetErrorString(status),
                          cudaGetErrorName(status)));
}

}  // namespace kiln::cuda
