#include "cuda/cudnn_handle.h"

#include "cuda/device_state.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>

#include <mutex>
#include <string>
#include <vector>

namespace kiln::cuda {
namespace {

// Handles of finished threads, per device, for the next thread to take. Leaked on purpose, as
// cuBLAS's handles (blas.cpp): destroying handles after the driver shut down at exit can crash.
struct HandlePool {
  std::mutex mutex;
  std::vector<std::vector<cudnnHandle_t>> free;
};

HandlePool& pool() {
  static auto* p = new HandlePool();
  return *p;
}

// One thread's handles, by device; they return to the pool when the thread ends (cudnnCreate
// costs milliseconds and device memory, so short-lived threads must not make one each).
struct ThreadHandles {
  std::vector<cudnnHandle_t> by_device;
  ThreadHandles() = default;
  ThreadHandles(const ThreadHandles&) = delete;
  ThreadHandles& operator=(const ThreadHandles&) = delete;
  ~ThreadHandles() {
    HandlePool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    for (size_t d = 0; d < by_device.size(); ++d) {
      if (by_device[d] == nullptr) continue;
      if (p.free.size() <= d) p.free.resize(d + 1);
      p.free[d].push_back(by_device[d]);
    }
  }
};

cudnnHandle_t take_or_create(int device) {
  HandlePool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    const size_t d = static_cast<size_t>(device);
    if (p.free.size() > d && !p.free[d].empty()) {
      cudnnHandle_t h = p.free[d].back();
      p.free[d].pop_back();
      return h;
    }
  }
  DeviceGuard guard(device);  // a handle belongs to the device current when it is made
  cudnnHandle_t h = nullptr;
  KILN_CUDNN_CHECK(cudnnCreate(&h));
  return h;
}

}  // namespace

void raise_cudnn_error(cudnnStatus_t status, const char* call) {
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  const std::string why = detail[0] != '\0' ? std::string("; cuDNN says: ") + detail : "";
  throw_error(fmt::format("cuDNN error: {} failed: {} ({}){}", call, cudnnGetErrorString(status),
                          static_cast<int>(status), why));
}

bool is_unsupported_problem(cudnnStatus_t status) {
  if (CUDNN_STATUS_CATEGORY(status) != CUDNN_STATUS_NOT_SUPPORTED) return false;
  switch (status) {
    case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER:
    case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART:
    case CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH:
    case CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING:
    case CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE:
      return false;
    default:
      return true;
  }
}

cudnnHandle_t cudnn_handle(int device) {
  thread_local ThreadHandles mine;
  const size_t d = static_cast<size_t>(device);
  if (mine.by_device.size() <= d) mine.by_device.resize(d + 1, nullptr);
  cudnnHandle_t& h = mine.by_device[d];
  if (h == nullptr) h = take_or_create(device);
  KILN_CUDNN_CHECK(cudnnSetStream(h, stream_of(device)));
  return h;
}

cudnnDataType_t cudnn_data_type(DType dtype, const char* op) {
  switch (dtype) {
    case DType::Float16:
      return CUDNN_DATA_HALF;
    case DType::BFloat16:
      return CUDNN_DATA_BFLOAT16;
    case DType::Float32:
      return CUDNN_DATA_FLOAT;
    case DType::Float64:
      return CUDNN_DATA_DOUBLE;
    default:
      KILN_FAIL("{}: cuDNN takes float16, bfloat16, float32 and float64 tensors, got {}", op,
                dtype_name(dtype));
  }
}

}  // namespace kiln::cuda
