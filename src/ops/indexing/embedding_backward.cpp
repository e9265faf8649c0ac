// embedding_dense_backward: the gradient of embedding's weight, each index's gradient row summed
// into the weight row it read (rows equal to padding_idx get none; scale_grad_by_freq divides by
// how often each row was read). embedding's derivative calls it; its decomposition (index_put
// with accumulate) is what autograd differentiates for double backward and what the kernel is
// tested against.
#include "ops/indexing/index_common.h"
#include "ops/indexing/strided_loop.h"
#include "ops/reduction/reduce_meta.h"
#include "ops/samples.h"

#include <kiln/core/parallel.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/sym_size_ops.h>

namespace kiln::ops {
namespace {

using namespace indexing;

struct EmbeddingBackwardArgs {
  const Tensor& grad;
  const Tensor& indices;
  int64_t num_weights;
  int64_t padding_idx;  // rows equal to it get no gradient (-1: none)
  bool scale_grad_by_freq;

  explicit EmbeddingBackwardArgs(const Stack& a)
      : grad(a[0].to_tensor()),
        indices(a[1].to_tensor()),
        num_weights(a[2].to_int()),
        padding_idx(a[3].to_int()),
        scale_grad_by_freq(a[4].to_bool()) {}
  SymInt embedding_dim() const { return grad.dim() == 0 ? SymInt(1) : grad.sym_sizes().back(); }
};

std::vector<TensorMeta> embedding_backward_meta(const Stack& args) {
  const EmbeddingBackwardArgs b(args);
  check_index_dtype(b.indices, /*allow_int32=*/true, "embedding_dense_backward");
  KILN_CHECK(b.grad.dim() == b.indices.dim() + 1,
             "embedding_dense_backward(): grad_output {} must have the sizes of indices {} plus "
             "the embedding dim",
             sizes_of(b.grad), sizes_of(b.indices));
  for (int64_t d = 0; d < b.indices.dim(); ++d) {
    KILN_CHECK(b.grad.sym_size(d) == b.indices.sym_size(d),
               "embedding_dense_backward(): grad_output {} must have the sizes of indices {} "
               "plus the embedding dim",
               sizes_of(b.grad), sizes_of(b.indices));
  }
  KILN_CHECK(b.num_weights >= 0, "embedding_dense_backward(): num_weights must be >= 0, got {}",
             b.num_weights);
  KILN_CHECK_T(TypeError, is_floating_point(b.grad.dtype()),
               "embedding_dense_backward(): expected a floating point grad_output, got {}",
               torch_type_name(b.grad.dtype()));
  return {TensorMeta::contiguous({b.num_weights, b.grad.sym_sizes().back()}, b.grad.dtype(),
                                 b.grad.device())};
}

void embedding_backward_impl(const Stack& args, const std::vector<Tensor>& outs) {
  const EmbeddingBackwardArgs b(args);
  const int64_t dim = b.embedding_dim().expect_int();
  const std::vector<int64_t> rows =
      read_indices(b.indices, 0, b.num_weights, "embedding_dense_backward");
  std::vector<int64_t> counts;
  if (b.scale_grad_by_freq) {
    counts.assign(static_cast<size_t>(b.num_weights), 0);
    for (int64_t r : rows) ++counts[static_cast<size_t>(r)];
  }
  const Tensor grad = b.grad.contiguous();
  Tensor target = strided::dense_target(outs[0], grad.dtype());
  KILN_DISPATCH_FLOATING(grad.dtype(), "embedding_dense_backward", [&]<typename T>() {
    using acc_t = opmath_t<T>;
    const T* g = grad.data_ptr<T>();
    T* out = target.data_ptr<T>();
    // Each chunk owns a range of weight rows: it zeroes them and adds every index's gradient
    // row that lands in it, in index order (deterministic, no atomics; the index scan per chunk
    // is cheap next to the rows).
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(dim, 1));
    parallel_for(0, b.num_weights, grain, [&](int64_t first, int64_t last) {
      std::fill(out + first * dim, out + last * dim, T(0));
      for (size_t i = 0; i < rows.size(); ++i) {
        const int64_t r = rows[i];
        if (r < first || r >= last || r == b.padding_idx) continue;
        T* o = out + r * dim;
        const T* gi = g + static_cast<int64_t>(i) * dim;
        const acc_t scale = counts.empty()
                                ? acc_t(1)
                                : acc_t(1) / static_cast<acc_t>(counts[static_cast<size_t>(r)]);
        for (int64_t j = 0; j < dim; ++j) {
          o[j] = static_cast<T>(static_cast<acc_t>(o[j]) + static_cast<acc_t>(gi[j]) * scale);
        }
      }
    });
  });
  strided::commit(outs[0], target);
}

// The same in kiln ops: rows accumulated with index_put.
std::vector<Tensor> embedding_backward_decomposition(const Stack& args) {
  const EmbeddingBackwardArgs b(args);
  const SymInt dim = b.embedding_dim();
  const Tensor flat = b.indices.reshape({-1}).to(kInt64);
  Tensor rows = reshape_symint(b.grad, {flat.sym_numel(), dim});
  if (b.scale_grad_by_freq) {
    const Tensor counts =
        zeros({b.num_weights}, b.grad.options())
            .index_put({flat}, full_symint({flat.sym_numel()}, 1, b.grad.options()), true);
    rows = rows / counts.index_select(0, flat).unsqueeze(1);
  }
  if (b.padding_idx >= 0) rows = rows * (flat != b.padding_idx).unsqueeze(1).to(b.grad.dtype());
  return {
      full_symint({SymInt(b.num_weights), dim}, 0, b.grad.options()).index_put({flat}, rows, true)};
}

Tensor long_tensor(std::vector<int64_t> values, IntList shape) {
  return from_vector(values, shape);
}

std::vector<Sample> embedding_backward_samples() {
  const Tensor dup = long_tensor({1, 4, 1, 0, 4, 4}, {2, 3});
  auto args = [](Tensor g, Tensor idx, int64_t n, int64_t pad, bool scale) {
    return Stack{std::move(g), std::move(idx), SymInt(n), SymInt(pad), scale};
  };
  return {
      {args(make_sample({2, 3, 4}, kFloat32), dup, 6, -1, false), "duplicates"},
      {args(make_sample({2, 3, 4}, kFloat64), dup, 6, 4, false), "padding_idx"},
      {args(make_sample({2, 3, 4}, kFloat64), dup, 5, -1, true), "scale_grad_by_freq"},
      {args(make_sample({2, 3, 4}, kFloat32), dup.to(kInt32), 6, 1, true),
       "int32 indices, padding_idx and scale"},
      {args(make_noncontiguous_sample({3, 5}, kFloat64), long_tensor({2, 0, 2}, {3}), 4, -1, false),
       "non-contiguous grad"},
      {args(make_sample({0, 3}, kFloat32), long_tensor({}, {0}), 3, -1, false), "no indices"},
  };
}

}  // namespace

KILN_OP(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt "
    "padding_idx, bool scale_grad_by_freq) -> Tensor")
    .meta(embedding_backward_meta)
    .cpu(embedding_backward_impl)
    .decomposition(embedding_backward_decomposition)
    .samples(embedding_backward_samples);

}  // namespace kiln::ops
