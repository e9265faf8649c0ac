// The structured matrix products: mm, bmm, addmm, baddbmm, dot. Each checks ranks, dtypes and
// sizes with PyTorch's wording in its meta function (so meta and eager calls raise alike) and
// runs through gemm_into.
#include "ops/linalg/gemm.h"
#include "ops/samples.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/linalg.h>
#include <kiln/ops/registry.h>

#include <string>

namespace kiln::ops {
namespace {

// "2x3" for error messages.
std::string shape_str(const Tensor& t) {
  std::string s;
  for (const SymInt& d : t.sym_sizes()) s += (s.empty() ? "" : "x") + d.str();
  return s;
}

void check_rank(const char* op, const Tensor& a, const Tensor& b, int64_t rank) {
  KILN_CHECK(a.dim() == rank && b.dim() == rank, "{}: expected {}-D tensors, got {}-D and {}-D", op,
             rank, a.dim(), b.dim());
}

void check_dtypes(const char* op, const Tensor& a, const Tensor& b) {
  KILN_CHECK_T(TypeError, a.dtype() == b.dtype(),
               "{}: expected both tensors to have the same dtype, got {} and {}", op,
               dtype_name(a.dtype()), dtype_name(b.dtype()));
  KILN_CHECK_T(TypeError, a.dtype() != DType::Bool, "{}: not supported for dtype {}", op,
               dtype_name(a.dtype()));
}

// [.., m, k] @ [.., k, n]: the trailing matrix sizes must chain.
void check_inner(const char* op, const Tensor& a, const Tensor& b) {
  KILN_CHECK(a.sym_size(-1) == b.sym_size(-2),
             "{}: mat1 and mat2 shapes cannot be multiplied ({} and {})", op, shape_str(a),
             shape_str(b));
}

SymDimVector mm_sizes(const char* op, const Tensor& a, const Tensor& b) {
  check_rank(op, a, b, 2);
  check_dtypes(op, a, b);
  check_inner(op, a, b);
  return {a.sym_size(0), b.sym_size(1)};
}

SymDimVector bmm_sizes(const char* op, const Tensor& a, const Tensor& b) {
  check_rank(op, a, b, 3);
  check_dtypes(op, a, b);
  KILN_CHECK(a.sym_size(0) == b.sym_size(0),
             "{}: batch1 and batch2 must have the same batch size, got {} and {}", op,
             a.sym_size(0).str(), b.sym_size(0).str());
  check_inner(op, a, b);
  return {a.sym_size(0), a.sym_size(1), b.sym_size(2)};
}

// addmm/baddbmm's self must have the product's dtype and broadcast to its sizes.
void check_addend(const char* op, const Tensor& self, const Tensor& mat,
                  const SymDimVector& sizes) {
  KILN_CHECK_T(TypeError, self.dtype() == mat.dtype(),
               "{}: expected both tensors to have the same dtype, got {} and {}", op,
               dtype_name(self.dtype()), dtype_name(mat.dtype()));
  bool ok = self.dim() <= static_cast<int64_t>(sizes.size());
  for (int64_t i = 1; ok && i <= self.dim(); ++i) {
    const SymInt& s = self.sym_size(-i);
    ok = s == SymInt(1) || s == sizes[sizes.size() - static_cast<size_t>(i)];
  }
  std::string want;
  for (const SymInt& d : sizes) want += (want.empty() ? "" : "x") + d.str();
  KILN_CHECK(ok, "{}: self of shape ({}) cannot be broadcast to the product's shape ({})", op,
             shape_str(self), want);
}

TensorMeta product_meta(const Tensor& like, SymDimVector sizes) {
  return TensorMeta::contiguous(std::move(sizes), like.dtype(), like.device());
}

// out = beta * self + alpha * (a @ b); self is not read when beta is zero.
void add_product(const Tensor& out, const Tensor& self, const Tensor& a, const Tensor& b,
                 const Scalar& beta, const Scalar& alpha) {
  if (out.numel() == 0) return;
  const bool reads_self = beta.to<double>() != 0.0;
  const bool aliases = out.data_ptr() == self.data_ptr() && out.sizes() == self.sizes() &&
                       out.strides() == self.strides();
  if (reads_self && !aliases && beta.to<double>() == 1.0 && alpha.to<double>() == 1.0) {
    linalg::gemm_bias_into(out, a, b, self);  // a linear layer: the bias fuses into the product
    return;
  }
  if (reads_self && !aliases) {
    Tensor dst = out;
    dst.copy_(self.expand(out.sizes()));
  }
  linalg::gemm_into(out, a, b, alpha, reads_self ? beta : Scalar(0));
}

// ---- derivatives ----

// t * s, skipping the multiply for s == 1 (linear layers' alpha/beta).
Tensor scaled(const Tensor& t, const Scalar& s) { return s.to<double>() == 1.0 ? t : t * s; }

// d(self @ mat2) for mm and bmm: grad @ mat2^T and self^T @ grad, with `product` mm or bmm.
// Whether a matrix is the transpose of a contiguous one (a linear layer's weight.t()).
bool transposed_contiguous(const Tensor& m) {
  if (m.dim() != 2) return false;
  const SymIntList strides = m.sym_strides();
  return strides[0] == 1 && strides[1] == m.sym_size(0) && m.sym_size(0) > 1 && m.sym_size(1) > 1;
}

// mm or bmm (their call-site parameter is passed explicitly: a pointer call has no defaults).
using MatrixProduct = Tensor (*)(const Tensor&, const Tensor&, const kiln::SourceLocation&);

// x @ y computed so that the result is laid out like `like`: for a transposed `like`, as
// (y^T @ x^T)^T. The gradient of linear's weight.t() then comes out as a plain contiguous
// (out, in) matrix, which the weight's .grad takes without a copy (PyTorch's mm_mat2_backward).
template <MatrixProduct product>
Tensor product_like(const Tensor& x, const Tensor& y, const Tensor& like) {
  const kiln::SourceLocation here = kiln::SourceLocation::current();
  if (transposed_contiguous(like)) {
    return product(y.transpose(-1, -2), x.transpose(-1, -2), here).t();
  }
  return product(x, y, here);
}

// Only the wanted ones (want_a, want_b) are computed.
template <MatrixProduct product>
std::vector<Tensor> product_grads(const Tensor& g, const Tensor& a, const Tensor& b,
                                  const Scalar& alpha, bool want_a, bool want_b) {
  return {want_a ? scaled(product_like<product>(g, b.transpose(-1, -2), a), alpha) : Tensor(),
          want_b ? scaled(product_like<product>(a.transpose(-1, -2), g, b), alpha) : Tensor()};
}

std::vector<Tensor> matrix_product_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const Tensor& x = a.inputs[0].to_tensor();
  const Tensor& y = a.inputs[1].to_tensor();
  const bool wx = a.needs_grad(0), wy = a.needs_grad(1);
  return x.dim() == 2 ? product_grads<mm>(g, x, y, 1, wx, wy)
                      : product_grads<bmm>(g, x, y, 1, wx, wy);
}

// addmm/baddbmm: beta * grad for self (the engine sums it to self's shape), alpha * the
// product's gradients for the matrices.
std::vector<Tensor> add_product_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const Tensor& x = a.inputs[1].to_tensor();
  const Tensor& y = a.inputs[2].to_tensor();
  const Scalar beta = a.inputs[3].to_scalar(), alpha = a.inputs[4].to_scalar();
  const bool wx = a.needs_grad(1), wy = a.needs_grad(2);
  std::vector<Tensor> mats = x.dim() == 2 ? product_grads<mm>(g, x, y, alpha, wx, wy)
                                          : product_grads<bmm>(g, x, y, alpha, wx, wy);
  return {a.needs_grad(0) ? scaled(g, beta) : Tensor(), mats[0], mats[1]};
}

// ---- decompositions ----

// addmm/baddbmm as the mm/bmm prim: beta * self + alpha * (mat1 @ mat2). With beta zero self is
// not read (its NaNs do not propagate), as in the kernel.
std::vector<Tensor> add_product_decomposition(const Stack& args, bool batched) {
  const char* op = batched ? "baddbmm" : "addmm";
  const Tensor& self = args[0].to_tensor();
  const Tensor& a = args[1].to_tensor();
  const Tensor& b = args[2].to_tensor();
  const Scalar beta = args[3].to_scalar(), alpha = args[4].to_scalar();
  const SymDimVector sizes = batched ? bmm_sizes(op, a, b) : mm_sizes(op, a, b);
  check_addend(op, self, a, sizes);
  const Tensor product = scaled(batched ? bmm(a, b) : mm(a, b), alpha);
  if (beta.to<double>() == 0.0) return {product};
  return {scaled(self, beta) + product};
}

void check_dot(const Tensor& a, const Tensor& b) {
  KILN_CHECK(a.dim() == 1 && b.dim() == 1, "dot: 1D tensors expected, but got {}D and {}D tensors",
             a.dim(), b.dim());
  check_dtypes("dot", a, b);
  KILN_CHECK(a.sym_size(0) == b.sym_size(0),
             "dot: inconsistent tensor size, expected tensor [{}] and src [{}] to have the "
             "same number of elements",
             a.sym_size(0).str(), b.sym_size(0).str());
}

// ---- samples ----

using Samples = std::vector<Sample>;

Tensor m(IntList sizes, DType dt, uint64_t seed) { return make_sample(sizes, dt, -3.0, 3.0, seed); }
// A tensor of the given sizes whose last two dims are stored column-major.
Tensor col_major(IntList sizes, DType dt, uint64_t seed) {
  std::vector<int64_t> s(sizes.begin(), sizes.end());
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return m(s, dt, seed).transpose(-1, -2);
}

Samples mm_samples() {
  Samples out;
  for (DType dt : {kFloat32, kFloat64}) {
    out.push_back({{m({3, 4}, dt, 1), m({4, 5}, dt, 2)}, "2-D"});
    out.push_back({{col_major({3, 4}, dt, 3), m({4, 2}, dt, 4)}, "column-major self"});
    out.push_back({{m({3, 4}, dt, 5), col_major({4, 2}, dt, 6)}, "column-major mat2"});
  }
  out.push_back({{make_noncontiguous_sample({5, 6}, kFloat32, -3, 3, 7),
                  make_noncontiguous_sample({6, 3}, kFloat32, -3, 3, 8)},
                 "strided"});
  out.push_back({{m({1, 7}, kFloat32, 9), m({7, 1}, kFloat32, 10)}, "row times column"});
  out.push_back({{m({3, 0}, kFloat32, 11), m({0, 4}, kFloat32, 12)}, "k = 0"});
  out.push_back({{m({0, 3}, kFloat64, 13), m({3, 4}, kFloat64, 14)}, "m = 0"});
  out.push_back({{m({3, 4}, kInt64, 15), m({4, 2}, kInt64, 16)}, "int64"});
  out.push_back({{m({3, 4}, kInt32, 17), col_major({4, 2}, kInt32, 18)}, "int32"});
  out.push_back({{m({3, 4}, kFloat32, 19), m({5, 2}, kFloat32, 20)}, "mismatched sizes"});
  out.push_back({{m({3, 4}, kFloat32, 21), m({4, 2}, kFloat64, 22)}, "mismatched dtypes"});
  out.push_back({{m({3}, kFloat32, 23), m({3, 2}, kFloat32, 24)}, "1-D self"});
  return out;
}

Samples bmm_samples() {
  Samples out;
  for (DType dt : {kFloat32, kFloat64}) {
    out.push_back({{m({2, 3, 4}, dt, 1), m({2, 4, 5}, dt, 2)}, "3-D"});
    out.push_back({{col_major({2, 3, 4}, dt, 3), col_major({2, 4, 2}, dt, 4)}, "column-major"});
  }
  out.push_back({{m({3, 2, 4}, kFloat32, 5).transpose(0, 1), m({2, 4, 3}, kFloat32, 6)},
                 "batch dim not outermost"});
  out.push_back(
      {{make_noncontiguous_sample({2, 3, 4}, kFloat32, -3, 3, 7), m({2, 4, 2}, kFloat32, 8)},
       "strided"});
  out.push_back({{m({2, 3, 0}, kFloat32, 9), m({2, 0, 4}, kFloat32, 10)}, "k = 0"});
  out.push_back({{m({0, 3, 2}, kFloat32, 11), m({0, 2, 4}, kFloat32, 12)}, "no batches"});
  out.push_back({{m({2, 3, 4}, kInt64, 13), m({2, 4, 2}, kInt64, 14)}, "int64"});
  out.push_back({{m({2, 3, 4}, kFloat32, 15), m({3, 4, 2}, kFloat32, 16)}, "batch mismatch"});
  out.push_back({{m({2, 3, 4}, kFloat32, 17), m({2, 3, 2}, kFloat32, 18)}, "inner mismatch"});
  out.push_back({{m({3, 4}, kFloat32, 19), m({2, 4, 2}, kFloat32, 20)}, "2-D self"});
  return out;
}

Samples addmm_samples() {
  Samples out;
  const Scalar two(2.0), half(0.5), zero(0.0);
  for (DType dt : {kFloat32, kFloat64}) {
    out.push_back(
        {{m({3, 5}, dt, 1), m({3, 4}, dt, 2), m({4, 5}, dt, 3), two, half}, "beta, alpha"});
    out.push_back({{m({5}, dt, 4), col_major({3, 4}, dt, 5), m({4, 5}, dt, 6)}, "bias row"});
  }
  out.push_back({{m({3, 1}, kFloat32, 7), m({3, 4}, kFloat32, 8), col_major({4, 2}, kFloat32, 9)},
                 "column broadcast"});
  out.push_back(
      {{m({}, kFloat64, 10), m({3, 4}, kFloat64, 11), m({4, 2}, kFloat64, 12), zero, Scalar(1.0)},
       "0-dim self, beta = 0"});
  out.push_back({{m({3, 2}, kFloat32, 13), m({3, 0}, kFloat32, 14), m({0, 2}, kFloat32, 15), two,
                  Scalar(1.0)},
                 "k = 0"});
  out.push_back({{make_noncontiguous_sample({3, 2}, kFloat32, -3, 3, 16), m({3, 4}, kFloat32, 17),
                  m({4, 2}, kFloat32, 18)},
                 "strided self"});
  out.push_back(
      {{m({3, 2}, kInt64, 19), m({3, 4}, kInt64, 20), m({4, 2}, kInt64, 21), Scalar(2), Scalar(3)},
       "int64"});
  out.push_back({{m({4, 2}, kFloat32, 22), m({3, 4}, kFloat32, 23), m({4, 2}, kFloat32, 24)},
                 "self does not broadcast"});
  return out;
}

Samples baddbmm_samples() {
  Samples out;
  const Scalar two(2.0), half(0.5);
  for (DType dt : {kFloat32, kFloat64}) {
    out.push_back({{m({2, 3, 5}, dt, 1), m({2, 3, 4}, dt, 2), m({2, 4, 5}, dt, 3), two, half},
                   "beta, alpha"});
    out.push_back({{m({5}, dt, 4), col_major({2, 3, 4}, dt, 5), m({2, 4, 5}, dt, 6)}, "broadcast"});
  }
  out.push_back({{m({2, 3, 2}, kFloat32, 7), m({2, 3, 0}, kFloat32, 8), m({2, 0, 2}, kFloat32, 9),
                  two, Scalar(1.0)},
                 "k = 0"});
  out.push_back(
      {{m({2, 3, 2}, kInt64, 10), m({2, 3, 4}, kInt64, 11), m({2, 4, 2}, kInt64, 12)}, "int64"});
  out.push_back(
      {{m({3, 3, 2}, kFloat32, 13), m({2, 3, 4}, kFloat32, 14), m({2, 4, 2}, kFloat32, 15)},
       "self does not broadcast"});
  return out;
}

Samples dot_samples() {
  Samples out;
  for (DType dt : {kFloat32, kFloat64, kInt64})
    out.push_back({{m({7}, dt, 1), m({7}, dt, 2)}, "1-D"});
  out.push_back(
      {{make_noncontiguous_sample({5}, kFloat32, -3, 3, 3), m({5}, kFloat32, 4)}, "strided"});
  out.push_back({{m({0}, kFloat32, 5), m({0}, kFloat32, 6)}, "empty"});
  out.push_back({{m({3}, kFloat32, 7), m({4}, kFloat32, 8)}, "size mismatch"});
  out.push_back({{m({3}, kFloat32, 9), m({3}, kFloat64, 10)}, "dtype mismatch"});
  out.push_back({{m({2, 3}, kFloat32, 11), m({3}, kFloat32, 12)}, "2-D"});
  return out;
}

}  // namespace

KILN_OP("mm(Tensor self, Tensor mat2) -> Tensor")
    .derivative([](const BackwardArgs& a) -> std::vector<Tensor> {
      const Tensor& g = a.grad_outputs[0];
      const Tensor& x = a.inputs[0].to_tensor();
      const Tensor& y = a.inputs[1].to_tensor();
      return product_grads<mm>(g, x, y, 1, a.needs_grad(0), a.needs_grad(1));
    })
    .meta([](const Stack& args) {
      const Tensor& a = args[0].to_tensor();
      return std::vector<TensorMeta>{product_meta(a, mm_sizes("mm", a, args[1].to_tensor()))};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) {
      linalg::gemm_into(outs[0], args[0].to_tensor(), args[1].to_tensor(), 1, 0);
    })
    .out_variant()
    .tolerance(1e-4, 1e-4)
    .samples(mm_samples);

KILN_OP("bmm(Tensor self, Tensor mat2) -> Tensor")
    .derivative(matrix_product_derivative, DerivativeReads::Inputs)
    .meta([](const Stack& args) {
      const Tensor& a = args[0].to_tensor();
      return std::vector<TensorMeta>{product_meta(a, bmm_sizes("bmm", a, args[1].to_tensor()))};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) {
      linalg::gemm_into(outs[0], args[0].to_tensor(), args[1].to_tensor(), 1, 0);
    })
    .out_variant()
    .tolerance(1e-4, 1e-4)
    .samples(bmm_samples);

KILN_OP("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor")
    .derivative(add_product_derivative, DerivativeReads::Inputs)
    .meta([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      const Tensor& a = args[1].to_tensor();
      SymDimVector sizes = mm_sizes("addmm", a, args[2].to_tensor());
      check_addend("addmm", self, a, sizes);
      return std::vector<TensorMeta>{product_meta(a, std::move(sizes))};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) {
      add_product(outs[0], args[0].to_tensor(), args[1].to_tensor(), args[2].to_tensor(),
                  args[3].to_scalar(), args[4].to_scalar());
    })
    .decomposition([](const Stack& a) { return add_product_decomposition(a, /*batched=*/false); })
    .inplace_variant()
    .out_variant()
    .tolerance(1e-4, 1e-4)
    .samples(addmm_samples);

KILN_OP(
    "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> "
    "Tensor")
    .derivative(add_product_derivative, DerivativeReads::Inputs)
    .meta([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      const Tensor& a = args[1].to_tensor();
      SymDimVector sizes = bmm_sizes("baddbmm", a, args[2].to_tensor());
      check_addend("baddbmm", self, a, sizes);
      return std::vector<TensorMeta>{product_meta(a, std::move(sizes))};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) {
      add_product(outs[0], args[0].to_tensor(), args[1].to_tensor(), args[2].to_tensor(),
                  args[3].to_scalar(), args[4].to_scalar());
    })
    .decomposition([](const Stack& a) { return add_product_decomposition(a, /*batched=*/true); })
    .inplace_variant()
    .out_variant()
    .tolerance(1e-4, 1e-4)
    .samples(baddbmm_samples);

KILN_OP("dot(Tensor self, Tensor tensor) -> Tensor")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          const Tensor& g = a.grad_outputs[0];
          return {g * a.inputs[1].to_tensor(), g * a.inputs[0].to_tensor()};
        },
        DerivativeReads::Inputs)
    .meta([](const Stack& args) {
      const Tensor& a = args[0].to_tensor();
      check_dot(a, args[1].to_tensor());
      return std::vector<TensorMeta>{product_meta(a, {})};
    })
    // A 1 x n by n x 1 product, as the kernel computes it.
    .decomposition([](const Stack& args) -> std::vector<Tensor> {
      const Tensor& a = args[0].to_tensor();
      const Tensor& b = args[1].to_tensor();
      check_dot(a, b);
      return {mm(a.unsqueeze(0), b.unsqueeze(1)).view({})};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& outs) {
      const Tensor& a = args[0].to_tensor();
      const Tensor& b = args[1].to_tensor();
      linalg::gemm_into(outs[0].reshape({1, 1}), a.unsqueeze(0), b.unsqueeze(1), 1, 0);
    })
    .out_variant()
    .tolerance(1e-4, 1e-4)
    .samples(dot_samples);

}  // namespace kiln::ops
