// index.Tensor and index_put: PyTorch's advanced indexing, self[indices] and
// self[indices] = values. With boolean masks the result's length depends on the data, so
// index.Tensor makes its own outputs (a Custom op); index_put's output is always self's shape.
#include "ops/indexing/advanced_index.h"
#include "ops/indexing/strided_loop.h"
#include "ops/reduction/reduce_meta.h"
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>

namespace kiln::ops {
namespace {

using namespace indexing;

bool has_mask(TensorList indices) {
  for (const Tensor& t : indices) {
    if (t.defined() && (t.dtype() == DType::Bool || t.dtype() == DType::UInt8)) return true;
  }
  return false;
}

std::vector<Tensor> index_cpu(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const std::vector<Tensor> indices = expand_indices(self, args[1].to_tensor_list(), "index");
  IndexPlan plan = plan_index(self.sizes(), self.strides(), indices, "index");
  compute_offsets(plan, self.sizes(), self.strides(), indices, "index");
  Tensor out = empty(plan.result_sizes, TensorOptions(self.dtype()).device(self.device()));
  gather_indexed(out, self, plan);
  return {out};
}

// Without masks the result shape follows from the index shapes alone.
std::vector<Tensor> index_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const std::vector<Tensor> indices = expand_indices(self, args[1].to_tensor_list(), "index");
  const SymDimVector sizes = index_result_sizes(self.sym_sizes(), indices, "index");
  // A geometry on self's (meta) device; symbolic sizes (a dynamic trace) size its storage by
  // their hints, as a tracer's proxies are.
  return {empty_from_meta(TensorMeta::contiguous(sizes, self.dtype(), self.device()))};
}

// Dtype, and (when result_sizes is known) that values broadcast to the indexing result.
void check_values(const Tensor& self, const Tensor& values,
                  const std::optional<SymDimVector>& result_sizes) {
  KILN_CHECK_T(TypeError, values.dtype() == self.dtype(),
               "index_put(): Index put requires the source and destination dtypes match, got {} "
               "for the destination and {} for the source.",
               torch_type_name(self.dtype()), torch_type_name(values.dtype()));
  if (!result_sizes) return;
  const SymDimVector& r = *result_sizes;
  const SymIntList v = values.sym_sizes();
  bool ok = v.size() <= r.size();
  for (size_t i = 1; ok && i <= v.size(); ++i) {
    const SymInt& d = v[v.size() - i];
    ok = d == 1 || d == r[r.size() - i];
  }
  KILN_CHECK(ok,
             "index_put(): shape mismatch: value tensor of shape {} cannot be broadcast to "
             "indexing result of shape {}",
             view_detail::shape_str(v), view_detail::shape_str(SymIntList(r)));
}

std::vector<TensorMeta> index_put_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  TensorList raw = args[1].to_tensor_list();
  const Tensor& values = args[2].to_tensor();
  if (has_mask(raw)) {
    // A masked result's length needs the data (the kernel checks values against it): check
    // what metadata can, without reading the masks twice.
    check_indices(self, raw, "index_put");
    check_values(self, values, std::nullopt);
  } else {
    const std::vector<Tensor> indices = expand_indices(self, raw, "index_put");
    check_values(self, values, index_result_sizes(self.sym_sizes(), indices, "index_put"));
  }
  return {TensorMeta::contiguous(self.sym_sizes().vec(), self.dtype(), self.device())};
}

void index_put_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& values = args[2].to_tensor();
  const bool accumulate = args[3].to_bool();
  const std::vector<Tensor> indices = expand_indices(self, args[1].to_tensor_list(), "index_put");
  Tensor target = strided::dense_target(outs[0], self.dtype());
  IndexPlan plan = plan_index(target.sizes(), target.strides(), indices, "index_put");
  check_values(self, values, to_sym(plan.result_sizes));
  compute_offsets(plan, target.sizes(), target.strides(), indices, "index_put");
  // Read values before self is overwritten: they may alias it.
  Tensor v = values.storage() == target.storage() ? values.clone() : values;
  v = v.broadcast_to(plan.result_sizes);
  if (!target.is_same(self)) target.copy_(self);
  put_indexed(target, v, plan, accumulate);
  strided::commit(outs[0], target);
}

Tensor long_index(std::vector<int64_t> values, IntList shape, DType dtype = kInt64) {
  return from_vector(values, shape).to(dtype);
}
Tensor mask(std::vector<int64_t> values, IntList shape) {
  return from_vector(values, shape).to(kBool);
}

std::vector<Sample> index_samples() {
  const Tensor none;
  return {
      {{make_sample({5, 3}, kFloat32), std::vector<Tensor>{long_index({4, 0, -1, 2}, {4})}},
       "one index, negative"},
      {{make_sample({4, 5}, kFloat64),
        std::vector<Tensor>{long_index({0, 3, 1}, {3}), long_index({4, -5, 2}, {3})}},
       "two adjacent indices"},
      {{make_sample({3, 4, 5}, kFloat32),
        std::vector<Tensor>{none, long_index({1, 0, 3, 3}, {2, 2}, kInt32)}},
       "slice then 2-D int32 index"},
      {{make_sample({3, 4, 5}, kInt64),
        std::vector<Tensor>{long_index({2, 0}, {2, 1}), none, long_index({1, 4, 0}, {3})}},
       "separated by a slice, broadcast: index dims first"},
      {{make_sample({2, 3, 4, 2}, kFloat32),
        std::vector<Tensor>{none, long_index({0, 2}, {2}), long_index({3, 1}, {2})}},
       "adjacent in the middle"},
      {{make_sample({3, 4}, kFloat32), std::vector<Tensor>{mask({1, 0, 1}, {3})}}, "bool mask"},
      {{make_noncontiguous_sample({3, 4}, kFloat32),
        std::vector<Tensor>{mask({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0}, {3, 4})}},
       "2-D mask, non-contiguous self"},
      {{make_sample({2, 3, 4}, kFloat64),
        std::vector<Tensor>{long_index({1, 0}, {2}), none, mask({0, 1, 1, 0}, {4})}},
       "index and mask separated by a slice"},
      {{make_sample({3, 4}, kInt32),
        std::vector<Tensor>{none, from_vector<int64_t>({1, 0, 1, 1}, {4}).to(kUInt8)}},
       "uint8 mask"},
      {{make_sample({4, 3}, kBool),
        std::vector<Tensor>{make_noncontiguous_sample({2, 3}, kInt64, 0, 4)}},
       "bool self, non-contiguous index"},
      {{make_sample({4, 3}, kFloat32), std::vector<Tensor>{long_index({}, {0})}}, "empty index"},
      {{make_sample({0, 3}, kFloat32), std::vector<Tensor>{none, long_index({2, 0}, {2})}},
       "empty self"},
      {{make_sample({4, 3}, kFloat32), std::vector<Tensor>{long_index({2}, {})}}, "0-dim index"},
      {{make_sample({4, 3}, kFloat16), std::vector<Tensor>{long_index({1, 1}, {2})}}, "float16"},
      {{make_sample({4, 3}, kFloat32), std::vector<Tensor>{long_index({4}, {1})}}, "out of range"},
      {{make_sample({4, 3}, kFloat32), std::vector<Tensor>{make_sample({2}, kFloat32)}},
       "float index"},
      {{make_sample({4, 3}, kFloat32),
        std::vector<Tensor>{long_index({0}, {1}), long_index({0}, {1}), long_index({0}, {1})}},
       "too many indices"},
      {{make_sample({4, 3}, kFloat32), std::vector<Tensor>{mask({1, 0, 1}, {3})}},
       "mask shape mismatch"},
      {{make_sample({4, 3}, kFloat32),
        std::vector<Tensor>{long_index({0, 1}, {2}), long_index({0, 1, 2}, {3})}},
       "indices not broadcastable"},
  };
}

std::vector<Sample> index_put_samples() {
  const Tensor none;
  std::vector<Sample> s{
      {{make_sample({5, 3}, kFloat32), std::vector<Tensor>{long_index({4, 0, -2}, {3})},
        make_sample({3, 3}, kFloat32, -3, 3, 1)},
       "rows"},
      {{make_sample({4, 5}, kFloat64),
        std::vector<Tensor>{long_index({0, 3, 1}, {3}), long_index({4, -5, 2}, {3})},
        make_sample({}, kFloat64, -3, 3, 1)},
       "points, 0-dim values broadcast"},
      {{make_noncontiguous_sample({3, 4}, kFloat32),
        std::vector<Tensor>{mask({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0}, {3, 4})},
        make_sample({1}, kFloat32, -3, 3, 1)},
       "2-D mask, non-contiguous self"},
      {{make_sample({3, 4, 5}, kInt64),
        std::vector<Tensor>{long_index({2, 0}, {2, 1}), none, long_index({1, 4, 0}, {3})},
        make_sample({4}, kInt64, -3, 3, 1)},
       "separated by a slice, values broadcast"},
      {{make_sample({4, 3}, kFloat32), std::vector<Tensor>{long_index({}, {0})},
        make_sample({3}, kFloat32)},
       "empty index"},
      {{make_sample({4, 3}, kFloat32), std::vector<Tensor>{long_index({0, 1}, {2})},
        make_sample({3, 3}, kFloat32)},
       "values not broadcastable"},
      {{make_sample({4, 3}, kFloat32), std::vector<Tensor>{long_index({0, 1}, {2})},
        make_sample({2, 3}, kFloat64)},
       "values dtype differs"},
  };
  // accumulate=True with duplicate destinations.
  s.push_back({{make_sample({5, 3}, kFloat64), std::vector<Tensor>{long_index({1, 3, 1, 1}, {4})},
                make_sample({4, 3}, kFloat64, -3, 3, 1), true},
               "accumulate, duplicates"});
  s.push_back({{make_sample({6}, kInt32), std::vector<Tensor>{long_index({5, -1, 0, 5}, {4})},
                make_sample({4}, kInt32, -3, 3, 1), true},
               "accumulate int32, negative duplicates"});
  s.push_back({{make_sample({3, 4}, kFloat32), std::vector<Tensor>{none, mask({1, 0, 0, 1}, {4})},
                make_sample({3, 1}, kFloat32, -3, 3, 1), true},
               "accumulate, mask"});
  return s;
}

// self[indices]: every read position gets the gradients of its reads (duplicates accumulate).
std::vector<Tensor> index_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const std::vector<Tensor>& indices = a.inputs[1].to_tensor_list();
  const Tensor& g = a.grad_outputs[0];
  std::vector<Tensor> grads{zeros(self.sizes(), g.options()).index_put(indices, g, true)};
  grads.resize(1 + indices.size());  // no gradient for the index tensors
  return grads;
}

// values' gradient is grad read at the written positions (summed back over values' broadcast
// by the engine); self's is grad with those positions zeroed, unless values were added.
std::vector<Tensor> index_put_derivative(const BackwardArgs& a) {
  const std::vector<Tensor>& indices = a.inputs[1].to_tensor_list();
  const bool accumulate = a.inputs[3].to_bool();
  const Tensor& g = a.grad_outputs[0];
  std::vector<Tensor> grads{accumulate ? g : g.index_put(indices, zeros({}, g.options()), false)};
  grads.resize(1 + indices.size());
  grads.push_back(g.index(indices));
  return grads;
}

}  // namespace

KILN_OP("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor")
    .custom(DeviceType::CPU, index_cpu)
    .custom(DeviceType::Meta, index_meta)
    .derivative(index_derivative)
    .samples(index_samples);

KILN_OP("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor")
    .meta(index_put_meta)
    .cpu(index_put_impl)
    .derivative(index_put_derivative)
    .inplace_variant()
    .out_variant()
    .samples(index_put_samples);

}  // namespace kiln::ops

namespace kiln {

Tensor index(const Tensor& self, TensorList indices, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("index.Tensor");
  return ops::call1(op, {self, indices}, &loc);
}
Tensor index_put(const Tensor& self, TensorList indices, const Tensor& values, bool accumulate,
                 const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("index_put");
  return ops::call1(op, {self, indices, values, accumulate}, &loc);
}
Tensor& index_put_(Tensor& self, TensorList indices, const Tensor& values, bool accumulate,
                   const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("index_put_");
  ops::call(op, {self, indices, values, accumulate}, &loc);
  return self;
}

Tensor Tensor::index(TensorList indices, const kiln::SourceLocation& loc) const {
  return kiln::index(*this, indices, loc);
}
Tensor Tensor::index_put(TensorList indices, const Tensor& values, bool accumulate,
                         const kiln::SourceLocation& loc) const {
  return kiln::index_put(*this, indices, values, accumulate, loc);
}
Tensor& Tensor::index_put_(TensorList indices, const Tensor& values, bool accumulate,
                           const kiln::SourceLocation& loc) {
  return kiln::index_put_(*this, indices, values, accumulate, loc);
}

}  // namespace kiln
