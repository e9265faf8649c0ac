#pragma once
// The checks every collective runs on its tensors before anything is sent, so that a bad call
// fails on the calling rank with a message naming the op, instead of deadlocking its peers.
#include <kiln/core/tensor.h>
#include <kiln/distributed/reduce_op.h>
#include <kiln/distributed/store.h>

#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace kiln::distributed::detail {

// Defined, on the CPU, contiguous, of a dtype Gloo can reduce.
void check_collective_tensor(const Tensor& tensor, const char* op, const char* which);
// Every tensor passes check_tensor (the backend's check; default: check_collective_tensor) and
// has `dtype` and `numel` elements.
using TensorCheck = std::function<void(const Tensor&, const char* op, const char* which)>;
void check_same_dtype_and_numel(std::span<const Tensor> tensors, DType dtype, int64_t numel,
                                const char* op, const char* which,
                                const TensorCheck& check_tensor = check_collective_tensor);
void check_reduce_op(ReduceOp op, DType dtype, const char* op_name);
// A process group's constructor arguments: a store, 0 <= rank < world_size, a positive timeout
// (`group` names the class in the message).
void check_group_arguments(const Store* store, int rank, int world_size,
                           std::chrono::milliseconds timeout, const char* group);
// How a Work describes its collective: "<what> of <numel> <dtype> elements".
std::string describe_collective(std::string_view what, const Tensor& tensor);
void check_rank(int rank, int world_size, const char* op, const char* which);

}  // namespace kiln::distributed::detail
