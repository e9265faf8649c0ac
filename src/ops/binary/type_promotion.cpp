// torch.result_type: PyTorch's type promotion over tensors, 0-dim tensors and wrapped numbers.
#include <kiln/ops/binary.h>

namespace kiln {
namespace {

// The running promotion of one priority class; nullopt while the class is empty.
using Slot = std::optional<DType>;

Slot promote_skip_empty(Slot a, DType b) { return a ? promote_types(*a, b) : b; }

// PyTorch's combine_categories: the higher-priority class wins unless the lower one is of a
// higher category (bool < integral < floating).
Slot combine(Slot higher, Slot lower) {
  if (higher && is_floating_point(*higher)) return higher;
  if (higher && lower && (*higher == DType::Bool || is_floating_point(*lower))) {
    return promote_types(*higher, *lower);
  }
  return higher ? higher : lower;
}

struct PromotionState {
  Slot dim, zero_dim, wrapped;

  void add(const Tensor& t) {
    if (!t.defined()) return;
    DType d = t.dtype();
    if (t.impl()->is_wrapped_number()) {
      // A Python float counts as the default dtype, not float64.
      wrapped = promote_skip_empty(wrapped, is_floating_point(d) ? default_float_dtype() : d);
    } else if (t.dim() > 0) {
      dim = promote_skip_empty(dim, d);
    } else {
      zero_dim = promote_skip_empty(zero_dim, d);
    }
  }
  void add(const Scalar& s) {
    wrapped =
        promote_skip_empty(wrapped, s.is_floating_point() ? default_float_dtype() : s.dtype());
  }
  DType result(const char* op = "result_type") const {
    Slot r = combine(dim, combine(zero_dim, wrapped));
    KILN_CHECK(r.has_value(), "{}: expected at least one tensor or scalar", op);
    return *r;
  }
};

}  // namespace

DType result_type(TensorList tensors) {
  PromotionState s;
  for (const Tensor& t : tensors) s.add(t);
  return s.result();
}

DType result_type(const Tensor& a, const Tensor& b) {
  PromotionState s;
  s.add(a);
  s.add(b);
  return s.result();
}

DType result_type(const Tensor& a, const Scalar& b) {
  PromotionState s;
  s.add(a);
  s.add(b);
  return s.result();
}

}  // namespace kiln
