// The CUDA slots of cumsum and cumprod (their in-place and out= variants too). As the CPU op
// (reduction/reduce_ops.cpp), the input is converted to the dtype the scan runs in: int64 for
// integers and bool, float32 for the 16-bit floats (accumulated in double by the kernel, as the
// CPU does), and the result converted into the output's dtype.
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "cuda/scan_sort_ops.h"

#include <kiln/cuda/cuda.h>

#include <optional>

namespace kiln::cuda {
namespace {

using ops::Stack;

// reduce_ops.cpp's compute_dtype(accumulate_dtype(self, dtype)).
DType scan_dtype(DType self, std::optional<DType> dtype) {
  const DType result =
      dtype ? *dtype : (is_integral(self, /*include_bool=*/true) ? DType::Int64 : self);
  if (result == DType::Float16 || result == DType::BFloat16) return DType::Float32;
  if (is_integral(result, /*include_bool=*/true)) return DType::Int64;
  return result;
}

void scan(const Stack& args, const Tensor& out, bool prod) {
  const char* name = prod ? "cumprod" : "cumsum";
  const Tensor& self = args[0].to_tensor();
  const int64_t dim = wrap_dim(args[1].to_int(), self.dim(), name);
  if (self.numel() == 0) return;
  const Device device = out.device();
  DeviceGuard guard(device.index());
  const DType compute = scan_dtype(self.dtype(), args[2].to_optional_dtype());
  const Rows rows = rows_along(as_input(self, device, compute, name), dim);
  Tensor target = row_target(out, rows.perm, compute);
  // In place (cumsum_): CUB's scan by key reads and writes different memory.
  if (target.data_ptr() == rows.data.data_ptr()) target = empty_cuda_like(target, compute);
  DeviceWorkspace ws(device);
  kernels::scan_rows(scalar_type(compute), rows.data.data_ptr(), target.data_ptr(), rows.count,
                     rows.length, prod, ws, stream_of(device.index()));
  commit(out, rows.perm, target);
}

}  // namespace

KILN_CUDA_REGISTER(scan_ops) {
  structured("cumsum",
             [](const Stack& args, const std::vector<Tensor>& out) { scan(args, out[0], false); });
  structured("cumprod",
             [](const Stack& args, const std::vector<Tensor>& out) { scan(args, out[0], true); });
}

}  // namespace kiln::cuda
