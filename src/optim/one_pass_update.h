#pragma once
// When the one-pass optimizer kernels (adam_kernel.h, sgd_kernel.h; device_updates.h off the
// CPU) may stand in for a step's elementwise ops.
#include <kiln/core/tensor.h>

#include <functional>
#include <initializer_list>
#include <optional>

namespace kiln::optim::detail {

// The device of the tensors when no dispatch mode records the step's ops (a capture or an aot
// trace: the ops are what it records) and every tensor is a real dense float32 tensor of the
// first one's sizes, on a storage of its own (the kernels read each element of each tensor once,
// then write), all on one device that has one-pass updates; nullopt otherwise.
std::optional<Device> one_pass_device(
    std::initializer_list<std::reference_wrapper<const Tensor>> tensors);

}  // namespace kiln::optim::detail
