#include "distributed/collective_checks.h"

#include <kiln/core/error.h>

#include "distributed/gloo_dtype.h"

namespace kiln::distributed::detail {

void check_collective_tensor(const Tensor& tensor, const char* op, const char* which) {
  KILN_CHECK(tensor.defined(), "{}: {} is an undefined tensor", op, which);
  KILN_CHECK(tensor.is_cpu(),
             "{}: {} is on {}; the gloo backend takes CPU tensors (GPU tensors need the nccl "
             "backend of the CUDA build)",
             op, which, tensor.device().str());
  KILN_CHECK(tensor.is_contiguous(),
             "{}: {} (sizes {}, strides {}) must be contiguous; call .contiguous() first", op,
             which, tensor.sizes(), tensor.strides());
  KILN_CHECK_T(TypeError, is_gloo_dtype(tensor.dtype()),
               "{}: {} has dtype {}; the gloo backend supports {}", op, which,
               dtype_name(tensor.dtype()), gloo_dtype_names());
}

void check_same_dtype_and_numel(std::span<const Tensor> tensors, DType dtype, int64_t numel,
                                const char* op, const char* which,
                                const TensorCheck& check_tensor) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto name = fmt::format("{}[{}]", which, i);
    check_tensor(tensors[i], op, name.c_str());
    KILN_CHECK_T(TypeError, tensors[i].dtype() == dtype, "{}: {} has dtype {}, expected {}", op,
                 name, dtype_name(tensors[i].dtype()), dtype_name(dtype));
    KILN_CHECK(tensors[i].numel() == numel, "{}: {} has {} elements (sizes {}), expected {}", op,
               name, tensors[i].numel(), tensors[i].sizes(), numel);
  }
}

void check_reduce_op(ReduceOp op, DType dtype, const char* op_name) {
  // An integer average would have to round; torch.distributed's gloo backend refuses Avg outright,
  // kiln allows it where the result is exact to the dtype's precision.
  KILN_CHECK_T(TypeError, op != ReduceOp::Avg || is_floating_point(dtype),
               "{}: ReduceOp::Avg needs a floating-point tensor, got {}; reduce with Sum and "
               "divide instead",
               op_name, dtype_name(dtype));
}

void check_group_arguments(const Store* store, int rank, int world_size,
                           std::chrono::milliseconds timeout, const char* group) {
  KILN_CHECK(store != nullptr, "{}: store is null", group);
  KILN_CHECK(world_size >= 1, "{}: world_size must be at least 1, got {}", group, world_size);
  check_rank(rank, world_size, group, "rank");
  KILN_CHECK(timeout.count() > 0, "{}: timeout must be positive, got {} ms", group,
             timeout.count());
}

std::string describe_collective(std::string_view what, const Tensor& tensor) {
  return fmt::format("{} of {} {} elements", what, tensor.numel(), dtype_name(tensor.dtype()));
}

void check_rank(int rank, int world_size, const char* op, const char* which) {
  KILN_CHECK(rank >= 0 && rank < world_size, "{}: {} must be a rank in [0, {}), got {}", op, which,
             world_size, rank);
}

}  // namespace kiln::distributed::detail
