#include <kiln/core/tensor.h>
#include <kiln/ops/registry.h>

namespace kiln {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);  // 0-dim tensors accept dim 0 and -1, as in PyTorch
  if (dim < -n || dim >= n) {
    throw IndexError(
        fmt::format("{}: dimension out of range (expected to be in range of [{}, {}], but got {})",
                    op, -n, n - 1, dim));
  }
  return dim < 0 ? dim + n : dim;
}

int64_t Tensor::size(int64_t d) const {
  int64_t nd = dim();
  KILN_CHECK_T(IndexError, nd > 0, "Tensor.size: a 0-dim tensor has no dimension {}", d);
  return sizes()[static_cast<size_t>(wrap_dim(d, nd, "Tensor.size"))];
}

int64_t Tensor::stride(int64_t d) const {
  int64_t nd = dim();
  KILN_CHECK_T(IndexError, nd > 0, "Tensor.stride: a 0-dim tensor has no dimension {}", d);
  return strides()[static_cast<size_t>(wrap_dim(d, nd, "Tensor.stride"))];
}

SymInt Tensor::sym_size(int64_t d) const {
  int64_t nd = dim();
  KILN_CHECK_T(IndexError, nd > 0, "Tensor.size: a 0-dim tensor has no dimension {}", d);
  return sym_sizes()[static_cast<size_t>(wrap_dim(d, nd, "Tensor.size"))];
}

Tensor& Tensor::requires_grad_(bool r) {
  KILN_CHECK(!r || is_floating_point(),
             "requires_grad_: only tensors of floating point dtype can require gradients, got {}",
             dtype_name(dtype()));
  if (!is_leaf()) {
    KILN_CHECK(r,
               "requires_grad_: you can only change requires_grad flags of leaf variables. If you "
               "want to use a computed variable in a subgraph that doesn't require "
               "differentiation use var_no_grad = var.detach().");
    return *this;
  }
  checked()->set_requires_grad(r);
  return *this;
}

Scalar Tensor::item(const kiln::SourceLocation& loc) const {
  // No op call, but capture breaks its graph here: name the user's line while it runs.
  ops::CallSiteScope call_site(&loc);
  if (defined()) impl()->materialize("Tensor.item()");
  KILN_CHECK(numel() == 1, "item: a Tensor with {} elements cannot be converted to Scalar",
             numel());
  // A GPU value is copied back first (the copy waits for the work that computes it).
  if (device().is_cuda()) return to(Device::cpu()).item(loc);
  KILN_CHECK(device().is_cpu(), "item: tensors on {} must be copied to the cpu first (to(kCPU))",
             device().str());
  return KILN_DISPATCH_ALL(dtype(), "item", [&]<typename T>() -> Scalar {
    return Scalar(*static_cast<const T*>(data_ptr()));
  });
}

Tensor Tensor::detach() const {
  TensorImpl* self = checked();
  auto impl = std::make_shared<TensorImpl>(self->storage(), self->dtype(), self->sym_sizes(),
                                           self->sym_strides(), self->sym_storage_offset());
  return Tensor(std::move(impl));
}

template <typename T>
std::vector<T> Tensor::tolist() const {
  Tensor c = contiguous();
  if (c.device() != Device::cpu()) c = c.to(Device::cpu());
  std::vector<T> out(static_cast<size_t>(c.numel()));
  KILN_DISPATCH_ALL(c.dtype(), "tolist", [&]<typename S>() {
    const S* p = static_cast<const S*>(c.data_ptr());
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        out[i] = static_cast<float>(p[i]) != 0.0f;
      } else if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
        out[i] = static_cast<T>(static_cast<float>(p[i]));
      } else {
        out[i] = static_cast<T>(p[i]);
      }
    }
  });
  return out;
}
template std::vector<float> Tensor::tolist<float>() const;
template std::vector<double> Tensor::tolist<double>() const;
template std::vector<int64_t> Tensor::tolist<int64_t>() const;
template std::vector<int32_t> Tensor::tolist<int32_t>() const;
template std::vector<bool> Tensor::tolist<bool>() const;

void Tensor::throw_undefined() {
  KILN_FAIL("operation on an undefined tensor (default-constructed kiln::Tensor)");
}

}  // namespace kiln
