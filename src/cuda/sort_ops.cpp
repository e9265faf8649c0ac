// The CUDA slots of sort.stable and topk (sort, argsort and argsort.stable decompose into
// sort.stable). The dim is moved last and the input made contiguous; the kernels write rows,
// which go into the outputs through row_target/commit (out= tensors of another layout or a
// castable dtype included). Both kernels give the CPU's results exactly: sort is stable (NaN
// greatest), topk runs the CPU's selection steps (kernels/topk.cu).
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "cuda/scan_sort_ops.h"

#include <kiln/cuda/cuda.h>

namespace kiln::cuda {
namespace {

using ops::Stack;
using Outs = std::vector<Tensor>;

// A target that is not the kernel's input: the kernels gather values from the input after
// writing indices.
Tensor apart_from(Tensor target, const Rows& rows) {
  if (target.data_ptr() == rows.data.data_ptr()) return empty_cuda_like(target, target.dtype());
  return target;
}

// args: self, stable, dim, descending.
void sort_stable(const Stack& args, const Outs& out) {
  const Tensor& self = args[0].to_tensor();
  const int64_t dim = wrap_dim(args[2].to_int(), self.dim(), "sort");
  if (self.numel() == 0) return;
  const Device device = out[0].device();
  DeviceGuard guard(device.index());
  const Rows rows = rows_along(as_input(self, device, self.dtype(), "sort"), dim);
  const Tensor values = apart_from(row_target(out[0], rows.perm, self.dtype()), rows);
  const Tensor indices = apart_from(row_target(out[1], rows.perm, DType::Int64), rows);
  DeviceWorkspace ws(device);
  kernels::sort_rows(scalar_type(self.dtype()), rows.data.data_ptr(), values.data_ptr(),
                     indices.data_ptr<int64_t>(), rows.count, rows.length, args[3].to_bool(), ws,
                     stream_of(device.index()));
  commit(out[0], rows.perm, values);
  commit(out[1], rows.perm, indices);
}

// args: self, k, dim, largest, sorted.
void topk(const Stack& args, const Outs& out) {
  const Tensor& self = args[0].to_tensor();
  // A 0-dim input's output is its one element whatever k (0 or 1), as on the CPU.
  const int64_t k = self.dim() == 0 ? 1 : args[1].to_int();
  const int64_t dim = wrap_dim(args[2].to_int(), self.dim(), "topk");
  if (k == 0 || self.numel() == 0) return;
  const Device device = out[0].device();
  DeviceGuard guard(device.index());
  const Rows rows = rows_along(as_input(self, device, self.dtype(), "topk"), dim);
  const Tensor values = apart_from(row_target(out[0], rows.perm, self.dtype()), rows);
  const Tensor indices = apart_from(row_target(out[1], rows.perm, DType::Int64), rows);
  DeviceWorkspace ws(device);
  kernels::topk_rows(scalar_type(self.dtype()), rows.data.data_ptr(), values.data_ptr(),
                     indices.data_ptr<int64_t>(), rows.count, rows.length, k, args[3].to_bool(),
                     args[4].to_bool(), ws, stream_of(device.index()));
  commit(out[0], rows.perm, values);
  commit(out[1], rows.perm, indices);
}

}  // namespace

KILN_CUDA_REGISTER(sort_ops) {
  structured("sort.stable", sort_stable);
  structured("topk", topk);
}

}  // namespace kiln::cuda
