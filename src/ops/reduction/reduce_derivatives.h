#pragma once
// Derivative formulas of the reductions and scans (PyTorch's derivatives.yaml conventions),
// written in kiln ops so that they are differentiable themselves. Each is referenced from its
// op's declaration in reduce_ops.cpp.
#include <kiln/ops/registry.h>

#include <vector>

namespace kiln::ops {

// prod / prod.dim_int: the product of the other elements, exact with zeros in the input.
std::vector<Tensor> prod_derivative(const BackwardArgs& a);
std::vector<Tensor> prod_dim_derivative(const BackwardArgs& a);
// max / min (full): the gradient shared evenly among the elements equal to the result.
std::vector<Tensor> extreme_full_derivative(const BackwardArgs& a);
// max.dim / min.dim: the gradient goes to the returned index.
std::vector<Tensor> extreme_dim_derivative(const BackwardArgs& a);
// amax / amin: the gradient shared evenly among the ties of each reduced slice.
std::vector<Tensor> amax_derivative(const BackwardArgs& a);
// var / std / var_mean (.correction).
std::vector<Tensor> var_derivative(const BackwardArgs& a);
std::vector<Tensor> std_derivative(const BackwardArgs& a);
std::vector<Tensor> var_mean_derivative(const BackwardArgs& a);
std::vector<Tensor> vector_norm_derivative(const BackwardArgs& a);
std::vector<Tensor> logsumexp_derivative(const BackwardArgs& a);
std::vector<Tensor> cumsum_derivative(const BackwardArgs& a);
std::vector<Tensor> cumprod_derivative(const BackwardArgs& a);

// x divided by the number of elements a reduction of `self` over mask combines (a mean): by a
// number when those sizes are concrete, else by that count as a 0-dim tensor of x's dtype (a
// graph records symbolic sizes only as tensor shapes).
Tensor divide_by_reduced_count(const Tensor& x, const Tensor& self, const std::vector<bool>& mask);

}  // namespace kiln::ops
