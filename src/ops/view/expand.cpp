// expand, expand_as, broadcast_to, broadcast_tensors: views that repeat size-1 dims with stride 0.
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

namespace kiln::ops {

using namespace view_detail;

namespace {

std::vector<TensorMeta> expand_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  SymDimVector target = args[1].to_sym_int_list();
  SymIntList sizes = self.sym_sizes();
  SymIntList strides = self.sym_strides();
  const auto ndim = static_cast<int64_t>(target.size());
  const int64_t self_ndim = self.dim();
  KILN_CHECK(ndim >= self_ndim,
             "expand: the number of sizes provided ({}) must be greater or equal to the number of "
             "dimensions in the tensor ({}). Target sizes: {}. Tensor sizes: {}",
             ndim, self_ndim, shape_str(target), shape_str(sizes));
  SymDimVector out_sizes(target.size()), out_strides(target.size());
  // From the innermost dim out; new leading dims behave like existing size-1 dims. A 0-dim
  // input gets all-zero strides (PyTorch's rule), hence the 0 seed for its innermost dim.
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const auto ui = static_cast<size_t>(i);
    const int64_t d = self_ndim - (ndim - i);
    const auto ud = static_cast<size_t>(d);
    SymInt size = d >= 0 ? sizes[ud] : SymInt(int64_t{1});
    SymInt stride =
        d >= 0 ? strides[ud]
               : (i + 1 < ndim ? out_sizes[ui + 1] * out_strides[ui + 1] : SymInt(int64_t{0}));
    SymInt want = target[ui];
    if (want == -1) {
      KILN_CHECK(d >= 0,
                 "expand: the expanded size of the tensor (-1) isn't allowed in a leading, "
                 "non-existing dimension {}. Target sizes: {}. Tensor sizes: {}",
                 i, shape_str(target), shape_str(sizes));
      want = size;
    }
    KILN_CHECK(want >= 0,
               "expand: the expanded size {} at dimension {} is invalid. Target sizes: {}",
               want.str(), i, shape_str(target));
    if (size != want) {
      KILN_CHECK(size == 1,
                 "expand: the expanded size of the tensor ({}) must match the existing size ({}) "
                 "at non-singleton dimension {}. Target sizes: {}. Tensor sizes: {}",
                 want.str(), size.str(), i, shape_str(target), shape_str(sizes));
      size = want;
      stride = 0;
    }
    out_sizes[ui] = size;
    out_strides[ui] = stride;
  }
  return one_view(self, std::move(out_sizes), std::move(out_strides),
                  self.impl()->sym_storage_offset());
}

const OpDef& expand_op() {
  static const OpDef& op = OpRegistry::instance().get("expand");
  return op;
}

std::vector<Tensor> broadcast_tensors_composite(const Stack& args) {
  const std::vector<Tensor>& tensors = args[0].to_tensor_list();
  std::vector<SymDimVector> shapes;
  shapes.reserve(tensors.size());
  for (const Tensor& t : tensors) shapes.push_back(t.sym_sizes().vec());
  SymDimVector shape = broadcast_sym_shapes(shapes, "broadcast_tensors");
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(call1(expand_op(), {t, shape}));
  return out;
}

using IV = std::vector<int64_t>;

}  // namespace

KILN_OP("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {a.grad_outputs[0]};  // the engine sums it over the expanded dims
        },
        DerivativeReads::Nothing)
    .view(expand_meta)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 1}, kFloat32), IV{3, 4}}, "size-1 dim"},
          {{make_sample({3}, kFloat32), IV{2, 3}}, "new leading dim"},
          {{make_sample({1, 3}, kFloat64), IV{2, -1, -1}}, "-1 keeps dims"},
          {{make_noncontiguous_sample({1, 3}, kInt64), IV{4, 3}}, "non-contiguous"},
          {{make_sample({}, kFloat32), IV{2, 2}}, "0-dim"},
          {{make_sample({1, 3}, kFloat32), IV{0, 3}}, "to empty"},
      };
    });

KILN_OP("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)")
    .composite([](const Stack& args) {
      return call(expand_op(), {args[0], args[1].to_tensor().sym_sizes()});
    })
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 1}, kFloat32), make_sample({2, 3, 4}, kFloat32)}, "broadcast"},
          {{make_sample({}, kFloat64), make_sample({2}, kFloat64)}, "0-dim"},
      };
    });

KILN_OP("broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    .composite([](const Stack& args) {
      return call(expand_op(), {args[0], args[1]});
    })
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({1, 4}, kFloat32), IV{3, 4}}, "size-1 dim"},
          {{make_sample({4}, kInt32), IV{2, 3, 4}}, "new leading dims"},
          {{make_sample({}, kFloat32), IV{}}, "0-dim to 0-dim"},
      };
    });

KILN_OP("broadcast_tensors(Tensor[] tensors) -> Tensor[]")
    .composite(broadcast_tensors_composite)
    .samples([] {
      return std::vector<Sample>{
          {{std::vector<Tensor>{make_sample({3, 1}, kFloat32), make_sample({4}, kFloat32)}}, "two"},
          {{std::vector<Tensor>{make_sample({2, 1, 3}, kFloat64), make_sample({}, kFloat64),
                                make_sample({5, 1}, kFloat64)}},
           "three with 0-dim"},
          {{std::vector<Tensor>{make_sample({0, 1}, kFloat32), make_sample({1, 3}, kFloat32)}},
           "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor expand(const Tensor& self, IntList size, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("expand");
  return ops::call1(op, {self, size}, &loc);
}

Tensor expand_as(const Tensor& self, const Tensor& other, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("expand_as");
  return ops::call1(op, {self, other}, &loc);
}

Tensor broadcast_to(const Tensor& self, IntList size, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("broadcast_to");
  return ops::call1(op, {self, size}, &loc);
}

std::vector<Tensor> broadcast_tensors(TensorList tensors, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("broadcast_tensors");
  return ops::call(op, {tensors}, &loc);
}

}  // namespace kiln
