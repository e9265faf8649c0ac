// as_strided: a view with explicit sizes, strides and offset, checked against the storage.
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

#include <algorithm>

namespace kiln::ops {

using namespace view_detail;

namespace {

std::vector<TensorMeta> as_strided_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  SymDimVector sizes = args[1].to_sym_int_list();
  SymDimVector strides = args[2].to_sym_int_list();
  SymInt offset = args[3].is_none() ? self.impl()->sym_storage_offset() : args[3].to_sym_int();
  KILN_CHECK(sizes.size() == strides.size(),
             "as_strided: mismatch in length of strides and shape: size {} has {} dims, stride {} "
             "has {}",
             shape_str(sizes), sizes.size(), shape_str(strides), strides.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    KILN_CHECK(sizes[d] >= 0, "as_strided: sizes must be non-negative, got size {}",
               shape_str(sizes));
    KILN_CHECK(strides[d] >= 0, "as_strided: negative strides are not supported, got strides {}",
               shape_str(strides));
  }
  KILN_CHECK(offset >= 0, "as_strided: storage offset must be non-negative, got {}", offset.str());
  // The last element reached must lie inside the storage (nothing is reached if numel is 0).
  bool empty = false;
  SymInt last = offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0)
      empty = true;
    else
      last = last + (sizes[d] - 1) * strides[d];
  }
  if (!empty) {
    const auto item = static_cast<int64_t>(self.itemsize());
    const auto storage_elems = static_cast<int64_t>(self.storage()->nbytes()) / item;
    KILN_CHECK(last < storage_elems,
               "as_strided: sizes {}, strides {} and storage offset {} need a storage of {} "
               "elements, but the storage holds only {} elements of {} bytes",
               shape_str(sizes), shape_str(strides), offset.str(), (last + 1).str(), storage_elems,
               item);
  }
  return one_view(self, std::move(sizes), std::move(strides), std::move(offset));
}

// Whether no two elements of a (sizes, strides) view share memory.
bool view_is_overlap_free(IntList sizes, IntList strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims with size > 1
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return true;
    if (sizes[d] > 1) dims.push_back({strides[d], sizes[d]});
  }
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;  // the farthest element reached by the smaller-stride dims
  for (auto [stride, size] : dims) {
    if (stride <= span) return false;
    span += (size - 1) * stride;
  }
  return true;
}

// The gradient of a strided view: the view's region of a zero tensor laid out like self.
std::vector<Tensor> as_strided_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const Tensor& g = a.grad_outputs[0];
  const std::vector<int64_t> size = a.inputs[1].to_int_list();
  const std::vector<int64_t> stride = a.inputs[2].to_int_list();
  const int64_t offset = a.inputs[3].is_none() ? self.storage_offset() : a.inputs[3].to_int();
  KILN_CHECK(self.impl()->is_non_overlapping_and_dense() && view_is_overlap_free(size, stride),
             "as_strided: the backward pass needs a dense input (sizes [{}], strides [{}]) and "
             "a view whose elements do not overlap (sizes [{}], strides [{}])",
             fmt::join(self.sizes(), ", "), fmt::join(self.strides(), ", "), fmt::join(size, ", "),
             fmt::join(stride, ", "));
  Tensor grad = empty_strided(self.sizes(), self.strides(), g.options());
  grad.zero_();
  as_strided(grad, size, stride, offset - self.storage_offset()).copy_(g);
  return {grad};
}

using IV = std::vector<int64_t>;

}  // namespace

KILN_OP(
    "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) "
    "-> Tensor(a)")
    .view(as_strided_meta)
    .derivative(as_strided_derivative, DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({4, 4}, kFloat32), IV{4}, IV{5}}, "diagonal"},
          {{make_sample({12}, kFloat32), IV{3, 3}, IV{3, 1}, int64_t{2}}, "overlapping, offset"},
          {{make_sample({3, 4}, kFloat64), IV{2, 3}, IV{1, 2}}, "column-major"},
          {{make_sample({5}, kInt64), IV{2, 3}, IV{0, 1}}, "stride 0"},
          {{make_sample({5}, kFloat32), IV{}, IV{}, int64_t{4}}, "0-dim"},
          {{make_sample({5}, kFloat32), IV{0, 3}, IV{3, 1}}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor as_strided(const Tensor& self, IntList size, IntList stride,
                  std::optional<int64_t> storage_offset, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("as_strided");
  return ops::call1(op, {self, size, stride, storage_offset}, &loc);
}

}  // namespace kiln
