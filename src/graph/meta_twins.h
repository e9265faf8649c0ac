#pragma once
// What tracers (capture's session, aot's graph tracer) share to compute an op's output metadata
// without computing it: meta-device twins of the arguments, run through the op's meta function.
#include <kiln/graph/graph.h>
#include <kiln/ops/registry.h>

#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::graph {

// Meta-device twins of an op's tensor arguments: same geometry and dtype, no memory. Arguments
// sharing a storage get twins sharing one meta storage, so the op's aliasing checks still see it.
class MetaTwins {
 public:
  Tensor twin(const Tensor& t);
  // The arguments with tensors replaced by twins. Device arguments become the meta device too,
  // so that factories (zeros, randn) allocate nothing and draw no random numbers while tracing.
  ops::Stack twin_args(const ops::Schema& schema, const ops::Stack& args);
  // The argument a meta output is (in-place and out= ops return their argument), if any.
  const Tensor* original(const Tensor& meta_out) const;
  // The argument whose storage a meta output views, if any.
  const Tensor* storage_origin(const Tensor& meta_out) const;

 private:
  std::unordered_map<const StorageImpl*, Storage> meta_storage_;
  std::unordered_map<const StorageImpl*, Tensor> storage_origin_;
  std::unordered_map<const TensorImpl*, Tensor> original_;
};

// A layout's dimensions from the largest stride to the smallest (outermost first).
// Symbolic strides compare through their shape environment (recording guards where it must).
std::vector<int64_t> outermost_first(IntList strides);
std::vector<int64_t> outermost_first(SymIntList strides);
// Whether a layout is dense and non-overlapping: its strides are a contiguous tensor's, permuted
// (dimensions of size 1 may have any stride).
bool is_dense(IntList sizes, IntList strides);
bool is_dense(SymIntList sizes, SymIntList strides);

// Elements of storage a tensor of this geometry spans (offset + extent).
int64_t storage_extent(IntList sizes, IntList strides, int64_t storage_offset);
// A tensor of a value's geometry on `storage_device`, with a storage of no memory but of the size
// the geometry spans: a meta tensor (kMeta), or on a real device a capture-style proxy.
Tensor tensor_of_meta(const ValueMeta& meta, Device storage_device);

// An op node's arguments: the stack with its tensors taken out (left undefined) and the uses
// that say where each tensor's value goes, from `value_of(tensor)`.
template <typename F>
std::pair<ops::Stack, std::vector<TensorUse>> node_arguments(const ops::Stack& args, F&& value_of) {
  ops::Stack node_args = args;
  std::vector<TensorUse> uses;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tensor()) {
      const Tensor& t = args[i].to_tensor();
      if (!t.defined()) continue;
      uses.push_back(TensorUse{static_cast<int>(i), -1, value_of(t)});
      node_args[i] = ops::IValue(Tensor());
    } else if (args[i].is_tensor_list()) {
      std::vector<Tensor> list = args[i].to_tensor_list();
      for (size_t j = 0; j < list.size(); ++j) {
        if (!list[j].defined()) continue;
        uses.push_back(TensorUse{static_cast<int>(i), static_cast<int>(j), value_of(list[j])});
        list[j] = Tensor();
      }
      node_args[i] = ops::IValue(std::move(list));
    }
  }
  return {std::move(node_args), std::move(uses)};
}

// The device an op's outputs live on: a Device argument's, else the first tensor argument's.
Device output_device(const ops::Stack& args);
// Whether any tensor argument requires grad.
bool any_requires_grad(const ops::Stack& args);

}  // namespace kiln::graph
