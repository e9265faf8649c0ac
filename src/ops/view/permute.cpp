// permute, transpose, t, movedim: views that reorder dimensions.
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

#include <algorithm>

namespace kiln::ops {

using namespace view_detail;

namespace {

std::vector<TensorMeta> permute_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  std::vector<int64_t> dims = args[1].to_int_list();
  const int64_t ndim = self.dim();
  KILN_CHECK(static_cast<int64_t>(dims.size()) == ndim,
             "permute: number of dims don't match in permute: input.dim() = {} is not equal to "
             "len(dims) = {} (dims {})",
             ndim, dims.size(), ints_str(dims));
  SymIntList sizes = self.sym_sizes();
  SymIntList strides = self.sym_strides();
  SymDimVector new_sizes(dims.size()), new_strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<size_t>(wrap_dim(dims[i], ndim, "permute"));
    KILN_CHECK(!seen[d], "permute: duplicate dims are not allowed (dims {})", ints_str(dims));
    seen[d] = true;
    new_sizes[i] = sizes[d];
    new_strides[i] = strides[d];
  }
  return one_view(self, std::move(new_sizes), std::move(new_strides),
                  self.impl()->sym_storage_offset());
}

std::vector<TensorMeta> transpose_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t ndim = self.dim();
  const auto d0 = static_cast<size_t>(wrap_dim(args[1].to_int(), ndim, "transpose"));
  const auto d1 = static_cast<size_t>(wrap_dim(args[2].to_int(), ndim, "transpose"));
  SymDimVector sizes = self.sym_sizes().vec();
  SymDimVector strides = self.sym_strides().vec();
  if (ndim > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  return one_view(self, std::move(sizes), std::move(strides), self.impl()->sym_storage_offset());
}

std::vector<Tensor> t_composite(const Stack& args) {
  static const OpDef& transpose = OpRegistry::instance().get("transpose.int");
  const Tensor& self = args[0].to_tensor();
  KILN_CHECK(self.dim() <= 2, "t: expects a tensor with <= 2 dimensions, but self is {}D",
             self.dim());
  return call(transpose, {self, int64_t{0}, int64_t{self.dim() < 2 ? 0 : 1}});
}

// The permutation that moves dims source[i] to destination[i], other dims keeping their order.
std::vector<int64_t> movedim_permutation(int64_t ndim, const std::vector<int64_t>& source,
                                         const std::vector<int64_t>& destination) {
  KILN_CHECK(source.size() == destination.size(),
             "movedim: Invalid source or destination dims: source ({} dims) should contain the "
             "same number of dims as destination ({} dims)",
             ints_str(source), ints_str(destination));
  const auto n = static_cast<size_t>(std::max<int64_t>(ndim, 1));
  std::vector<int64_t> perm(n, -1);
  std::vector<bool> src_used(n, false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], ndim, "movedim");
    const int64_t d = wrap_dim(destination[i], ndim, "movedim");
    KILN_CHECK(!src_used[static_cast<size_t>(s)], "movedim: repeated dim in `source` ({})",
               ints_str(source));
    KILN_CHECK(perm[static_cast<size_t>(d)] == -1, "movedim: repeated dim in `destination` ({})",
               ints_str(destination));
    src_used[static_cast<size_t>(s)] = true;
    perm[static_cast<size_t>(d)] = s;
  }
  int64_t next_src = 0;
  for (int64_t& p : perm) {
    if (p != -1) continue;
    while (src_used[static_cast<size_t>(next_src)]) ++next_src;
    p = next_src++;
  }
  perm.resize(static_cast<size_t>(ndim));
  return perm;
}

std::vector<Tensor> movedim_composite(const Stack& args) {
  static const OpDef& permute = OpRegistry::instance().get("permute");
  const Tensor& self = args[0].to_tensor();
  return call(permute, {self, movedim_permutation(self.dim(), args[1].to_int_list(),
                                                  args[2].to_int_list())});
}

// transpose as the permute prim: the identity permutation with the two dims swapped.
std::vector<Tensor> transpose_decomposition(const Stack& args) {
  static const OpDef& permute = OpRegistry::instance().get("permute");
  const Tensor& self = args[0].to_tensor();
  const int64_t ndim = self.dim();
  const int64_t d0 = wrap_dim(args[1].to_int(), ndim, "transpose");
  const int64_t d1 = wrap_dim(args[2].to_int(), ndim, "transpose");
  std::vector<int64_t> perm(static_cast<size_t>(ndim));
  for (int64_t d = 0; d < ndim; ++d) perm[static_cast<size_t>(d)] = d;
  if (ndim > 0) std::swap(perm[static_cast<size_t>(d0)], perm[static_cast<size_t>(d1)]);
  return call(permute, {self, perm});
}

using IV = std::vector<int64_t>;

}  // namespace

KILN_OP("permute(Tensor(a) self, int[] dims) -> Tensor(a)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          const std::vector<int64_t> dims = a.inputs[1].to_int_list();
          const auto n = static_cast<int64_t>(dims.size());
          std::vector<int64_t> inverse(dims.size());
          for (int64_t i = 0; i < n; ++i)
            inverse[static_cast<size_t>(wrap_dim(dims[static_cast<size_t>(i)], n))] = i;
          return {a.grad_outputs[0].permute(inverse)};
        },
        DerivativeReads::Nothing)
    .view(permute_meta)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 3, 4}, kFloat32), IV{2, 0, 1}}, "3-D"},
          {{make_sample({2, 3, 4}, kFloat64), IV{-1, -3, 1}}, "negative dims"},
          {{make_noncontiguous_sample({3, 4}, kInt32), IV{1, 0}}, "non-contiguous"},
          {{make_sample({}, kFloat32), IV{}}, "0-dim"},
          {{make_sample({0, 2}, kFloat32), IV{1, 0}}, "empty"},
      };
    });

KILN_OP("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          return {a.grad_outputs[0].transpose(a.inputs[1].to_int(), a.inputs[2].to_int())};
        },
        DerivativeReads::Nothing)
    .view(transpose_meta)
    .decomposition(transpose_decomposition)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), int64_t{0}, int64_t{1}}, "2-D"},
          {{make_sample({2, 3, 4}, kFloat64), int64_t{-1}, int64_t{0}}, "3-D negative dim"},
          {{make_noncontiguous_sample({3, 4}, kInt64), int64_t{1}, int64_t{1}}, "same dim"},
          {{make_sample({}, kFloat32), int64_t{0}, int64_t{-1}}, "0-dim"},
          {{make_sample({0, 3}, kFloat32), int64_t{0}, int64_t{1}}, "empty"},
      };
    });

KILN_OP("t(Tensor(a) self) -> Tensor(a)").composite(t_composite).samples([] {
  return std::vector<Sample>{
      {{make_sample({3, 4}, kFloat32)}, "2-D"},
      {{make_sample({5}, kFloat32)}, "1-D"},
      {{make_sample({}, kFloat64)}, "0-dim"},
      {{make_noncontiguous_sample({2, 3}, kInt32)}, "non-contiguous"},
      {{make_sample({0, 2}, kFloat32)}, "empty"},
  };
});

KILN_OP("movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)")
    .composite(movedim_composite)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 3, 4, 5}, kFloat32), IV{0, 1}, IV{2, 3}}, "two dims"},
          {{make_sample({2, 3, 4}, kFloat64), IV{-1}, IV{0}}, "negative dim"},
          {{make_noncontiguous_sample({2, 3}, kInt64), IV{0}, IV{1}}, "non-contiguous"},
          {{make_sample({}, kFloat32), IV{0}, IV{0}}, "0-dim"},
          {{make_sample({0, 2, 3}, kFloat32), IV{2, 0}, IV{0, 2}}, "empty"},
      };
    });

KILN_OP("movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)")
    .composite([](const Stack& args) {
      return movedim_composite({args[0], IV{args[1].to_int()}, IV{args[2].to_int()}});
    })
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 3, 4}, kFloat32), int64_t{0}, int64_t{2}}, "front to back"},
          {{make_sample({2, 3, 4}, kFloat32), int64_t{-1}, int64_t{1}}, "negative source"},
          {{make_sample({0, 3}, kFloat32), int64_t{1}, int64_t{0}}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor permute(const Tensor& self, IntList dims, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("permute");
  return ops::call1(op, {self, dims}, &loc);
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("transpose.int");
  return ops::call1(op, {self, dim0, dim1}, &loc);
}

Tensor t(const Tensor& self, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("t");
  return ops::call1(op, {self}, &loc);
}

Tensor movedim(const Tensor& self, IntList source, IntList destination,
               const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("movedim.intlist");
  return ops::call1(op, {self, source, destination}, &loc);
}

Tensor movedim(const Tensor& self, int64_t source, int64_t destination,
               const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("movedim.int");
  return ops::call1(op, {self, source, destination}, &loc);
}

}  // namespace kiln
