// one_hot: int64 class indices to int64 one-hot vectors along a new last dim. With
// num_classes=-1 the width depends on the data (the largest class + 1), so the op makes its own
// outputs.
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>

#include <algorithm>

namespace kiln::ops {
namespace {

void check_one_hot_input(const Tensor& self) {
  KILN_CHECK_T(TypeError, self.dtype() == DType::Int64,
               "one_hot is only applicable to index tensor of type LongTensor, got {}",
               dtype_name(self.dtype()));
}

DimVector one_hot_sizes(const Tensor& self, int64_t num_classes) {
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  sizes.push_back(num_classes);
  return sizes;
}

std::vector<Tensor> one_hot_cpu(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  int64_t num_classes = args[1].to_int();
  check_one_hot_input(self);
  KILN_CHECK(num_classes >= -1, "one_hot: num_classes should be -1 or non-negative, got {}",
             num_classes);
  if (self.numel() == 0) {
    KILN_CHECK(num_classes != -1,
               "one_hot: Can not infer total number of classes from empty tensor.");
    return {zeros(one_hot_sizes(self, num_classes), kInt64)};
  }
  std::vector<int64_t> classes;
  classes.reserve(static_cast<size_t>(self.numel()));
  const int64_t* p = self.data_ptr<int64_t>();
  strided::for_each<1>(self.sizes(), {self.strides()},
                       [&](const std::array<int64_t, 1>& off) { classes.push_back(p[off[0]]); });
  const auto [lo, hi] = std::minmax_element(classes.begin(), classes.end());
  KILN_CHECK(*lo >= 0, "one_hot: Class values must be non-negative, got {}", *lo);
  if (num_classes == -1) {
    num_classes = *hi + 1;
  } else {
    KILN_CHECK_T(IndexError, *hi < num_classes,
                 "one_hot: Class values must be smaller than num_classes ({}), got {}", num_classes,
                 *hi);
  }
  Tensor out = zeros(one_hot_sizes(self, num_classes), kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  for (size_t i = 0; i < classes.size(); ++i) {
    o[static_cast<int64_t>(i) * num_classes + classes[i]] = 1;
  }
  return {out};
}

// On the meta device the width must be given: the values that would decide it don't exist.
std::vector<Tensor> one_hot_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t num_classes = args[1].to_int();
  check_one_hot_input(self);
  KILN_CHECK(num_classes >= 0,
             "one_hot: num_classes must be given (non-negative) for a tensor on the meta device, "
             "got {}",
             num_classes);
  return {empty(one_hot_sizes(self, num_classes), TensorOptions(kInt64).device(self.device()))};
}

// self == arange(num_classes) along a new last dim. With num_classes=-1 the width is the data's
// largest class + 1, which no decomposition can know without reading the data: that case raises
// (as on the meta device), and values out of range are not checked.
std::vector<Tensor> one_hot_decomposition(const Stack& args) {
  one_hot_meta(args);
  const Tensor& self = args[0].to_tensor();
  const Tensor classes = arange(args[1].to_int(), TensorOptions(kInt64).device(self.device()));
  return {(self.unsqueeze(-1) == classes).to(kInt64)};
}

}  // namespace

KILN_OP("one_hot(Tensor self, int num_classes=-1) -> Tensor")
    .custom(DeviceType::CPU, one_hot_cpu)
    .custom(DeviceType::Meta, one_hot_meta)
    .decomposition(one_hot_decomposition)
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({5}, kInt64, 0, 4), 4}, "1-D"},
          {{make_noncontiguous_sample({2, 3}, kInt64, 0, 5), 6}, "non-contiguous"},
          {{make_sample({}, kInt64, 0, 3), 3}, "0-dim"},
          {{make_sample({0}, kInt64), 3}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor one_hot(const Tensor& self, int64_t num_classes, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("one_hot");
  return ops::call1(op, {self, num_classes}, &loc);
}

}  // namespace kiln
