#include "cuda/scan_sort_ops.h"

#include "cuda/launch_args.h"

#include <kiln/ops/creation.h>

namespace kiln::cuda {
namespace {

Tensor permuted(const Tensor& t, const std::vector<int64_t>& perm) {
  return t.dim() == 0 ? t : t.permute(perm);
}

}  // namespace

Rows rows_along(const Tensor& x, int64_t dim) {
  Rows r;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == dim) continue;
    r.perm.push_back(d);
    r.count *= x.size(d);
  }
  if (x.dim() > 0) {
    r.perm.push_back(dim);
    r.length = x.size(dim);
  }
  r.data = permuted(x, r.perm).contiguous();
  return r;
}

Tensor row_target(const Tensor& out, const std::vector<int64_t>& perm, DType dtype) {
  const Tensor view = permuted(out, perm);
  if (view.dtype() == dtype && view.is_contiguous()) return view;
  return empty_cuda_like(view, dtype);
}

void commit(const Tensor& out, const std::vector<int64_t>& perm, const Tensor& target) {
  const Tensor view = permuted(out, perm);
  if (view.data_ptr() == target.data_ptr() && view.dtype() == target.dtype() &&
      view.is_contiguous()) {
    return;
  }
  device_copy(view, target);
}

void* DeviceWorkspace::bytes(size_t n) {
  blocks_.push_back(empty({static_cast<int64_t>(n)}, TensorOptions(DType::UInt8).device(device_)));
  return blocks_.back().data_ptr();
}

}  // namespace kiln::cuda
