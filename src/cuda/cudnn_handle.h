#pragma once
// cuDNN plumbing for the CUDA layer: a handle per device and thread bound to kiln's current
// stream, every cuDNN status checked (a failure raises kiln::Error naming the call and cuDNN's
// description), owning wrappers of its descriptors, and kiln dtypes as cuDNN data types.
#include <kiln/core/dtype.h>

#include <cudnn.h>

#include <memory>

namespace kiln::cuda {

// Raises kiln::Error "cuDNN error: <call> failed: <description> (<code>)", with cuDNN's own
// explanation of the last failure where it has one.
[[noreturn]] void raise_cudnn_error(cudnnStatus_t status, const char* call);

// A status of the NOT_SUPPORTED family that describes the problem (a shape, data type, layout or
// padding no kernel of this cuDNN takes), as opposed to a broken installation (driver, runtime,
// architecture or sub-library missing), which must raise instead of being worked around.
bool is_unsupported_problem(cudnnStatus_t status);

// The calling thread's handle for `device`, made on first use and set to the device's current
// stream. A handle is not safe to share between threads that use it at once (cuDNN's rule), so
// each thread has its own; a finished thread's handles go back to a pool for the next thread.
cudnnHandle_t cudnn_handle(int device);

// cuDNN's data type for float16, bfloat16, float32 and float64; raises for any other dtype.
cudnnDataType_t cudnn_data_type(DType dtype, const char* op);

namespace cudnn_detail {
template <typename Struct, cudnnStatus_t (*Destroy)(Struct*)>
struct Destroyer {
  void operator()(Struct* d) const noexcept { (void)Destroy(d); }
};
}  // namespace cudnn_detail

// An owned descriptor: made by its create call, destroyed with its owner.
template <typename Struct, cudnnStatus_t (*Create)(Struct**), cudnnStatus_t (*Destroy)(Struct*)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() {
    Struct* d = nullptr;
    const cudnnStatus_t status = Create(&d);
    if (status != CUDNN_STATUS_SUCCESS) raise_cudnn_error(status, "creating a descriptor");
    owned_.reset(d);
  }
  Struct* get() const { return owned_.get(); }

 private:
  std::unique_ptr<Struct, cudnn_detail::Destroyer<Struct, Destroy>> owned_;
};

using TensorDescriptor =
    CudnnDescriptor<cudnnTensorStruct, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDescriptor =
    CudnnDescriptor<cudnnFilterStruct, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionStruct, cudnnCreateConvolutionDescriptor,
                    cudnnDestroyConvolutionDescriptor>;

}  // namespace kiln::cuda

#define KILN_CUDNN_CHECK(call)                                    \
  do {                                                            \
    const cudnnStatus_t kiln_cudnn_status_ = (call);              \
    if (kiln_cudnn_status_ != CUDNN_STATUS_SUCCESS) [[unlikely]]  \
      ::kiln::cuda::raise_cudnn_error(kiln_cudnn_status_, #call); \
  } while (0)
