// The CUDA slots of sum and mean over any dims (keepdim, dtype=): the reduced dims are moved last
// and the input made contiguous, so that every output element is one contiguous row for the
// row kernel (kernels/reduce.cu). The input is converted to the output's dtype first, as the CPU
// kernels convert to the dtype they accumulate in.
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "ops/reduction/reduce_meta.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/view.h>

namespace kiln::cuda {
namespace {

using ops::Stack;

void sum_rows(const Stack& args, const Tensor& out, bool mean) {
  const char* name = mean ? "mean" : "sum";
  const Tensor& self = args[0].to_tensor();
  const Device device = out.device();
  DeviceGuard guard(device.index());
  const std::vector<bool> mask = ops::reduction_mask(self.dim(), args[1], name);
  const Tensor x = as_input(self, device, out.dtype(), name);
  std::vector<int64_t> perm;
  int64_t rows = 1, row_length = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!mask[static_cast<size_t>(d)]) {
      perm.push_back(d);
      rows *= x.size(d);
    }
  }
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (mask[static_cast<size_t>(d)]) {
      perm.push_back(d);
      row_length *= x.size(d);
    }
  }
  const Tensor in = x.dim() == 0 ? x : x.permute(perm).contiguous();
  // The kept dims keep their order, so a contiguous output lists the rows in the same order.
  const Tensor result = out.is_contiguous() ? out : empty_cuda_like(out, out.dtype());
  kernels::reduce_rows(scalar_type(out.dtype()), result.data_ptr(), in.data_ptr(), rows, row_length,
                       mean, stream_of(device.index()));
  if (!result.is_same(out)) device_copy(out, result);
}

}  // namespace

KILN_CUDA_REGISTER(reduce_ops) {
  structured("sum", [](const Stack& args, const std::vector<Tensor>& out) {
    sum_rows(args, out[0], false);
  });
  structured("mean", [](const Stack& args, const std::vector<Tensor>& out) {
    sum_rows(args, out[0], true);
  });
}

}  // namespace kiln::cuda
