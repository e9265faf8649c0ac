#pragma once
// Every CUDA runtime and cuBLAS call goes through these checks, so a failure surfaces as a
// kiln::Error naming the call and the runtime's own description instead of a silent bad result.
// No fmt here: nvcc includes this header too (the .cu files), and fmt's consteval format strings
// do not compile there.
#include <cuda_runtime_api.h>

namespace kiln::cuda {
// Raises kiln::Error "CUDA error: <call> failed: <description> (<name>)" (cuda_check.cpp).
[[noreturn]] void raise_cuda_error(cudaError_t status, const char* call);
}  // namespace kiln::cuda

#define KILN_CUDA_CHECK(call)                                   \
  do {                                                          \
    const cudaError_t kiln_cuda_status_ = (call);               \
    if (kiln_cuda_status_ != cudaSuccess) [[unlikely]]          \
      ::kiln::cuda::raise_cuda_error(kiln_cuda_status_, #call); \
  } while (0)

// After a kernel launch: a bad configuration is reported by the launch itself.
#define KILN_CUDA_CHECK_LAUNCH() KILN_CUDA_CHECK(cudaGetLastError())
