#pragma once
// Internal helpers shared by the CUDA layer's files.
#include <kiln/core/device.h>

#include <cuda_runtime_api.h>

namespace kiln::cuda {

// The device a kiln Device names (an unset index means the current device); raises kiln::Error
// for an index that no device has.
int device_index(Device device);
// The current stream of the device as the runtime's handle.
cudaStream_t stream_of(int device);
// Raises unless kiln was built with CUDA and a device is present (names `what`).
void check_available(const char* what);

}  // namespace kiln::cuda
