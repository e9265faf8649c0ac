// permute, transpose, t, movedim, squeeze, unsqueeze, diagonal: views that reorder, drop or add
// dimensions without changing which elements are visible (diagonal picks a strided subset).
#include "ops/samples.h"
#include "ops/view/view_utils.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

#include <algorithm>

namespace kiln::ops {

using namespace view_detail;

namespace {

std::string list_str(const std::vector<int64_t>& v) {
  return fmt::format("[{}]", fmt::join(v, ", "));
}

std::vector<TensorMeta> permute_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  std::vector<int64_t> dims = args[1].to_int_list();
  const int64_t ndim = self.dim();
  KILN_CHECK(static_cast<int64_t>(dims.size()) == ndim,
             "permute: number of dims don't match in permute: input.dim() = {} is not equal to "
             "len(dims) = {} (dims {})",
             ndim, dims.size(), list_str(dims));
  SymIntList sizes = self.sym_sizes();
  SymIntList strides = self.sym_strides();
  SymDimVector new_sizes(dims.size()), new_strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<size_t>(wrap_dim(dims[i], ndim, "permute"));
    KILN_CHECK(!seen[d], "permute: duplicate dims are not allowed (dims {})", list_str(dims));
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

// Keeps the dims not marked for removal (only size-1 dims are ever removed).
std::vector<TensorMeta> squeeze_marked(const Tensor& self, const std::vector<bool>& remove) {
  SymIntList sizes = self.sym_sizes();
  SymIntList strides = self.sym_strides();
  SymDimVector new_sizes, new_strides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (remove[d] && sizes[d] == 1) continue;
    new_sizes.push_back(sizes[d]);
    new_strides.push_back(strides[d]);
  }
  return one_view(self, std::move(new_sizes), std::move(new_strides),
                  self.impl()->sym_storage_offset());
}

std::vector<TensorMeta> squeeze_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  return squeeze_marked(self, std::vector<bool>(static_cast<size_t>(self.dim()), true));
}

std::vector<TensorMeta> squeeze_dim_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  std::vector<bool> remove(static_cast<size_t>(self.dim()), false);
  int64_t d = wrap_dim(args[1].to_int(), self.dim(), "squeeze");
  if (self.dim() > 0) remove[static_cast<size_t>(d)] = true;
  return squeeze_marked(self, remove);
}

std::vector<TensorMeta> squeeze_dims_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  std::vector<int64_t> dims = args[1].to_int_list();
  std::vector<bool> remove(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  for (int64_t dim : dims) {
    const auto d = static_cast<size_t>(wrap_dim(dim, self.dim(), "squeeze"));
    KILN_CHECK(!remove[d], "squeeze: dim {} appears multiple times in the list of dims {}", d,
               list_str(dims));
    remove[d] = true;
  }
  remove.resize(static_cast<size_t>(self.dim()));
  return squeeze_marked(self, remove);
}

std::vector<TensorMeta> unsqueeze_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t ndim = self.dim();
  const int64_t d = wrap_dim(args[1].to_int(), ndim + 1, "unsqueeze");
  SymDimVector sizes = self.sym_sizes().vec();
  SymDimVector strides = self.sym_strides().vec();
  // The new dim's stride is what the next outer dim would step by (1 at the end), as PyTorch.
  SymInt stride = d >= ndim ? SymInt(int64_t{1})
                            : sizes[static_cast<size_t>(d)] * strides[static_cast<size_t>(d)];
  sizes.insert(sizes.begin() + d, SymInt(int64_t{1}));
  strides.insert(strides.begin() + d, stride);
  return one_view(self, std::move(sizes), std::move(strides), self.impl()->sym_storage_offset());
}

// The permutation that moves dims source[i] to destination[i], other dims keeping their order.
std::vector<int64_t> movedim_permutation(int64_t ndim, const std::vector<int64_t>& source,
                                         const std::vector<int64_t>& destination) {
  KILN_CHECK(source.size() == destination.size(),
             "movedim: Invalid source or destination dims: source ({} dims) should contain the "
             "same number of dims as destination ({} dims)",
             list_str(source), list_str(destination));
  const auto n = static_cast<size_t>(std::max<int64_t>(ndim, 1));
  std::vector<int64_t> perm(n, -1);
  std::vector<bool> src_used(n, false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], ndim, "movedim");
    const int64_t d = wrap_dim(destination[i], ndim, "movedim");
    KILN_CHECK(!src_used[static_cast<size_t>(s)], "movedim: repeated dim in `source` ({})",
               list_str(source));
    KILN_CHECK(perm[static_cast<size_t>(d)] == -1, "movedim: repeated dim in `destination` ({})",
               list_str(destination));
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

std::vector<TensorMeta> diagonal_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const int64_t offset = args[1].to_int();
  const int64_t ndim = self.dim();
  const int64_t d1 = wrap_dim(args[2].to_int(), ndim, "diagonal");
  const int64_t d2 = wrap_dim(args[3].to_int(), ndim, "diagonal");
  KILN_CHECK(d1 != d2, "diagonal: dimensions cannot be identical {}, {}", args[2].to_int(),
             args[3].to_int());
  SymDimVector sizes = self.sym_sizes().vec();
  SymDimVector strides = self.sym_strides().vec();
  const SymInt size1 = sizes[static_cast<size_t>(d1)];
  const SymInt size2 = sizes[static_cast<size_t>(d2)];
  const SymInt stride1 = strides[static_cast<size_t>(d1)];
  const SymInt stride2 = strides[static_cast<size_t>(d2)];
  SymInt diag = offset >= 0 ? std::min(size1, size2 - offset) : std::min(size1 + offset, size2);
  if (diag < 0) diag = 0;
  SymInt storage_offset = self.impl()->sym_storage_offset();
  // An offset past the end gives an empty diagonal; leave the offset alone then.
  if (diag != 0) {
    storage_offset =
        offset >= 0 ? storage_offset + stride2 * offset : storage_offset - stride1 * offset;
  }
  sizes.erase(sizes.begin() + std::max(d1, d2));
  sizes.erase(sizes.begin() + std::min(d1, d2));
  strides.erase(strides.begin() + std::max(d1, d2));
  strides.erase(strides.begin() + std::min(d1, d2));
  sizes.push_back(diag);
  strides.push_back(stride1 + stride2);
  return one_view(self, std::move(sizes), std::move(strides), std::move(storage_offset));
}

using IV = std::vector<int64_t>;

}  // namespace

KILN_OP("permute(Tensor(a) self, int[] dims) -> Tensor(a)").view(permute_meta).samples([] {
  return std::vector<Sample>{
      {{make_sample({2, 3, 4}, kFloat32), IV{2, 0, 1}}, "3-D"},
      {{make_sample({2, 3, 4}, kFloat64), IV{-1, -3, 1}}, "negative dims"},
      {{make_noncontiguous_sample({3, 4}, kInt32), IV{1, 0}}, "non-contiguous"},
      {{make_sample({}, kFloat32), IV{}}, "0-dim"},
      {{make_sample({0, 2}, kFloat32), IV{1, 0}}, "empty"},
  };
});

KILN_OP("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
    .view(transpose_meta)
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

KILN_OP("squeeze(Tensor(a) self) -> Tensor(a)").view(squeeze_meta).samples([] {
  return std::vector<Sample>{
      {{make_sample({1, 3, 1, 4}, kFloat32)}, "several size-1 dims"},
      {{make_sample({4, 1, 3}, kFloat32).transpose(0, 2)}, "transposed"},
      {{make_sample({1, 1}, kFloat64)}, "all size 1"},
      {{make_sample({}, kFloat32)}, "0-dim"},
      {{make_sample({0, 1}, kFloat32)}, "empty"},
  };
});

KILN_OP("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)").view(squeeze_dim_meta).samples([] {
  return std::vector<Sample>{
      {{make_sample({3, 1, 4}, kFloat32), int64_t{1}}, "size-1 dim"},
      {{make_sample({3, 1, 4}, kFloat32), int64_t{0}}, "non-1 dim: unchanged"},
      {{make_sample({3, 1}, kInt64), int64_t{-1}}, "negative dim"},
      {{make_sample({}, kFloat32), int64_t{0}}, "0-dim"},
  };
});

KILN_OP("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)").view(squeeze_dims_meta).samples([] {
  return std::vector<Sample>{
      {{make_sample({1, 3, 1, 4}, kFloat32), IV{0, 2}}, "two size-1 dims"},
      {{make_sample({1, 3, 1}, kFloat64), IV{-1, 1}}, "one non-1 dim kept"},
      {{make_sample({}, kFloat32), IV{0}}, "0-dim"},
      {{make_sample({1, 0}, kFloat32), IV{0, 1}}, "empty"},
  };
});

KILN_OP("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)").view(unsqueeze_meta).samples([] {
  return std::vector<Sample>{
      {{make_sample({3, 4}, kFloat32), int64_t{0}}, "front"},
      {{make_sample({3, 4}, kFloat32), int64_t{-1}}, "back"},
      {{make_noncontiguous_sample({3, 4}, kFloat64), int64_t{1}}, "middle, non-contiguous"},
      {{make_sample({}, kInt32), int64_t{0}}, "0-dim"},
      {{make_sample({0, 3}, kFloat32), int64_t{1}}, "empty"},
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

KILN_OP("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)")
    .view(diagonal_meta)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({4, 4}, kFloat32)}, "square"},
          {{make_sample({3, 5}, kFloat32), int64_t{2}}, "positive offset"},
          {{make_sample({5, 3}, kFloat64), int64_t{-1}}, "negative offset"},
          {{make_sample({2, 3, 4}, kFloat32), int64_t{1}, int64_t{-1}, int64_t{0}},
           "3-D, negative dim"},
          {{make_noncontiguous_sample({3, 3}, kInt32)}, "non-contiguous"},
          {{make_sample({3, 3}, kFloat32), int64_t{5}}, "offset past the end"},
          {{make_sample({0, 3}, kFloat32)}, "empty"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor permute(const Tensor& self, IntList dims) {
  static const auto& op = ops::OpRegistry::instance().get("permute");
  return ops::call1(op, {self, dims});
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  static const auto& op = ops::OpRegistry::instance().get("transpose.int");
  return ops::call1(op, {self, dim0, dim1});
}

Tensor t(const Tensor& self) {
  static const auto& op = ops::OpRegistry::instance().get("t");
  return ops::call1(op, {self});
}

Tensor squeeze(const Tensor& self) {
  static const auto& op = ops::OpRegistry::instance().get("squeeze");
  return ops::call1(op, {self});
}

Tensor squeeze(const Tensor& self, int64_t dim) {
  static const auto& op = ops::OpRegistry::instance().get("squeeze.dim");
  return ops::call1(op, {self, dim});
}

Tensor squeeze(const Tensor& self, IntList dims) {
  static const auto& op = ops::OpRegistry::instance().get("squeeze.dims");
  return ops::call1(op, {self, dims});
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  static const auto& op = ops::OpRegistry::instance().get("unsqueeze");
  return ops::call1(op, {self, dim});
}

Tensor movedim(const Tensor& self, IntList source, IntList destination) {
  static const auto& op = ops::OpRegistry::instance().get("movedim.intlist");
  return ops::call1(op, {self, source, destination});
}

Tensor movedim(const Tensor& self, int64_t source, int64_t destination) {
  static const auto& op = ops::OpRegistry::instance().get("movedim.int");
  return ops::call1(op, {self, source, destination});
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  static const auto& op = ops::OpRegistry::instance().get("diagonal");
  return ops::call1(op, {self, offset, dim1, dim2});
}

}  // namespace kiln
