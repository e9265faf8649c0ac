#include "cuda/launch_args.h"

#include "cuda/cuda_check.h"
#include "cuda/device_state.h"

#include <kiln/core/error.h>
#include <kiln/ops/creation.h>

#include <algorithm>

namespace kiln::cuda {

static_assert(static_cast<int>(kernels::ScalarType::Float64) == static_cast<int>(DType::Float64) &&
                  static_cast<int>(kernels::ScalarType::Float16) ==
                      static_cast<int>(DType::Float16) &&
                  static_cast<int>(kernels::ScalarType::Bool) == static_cast<int>(DType::Bool),
              "kernels::ScalarType must list kiln::DType's values in its order");

kernels::ScalarType scalar_type(DType dtype) { return static_cast<kernels::ScalarType>(dtype); }

LaunchArgs launch_args(const Tensor& out, std::initializer_list<Tensor> inputs, const char* op) {
  const IntList sizes = out.sizes();
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  const size_t nops = inputs.size() + 1;
  // Strides of every operand over out's dims, 0 where an input is broadcast.
  std::vector<std::vector<int64_t>> strides(nops, std::vector<int64_t>(static_cast<size_t>(ndim)));
  std::vector<const Tensor*> tensors{&out};
  for (const Tensor& t : inputs) tensors.push_back(&t);
  for (size_t k = 0; k < nops; ++k) {
    const Tensor& t = *tensors[k];
    const int64_t lead = ndim - t.dim();
    for (int64_t d = 0; d < ndim; ++d) {
      const int64_t j = d - lead;
      strides[k][static_cast<size_t>(d)] =
          (j < 0 || (t.size(j) == 1 && sizes[static_cast<size_t>(d)] != 1)) ? 0 : t.stride(j);
    }
  }
  // Merge dims from the innermost out: dim d folds into the one inside it when every operand
  // steps over d exactly as far as over the whole inner dim. Size-1 dims are dropped.
  std::vector<int64_t> merged_sizes;  // innermost first
  std::vector<std::vector<int64_t>> merged(nops);
  for (int64_t d = ndim - 1; d >= 0; --d) {
    const int64_t size = sizes[static_cast<size_t>(d)];
    if (size == 1) continue;
    bool fold = !merged_sizes.empty();
    for (size_t k = 0; fold && k < nops; ++k)
      fold = strides[k][static_cast<size_t>(d)] == merged[k].back() * merged_sizes.back();
    if (fold) {
      merged_sizes.back() *= size;
      continue;
    }
    merged_sizes.push_back(size);
    for (size_t k = 0; k < nops; ++k) merged[k].push_back(strides[k][static_cast<size_t>(d)]);
  }
  const int mdim = static_cast<int>(merged_sizes.size());
  KILN_CHECK(mdim <= kernels::kMaxDims,
             "{} (CUDA): the operands need {} dims after merging, more than the {} the kernels "
             "index; make them contiguous first (sizes [{}])",
             op, mdim, kernels::kMaxDims, fmt::join(sizes, ", "));
  LaunchArgs args;
  args.geometry.ndim = mdim;
  args.geometry.numel = out.numel();
  for (int i = 0; i < mdim; ++i)
    args.geometry.sizes[i] = merged_sizes[static_cast<size_t>(mdim - 1 - i)];
  bool contiguous = mdim <= 1;
  for (size_t k = 0; k < nops; ++k) {
    kernels::Operand o;
    o.data = tensors[k]->data_ptr();
    o.type = scalar_type(tensors[k]->dtype());
    for (int i = 0; i < mdim; ++i) o.strides[i] = merged[k][static_cast<size_t>(mdim - 1 - i)];
    if (mdim == 1 && o.strides[0] != 1) contiguous = false;
    args.operands.push_back(o);
  }
  args.geometry.contiguous = contiguous;
  return args;
}

Tensor as_input(const Tensor& t, Device device, DType dtype, const char* op) {
  if (t.device().is_cpu() && t.dim() == 0) {
    // A Python-number-like operand: made on the device by a fill, no host-to-device copy.
    return full({}, t.item(), TensorOptions(dtype).device(device));
  }
  KILN_CHECK(t.device() == device,
             "{}: expected all tensors to be on the same device, but found at least two devices, "
             "{} and {}",
             op, device.str(), t.device().str());
  return t.dtype() == dtype ? t : t.to(dtype);
}

Tensor empty_cuda_like(const Tensor& t, DType dtype) {
  return empty(t.sizes(), TensorOptions(dtype).device(t.device()));
}

void device_copy(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  const int device = dst.device().index();
  const cudaStream_t stream = stream_of(device);
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() &&
      dst.sizes() == src.sizes()) {
    KILN_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(),
                                    cudaMemcpyDeviceToDevice, stream));
    return;
  }
  LaunchArgs a = launch_args(dst, {src}, "copy_");
  kernels::copy(a.geometry, a.operands[0], a.operands[1], stream);
}

}  // namespace kiln::cuda
