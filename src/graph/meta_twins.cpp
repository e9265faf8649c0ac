#include "graph/meta_twins.h"

#include <kiln/core/error.h>

#include <algorithm>
#include <optional>

namespace kiln::graph {

Tensor MetaTwins::twin(const Tensor& t) {
  if (!t.defined()) return t;
  Storage& meta = meta_storage_[t.storage().get()];
  if (!meta) {
    meta = make_storage(t.storage()->nbytes(), kMeta);
    storage_origin_[meta.get()] = t;
  }
  auto impl = std::make_shared<TensorImpl>(meta, t.dtype(), t.sym_sizes(), t.sym_strides(),
                                           t.sym_storage_offset());
  impl->set_wrapped_number(t.impl()->is_wrapped_number());
  Tensor out(std::move(impl));
  original_[out.impl()] = t;
  return out;
}

ops::Stack MetaTwins::twin_args(const ops::Schema& schema, const ops::Stack& args) {
  ops::Stack out = args;
  for (size_t i = 0; i < out.size() && i < schema.arguments.size(); ++i) {
    if (schema.arguments[i].type == ops::ArgType::Device) out[i] = ops::IValue(kMeta);
  }
  for (ops::IValue& v : out) {
    if (v.is_tensor()) {
      v = ops::IValue(twin(v.to_tensor()));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> list = v.to_tensor_list();
      for (Tensor& t : list) t = twin(t);
      v = ops::IValue(std::move(list));
    }
  }
  return out;
}

const Tensor* MetaTwins::original(const Tensor& meta_out) const {
  auto it = original_.find(meta_out.impl());
  return it == original_.end() ? nullptr : &it->second;
}

const Tensor* MetaTwins::storage_origin(const Tensor& meta_out) const {
  auto it = storage_origin_.find(meta_out.storage().get());
  return it == storage_origin_.end() ? nullptr : &it->second;
}

namespace {

template <typename List>
std::vector<int64_t> outermost_first_in(List strides) {
  std::vector<int64_t> order(strides.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int64_t>(d);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return strides[static_cast<size_t>(a)] > strides[static_cast<size_t>(b)];
  });
  return order;
}

template <typename Int, typename List>
bool is_dense_in(List sizes, List strides) {
  const std::vector<int64_t> order = outermost_first_in(strides);
  Int expected = 1;
  for (size_t k = order.size(); k-- > 0;) {
    const auto d = static_cast<size_t>(order[k]);
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected = expected * sizes[d];
  }
  return true;
}

}  // namespace

std::vector<int64_t> outermost_first(IntList strides) { return outermost_first_in(strides); }
std::vector<int64_t> outermost_first(SymIntList strides) { return outermost_first_in(strides); }

bool is_dense(IntList sizes, IntList strides) { return is_dense_in<int64_t>(sizes, strides); }
bool is_dense(SymIntList sizes, SymIntList strides) { return is_dense_in<SymInt>(sizes, strides); }

int64_t storage_extent(IntList sizes, IntList strides, int64_t storage_offset) {
  int64_t end = storage_offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return storage_offset;
    end += (sizes[d] - 1) * strides[d];
  }
  return end + 1;
}

Tensor tensor_of_meta(const ValueMeta& meta, Device storage_device) {
  // Symbolic sizes size the storage by their hints: a graph value of symbolic size owns no data.
  auto hint = [&](const SymInt& s) {
    const std::optional<int64_t> v = s.maybe_int();
    KILN_CHECK(v.has_value(), "a tensor of symbolic sizes {} without hints cannot be made here",
               meta.str());
    return *v;
  };
  DimVector sizes, strides;
  for (const SymInt& s : meta.sizes) sizes.push_back(hint(s));
  for (const SymInt& s : meta.strides) strides.push_back(hint(s));
  const int64_t extent =
      storage_extent(IntList(sizes), IntList(strides), hint(meta.storage_offset));
  auto storage = std::make_shared<StorageImpl>(static_cast<size_t>(extent) * itemsize(meta.dtype),
                                               storage_device);
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), meta.dtype, meta.sizes,
                                             meta.strides, meta.storage_offset));
}

Device output_device(const ops::Stack& args) {
  for (const ops::IValue& v : args) {
    if (std::holds_alternative<Device>(v.variant())) return v.to_device();
  }
  // The first tensor's device, but a 0-dim CPU tensor (a number) gives way to a tensor on
  // another device, as the dispatcher decides (PyTorch's rule).
  std::optional<Device> found;
  const auto see = [&found](const Tensor& t) {
    if (!t.defined()) return;
    if (!found || (found->is_cpu() && !t.device().is_cpu())) found = t.device();
  };
  for (const ops::IValue& v : args) {
    if (v.is_tensor()) see(v.to_tensor());
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) see(t);
    }
  }
  return found.value_or(Device::cpu());
}

bool any_requires_grad(const ops::Stack& args) {
  for (const ops::IValue& v : args) {
    if (v.is_tensor() && v.to_tensor().defined() && v.to_tensor().requires_grad()) return true;
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined() && t.requires_grad()) return true;
      }
    }
  }
  return false;
}

}  // namespace kiln::graph
