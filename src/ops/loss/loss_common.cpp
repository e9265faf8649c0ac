#include "ops/loss/loss_common.h"

#include <kiln/ops/creation.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln {

Reduction parse_reduction(std::string_view name) {
  if (name == "none") return Reduction::None;
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  KILN_FAIL("loss: reduction must be \"none\", \"mean\" or \"sum\", got \"{}\"", name);
}

}  // namespace kiln

namespace kiln::ops {

Reduction reduction_arg(const IValue& v, const char* op) {
  const int64_t r = v.to_int();
  KILN_CHECK(r >= 0 && r <= 2, "{}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {}", op,
             r);
  return static_cast<Reduction>(r);
}

Tensor apply_loss_reduction(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::Mean:
      return loss.mean();
    case Reduction::Sum:
      return loss.sum();
    case Reduction::None:
      break;
  }
  return loss;
}

void check_class_target_dtype(const Tensor& target, const char* op) {
  KILN_CHECK_T(TypeError, target.dtype() == DType::Int64 || target.dtype() == DType::UInt8,
               "{}: expected target dtype to be int64 (or uint8) class indices, but got {}", op,
               dtype_name(target.dtype()));
}

void check_class_weight(const Tensor& weight, int64_t classes, const char* op) {
  KILN_CHECK(!weight.defined() || (weight.dim() <= 1 && weight.numel() == classes),
             "{}: weight tensor should be defined either for all {} classes or no classes but "
             "got weight tensor of shape: {}",
             op, classes, sizes_str(weight.sizes()));
}

void check_weight_dtype(const Tensor& weight, const Tensor& self, const char* op) {
  KILN_CHECK_T(TypeError, !weight.defined() || weight.dtype() == self.dtype(),
               "{}: expected weight of the input's dtype {}, but got {}", op,
               dtype_name(self.dtype()), dtype_name(weight.dtype()));
}

void check_class_targets(const Tensor& target, int64_t classes, int64_t ignore_index,
                         const char* op) {
  if (target.numel() == 0 || target.is_meta()) return;
  Tensor t = target.to(DType::Int64).contiguous();
  const int64_t* p = t.data_ptr<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    KILN_CHECK(p[i] == ignore_index || (p[i] >= 0 && p[i] < classes),
               "{}: target {} is out of bounds: class indices must be in [0, {}) for C = {} "
               "classes (or equal ignore_index = {})",
               op, p[i], classes, classes, ignore_index);
  }
}

}  // namespace kiln::ops
