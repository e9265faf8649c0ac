// The CUDA slots of flip and cat, both copies done by the copy kernel (kernels::copy, which also
// converts to an out= tensor's dtype): flip reads self through negated strides starting at the
// last element of each flipped dim; cat copies each input into its slice of the output.
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>

#include <algorithm>
#include <vector>

namespace kiln::cuda {
namespace {

using ops::Stack;
using Outs = std::vector<Tensor>;

// out = self with the flipped dims read backwards. launch_args cannot describe a negative
// stride (it takes tensors), so the two operands' dims are merged here the same way: a dim folds
// into the one inside it when both operands step over it as over that whole inner dim.
void flip_cuda(const Stack& args, const Outs& outs) {
  const Tensor& out = outs[0];
  const Device device = out.device();
  DeviceGuard guard(device.index());
  const Tensor& self_arg = args[0].to_tensor();
  const Tensor self = as_input(self_arg, device, self_arg.dtype(), "flip");
  if (out.numel() == 0) return;
  // A 0-dim self takes dim 0 (or -1), as on the CPU: one entry at least.
  std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  for (int64_t d : args[1].to_int_list()) {
    flipped[static_cast<size_t>(wrap_dim(d, self.dim(), "flip"))] = true;
  }
  char* start = static_cast<char*>(self.data_ptr());
  std::vector<int64_t> sizes, out_strides, in_strides;  // innermost first
  for (int64_t d = self.dim() - 1; d >= 0; --d) {
    const int64_t n = self.size(d);
    if (n == 1) continue;
    int64_t in_stride = self.stride(d);
    if (flipped[static_cast<size_t>(d)]) {
      start += (n - 1) * in_stride * static_cast<int64_t>(self.itemsize());
      in_stride = -in_stride;
    }
    const int64_t out_stride = out.stride(d);
    if (!sizes.empty() && out_stride == out_strides.back() * sizes.back() &&
        in_stride == in_strides.back() * sizes.back()) {
      sizes.back() *= n;
      continue;
    }
    sizes.push_back(n);
    out_strides.push_back(out_stride);
    in_strides.push_back(in_stride);
  }
  const int ndim = static_cast<int>(sizes.size());
  KILN_CHECK(ndim <= kernels::kMaxDims,
             "flip (CUDA): the operands need {} dims after merging, more than the {} the kernels "
             "index; make the input contiguous first (sizes [{}])",
             ndim, kernels::kMaxDims, fmt::join(self.sizes(), ", "));
  kernels::Geometry g;
  g.ndim = ndim;
  g.numel = out.numel();
  kernels::Operand dst, src;
  dst.data = out.data_ptr();
  dst.type = scalar_type(out.dtype());
  src.data = start;
  src.type = scalar_type(self.dtype());
  g.contiguous = ndim == 0;
  for (int i = 0; i < ndim; ++i) {
    const auto inner = static_cast<size_t>(ndim - 1 - i);
    g.sizes[i] = sizes[inner];
    dst.strides[i] = out_strides[inner];
    src.strides[i] = in_strides[inner];
  }
  if (ndim == 1) g.contiguous = dst.strides[0] == 1 && src.strides[0] == 1;
  kernels::copy(g, dst, src, stream_of(device.index()));
}

// As the CPU: 1-D empty inputs are skipped whatever the other inputs' rank (PyTorch's legacy
// rule); every other input is copied, converted to out's dtype, into its range along dim.
void cat_cuda(const Stack& args, const Outs& outs) {
  const Tensor& out = outs[0];
  if (out.numel() == 0) return;
  const Device device = out.device();
  DeviceGuard guard(device.index());
  const int64_t dim = wrap_dim(args[1].to_int(), out.dim(), "cat");
  int64_t offset = 0;
  for (const Tensor& t : args[0].to_tensor_list()) {
    if (t.dim() == 1 && t.size(0) == 0) continue;
    const int64_t n = t.size(dim);
    if (n > 0) device_copy(out.narrow(dim, offset, n), as_input(t, device, t.dtype(), "cat"));
    offset += n;
  }
}

}  // namespace

KILN_CUDA_REGISTER(indexing_shape_ops) {
  structured("flip", flip_cuda);
  structured("cat", cat_cuda);
}

}  // namespace kiln::cuda
