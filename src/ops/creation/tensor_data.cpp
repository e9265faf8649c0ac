// Tensors from C++ data: nested braced lists (tensor({{1, 2}, {3, 4}})) and flat vectors.
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

#include <cstring>

namespace kiln {

NestedList::NestedList(std::initializer_list<NestedList> items) : kind_(Scalar::Kind::Bool) {
  // An empty list is a float tensor of shape [0], as torch.tensor([]) is.
  if (items.size() == 0) kind_ = Scalar::Kind::Float;
  const NestedList* first = items.size() ? items.begin() : nullptr;
  shape_.push_back(static_cast<int64_t>(items.size()));
  if (first) {
    for (int64_t s : first->shape_) shape_.push_back(s);
  }
  auto sequence = [](int64_t n) { return fmt::format("sequence of length {}", n); };
  for (const NestedList& item : items) {
    if (ragged_dim_ < 0 && item.ragged_dim_ >= 0) {  // raggedness inside an item: one dim deeper
      ragged_dim_ = item.ragged_dim_ + 1;
      ragged_expected_ = item.ragged_expected_;
      ragged_got_ = item.ragged_got_;
    }
    if (ragged_dim_ < 0 && item.shape_ != first->shape_) {
      // The outermost dim where this item's nesting differs from the first item's.
      const DimVector& a = first->shape_;
      const DimVector& b = item.shape_;
      size_t k = 0;
      while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
      ragged_dim_ = static_cast<int64_t>(k) + 1;
      ragged_expected_ = k < a.size() ? sequence(a[k]) : "a number";
      ragged_got_ =
          k < b.size() ? (k < a.size() ? std::to_string(b[k]) : "a " + sequence(b[k])) : "a number";
    }
    // bool < int < float: the widest kind of leaf decides the dtype.
    if (static_cast<int>(item.kind_) > static_cast<int>(kind_)) kind_ = item.kind_;
    values_.insert(values_.end(), item.values_.begin(), item.values_.end());
  }
}

void NestedList::check() const {
  KILN_CHECK(ragged_dim_ < 0, "tensor: expected {} at dim {}, got {}", ragged_expected_,
             ragged_dim_, ragged_got_);
}

DType NestedList::inferred_dtype() const {
  switch (kind_) {
    case Scalar::Kind::Bool:
      return kBool;
    case Scalar::Kind::Int:
      return kInt64;
    case Scalar::Kind::Float:
      return default_float_dtype();
  }
  return default_float_dtype();
}

Tensor tensor(const NestedList& data, TensorOptions options, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  data.check();
  const DType dtype = options.dtype_or(data.inferred_dtype());
  Tensor cpu = empty(data.shape(), dtype);
  const auto& values = data.values();
  KILN_DISPATCH_ALL(dtype, "tensor", [&]<typename T>() {
    T* out = cpu.data_ptr<T>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i].to<T>();
  });
  Tensor t = options.device().is_cpu() ? cpu : cpu.to(options.device());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, IntList shape, TensorOptions options) {
  int64_t numel = 1;
  for (int64_t s : shape) {
    KILN_CHECK(s >= 0, "from_vector: negative dimension {} in shape [{}]", s,
               fmt::join(shape, ", "));
    numel *= s;
  }
  KILN_CHECK(numel == static_cast<int64_t>(values.size()),
             "from_vector: shape [{}] has {} elements but {} values were given",
             fmt::join(shape, ", "), numel, values.size());
  Tensor t = empty(shape, dtype_of_v<T>);
  if constexpr (std::is_same_v<T, bool>) {
    bool* out = t.data_ptr<bool>();  // std::vector<bool> is packed: copy element by element
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  } else if (!values.empty()) {
    std::memcpy(t.data_ptr(), values.data(), values.size() * sizeof(T));
  }
  if (auto d = options.dtype_opt(); d && *d != t.dtype()) t = t.to(*d);
  if (!options.device().is_cpu()) t = t.to(options.device());
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

template Tensor from_vector<float>(const std::vector<float>&, IntList, TensorOptions);
template Tensor from_vector<double>(const std::vector<double>&, IntList, TensorOptions);
template Tensor from_vector<int64_t>(const std::vector<int64_t>&, IntList, TensorOptions);
template Tensor from_vector<int32_t>(const std::vector<int32_t>&, IntList, TensorOptions);
template Tensor from_vector<uint8_t>(const std::vector<uint8_t>&, IntList, TensorOptions);
template Tensor from_vector<bool>(const std::vector<bool>&, IntList, TensorOptions);

}  // namespace kiln
