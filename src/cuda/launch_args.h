#pragma once
// From kiln tensors to the kernels' plain arguments (kernels/launch.h): the iteration space over
// an output's shape with inputs broadcast to it and dims merged where every operand allows, and
// the device checks and conversions that come before a launch.
#include "cuda/kernels/launch.h"

#include <kiln/core/tensor.h>
#include <kiln/ops/ivalue.h>

#include <initializer_list>
#include <vector>

namespace kiln::cuda {

kernels::ScalarType scalar_type(DType dtype);

struct LaunchArgs {
  kernels::Geometry geometry;
  std::vector<kernels::Operand> operands;  // out first, then the inputs in order
};
// Raises kiln::Error naming op when the merged dims exceed kernels::kMaxDims.
LaunchArgs launch_args(const Tensor& out, std::initializer_list<Tensor> inputs, const char* op);

// `t` ready to be an input of an op whose output lives on `device`, converted to `dtype`: a CPU
// 0-dim tensor (a scalar) becomes a CUDA 0-dim tensor; a tensor on any other device raises
// kiln::Error naming op and both devices.
Tensor as_input(const Tensor& t, Device device, DType dtype, const char* op);

// Runs `compute(result)` into `out` directly when out has dtype `kernel_dtype`, else into a
// temporary of that dtype copied (converted) into out afterwards.
template <typename F>
void into_output(const Tensor& out, DType kernel_dtype, F&& compute);
Tensor empty_cuda_like(const Tensor& t, DType dtype);

// A factory's device argument (args of empty, full, rand, ...) against where the allocator put
// the output: CUDA memory comes from the current device, so naming another device raises.
void check_factory_device(const ops::IValue& arg, const Tensor& out, const char* op);

// dst = src (same CUDA device; src broadcast to dst's shape), converting dtype.
void device_copy(const Tensor& dst, const Tensor& src);

template <typename F>
void into_output(const Tensor& out, DType kernel_dtype, F&& compute) {
  if (out.dtype() == kernel_dtype) {
    compute(out);
    return;
  }
  Tensor tmp = empty_cuda_like(out, kernel_dtype);
  compute(tmp);
  device_copy(out, tmp);
}

}  // namespace kiln::cuda
