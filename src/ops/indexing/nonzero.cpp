// nonzero, argwhere and masked_select: ops whose output length is the number of true (nonzero)
// elements, known only from the data. They make their own outputs (Custom ops) and have no meta
// kernel: on the meta device they raise (a graph break for the compiler).
#include "ops/indexing/advanced_index.h"
#include "ops/indexing/strided_loop.h"
#include "ops/reduction/reduce_meta.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

#include <numeric>

namespace kiln::ops {
namespace {

using namespace indexing;

// Whether each element of t (any layout) is nonzero, in row-major order, as bytes.
std::vector<uint8_t> truth_values(const Tensor& t) {
  std::vector<uint8_t> truth(static_cast<size_t>(t.numel()));
  const DimVector positions = contiguous_strides(t.sizes());
  KILN_DISPATCH_ALL(t.dtype(), "nonzero", [&]<typename T>() {
    const T* p = t.data_ptr<T>();
    strided::for_each_parallel<2>(t.sizes(), {t.strides(), IntList(positions)},
                                  [&](const std::array<int64_t, 2>& off) {
                                    truth[static_cast<size_t>(off[1])] = p[off[0]] != T(0);
                                  });
  });
  return truth;
}

std::vector<Tensor> nonzero_cpu(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const std::vector<uint8_t> truth = truth_values(self);
  const int64_t n = std::accumulate(truth.begin(), truth.end(), int64_t{0});
  const int64_t ndim = self.dim();
  Tensor out = empty({n, ndim}, kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  IntList sizes = self.sizes();
  // Walk the coordinates in row-major order, writing those of the true elements.
  DimVector coord(static_cast<size_t>(ndim), 0);
  for (size_t i = 0; i < truth.size(); ++i) {
    if (truth[i]) {
      for (int64_t d = 0; d < ndim; ++d) *o++ = coord[static_cast<size_t>(d)];
    }
    for (int64_t d = ndim - 1; d >= 0; --d) {
      const auto ud = static_cast<size_t>(d);
      if (++coord[ud] < sizes[ud]) break;
      coord[ud] = 0;
    }
  }
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
  const std::vector<uint8_t> truth = truth_values(both[1]);
  const int64_t n = std::accumulate(truth.begin(), truth.end(), int64_t{0});
  Tensor out = empty({n}, self.dtype());
  const DimVector positions = contiguous_strides(s.sizes());
  const size_t item = s.itemsize();
  char* o = static_cast<char*>(out.data_ptr());
  const char* in = static_cast<const char*>(s.data_ptr());
  strided::for_each<2>(s.sizes(), {s.strides(), IntList(positions)},
                       [&](const std::array<int64_t, 2>& off) {
                         if (!truth[static_cast<size_t>(off[1])]) return;
                         strided::copy_element(o, in + off[0] * static_cast<int64_t>(item), item);
                         o += item;
                       });
  return {out};
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
    .custom(DeviceType::CPU, masked_select_cpu)
    .custom(DeviceType::Meta, no_meta_masked_select)
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

Tensor nonzero(const Tensor& self) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("nonzero");
  return ops::call1(op, {self});
}
Tensor argwhere(const Tensor& self) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("argwhere");
  return ops::call1(op, {self});
}
Tensor masked_select(const Tensor& self, const Tensor& mask) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("masked_select");
  return ops::call1(op, {self, mask});
}

Tensor Tensor::nonzero() const { return kiln::nonzero(*this); }
Tensor Tensor::masked_select(const Tensor& mask) const { return kiln::masked_select(*this, mask); }

}  // namespace kiln
