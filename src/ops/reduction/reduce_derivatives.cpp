// Derivative formulas of the reductions and scans, following PyTorch's derivatives.yaml at the
// non-smooth points: ties of max/min/amax/amin share the gradient evenly, max.dim/min.dim give it
// to the returned index, prod and cumprod are exact with zeros in the input, and the 2-norm's
// gradient at the zero vector is 0.
#include "ops/reduction/reduce_derivatives.h"

#include <kiln/ops/sym_size_ops.h>

#include "ops/reduction/reduce_meta.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/shape.h>
#include <kiln/ops/view.h>

#include <cmath>

namespace kiln::ops {
namespace {

std::vector<int64_t> selected_dims(const std::vector<bool>& mask) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (mask[d]) dims.push_back(static_cast<int64_t>(d));
  }
  return dims;
}

// A reduced tensor with its reduced dims back as size 1 (as keepdim=True gives it).
Tensor unsqueeze_reduced(Tensor t, const std::vector<bool>& mask, bool keepdim) {
  if (keepdim) return t;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (mask[d]) t = t.unsqueeze(static_cast<int64_t>(d));
  }
  return t;
}

// The number of elements a reduction over mask combines.
// The reduced dims' sizes must be plain; the others may be symbolic (a dynamic batch).
int64_t reduced_count(const Tensor& self, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (mask[d]) n *= self.sym_size(static_cast<int64_t>(d)).expect_int();
  }
  return n;
}

// The gradient g (keepdim shape) split evenly among the elements of self equal to value
// (keepdim shape), per reduced slice; a NaN result counts the NaNs (evenly_distribute_backward).
Tensor distribute_among_ties(const Tensor& g, const Tensor& self, const Tensor& value,
                             const std::vector<bool>& mask) {
  Tensor hits = self.eq(value).logical_or(self.isnan().logical_and(value.isnan()));
  Tensor count = hits.sum(selected_dims(mask), /*keepdim=*/true);
  return g / count * hits;
}

// For each position along dim, the product of the other elements of its row: the exclusive
// products from the front and from the back, multiplied. No division, so exact with zeros.
Tensor product_of_others(const Tensor& x, int64_t dim) {
  const int64_t n = x.size(dim);
  if (n == 0) return x;
  std::vector<int64_t> one_sizes(x.sizes().begin(), x.sizes().end());
  one_sizes[static_cast<size_t>(dim)] = 1;
  Tensor one = ones(one_sizes, x.options());
  Tensor before = cat({one, x.narrow(dim, 0, n - 1)}, dim).cumprod(dim);
  Tensor after = cat({one, x.flip({dim}).narrow(dim, 0, n - 1)}, dim).cumprod(dim).flip({dim});
  return before * after;
}

// sum over i >= k along dim.
Tensor reversed_cumsum(const Tensor& t, int64_t dim) {
  return t.flip({dim}).cumsum(dim).flip({dim});
}

// var's gradient for the gradient gv of var (keepdim shape).
Tensor var_backward(const Tensor& gv, const Tensor& self, const std::vector<bool>& mask,
                    double correction) {
  const double n = static_cast<double>(reduced_count(self, mask));
  Tensor centered = self - self.mean(selected_dims(mask), /*keepdim=*/true);
  return gv * centered * (2.0 / (n - correction));
}

double correction_of(const IValue& v) { return v.is_none() ? 1.0 : v.to_scalar().to_double(); }

}  // namespace

Tensor divide_by_reduced_count(const Tensor& x, const Tensor& self, const std::vector<bool>& mask) {
  std::vector<SymInt> reduced;
  bool symbolic = false;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) continue;
    reduced.push_back(self.sym_size(static_cast<int64_t>(d)));
    symbolic = symbolic || reduced.back().is_symbolic();
  }
  if (!symbolic) return x / static_cast<double>(reduced_count(self, mask));
  return x / full_symint(reduced, 1, TensorOptions().dtype(x.dtype()).device(x.device())).sum();
}

std::vector<Tensor> prod_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const Tensor& g = a.grad_outputs[0];
  if (self.dim() == 0) return {g};
  return {(g * product_of_others(self.reshape({-1}), 0)).reshape(self.sizes())};
}

std::vector<Tensor> prod_dim_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  Tensor g = a.grad_outputs[0];
  if (self.dim() == 0) return {g};
  const int64_t dim = wrap_dim(a.inputs[1].to_int(), self.dim(), "prod");
  if (!a.inputs[2].to_bool()) g = g.unsqueeze(dim);
  return {g * product_of_others(self, dim)};
}

std::vector<Tensor> extreme_full_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  std::vector<bool> all(static_cast<size_t>(self.dim()), true);
  return {distribute_among_ties(a.grad_outputs[0], self, a.outputs[0], all)};
}

std::vector<Tensor> extreme_dim_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  Tensor g = a.grad_outputs[0];
  if (self.dim() == 0) return {g};
  const int64_t dim = wrap_dim(a.inputs[1].to_int(), self.dim(), "max");
  Tensor indices = a.outputs[1];
  if (!a.inputs[2].to_bool()) {
    g = g.unsqueeze(dim);
    indices = indices.unsqueeze(dim);
  }
  return {zeros(self.sizes(), g.options()).scatter(dim, indices, g)};
}

std::vector<Tensor> amax_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  auto mask = reduction_mask(self.dim(), a.inputs[1], "amax");
  const bool keepdim = a.inputs[2].to_bool();
  return {distribute_among_ties(unsqueeze_reduced(a.grad_outputs[0], mask, keepdim), self,
                                unsqueeze_reduced(a.outputs[0], mask, keepdim), mask)};
}

std::vector<Tensor> var_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  auto mask = reduction_mask(self.dim(), a.inputs[1], "var");
  Tensor g = unsqueeze_reduced(a.grad_outputs[0], mask, a.inputs[3].to_bool());
  return {var_backward(g, self, mask, correction_of(a.inputs[2]))};
}

std::vector<Tensor> std_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  auto mask = reduction_mask(self.dim(), a.inputs[1], "std");
  const bool keepdim = a.inputs[3].to_bool();
  Tensor g = unsqueeze_reduced(a.grad_outputs[0], mask, keepdim);
  Tensor std = unsqueeze_reduced(a.outputs[0], mask, keepdim);
  // d std = d var / (2 std); 0 where std is 0 (all equal), as PyTorch's std_backward.
  Tensor zero_std = std.eq(0);
  Tensor gv = where(zero_std, 0.0, g / where(zero_std, 1.0, std * 2.0));
  return {var_backward(gv, self, mask, correction_of(a.inputs[2]))};
}

std::vector<Tensor> var_mean_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  auto mask = reduction_mask(self.dim(), a.inputs[1], "var_mean");
  const bool keepdim = a.inputs[3].to_bool();
  Tensor g_var = unsqueeze_reduced(a.grad_outputs[0], mask, keepdim);
  Tensor g_mean = unsqueeze_reduced(a.grad_outputs[1], mask, keepdim);
  const double n = static_cast<double>(reduced_count(self, mask));
  return {var_backward(g_var, self, mask, correction_of(a.inputs[2])) + g_mean / n};
}

std::vector<Tensor> vector_norm_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const double p = a.inputs[1].to_scalar().to_double();
  auto mask = reduction_mask(self.dim(), a.inputs[2], "linalg.vector_norm");
  const bool keepdim = a.inputs[3].to_bool();
  Tensor g = unsqueeze_reduced(a.grad_outputs[0], mask, keepdim);
  Tensor norm = unsqueeze_reduced(a.outputs[0], mask, keepdim);
  if (p == 0.0) return {zeros(self.sizes(), g.options())};
  if (p == 1.0) return {self.sign() * g};
  if (std::isinf(p)) {
    // The max (min) of |x|: shared among the ties, with x's sign.
    return {self.sign() * distribute_among_ties(g, self.abs(), norm, mask)};
  }
  // A zero norm means a zero slice (for p > 0): dividing by 1 instead gives its gradient 0.
  Tensor safe_norm = where(norm.eq(0), 1.0, norm);
  if (p == 2.0) return {self * (g / safe_norm)};
  if (p < 1.0) {
    // |x|^(p-1) is infinite at 0; sign(0) = 0 makes that element's gradient 0 (PyTorch's
    // masked_fill), through a finite base.
    Tensor scaled = self.sign() * where(self.eq(0), 1.0, self.abs()).pow(p - 1.0);
    return {scaled * g * norm.pow(1.0 - p)};
  }
  Tensor scaled = p < 2.0 ? self.sign() * self.abs().pow(p - 1.0) : self * self.abs().pow(p - 2.0);
  return {scaled * (g / safe_norm.pow(p - 1.0))};
}

std::vector<Tensor> logsumexp_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  auto mask = reduction_mask(self.dim(), a.inputs[1], "logsumexp");
  const bool keepdim = a.inputs[2].to_bool();
  Tensor g = unsqueeze_reduced(a.grad_outputs[0], mask, keepdim);
  Tensor result = unsqueeze_reduced(a.outputs[0], mask, keepdim);
  return {g * (self - result).exp()};
}

std::vector<Tensor> cumsum_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const Tensor& g = a.grad_outputs[0];
  if (self.dim() == 0) return {g};
  return {reversed_cumsum(g, wrap_dim(a.inputs[1].to_int(), self.dim(), "cumsum"))};
}

// d out_i / d x_k = prod_{j <= i, j != k} x_j for i >= k. Before a row's first zero that is
// out_i / x_k; at the first zero it is the cumprod of the row with that zero replaced by 1; after
// it, every such product contains the first zero and is 0.
std::vector<Tensor> cumprod_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  const Tensor& g = a.grad_outputs[0];
  if (self.dim() == 0) return {g};
  const int64_t dim = wrap_dim(a.inputs[1].to_int(), self.dim(), "cumprod");
  Tensor is_zero = self.eq(0);
  Tensor zeros_so_far = is_zero.cumsum(dim);
  Tensor before_zero = zeros_so_far.eq(0);
  Tensor first_zero = is_zero.logical_and(zeros_so_far.eq(1));
  Tensor before = reversed_cumsum(g * a.outputs[0], dim) / where(before_zero, self, 1.0);
  Tensor at = reversed_cumsum(g * where(first_zero, 1.0, self).cumprod(dim), dim);
  return {where(before_zero, before, where(first_zero, at, 0.0))};
}

}  // namespace kiln::ops
