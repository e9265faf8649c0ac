#pragma once
// The out-of-range check of the CUDA indexing ops. Their kernels record a bad index in an
// IndexFault in device memory (kernels/indexing.h) and skip its element rather than trap (a
// device trap would leave the context unusable); after its kernels the op copies the record back
// and raises the CPU kernel's error. Reading it back waits for the stream: that is the one
// synchronization such an op costs.
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"
#include "cuda/kernels/indexing.h"
#include "ops/indexing/index_common.h"

#include <kiln/core/tensor.h>
#include <kiln/ops/creation.h>

namespace kiln::cuda {

class IndexFaultRecord {
 public:
  // A cleared record on `device`, for kernels on its current stream.
  explicit IndexFaultRecord(Device device)
      : buffer_(empty({kWords}, TensorOptions(DType::Int64).device(device))),
        stream_(stream_of(device.index())) {
    KILN_CUDA_CHECK(cudaMemsetAsync(buffer_.data_ptr(), 0, sizeof(kernels::IndexFault), stream_));
  }

  kernels::IndexFault* get() const { return static_cast<kernels::IndexFault*>(buffer_.data_ptr()); }

  // The record as the kernels left it: waits for the stream (the synchronization).
  kernels::IndexFault read() const {
    kernels::IndexFault host{};
    KILN_CUDA_CHECK(cudaMemcpyAsync(&host, get(), sizeof(host), cudaMemcpyDeviceToHost, stream_));
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return host;
  }

  // Raises kiln::IndexError "op(): index 7 is out of bounds for dimension 0 with size 5" (the CPU
  // kernels' message) when a kernel recorded an index.
  void raise_if_set(const char* op) const {
    const kernels::IndexFault f = read();
    if (f.flagged != 0) ops::indexing::fail_out_of_bounds(f.value, f.dim, f.size, op);
  }

 private:
  static constexpr int64_t kWords = sizeof(kernels::IndexFault) / sizeof(int64_t);
  static_assert(sizeof(kernels::IndexFault) % sizeof(int64_t) == 0);
  Tensor buffer_;
  cudaStream_t stream_;
};

}  // namespace kiln::cuda
