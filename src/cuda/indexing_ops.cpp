// The CUDA slots of the ops that index along one dim: gather, scatter.src, scatter_reduce.two
// and searchsorted.Tensor. The meta functions already checked shapes and dtypes. The indexed
// tensor reaches the kernels as a view over the index's shape with stride 0 along dim (each
// index position's row), so one Geometry walks index, source and rows together. As on the CPU,
// scatter targets are a contiguous copy of self (or out itself when it is one), committed to out
// at the end. Out-of-range indices raise the CPU's IndexError (indexing_fault.h: one stream
// synchronization per call).
#include "cuda/device_state.h"
#include "cuda/indexing_fault.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "ops/indexing/index_common.h"
#include "ops/indexing/strided_loop.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>

#include <optional>
#include <string>

namespace kiln::cuda {
namespace {

using kernels::ScatterReduce;
using ops::Stack;
using ops::indexing::at_least_1d;
using Outs = std::vector<Tensor>;

// The rows of t an index of `sizes` walks along dim: t's strides with dim's set to 0. With dim
// empty every index is out of range and the kernel reads no row: `placeholder` (of the same
// shape and dtype) stands in, since no view of an empty dim can have that shape.
Tensor rows_along(const Tensor& t, int64_t dim, IntList sizes, const Tensor& placeholder) {
  if (t.size(dim) == 0) return placeholder;
  DimVector strides(t.strides().begin(), t.strides().end());
  strides[static_cast<size_t>(dim)] = 0;
  return t.as_strided(sizes, strides, t.storage_offset());
}

kernels::IndexedDim along(const Tensor& t, int64_t dim) {
  return {dim, t.size(dim), t.stride(dim)};
}

void gather_cuda(const Stack& args, const Outs& outs) {
  const Device device = outs[0].device();
  DeviceGuard guard(device.index());
  const Tensor& self_arg = args[0].to_tensor();
  const Tensor self = at_least_1d(as_input(self_arg, device, self_arg.dtype(), "gather"));
  const Tensor index = at_least_1d(as_input(args[2].to_tensor(), device, DType::Int64, "gather"));
  if (index.numel() == 0) return;
  const int64_t dim = wrap_dim(args[1].to_int(), self.dim(), "gather");
  into_output(outs[0], self.dtype(), [&](const Tensor& out) {
    const Tensor result = at_least_1d(out);
    const Tensor rows = rows_along(self, dim, index.sizes(), result);
    LaunchArgs l = launch_args(result, {index, rows}, "gather");
    IndexFaultRecord fault(device);
    kernels::gather(l.geometry, l.operands[0], l.operands[1], l.operands[2], along(self, dim),
                    fault.get(), stream_of(device.index()));
    fault.raise_if_set("gather");
  });
}

// scatter.src and scatter_reduce.two's arguments on the device, and their contiguous target
// holding self's values.
struct ScatterOperands {
  Tensor target;  // contiguous, self's dtype: out itself or a temporary committed to it
  Tensor index;
  Tensor src;
};

ScatterOperands scatter_operands(const Stack& args, const Tensor& out, const char* op) {
  const Device device = out.device();
  const Tensor& self_arg = args[0].to_tensor();
  const Tensor self = as_input(self_arg, device, self_arg.dtype(), op);
  ScatterOperands s{ops::strided::dense_target(out, self.dtype()),
                    as_input(args[2].to_tensor(), device, DType::Int64, op),
                    as_input(args[3].to_tensor(), device, self.dtype(), op)};
  if (!s.target.is_same(self)) device_copy(s.target, self);
  return s;
}

// The geometry over the index's shape: the target's rows, the index, and src's leading part.
struct ScatterLaunch {
  LaunchArgs args;
  kernels::IndexedDim dim;
};

ScatterLaunch scatter_launch(const ScatterOperands& s, int64_t raw_dim, const char* op) {
  const Tensor target = at_least_1d(s.target);
  const Tensor index = at_least_1d(s.index);
  const Tensor src = at_least_1d(s.src);
  const int64_t dim = wrap_dim(raw_dim, target.dim(), op);
  // src may be larger than index in every dim: the part index covers.
  const Tensor src_part = src.as_strided(index.sizes(), src.strides(), src.storage_offset());
  const Tensor rows = rows_along(target, dim, index.sizes(), src_part);
  return {launch_args(rows, {index, src_part}, op), along(target, dim)};
}

void scatter_cuda(const Stack& args, const Outs& outs) {
  const Device device = outs[0].device();
  DeviceGuard guard(device.index());
  const ScatterOperands s = scatter_operands(args, outs[0], "scatter");
  if (s.index.numel() > 0) {
    const ScatterLaunch l = scatter_launch(s, args[1].to_int(), "scatter");
    IndexFaultRecord fault(device);
    kernels::scatter(l.args.geometry, l.args.operands[0], l.args.operands[1], l.args.operands[2],
                     l.dim, fault.get(), stream_of(device.index()));
    fault.raise_if_set("scatter");
  }
  ops::strided::commit(outs[0], s.target);
}

ScatterReduce parse_reduce(const std::string& reduce) {
  if (reduce == "sum") return ScatterReduce::Sum;
  if (reduce == "prod") return ScatterReduce::Prod;
  if (reduce == "mean") return ScatterReduce::Mean;
  // aten also takes "max"/"min" (scatter's legacy names) for amax/amin.
  if (reduce == "amax" || reduce == "max") return ScatterReduce::Amax;
  if (reduce == "amin" || reduce == "min") return ScatterReduce::Amin;
  KILN_FAIL(
      "scatter_reduce(): reduce argument must be either sum, prod, mean, amax or amin, got '{}'",
      reduce);
}

// Atomics combine the values in whatever order threads arrive: float sums and means match the
// CPU's serial order to rounding; everything else exactly. include_self=False first sets the
// receiving positions to the reduction's identity, which the CPU's "first value replaces"
// amounts to.
void scatter_reduce_cuda(const Stack& args, const Outs& outs) {
  const Device device = outs[0].device();
  DeviceGuard guard(device.index());
  const ScatterReduce reduce = parse_reduce(args[4].to_string());
  const bool include_self = args[5].to_bool();
  const ScatterOperands s = scatter_operands(args, outs[0], "scatter_reduce");
  if (s.index.numel() > 0) {
    const cudaStream_t stream = stream_of(device.index());
    const ScatterLaunch l = scatter_launch(s, args[1].to_int(), "scatter_reduce");
    const kernels::Geometry& g = l.args.geometry;
    const std::vector<kernels::Operand>& o = l.args.operands;
    IndexFaultRecord fault(device);
    if (!include_self) {
      kernels::scatter_fill_identity(g, o[0], o[1], reduce, l.dim, fault.get(), stream);
    }
    const bool mean = reduce == ScatterReduce::Mean;
    // Mean's divisor: how many values landed on each target element.
    const Tensor counts =
        mean ? zeros({s.target.numel()}, TensorOptions(DType::Int64).device(device)) : Tensor();
    kernels::scatter_reduce(g, o[0], o[1], o[2], reduce,
                            mean ? counts.data_ptr<int64_t>() : nullptr, l.dim, fault.get(),
                            stream);
    if (mean) {
      kernels::scatter_mean_divide(scalar_type(s.target.dtype()), s.target.data_ptr(),
                                   counts.data_ptr<int64_t>(), s.target.numel(), include_self,
                                   stream);
    }
    fault.raise_if_set("scatter_reduce");
  }
  ops::strided::commit(outs[0], s.target);
}

// searchsorted's `side` decides over `right` when given (the meta rejected contradictions).
bool search_right(const Stack& args) {
  const std::optional<std::string> side = args[4].to_optional_string();
  return side ? *side == "right" : args[3].to_bool();
}

void searchsorted_cuda(const Stack& args, const Outs& outs) {
  const char* op = "searchsorted";
  const Device device = outs[0].device();
  DeviceGuard guard(device.index());
  const Tensor& boundaries = args[0].to_tensor();
  const Tensor& values = args[1].to_tensor();
  if (values.numel() == 0) return;
  // Both compared in their promoted dtype, as on the CPU.
  const DType common = promote_types(boundaries.dtype(), values.dtype());
  const Tensor bd = as_input(boundaries, device, common, op).contiguous();
  const Tensor vals = as_input(values, device, common, op).contiguous();
  const Tensor sorter_arg = args[5].to_optional_tensor();
  const Tensor sorter =
      sorter_arg.defined() ? as_input(sorter_arg, device, DType::Int64, op).contiguous() : Tensor();
  const cudaStream_t stream = stream_of(device.index());
  const int64_t length = bd.size(-1);
  std::optional<IndexFaultRecord> fault;
  if (sorter.defined() && sorter.numel() > 0) {
    fault.emplace(device);
    kernels::check_in_range(sorter.data_ptr<int64_t>(), sorter.numel(), length, fault->get(),
                            stream);
  }
  const bool out_int32 = args[2].to_bool();
  into_output(outs[0], out_int32 ? DType::Int32 : DType::Int64, [&](const Tensor& out) {
    const Tensor result = out.is_contiguous() ? out : empty_cuda_like(out, out.dtype());
    kernels::SearchArgs a;
    a.type = scalar_type(common);
    a.boundaries = bd.data_ptr();
    a.values = vals.data_ptr();
    a.sorter = sorter.defined() ? sorter.data_ptr<int64_t>() : nullptr;
    a.out = result.data_ptr();
    a.out_int32 = out_int32;
    a.count = vals.numel();
    a.length = length;
    // One row of boundaries for all values, or one per run of the values' last dim.
    a.values_per_row = bd.dim() == 1 ? 0 : vals.size(-1);
    a.right = search_right(args);
    kernels::searchsorted(a, stream);
    if (!result.is_same(out)) device_copy(out, result);
  });
  if (fault) {
    const kernels::IndexFault f = fault->read();
    KILN_CHECK_T(IndexError, f.flagged == 0,
                 "torch.searchsorted(): sorter index {} is out of bounds for a sequence of size {}",
                 f.value, length);
  }
}

}  // namespace

KILN_CUDA_REGISTER(indexing_ops) {
  structured("gather", gather_cuda);
  structured("scatter.src", scatter_cuda);
  structured("scatter_reduce.two", scatter_reduce_cuda);
  structured("searchsorted.Tensor", searchsorted_cuda);
}

}  // namespace kiln::cuda
