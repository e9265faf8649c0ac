// cat and stack: join tensors along a dim. cat promotes dtypes across its inputs and, as PyTorch
// does for old code, skips 1-D empty tensors (shape [0]) whatever the other inputs' rank.
#include "ops/indexing/strided_loop.h"
#include "ops/samples.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/shape.h>
#include <kiln/ops/view.h>

namespace kiln::ops {
namespace {

bool legacy_skipped(const Tensor& t) { return t.dim() == 1 && t.sym_sizes()[0] == 0; }

// The first tensor that takes part in shape checks, or -1 when every input is skipped.
int64_t reference_index(const std::vector<Tensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!legacy_skipped(tensors[i])) return static_cast<int64_t>(i);
  }
  return -1;
}

std::vector<TensorMeta> cat_meta(const Stack& args) {
  const std::vector<Tensor>& tensors = args[0].to_tensor_list();
  KILN_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    KILN_CHECK(tensors[i].dim() > 0,
               "torch.cat(): zero-dimensional tensor (at position {}) cannot be concatenated", i);
    KILN_CHECK(tensors[i].device() == tensors[0].device(),
               "torch.cat(): all input tensors must be on the same device. Received {} and {}",
               tensors[0].device().str(), tensors[i].device().str());
  }
  const DType dtype = result_type(TensorList(tensors));
  const int64_t ref = reference_index(tensors);
  if (ref < 0) return {TensorMeta::contiguous({SymInt(int64_t{0})}, dtype, tensors[0].device())};
  const Tensor& first = tensors[static_cast<size_t>(ref)];
  const int64_t ndim = first.dim();
  const int64_t dim = wrap_dim(args[1].to_int(), ndim, "cat");
  SymDimVector sizes = first.sym_sizes().vec();
  sizes[static_cast<size_t>(dim)] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (legacy_skipped(t)) continue;
    KILN_CHECK(t.dim() == ndim,
               "torch.cat(): Tensors must have same number of dimensions: got {} and {} (tensor "
               "number {} in the list)",
               ndim, t.dim(), i);
    for (int64_t d = 0; d < ndim; ++d) {
      const auto ud = static_cast<size_t>(d);
      if (d == dim) continue;
      KILN_CHECK(t.sym_sizes()[ud] == first.sym_sizes()[ud],
                 "torch.cat(): Sizes of tensors must match except in dimension {}. Expected size "
                 "{} but got size {} for tensor number {} in the list.",
                 dim, first.sym_sizes()[ud].str(), t.sym_sizes()[ud].str(), i);
    }
    sizes[static_cast<size_t>(dim)] =
        sizes[static_cast<size_t>(dim)] + t.sym_sizes()[static_cast<size_t>(dim)];
  }
  return {TensorMeta::contiguous(std::move(sizes), dtype, first.device())};
}

void cat_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const std::vector<Tensor>& tensors = args[0].to_tensor_list();
  const int64_t ref = reference_index(tensors);
  if (ref < 0) return;
  const Tensor& out = outs[0];
  const int64_t dim = wrap_dim(args[1].to_int(), out.dim(), "cat");
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (legacy_skipped(t)) continue;
    const int64_t n = t.size(dim);
    if (n > 0) {
      // copy_ converts each input to the promoted dtype and handles any layout.
      Tensor part = out.narrow(dim, offset, n);
      part.copy_(t);
    }
    offset += n;
  }
}

std::vector<Tensor> stack_composite(const Stack& args) {
  const std::vector<Tensor>& tensors = args[0].to_tensor_list();
  KILN_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  for (size_t i = 1; i < tensors.size(); ++i) {
    KILN_CHECK(tensors[i].sym_sizes() == tensors[0].sym_sizes(),
               "stack expects each tensor to be equal size, but got [{}] at entry 0 and [{}] at "
               "entry {}",
               fmt::join(tensors[0].sizes(), ", "), fmt::join(tensors[i].sizes(), ", "), i);
  }
  const int64_t dim = wrap_dim(args[1].to_int(), tensors[0].dim() + 1, "stack");
  std::vector<Tensor> expanded;
  expanded.reserve(tensors.size());
  for (const Tensor& t : tensors) expanded.push_back(t.unsqueeze(dim));
  static const OpDef& cat_op = OpRegistry::instance().get("cat");
  return call(cat_op, {expanded, dim});
}

// Each input's gradient is its range of the output's gradient (none for skipped empty inputs).
std::vector<Tensor> cat_derivative(const BackwardArgs& a) {
  const std::vector<Tensor>& tensors = a.inputs[0].to_tensor_list();
  const Tensor& g = a.grad_outputs[0];
  std::vector<Tensor> grads;
  grads.reserve(tensors.size());
  const int64_t ref = reference_index(tensors);
  if (ref < 0) return std::vector<Tensor>(tensors.size());
  const int64_t dim = wrap_dim(a.inputs[1].to_int(), g.dim(), "cat");
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (legacy_skipped(t)) {
      grads.emplace_back();
      continue;
    }
    const int64_t n = t.size(dim);
    grads.push_back(g.narrow(dim, offset, n));
    offset += n;
  }
  return grads;
}

using TL = std::vector<Tensor>;

}  // namespace

KILN_OP("cat(Tensor[] tensors, int dim=0) -> Tensor")
    .meta(cat_meta)
    .cpu(cat_impl)
    .derivative(cat_derivative, DerivativeReads::Nothing)
    .out_variant()
    .samples([] {
      return std::vector<Sample>{
          {{TL{make_sample({2, 3}, kFloat32), make_sample({4, 3}, kFloat32, -3, 3, 1)}, 0},
           "dim 0"},
          {{TL{make_sample({2, 3}, kFloat32), make_noncontiguous_sample({2, 5}, kFloat32)}, -1},
           "non-contiguous, dim -1"},
          {{TL{make_sample({2, 2}, kInt32), make_sample({2, 2}, kFloat64),
               make_sample({2, 1}, kInt64)},
            1},
           "dtype promotion"},
          {{TL{make_sample({2, 3}, kFloat32), make_sample({0}, kFloat32)}, 0},
           "legacy 1-D empty skipped"},
          {{TL{make_sample({0, 3}, kFloat32), make_sample({2, 3}, kFloat32)}, 0}, "empty part"},
          {{TL{make_sample({3}, kBool), make_sample({2}, kBool)}, 0}, "bool"},
      };
    });

KILN_OP("stack(Tensor[] tensors, int dim=0) -> Tensor").composite(stack_composite).samples([] {
  return std::vector<Sample>{
      {{TL{make_sample({2, 3}, kFloat32), make_sample({2, 3}, kFloat32, -3, 3, 1)}, 0}, "dim 0"},
      {{TL{make_sample({2, 3}, kFloat64), make_noncontiguous_sample({2, 3}, kFloat64)}, 2},
       "last dim, non-contiguous"},
      {{TL{make_sample({}, kInt64), make_sample({}, kInt64)}, 0}, "0-dim"},
      {{TL{make_sample({2, 3}, kInt32), make_sample({2, 3}, kFloat32)}, -2}, "promotion"},
  };
});

}  // namespace kiln::ops

namespace kiln {

Tensor cat(TensorList tensors, int64_t dim, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("cat");
  return ops::call1(op, {tensors, dim}, &loc);
}

Tensor stack(TensorList tensors, int64_t dim, const kiln::SourceLocation& loc) {
  static const ops::OpDef& op = ops::OpRegistry::instance().get("stack");
  return ops::call1(op, {tensors, dim}, &loc);
}

}  // namespace kiln
