// mm and bmm through cuBLAS (float16, bfloat16, float32, float64). TF32 stays off unless
// set_matmul_allow_tf32(true) (PyTorch's torch.backends.cuda.matmul.allow_tf32, False by
// default), so float32 results match the CPU's to float32 rounding.
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>

#include <cublas_v2.h>

#include <algorithm>
#include <atomic>
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

// Whether float32 products may use TF32 tensor cores (kiln::cuda::set_matmul_allow_tf32).
std::atomic<bool> allow_tf32{false};

// cuBLAS's element and compute types for a dtype: 16-bit floats accumulate in float32; float32
// in float32 (TF32 only when allowed); float64 in float64.
struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};
GemmTypes gemm_types(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case DType::BFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case DType::Float64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    default:
      return {CUDA_R_32F, allow_tf32.load() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
  }
}

// One operand of a product as cuBLAS (column-major) reads it: the last two dims of a row-major
// [rows, cols] matrix, stored row-major (CUBLAS_OP_N on its column-major transpose) or
// column-major (a transposed view such as w.t(): CUBLAS_OP_T), with its leading dimension and
// batch stride. Any other layout is copied to a contiguous one first (`storage` keeps it).
struct GemmOperand {
  Tensor storage;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

GemmOperand gemm_operand(const Tensor& t, bool batched) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  const int64_t rs = t.stride(-2), cs = t.stride(-1);
  GemmOperand g;
  g.storage = t;
  // A dim of size one has no meaningful stride: either layout reads it.
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= std::max<int64_t>(cols, 1))) {
    g.ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
  } else if ((rs == 1 || rows == 1) && (cols == 1 || cs >= std::max<int64_t>(rows, 1))) {
    g.op = CUBLAS_OP_T;
    g.ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
  } else {
    g.storage = t.contiguous();
    g.ld = std::max<int64_t>(cols, 1);
  }
  g.batch_stride = batched ? g.storage.stride(0) : 0;
  return g;
}

// C = A B for `batch` row-major products of [m, k] and [k, n] matrices (C contiguous) through
// cuBLAS's strided batched GEMM. Row-major C = A B is column-major C^T = B^T A^T: the operands
// swap, and a transposed view transposes by cuBLAS's flag instead of a copy.
void batched_gemm(cublasHandle_t h, DType dtype, int64_t batch, int64_t m, int64_t k, int64_t n,
                  const GemmOperand& a, const GemmOperand& b, void* c) {
  const GemmTypes t = gemm_types(dtype);
  const int in = as_int(n, "n"), im = as_int(m, "m"), ik = as_int(k, "k");
  const int count = as_int(batch, "batch");
  // alpha and beta in the compute type.
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const bool wide = t.compute == CUBLAS_COMPUTE_64F;
  KILN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, b.op, a.op, in, im, ik, wide ? static_cast<const void*>(&one_d) : &one_f,
      b.storage.data_ptr(), t.data, as_int(b.ld, "ldb"), b.batch_stride, a.storage.data_ptr(),
      t.data, as_int(a.ld, "lda"), a.batch_stride,
      wide ? static_cast<const void*>(&zero_d) : &zero_f, c, t.data, in, m * n, count, t.compute,
      CUBLAS_GEMM_DEFAULT));
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
  KILN_CHECK(a.dtype() == dtype && b.dtype() == dtype && is_floating_point(dtype),
             "{}: no kernel for device {} for {} @ {} (cuBLAS multiplies float16, bfloat16, "
             "float32 and float64 matrices here)",
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
    cublasHandle_t h = handle(device.index());
    KILN_CUBLAS_CHECK(cublasSetStream(h, stream_of(device.index())));
    batched_gemm(h, dtype, batch, m, k, n, gemm_operand(a, batched), gemm_operand(b, batched),
                 result.data_ptr());
  }
  if (!result.is_same(out)) device_copy(out, result);
}

}  // namespace

void set_matmul_allow_tf32(bool allow) { allow_tf32.store(allow); }
bool matmul_allow_tf32() { return allow_tf32.load(); }

KILN_CUDA_REGISTER(blas_ops) {
  structured("mm", [](const Stack& args, const std::vector<Tensor>& outs) {
    matrix_product("mm", args, outs);
  });
  structured("bmm", [](const Stack& args, const std::vector<Tensor>& outs) {
    matrix_product("bmm", args, outs);
  });
}

}  // namespace kiln::cuda
