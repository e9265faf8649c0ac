// The CUDA functions of _unique2 and unique_dim, custom ops as on the CPU (src/ops/sort/
// unique.cpp): how many outputs there are depends on the data, so the kernels count the groups
// first (a synchronization) and the outputs are allocated for that count. Outputs as the CPU's:
// sorted values (`sorted` is always honoured), the inverse and counts where asked (unique_dim
// always gives both), empty tensors otherwise.
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "cuda/scan_sort_ops.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>

namespace kiln::cuda {
namespace {

using ops::Stack;

Tensor empty_int64(IntList sizes, Device device) {
  return empty(sizes, TensorOptions(DType::Int64).device(device));
}

int64_t* data_or_null(const Tensor& t, bool wanted) {
  return wanted ? t.data_ptr<int64_t>() : nullptr;
}

// The n items of `items` (elements, or rows of `width`), grouped: {values [m, width] flattened,
// inverse [n] (if wanted), counts [m] (if wanted)}.
std::vector<Tensor> unique_items(const Tensor& items, int64_t n, int64_t width, bool return_inverse,
                                 bool return_counts) {
  const Device device = items.device();
  const Tensor order = empty_int64({n}, device), group = empty_int64({n}, device);
  DeviceWorkspace ws(device);
  const cudaStream_t stream = stream_of(device.index());
  const kernels::ScalarType type = scalar_type(items.dtype());
  const int64_t m =
      kernels::unique_groups(type, items.data_ptr(), n, width, order.data_ptr<int64_t>(),
                             group.data_ptr<int64_t>(), ws, stream);
  Tensor values = empty({m * width}, items.options());
  Tensor inverse = empty_int64({return_inverse ? n : 0}, device);
  Tensor counts = empty_int64({return_counts ? m : 0}, device);
  kernels::unique_outputs(type, items.data_ptr(), n, width, m, order.data_ptr<int64_t>(),
                          group.data_ptr<int64_t>(), values.data_ptr(),
                          data_or_null(inverse, return_inverse),
                          data_or_null(counts, return_counts), ws, stream);
  return {values, inverse, counts};
}

std::vector<Tensor> unique2(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const bool return_inverse = args[2].to_bool(), return_counts = args[3].to_bool();
  DeviceGuard guard(self.device().index());
  const Tensor flat = self.contiguous();
  std::vector<Tensor> out = unique_items(flat, flat.numel(), 1, return_inverse, return_counts);
  if (return_inverse) out[1] = out[1].view(self.sizes());
  return out;
}

std::vector<Tensor> unique_dim(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  KILN_CHECK_T(IndexError, self.dim() > 0,
               "unique_dim: dimension specified as {} but tensor has no dimensions",
               args[1].to_int());
  const int64_t dim = wrap_dim(args[1].to_int(), self.dim(), "unique_dim");
  DeviceGuard guard(self.device().index());
  if (self.numel() == 0) {
    KILN_CHECK(self.size(dim) == 0,
               "unique_dim: there are 0 sized dimensions, and they aren't selected, so unique "
               "cannot be applied (input [{}], dim {})",
               fmt::join(self.sizes(), ", "), dim);
    return {empty(self.sizes(), self.options()), empty_int64({0}, self.device()),
            empty_int64({0}, self.device())};
  }
  const Tensor moved = self.movedim(dim, 0).contiguous();
  const int64_t n = moved.size(0);
  std::vector<Tensor> out = unique_items(moved, n, moved.numel() / n, true, true);
  std::vector<int64_t> sizes(moved.sizes().begin(), moved.sizes().end());
  sizes[0] = out[2].numel();
  out[0] = out[0].view(sizes).movedim(0, dim).contiguous();
  return out;
}

}  // namespace

KILN_CUDA_REGISTER(unique_ops) {
  custom("_unique2", unique2);
  custom("unique_dim", unique_dim);
}

}  // namespace kiln::cuda
