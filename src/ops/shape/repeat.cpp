// repeat and tile: copies of a tensor laid side by side along each dim.
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/shape.h>

namespace kiln::ops {
namespace {

std::vector<TensorMeta> repeat_meta(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  const std::vector<SymInt> repeats = args[1].to_sym_int_list();
  const auto ndim = static_cast<int64_t>(repeats.size());
  KILN_CHECK(ndim >= self.dim(),
             "repeat: Number of dimensions of repeat dims ({}) can not be smaller than number of "
             "dimensions of tensor ({})",
             ndim, self.dim());
  SymDimVector sizes(repeats.size());
  const int64_t lead = ndim - self.dim();
  for (int64_t d = 0; d < ndim; ++d) {
    const auto ud = static_cast<size_t>(d);
    KILN_CHECK(repeats[ud] >= 0, "repeat: Trying to create tensor with negative dimension {}",
               repeats[ud].str());
    sizes[ud] =
        d < lead ? repeats[ud] : repeats[ud] * self.sym_sizes()[static_cast<size_t>(d - lead)];
  }
  return {TensorMeta::contiguous(std::move(sizes), self.dtype(), self.device())};
}

void repeat_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const Tensor& self = args[0].to_tensor();
  if (outs[0].numel() == 0) return;
  Tensor target = strided::dense_target(outs[0], self.dtype());
  const int64_t ndim = target.dim();
  const int64_t lead = ndim - self.dim();
  std::vector<std::vector<int64_t>> maps;
  DimVector src_strides;
  for (int64_t d = 0; d < ndim; ++d) {
    std::vector<int64_t> m(static_cast<size_t>(target.size(d)), 0);
    if (d >= lead) {
      const int64_t n = self.size(d - lead);
      for (size_t j = 0; j < m.size(); ++j) m[j] = static_cast<int64_t>(j) % n;
    }
    maps.push_back(std::move(m));
    src_strides.push_back(d >= lead ? self.stride(d - lead) : 0);
  }
  strided::remap_copy(target, self, src_strides, maps);
  strided::commit(outs[0], target);
}

// Every copy's gradient summed: the gradient viewed as [r0, s0, r1, s1, ...] (self's sizes
// padded with leading 1s), summed over the repeat dims.
std::vector<Tensor> repeat_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const std::vector<int64_t> repeats = a.inputs[1].to_int_list();
  const auto ndim = static_cast<int64_t>(repeats.size());
  const int64_t lead = ndim - self.dim();
  std::vector<int64_t> split_sizes, repeat_dims;
  for (int64_t d = 0; d < ndim; ++d) {
    repeat_dims.push_back(2 * d);
    split_sizes.push_back(repeats[static_cast<size_t>(d)]);
    split_sizes.push_back(d < lead ? 1 : self.size(d - lead));
  }
  if (ndim == 0) return {a.grad_outputs[0]};
  return {a.grad_outputs[0].reshape(split_sizes).sum(repeat_dims).reshape(self.sizes())};
}

// self (padded with leading 1s) viewed as [1, s0, 1, s1, ...], expanded to [r0, s0, r1, s1, ...]
// and copied into [r0 * s0, r1 * s1, ...].
std::vector<Tensor> repeat_decomposition(const Stack& args) {
  static const OpDef& to_copy = OpRegistry::instance().get("_to_copy");
  repeat_meta(args);  // the repeat count checks
  const Tensor& self = args[0].to_tensor();
  const std::vector<int64_t> repeats = args[1].to_int_list();
  const auto ndim = static_cast<int64_t>(repeats.size());
  const int64_t lead = ndim - self.dim();
  std::vector<int64_t> interleaved, expanded, result;
  for (int64_t d = 0; d < ndim; ++d) {
    const int64_t size = d < lead ? 1 : self.size(d - lead);
    const int64_t times = repeats[static_cast<size_t>(d)];
    interleaved.insert(interleaved.end(), {1, size});
    expanded.insert(expanded.end(), {times, size});
    result.push_back(times * size);
  }
  const Tensor tiled = self.reshape(interleaved).expand(expanded);
  return {call1(to_copy, {tiled, IValue(), true}).view(result)};
}

using IV = std::vector<int64_t>;

}  // namespace

KILN_OP("repeat(Tensor self, SymInt[] repeats) -> Tensor")
    .meta(repeat_meta)
    .cpu(repeat_impl)
    .decomposition(repeat_decomposition)
    .derivative(repeat_derivative, DerivativeReads::Nothing)
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 3}, kFloat32), IV{2, 2}}, "2-D"},
          {{make_sample({3}, kInt64), IV{2, 1, 2}}, "new leading dims"},
          {{make_noncontiguous_sample({2, 3}, kFloat64), IV{1, 3}}, "non-contiguous"},
          {{make_sample({}, kFloat32), IV{3}}, "0-dim"},
          {{make_sample({2, 3}, kFloat32), IV{0, 2}}, "zero repeats"},
          {{make_sample({0, 2}, kBool), IV{2, 2}}, "empty"},
      };
    });

KILN_OP("tile(Tensor self, SymInt[] dims) -> Tensor")
    .composite([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      std::vector<SymInt> dims = args[1].to_sym_int_list();
      // Fewer dims than the tensor's: leading dims are not repeated (repeat needs them all).
      while (static_cast<int64_t>(dims.size()) < self.dim())
        dims.insert(dims.begin(), SymInt(int64_t{1}));
      static const OpDef& repeat_op = OpRegistry::instance().get("repeat");
      return call(repeat_op, {self, dims});
    })
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({2, 3}, kFloat32), IV{2}}, "fewer dims than tensor"},
          {{make_sample({2, 3}, kInt32), IV{2, 1, 2}}, "more dims"},
          {{make_sample({}, kFloat64), IV{}}, "0-dim, no dims"},
      };
    });

}  // namespace kiln::ops

namespace kiln {

Tensor repeat(const Tensor& self, IntList repeats, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("repeat");
  return ops::call1(op, {self, to_sym(repeats)}, &loc);
}

Tensor tile(const Tensor& self, IntList dims, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const ops::OpDef& op = ops::OpRegistry::instance().get("tile");
  return ops::call1(op, {self, to_sym(dims)}, &loc);
}

}  // namespace kiln
