// nonzero, argwhere and masked_select: ops whose output length is the number of true (nonzero)
// elements, known only from the data. They make their own outputs (Custom ops) and have no meta
// kernel: on the meta device they raise (a graph break for the compiler).
#include "ops/indexing/advanced_index.h"
#include "ops/indexing/strided_loop.h"
#include "ops/iterator/tensor_iterator.h"
#include "ops/reduction/reduce_meta.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

namespace kiln::ops {
namespace {

using namespace indexing;

// The number of nonzero elements of t (any layout).
int64_t count_nonzero(const Tensor& t) {
  int64_t count = 0;
  const int64_t s = t.dim() == 0 ? 0 : t.stride(-1);
  KILN_DISPATCH_ALL(t.dtype(), "nonzero", [&]<typename T>() {
    const T* data = t.data_ptr<T>();
    strided::for_each_row<1>(t.sizes(), {t.strides()},
                             [&](const std::array<int64_t, 1>& off, int64_t n) {
                               const T* p = data + off[0];
                               for (int64_t j = 0; j < n; ++j) count += p[j * s] != T(0);
                             });
  });
  return count;
}

std::vector<Tensor> nonzero_cpu(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t ndim = self.dim();
  Tensor out = empty({count_nonzero(self), ndim}, kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  IntList sizes = self.sizes();
  const int64_t s = ndim == 0 ? 0 : self.stride(-1);
  // Rows in row-major order; a row with a nonzero element writes its outer coordinates (decoded
  // from the row number) and the element's position in the row.
  int64_t row = 0;
  DimVector outer(static_cast<size_t>(std::max<int64_t>(ndim - 1, 0)), 0);
  KILN_DISPATCH_ALL(self.dtype(), "nonzero", [&]<typename T>() {
    const T* data = self.data_ptr<T>();
    strided::for_each_row<1>(
        sizes, {self.strides()}, [&](const std::array<int64_t, 1>& off, int64_t n) {
          const T* p = data + off[0];
          int64_t rest = row++;
          for (int64_t d = ndim - 2; d >= 0; --d) {
            outer[static_cast<size_t>(d)] = rest % sizes[static_cast<size_t>(d)];
            rest /= sizes[static_cast<size_t>(d)];
          }
          for (int64_t j = 0; j < n; ++j) {
            if (p[j * s] == T(0)) continue;
            for (int64_t d = 0; d + 1 < ndim; ++d) o[d] = outer[static_cast<size_t>(d)];
            if (ndim > 0) o[ndim - 1] = j;
            o += ndim;
          }
        });
  });
  return {out};
}

std::vector<Tensor> no_meta_nonzero(const Stack&) { fail_data_dependent("nonzero"); }
std::vector<Tensor> no_meta_masked_select(const Stack&) { fail_data_dependent("masked_select"); }

std::vector<Tensor> masked_select_cpu(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& mask = args[1].to_tensor();
  KILN_CHECK_T(TypeError, mask.dtype() == DType::Bool,
               "masked_select(): expected BoolTensor for mask, got {}",
               torch_type_name(mask.dtype()));
  const std::vector<Tensor> both = broadcast_tensors({self, mask});
  const Tensor& s = both[0];
  const Tensor& m = both[1];
  Tensor out = empty({count_nonzero(m)}, self.dtype());
  const int64_t ss = s.dim() == 0 ? 0 : s.stride(-1), ms = m.dim() == 0 ? 0 : m.stride(-1);
  const bool* mask_data = m.data_ptr<bool>();
  strided::dispatch_by_size(s.itemsize(), [&]<typename E>() {
    E* o = static_cast<E*>(out.data_ptr());
    const E* in = static_cast<const E*>(s.data_ptr());
    strided::for_each_row<2>(s.sizes(), {s.strides(), m.strides()},
                             [&](const std::array<int64_t, 2>& off, int64_t n) {
                               const E* row = in + off[0];
                               const bool* mrow = mask_data + off[1];
                               for (int64_t j = 0; j < n; ++j) {
                                 if (mrow[j * ms]) *o++ = row[j * ss];
                               }
                             });
  });
  return {out};
}

// The flattened self, broadcast against the mask, indexed by the flattened mask (index.Tensor
// with a bool mask, the data-dependent prim).
std::vector<Tensor> masked_select_decomposition(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const Tensor& mask = args[1].to_tensor();
  KILN_CHECK_T(TypeError, mask.dtype() == DType::Bool,
               "masked_select(): expected BoolTensor for mask, got {}",
               torch_type_name(mask.dtype()));
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_select");
  return {self.expand(shape).reshape({-1}).index({mask.expand(shape).reshape({-1})})};
}

// The selected elements' gradients go back to their positions (in the broadcast shape; the
// engine sums them back to self's).
std::vector<Tensor> masked_select_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const Tensor& mask = a.inputs[1].to_tensor();
  const Tensor broadcast_mask = broadcast_tensors({a.inputs[0].to_tensor(), mask})[1];
  const Tensor flat_mask = broadcast_mask.reshape({-1});
  return {zeros({flat_mask.numel()}, g.options())
              .index_put({flat_mask}, g)
              .reshape(broadcast_mask.sizes()),
          Tensor()};
}

Tensor bool_tensor(std::vector<int64_t> values, IntList shape) {
  return from_vector(values, shape).to(kBool);
}

}  // namespace

KILN_OP("nonzero(Tensor self) -> Tensor")
    .custom(DeviceType::CPU, nonzero_cpu)
    .custom(DeviceType::Meta, no_meta_nonzero)
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kInt64, -1, 2)}, "2-D int"},
          {{make_noncontiguous_sample({4, 3}, kFloat32, -1, 2).round()}, "non-contiguous float"},
          {{make_sample({2, 3, 2}, kBool)}, "3-D bool"},
          {{make_sample({7}, kFloat64, 0, 1).round()}, "1-D"},
          {{make_sample({}, kFloat32, 1, 2)}, "0-dim nonzero"},
          {{zeros({}, kInt32)}, "0-dim zero"},
          {{make_sample({0, 3}, kFloat32)}, "empty"},
      };
    });

KILN_OP("argwhere(Tensor self) -> Tensor")
    .composite([](const Stack& args) { return std::vector<Tensor>{nonzero(args[0].to_tensor())}; })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kInt32, -1, 2)}, "2-D"},
          {{make_sample({}, kBool)}, "0-dim"},
      };
    });

KILN_OP("masked_select(Tensor self, Tensor mask) -> Tensor")
    .derivative(masked_select_derivative)
    .custom(DeviceType::CPU, masked_select_cpu)
    .custom(DeviceType::Meta, no_meta_masked_select)
    .decomposition(masked_select_decomposition)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), make_sample({3, 4}, kBool)}, "same shape"},
          {{make_sample({3, 4}, kFloat64), bool_tensor({1, 0, 0, 1}, {4})}, "mask broadcast"},
          {{make_sample({3, 1}, kInt64), make_sample({2, 3, 4}, kBool)}, "both broadcast"},
          {{make_noncontiguous_sample({4, 3}, kFloat32), make_noncontiguous_sample({4, 3}, kBool)},
           "non-contiguous"},
          {{make_sample({}, kFloat32), bool_tensor({1}, {})}, "0-dim"},
          {{make_sample({0, 2}, kFloat32), make_sample({2}, kBool)}, "empty"},
          {{make_sample({3}, kFloat32), make_sample({3}, kInt64, 0, 2)}, "int mask"},
          {{make_sample({3}, kFloat32), make_sample({4}, kBool)}, "not broadcastable"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor nonzero(const Tensor& self, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("nonzero");
  return ops::call1(op, {self}, &loc);
}
Tensor argwhere(const Tensor& self, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("argwhere");
  return ops::call1(op, {self}, &loc);
}
Tensor masked_select(const Tensor& self, const Tensor& mask, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("masked_select");
  return ops::call1(op, {self, mask}, &loc);
}

Tensor Tensor::nonzero(const kiln::SourceLocation& loc) const { return kiln::nonzero(*this, loc); }
Tensor Tensor::masked_select(const Tensor& mask, const kiln::SourceLocation& loc) const {
  return kiln::masked_select(*this, mask, loc);
}

}  // namespace kiln
