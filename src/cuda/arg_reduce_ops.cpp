// The CUDA slots of argmax and argmin (dim or none, keepdim; out= too): the reduced dim moved
// last, or the tensor flattened in its logical order, so that every output element is the
// reduction of one contiguous row. The meta function has rejected bool and empty reductions.
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "cuda/scan_sort_ops.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>

namespace kiln::cuda {
namespace {

using ops::Stack;

void arg_reduce(const Stack& args, const Tensor& out, bool largest) {
  const char* name = largest ? "argmax" : "argmin";
  const Tensor& self = args[0].to_tensor();
  if (out.numel() == 0) return;
  const Device device = out.device();
  DeviceGuard guard(device.index());
  const Tensor x = as_input(self, device, self.dtype(), name);
  Rows rows;
  if (args[1].is_none()) {
    rows.data = x.contiguous();
    rows.length = x.numel();
  } else {
    rows = rows_along(x, wrap_dim(args[1].to_int(), x.dim(), name));
  }
  KILN_CHECK(rows.length > 0, "{} (CUDA): expected a non-empty reduction, got input [{}]", name,
             fmt::join(self.sizes(), ", "));
  // The kept dims keep their order, so a contiguous output lists the rows in the same order.
  const Tensor result =
      out.is_contiguous() && out.dtype() == DType::Int64 ? out : empty_cuda_like(out, DType::Int64);
  DeviceWorkspace ws(device);
  kernels::arg_reduce_rows(scalar_type(x.dtype()), rows.data.data_ptr(), result.data_ptr<int64_t>(),
                           rows.count, rows.length, largest, ws, stream_of(device.index()));
  if (!result.is_same(out)) device_copy(out, result);
}

}  // namespace

KILN_CUDA_REGISTER(arg_reduce_ops) {
  structured("argmax", [](const Stack& args, const std::vector<Tensor>& out) {
    arg_reduce(args, out[0], true);
  });
  structured("argmin", [](const Stack& args, const std::vector<Tensor>& out) {
    arg_reduce(args, out[0], false);
  });
}

}  // namespace kiln::cuda
