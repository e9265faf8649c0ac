// matmul (PyTorch's dispatch on ranks, folding and batch broadcasting), linear and outer, all
// composites over the registry's products and views. Sizes are SymInts, so that tracing with
// symbolic sizes stays symbolic (comparisons then record guards).
#include "ops/samples.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/linalg.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/view.h>

#include <algorithm>
#include <string>

namespace kiln::ops {
namespace {

// The product of sizes, 1 for none.
SymInt numel_of(SymIntList sizes) {
  SymInt n = 1;
  for (const SymInt& s : sizes) n = n * s;
  return n;
}

// Broadcasts two batch shapes (PyTorch's infer_size), naming matmul in the error.
SymDimVector broadcast_batch(SymIntList a, SymIntList b) {
  const size_t n = std::max(a.size(), b.size());
  SymDimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    const SymInt x = i < n - a.size() ? SymInt(1) : a[i - (n - a.size())];
    const SymInt y = i < n - b.size() ? SymInt(1) : b[i - (n - b.size())];
    KILN_CHECK(x == 1 || y == 1 || x == y,
               "matmul: the size of tensor a ({}) must match the size of tensor b ({}) at "
               "non-singleton dimension {}",
               x.str(), y.str(), i);
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// The sizes of t before its last `keep` dims (none when t has fewer).
SymIntList leading(const Tensor& t, int64_t keep) {
  return SymIntList(t.sym_sizes().data(),
                    static_cast<size_t>(std::max<int64_t>(t.dim() - keep, 0)));
}

// PyTorch's should_fold: fold the larger operand's batch into mm's rows when it is >= 3-D, the
// other is 1-D or 2-D, and the fold is a view (or the operand is empty).
bool should_fold(const Tensor& a, const Tensor& b) {
  const bool a_larger = a.dim() >= b.dim();
  const Tensor t1 = a_larger ? a : b.mT();
  const int64_t dim_t2 = a_larger ? b.dim() : a.dim();
  if (!(t1.dim() >= 3 && dim_t2 <= 2)) return false;
  if (t1.requires_grad()) return true;
  if (a.dim() == 2) return false;
  if (t1.sym_numel() == 0) return true;
  const SymIntList sizes = t1.sym_sizes(), strides = t1.sym_strides();
  for (size_t i = 0; i + 2 < sizes.size(); ++i) {
    if (strides[i] != strides[i + 1] * sizes[i + 1]) return false;
  }
  return true;
}

Tensor matmul_impl(const Tensor& a, const Tensor& b) {
  const int64_t da = a.dim(), db = b.dim();
  KILN_CHECK(da > 0 && db > 0,
             "matmul: both arguments to matmul need to be at least 1D, but they are {}D and {}D",
             da, db);
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (da == 1 && db == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return mm(a, b);
  if (should_fold(a, b)) {
    // One mm over the larger operand's folded batch (transposed when it is the right one).
    const bool transpose = db > da;
    const Tensor t1 = transpose ? b.mT() : a;
    const Tensor t2 = !transpose ? b : (da == 2 ? a.t() : a);
    SymDimVector shape(leading(t1, 1).begin(), leading(t1, 1).end());
    const SymInt folded = numel_of(shape);
    const Tensor t1_folded = reshape_symint(t1, {folded, t1.sym_size(-1)});
    if (t2.dim() == 2) {
      shape.push_back(t2.sym_size(1));
      Tensor out = view_symint(mm(t1_folded, t2), shape);
      return transpose ? out.mT().contiguous() : out;
    }
    return view_symint(mm(t1_folded, t2.unsqueeze(1)), shape);
  }
  // Batched: broadcast the batch dims, flatten them into one, bmm.
  const SymInt n = da > 1 ? a.sym_size(-2) : SymInt(1);
  const SymInt m1 = a.sym_size(-1);
  const SymInt m2 = db > 1 ? b.sym_size(-2) : b.sym_size(0);
  const SymInt p = db > 1 ? b.sym_size(-1) : SymInt(1);
  SymDimVector shape = broadcast_batch(leading(a, 2), leading(b, 2));
  const SymInt batch = numel_of(shape);

  SymDimVector a_size = shape;
  a_size.insert(a_size.end(), {n, m1});
  const Tensor a3 = reshape_symint(expand_symint(a, a_size), {batch, n, m1});
  const bool vector_rhs = db == 1;
  SymDimVector b_size = shape;
  if (vector_rhs) {
    b_size.push_back(m2);
  } else {
    b_size.insert(b_size.end(), {m2, p});
  }
  const Tensor b3 = vector_rhs ? reshape_symint(expand_symint(b, b_size), {batch, m2}).unsqueeze(2)
                               : reshape_symint(expand_symint(b, b_size), {batch, m2, p});
  if (da > 1) shape.push_back(n);
  if (db > 1) shape.push_back(p);
  Tensor out = bmm(a3, b3);
  if (vector_rhs) out = out.squeeze(-1);
  return view_symint(out, shape);
}

Tensor linear_impl(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (input.dim() == 2 && bias.defined()) return addmm(bias, input, weight.t());
  if (bias.defined() && input.dim() == 3 && input.is_contiguous()) {
    // A contiguous 3-D input folds into one addmm.
    const SymInt d0 = input.sym_size(0), d1 = input.sym_size(1);
    const Tensor out = addmm(bias, view_symint(input, {d0 * d1, input.sym_size(2)}), weight.t());
    return view_symint(out, {d0, d1, out.sym_size(1)});
  }
  Tensor out = matmul(input, weight.t());
  return bias.defined() ? add(out, bias) : out;
}

// ---- samples ----

using Samples = std::vector<Sample>;
Tensor matmul_sample(IntList sizes, uint64_t seed, DType dt = kFloat32) {
  return make_sample(sizes, dt, -3.0, 3.0, seed);
}

Samples matmul_samples() {
  using V = std::vector<int64_t>;
  const std::vector<std::pair<V, V>> shapes = {
      {{4}, {4}},
      {{3, 4}, {4}},
      {{4}, {4, 2}},
      {{3, 4}, {4, 2}},
      {{2, 3, 4}, {4}},
      {{2, 3, 4}, {4, 5}},
      {{4}, {2, 4, 5}},
      {{3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {5, 4, 2}},
      {{1, 3, 4}, {2, 2, 4, 5}},
      {{2, 2, 3, 4}, {4}},
      {{4}, {2, 2, 4, 3}},
      {{0, 3, 4}, {4, 2}},
      {{2, 3, 0}, {0, 4}},
  };
  Samples out;
  uint64_t seed = 1;
  for (const auto& [x, y] : shapes) {
    out.push_back({{matmul_sample(x, seed), matmul_sample(y, seed + 1)}, "broadcast"});
    seed += 2;
  }
  out.push_back({{matmul_sample({2, 3, 4}, 40, kFloat64),
                  matmul_sample({4, 5}, 41, kFloat64).t().contiguous().t()},
                 "float64 column-major rhs"});
  out.push_back({{matmul_sample({3, 2, 4}, 42).transpose(0, 1), matmul_sample({4, 5}, 43)},
                 "non-foldable batch"});
  out.push_back(
      {{matmul_sample({2, 3, 4}, 44, kInt64), matmul_sample({4, 2}, 45, kInt64)}, "int64"});
  out.push_back({{matmul_sample({3, 4}, 46), matmul_sample({5, 2}, 47)}, "size mismatch"});
  out.push_back({{matmul_sample({2, 3, 4}, 48), matmul_sample({3, 4, 5}, 49)}, "batch mismatch"});
  out.push_back({{matmul_sample({}, 50), matmul_sample({3}, 51)}, "0-dim"});
  return out;
}

}  // namespace

KILN_OP("matmul(Tensor self, Tensor other) -> Tensor")
    .composite([](const Stack& args) {
      return std::vector<Tensor>{matmul_impl(args[0].to_tensor(), args[1].to_tensor())};
    })
    .tolerance(1e-4, 1e-4)
    .samples(matmul_samples);

KILN_OP("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor")
    .composite([](const Stack& args) {
      return std::vector<Tensor>{
          linear_impl(args[0].to_tensor(), args[1].to_tensor(), args[2].to_optional_tensor())};
    })
    .tolerance(1e-4, 1e-4)
    .samples([] {
      return Samples{
          {{matmul_sample({3, 4}, 1), matmul_sample({5, 4}, 2), matmul_sample({5}, 3)},
           "2-D with bias"},
          {{matmul_sample({2, 3, 4}, 4), matmul_sample({5, 4}, 5), matmul_sample({5}, 6)},
           "3-D with bias"},
          {{matmul_sample({2, 3, 4}, 7).transpose(0, 1), matmul_sample({5, 4}, 8),
            matmul_sample({5}, 9)},
           "non-contiguous 3-D"},
          {{matmul_sample({4}, 10, kFloat64), matmul_sample({5, 4}, 11, kFloat64), std::nullopt},
           "1-D, no bias"},
          {{matmul_sample({2, 2, 3, 4}, 12), matmul_sample({5, 4}, 13), std::nullopt},
           "4-D, no bias"},
          {{matmul_sample({0, 4}, 14), matmul_sample({5, 4}, 15), matmul_sample({5}, 16)},
           "empty batch"},
          {{matmul_sample({3, 4}, 17), matmul_sample({5, 3}, 18), matmul_sample({5}, 19)},
           "size mismatch"},
      };
    });

KILN_OP("outer(Tensor self, Tensor vec2) -> Tensor")
    .composite([](const Stack& args) {
      const Tensor& a = args[0].to_tensor();
      const Tensor& b = args[1].to_tensor();
      KILN_CHECK(a.dim() == 1 && b.dim() == 1, "outer: expected 1-D arguments, got {}-D and {}-D",
                 a.dim(), b.dim());
      return std::vector<Tensor>{mul(a.unsqueeze(1), b)};
    })
    .samples([] {
      return Samples{
          {{matmul_sample({3}, 1), matmul_sample({4}, 2)}, "float32"},
          {{matmul_sample({3}, 3, kFloat64), matmul_sample({2}, 4, kInt64)}, "type promotion"},
          {{make_noncontiguous_sample({3}, kFloat32, -3, 3, 5), matmul_sample({0}, 6)},
           "strided and empty"},
          {{matmul_sample({2, 2}, 7), matmul_sample({3}, 8)}, "2-D"},
      };
    });

}  // namespace kiln::ops
