// The CUDA slots of advanced indexing: index.Tensor, index_put and nonzero (which boolean masks
// expand through). As on the CPU (ops/indexing/advanced_index.h), the index tensors are first
// reduced to one table of element offsets into self over their broadcast shape; reading and
// writing are then one kernel each over the result, self addressed through a view with stride 0
// along the indexed dims. Index tensors may be on the CPU (as PyTorch allows): they are copied
// over. Out-of-range indices raise the CPU's IndexError before anything is read or written
// (indexing_fault.h: one stream synchronization).
#include "cuda/cuda_check.h"
#include "cuda/device_state.h"
#include "cuda/indexing_fault.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "ops/indexing/advanced_index.h"
#include "ops/indexing/strided_loop.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/creation.h>

namespace kiln::cuda {
namespace {

using ops::Stack;
using ops::indexing::IndexPlan;

// An index tensor on `device`: CPU indices are copied over; another device's raise.
Tensor index_on(const Tensor& index, Device device, const char* op) {
  if (index.device() == device) return index;
  KILN_CHECK(index.device().is_cpu(),
             "{}(): indices on {} cannot index a tensor on {}; move them to the CPU or to {}", op,
             index.device().str(), device.str(), device.str());
  return index.to(device);
}

// The element offset into a tensor of `sizes` and `strides` (on `device`) of every position of
// the broadcast index shape: an int64 tensor of plan.index_shape (one zero when nothing is
// indexed). Raises IndexError for an index out of range.
Tensor index_offsets(const IndexPlan& plan, IntList sizes, IntList strides,
                     const std::vector<Tensor>& indices, Device device, const char* op) {
  Tensor offsets = zeros(plan.index_shape, TensorOptions(DType::Int64).device(device));
  if (offsets.numel() == 0) return offsets;
  std::optional<IndexFaultRecord> fault;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d].defined()) continue;
    if (!fault) fault.emplace(device);
    const Tensor index = index_on(indices[d], device, op);
    LaunchArgs l = launch_args(offsets, {index}, op);  // broadcasts the index to the shape
    kernels::add_index_offsets(l.geometry, l.operands[0], l.operands[1],
                               {static_cast<int64_t>(d), sizes[d], strides[d]}, fault->get(),
                               stream_of(device.index()));
  }
  if (fault) fault->raise_if_set(op);
  return offsets;
}

// The view of `t` (whose strides the plan was made with) over the result's shape that reaches
// the first element each result position addresses, less its table offset.
Tensor base_view(const Tensor& t, const IndexPlan& plan) {
  return t.as_strided(plan.result_sizes, plan.self_strides, t.storage_offset());
}
// The offsets table spread over the result's shape.
Tensor offsets_view(const Tensor& offsets, const IndexPlan& plan) {
  return offsets.as_strided(plan.result_sizes, plan.offset_strides, offsets.storage_offset());
}

std::vector<Tensor> index_cuda(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Device device = self.device();
  KILN_CHECK(device.is_cuda(),
             "index(): indexing a tensor on {} with indices on a CUDA device; move the tensor to "
             "the device or the indices to the CPU",
             device.str());
  DeviceGuard guard(device.index());
  const std::vector<Tensor> indices =
      ops::indexing::expand_indices(self, args[1].to_tensor_list(), "index");
  const IndexPlan plan = ops::indexing::plan_index(self.sizes(), self.strides(), indices, "index");
  const Tensor offsets =
      index_offsets(plan, self.sizes(), self.strides(), indices, device, "index");
  Tensor out = empty(plan.result_sizes, TensorOptions(self.dtype()).device(device));
  if (out.numel() == 0) return {out};
  LaunchArgs l = launch_args(out, {base_view(self, plan), offsets_view(offsets, plan)}, "index");
  kernels::gather_at_offsets(l.geometry, l.operands[0], l.operands[1], l.operands[2],
                             stream_of(device.index()));
  return {out};
}

// With boolean masks the result's shape is known only now (the meta function could not check).
void check_values_shape(const Tensor& values, IntList result) {
  const IntList v = values.sizes();
  bool ok = v.size() <= result.size();
  for (size_t i = 1; ok && i <= v.size(); ++i) {
    ok = v[v.size() - i] == 1 || v[v.size() - i] == result[result.size() - i];
  }
  KILN_CHECK(ok,
             "index_put(): shape mismatch: value tensor of shape [{}] cannot be broadcast to "
             "indexing result of shape [{}]",
             fmt::join(v, ", "), fmt::join(result, ", "));
}

// accumulate adds with atomics: duplicate float positions sum in another order than the CPU's
// serial one (equal to rounding). Without accumulate, duplicates keep one of their values.
void index_put_cuda(const Stack& args, const std::vector<Tensor>& outs) {
  const char* op = "index_put";
  const Device device = outs[0].device();
  DeviceGuard guard(device.index());
  const Tensor& self_arg = args[0].to_tensor();
  const Tensor self = as_input(self_arg, device, self_arg.dtype(), op);
  const bool accumulate = args[3].to_bool();
  const std::vector<Tensor> indices =
      ops::indexing::expand_indices(self, args[1].to_tensor_list(), op);
  const Tensor target = ops::strided::dense_target(outs[0], self.dtype());
  const IndexPlan plan = ops::indexing::plan_index(target.sizes(), target.strides(), indices, op);
  Tensor values = as_input(args[2].to_tensor(), device, self.dtype(), op);
  check_values_shape(values, plan.result_sizes);
  const Tensor offsets = index_offsets(plan, target.sizes(), target.strides(), indices, device, op);
  // Read values before self is overwritten: they may alias it.
  if (values.storage() == target.storage()) values = values.clone();
  if (!target.is_same(self)) device_copy(target, self);
  int64_t numel = 1;
  for (int64_t s : plan.result_sizes) numel *= s;
  if (numel > 0) {
    LaunchArgs l =
        launch_args(base_view(target, plan),
                    {offsets_view(offsets, plan), values.broadcast_to(plan.result_sizes)}, op);
    kernels::put_at_offsets(l.geometry, l.operands[0], l.operands[1], l.operands[2], accumulate,
                            stream_of(device.index()));
  }
  ops::strided::commit(outs[0], target);
}

// The output's length is the count of nonzeros: copying it back waits for the stream (the op's
// one synchronization).
std::vector<Tensor> nonzero_cuda(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Device device = self.device();
  DeviceGuard guard(device.index());
  const int64_t ndim = self.dim();
  KILN_CHECK(ndim <= kernels::kMaxNonzeroDims,
             "nonzero (CUDA): the input has {} dims, more than the {} the kernel writes", ndim,
             kernels::kMaxNonzeroDims);
  const TensorOptions int64_on_device = TensorOptions(DType::Int64).device(device);
  if (self.numel() == 0) return {empty({0, ndim}, int64_on_device)};
  const cudaStream_t stream = stream_of(device.index());
  // Merged dims keep the row-major order of the elements, which is all the kernels walk by.
  LaunchArgs l = launch_args(self, {}, "nonzero");
  const int64_t chunks = kernels::nonzero_chunks(self.numel());
  const Tensor chunk_starts = empty({chunks + 1}, int64_on_device);
  kernels::nonzero_count(l.geometry, l.operands[0], chunk_starts.data_ptr<int64_t>(), stream);
  int64_t count = 0;
  KILN_CUDA_CHECK(cudaMemcpyAsync(&count, chunk_starts.data_ptr<int64_t>() + chunks, sizeof(count),
                                  cudaMemcpyDeviceToHost, stream));
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  Tensor out = empty({count, ndim}, int64_on_device);
  if (count > 0) {
    kernels::NonzeroShape shape;
    shape.ndim = static_cast<int>(ndim);
    for (int64_t d = 0; d < ndim; ++d) shape.sizes[d] = self.size(d);
    kernels::nonzero_write(l.geometry, l.operands[0], shape, chunk_starts.data_ptr<int64_t>(),
                           out.data_ptr<int64_t>(), stream);
  }
  return {out};
}

}  // namespace

KILN_CUDA_REGISTER(indexing_advanced_ops) {
  custom("index.Tensor", index_cuda);
  structured("index_put", index_put_cuda);
  custom("nonzero", nonzero_cuda);
}

}  // namespace kiln::cuda
