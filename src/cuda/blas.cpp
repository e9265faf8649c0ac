// mm and bmm through cuBLAS (float32, float64). TF32 stays off: the handle keeps
// CUBLAS_DEFAULT_MATH, which uses tensor cores for float32 only when TF32 is asked for (PyTorch's
// allow_tf32 = False default for matmul), so results match the CPU's to float32 rounding.
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>

#include <cublas_v2.h>

#include <climits>
#include <mutex>
#include <type_traits>
#include <vector>

#define KILN_CUBLAS_CHECK(call)                                                                    \
  do {                                                                                             \
    const cublasStatus_t kiln_cublas_status_ = (call);                                             \
    KILN_CHECK(kiln_cublas_status_ == CUBLAS_STATUS_SUCCESS, "cuBLAS error: {} failed: {}", #call, \
               cublasGetStatusString(kiln_cublas_status_));                                        \
  } while (0)

namespace kiln::cuda {
namespace {

using ops::Stack;

// One handle per device, made on first use (cublasCreate costs milliseconds). Leaked on purpose,
// as the allocator: destroying handles after the driver shut down at exit can crash.
cublasHandle_t handle(int device) {
  static std::mutex mutex;
  static auto* handles = new std::vector<cublasHandle_t>();
  std::lock_guard<std::mutex> lock(mutex);
  if (handles->size() <= static_cast<size_t>(device))
    handles->resize(static_cast<size_t>(device) + 1, nullptr);
  cublasHandle_t& h = (*handles)[static_cast<size_t>(device)];
  if (h == nullptr) {
    KILN_CUBLAS_CHECK(cublasCreate(&h));
    KILN_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  }
  return h;
}

int as_int(int64_t v, const char* what) {
  KILN_CHECK(v <= INT_MAX, "mm (CUDA): {} = {} exceeds cuBLAS's int range", what, v);
  return static_cast<int>(v);
}

// C = A B for `batch` row-major products of [m, k] and [k, n] matrices stored one after another
// (contiguous), through cuBLAS's strided batched GEMM. Row-major C = A B is column-major
// C^T = B^T A^T: the operands swap, nothing transposes.
template <typename T>
void batched_gemm(cublasHandle_t h, int64_t batch, int64_t m, int64_t k, int64_t n, const T* a,
                  const T* b, T* c) {
  const T one = 1, zero = 0;
  const int in = as_int(n, "n"), im = as_int(m, "m"), ik = as_int(k, "k");
  const int count = as_int(batch, "batch");
  if constexpr (std::is_same_v<T, float>) {
    KILN_CUBLAS_CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, &one, b,
                                                in, k * n, a, ik, m * k, &zero, c, in, m * n,
                                                count));
  } else {
    KILN_CUBLAS_CHECK(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, &one, b,
                                                in, k * n, a, ik, m * k, &zero, c, in, m * n,
                                                count));
  }
}

// mm ([m, k] @ [k, n]) and bmm ([b, m, k] @ [b, k, n]) on CUDA, float32 and float64.
void matrix_product(const char* op, const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& a = args[0].to_tensor();
  const Tensor& b = args[1].to_tensor();
  const Tensor& out = outs[0];
  const Device device = out.device();
  for (const Tensor* t : {&a, &b}) {
    KILN_CHECK(t->device() == device,
               "{}: expected all tensors to be on the same device, but found at least two "
               "devices, {} and {}",
               op, device.str(), t->device().str());
  }
  const DType dtype = out.dtype();
  KILN_CHECK(a.dtype() == dtype && b.dtype() == dtype &&
                 (dtype == DType::Float32 || dtype == DType::Float64),
             "{}: no kernel for device {} for {} @ {} (cuBLAS multiplies float32 and float64 "
             "matrices here)",
             op, device.str(), dtype_name(a.dtype()), dtype_name(b.dtype()));
  DeviceGuard guard(device.index());
  const bool batched = a.dim() == 3;
  const int64_t batch = batched ? a.size(0) : 1;
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  if (batch == 0 || m == 0 || n == 0) return;
  Tensor result = out.is_contiguous() ? out : empty_cuda_like(out, out.dtype());
  if (k == 0) {
    result.zero_();
  } else {
    const Tensor x = a.contiguous(), y = b.contiguous();
    cublasHandle_t h = handle(device.index());
    KILN_CUBLAS_CHECK(cublasSetStream(h, stream_of(device.index())));
    if (dtype == DType::Float32) {
      batched_gemm(h, batch, m, k, n, x.data_ptr<float>(), y.data_ptr<float>(),
                   result.data_ptr<float>());
    } else {
      batched_gemm(h, batch, m, k, n, x.data_ptr<double>(), y.data_ptr<double>(),
                   result.data_ptr<double>());
    }
  }
  if (!result.is_same(out)) device_copy(out, result);
}

}  // namespace

KILN_CUDA_REGISTER(blas_ops) {
  structured("mm", [](const Stack& args, const std::vector<Tensor>& outs) {
    matrix_product("mm", args, outs);
  });
  structured("bmm", [](const Stack& args, const std::vector<Tensor>& outs) {
    matrix_product("bmm", args, outs);
  });
}

}  // namespace kiln::cuda
