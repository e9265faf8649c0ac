// flip and roll: copies that permute positions along some dims. Both reduce to remap_copy, which
// reads, for each output position along a dim, a source position from a per-dim table.
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/shape.h>
#include <kiln/ops/view.h>

namespace kiln::ops {
namespace {

using strided::identity_map;

std::vector<TensorMeta> same_shape_meta(const Tensor& self) {
  return {TensorMeta::contiguous(self.sym_sizes().vec(), self.dtype(), self.device())};
}

std::vector<bool> flip_dims(const Tensor& self, IntList dims) {
  std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  for (int64_t d : dims) {
    const auto w = static_cast<size_t>(wrap_dim(d, self.dim(), "flip"));
    KILN_CHECK(!flipped[w], "flip: dims has duplicates, dim {} appears more than once in [{}]", w,
               fmt::join(dims, ", "));
    flipped[w] = true;
  }
  return flipped;
}

void flip_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  const std::vector<bool> flipped = flip_dims(self, args[1].to_int_list());
  Tensor target = strided::dense_target(outs[0], self.dtype());
  std::vector<std::vector<int64_t>> maps;
  for (int64_t d = 0; d < self.dim(); ++d) {
    std::vector<int64_t> m = identity_map(self.size(d));
    if (flipped[static_cast<size_t>(d)]) std::reverse(m.begin(), m.end());
    maps.push_back(std::move(m));
  }
  strided::remap_copy(target, self, self.strides(), maps);
  strided::commit(outs[0], target);
}

// The rolled source position of output position j along a dim of size n.
std::vector<int64_t> roll_map(int64_t n, int64_t shift) {
  std::vector<int64_t> m(static_cast<size_t>(n));
  if (n == 0) return m;
  const int64_t s = ((shift % n) + n) % n;
  for (int64_t j = 0; j < n; ++j) m[static_cast<size_t>(j)] = ((j - s) % n + n) % n;
  return m;
}

void check_roll_args(const Tensor& self, IntList shifts, IntList dims) {
  if (dims.empty()) {
    KILN_CHECK(shifts.size() == 1,
               "roll: shifts and dimensions must align. shifts: {}, dims: 0 (with no dims, "
               "shifts must have one entry)",
               shifts.size());
    return;
  }
  KILN_CHECK(shifts.size() == dims.size(),
             "roll: shifts and dimensions must align. shifts: {}, dims: {}", shifts.size(),
             dims.size());
  for (int64_t d : dims) wrap_dim(d, self.dim(), "roll");
}

std::vector<TensorMeta> roll_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  check_roll_args(self, args[1].to_int_list(), args[2].to_int_list());
  return same_shape_meta(self);
}

void roll_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  const std::vector<int64_t> shifts = args[1].to_int_list();
  const std::vector<int64_t> dims = args[2].to_int_list();
  if (self.numel() == 0) return;
  Tensor target = strided::dense_target(outs[0], self.dtype());
  if (dims.empty()) {
    // Rolls the flattened tensor: the same as rolling a contiguous copy viewed as 1-D.
    Tensor flat = self.reshape({self.numel()});
    strided::remap_copy(target.view({self.numel()}), flat, flat.strides(),
                        {roll_map(self.numel(), shifts[0])});
  } else {
    std::vector<int64_t> total(static_cast<size_t>(self.dim()), 0);
    for (size_t i = 0; i < dims.size(); ++i) {
      total[static_cast<size_t>(wrap_dim(dims[i], self.dim(), "roll"))] += shifts[i];
    }
    std::vector<std::vector<int64_t>> maps;
    for (int64_t d = 0; d < self.dim(); ++d) {
      maps.push_back(roll_map(self.size(d), total[static_cast<size_t>(d)]));
    }
    strided::remap_copy(target, self, self.strides(), maps);
  }
  strided::commit(outs[0], target);
}

// A roll along one dim: the last `shift` elements (mod the size) moved to the front with cat.
Tensor roll_dim(const Tensor& self, int64_t shift, int64_t dim) {
  const int64_t n = self.size(dim);
  if (n == 0) return self;
  const int64_t s = ((shift % n) + n) % n;
  if (s == 0) return self;
  return cat({self.slice(dim, n - s, n), self.slice(dim, 0, n - s)}, dim);
}

std::vector<Tensor> roll_decomposition(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const std::vector<int64_t> shifts = args[1].to_int_list();
  const std::vector<int64_t> dims = args[2].to_int_list();
  check_roll_args(self, shifts, dims);
  if (dims.empty()) {
    return {roll_dim(self.reshape({-1}), shifts[0], 0).clone().view(self.sizes())};
  }
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); ++i) out = roll_dim(out, shifts[i], dims[i]);
  return {out.is_same(self) ? self.clone() : out};
}

using IV = std::vector<int64_t>;

}  // namespace

KILN_OP("flip(Tensor self, int[] dims) -> Tensor")
    .meta([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      flip_dims(self, args[1].to_int_list());
      return same_shape_meta(self);
    })
    .cpu(flip_impl)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {a.grad_outputs[0].flip(a.inputs[1].to_int_list())};
        },
        DerivativeReads::Nothing)
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), IV{0}}, "dim 0"},
          {{make_sample({2, 3, 4}, kFloat64), IV{-1, 0}}, "two dims"},
          {{make_noncontiguous_sample({3, 5}, kInt64), IV{1}}, "non-contiguous"},
          {{make_sample({}, kFloat32), IV{}}, "0-dim"},
          {{make_sample({0, 3}, kFloat32), IV{1}}, "empty"},
          {{make_sample({5}, kBool), IV{0}}, "bool"},
      };
    });

KILN_OP("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor")
    .meta(roll_meta)
    .cpu(roll_impl)
    .decomposition(roll_decomposition)
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // Rolled back by the opposite shifts.
          std::vector<int64_t> shifts = a.inputs[1].to_int_list();
          for (int64_t& s : shifts) s = -s;
          return {a.grad_outputs[0].roll(shifts, a.inputs[2].to_int_list())};
        },
        DerivativeReads::Nothing)
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), IV{1}, IV{1}}, "one dim"},
          {{make_sample({3, 4}, kFloat32), IV{-5}, IV{0}}, "negative shift past size"},
          {{make_sample({2, 3, 4}, kFloat64), IV{1, 2}, IV{0, 2}}, "two dims"},
          {{make_noncontiguous_sample({3, 5}, kInt32), IV{3}, IV{}}, "flattened, non-contiguous"},
          {{make_sample({0, 3}, kFloat32), IV{1}, IV{1}}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor flip(const Tensor& self, IntList dims, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("flip");
  return ops::call1(op, {self, dims}, &loc);
}

Tensor roll(const Tensor& self, IntList shifts, IntList dims, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("roll");
  return ops::call1(op, {self, to_sym(shifts), dims}, &loc);
}

}  // namespace kiln
