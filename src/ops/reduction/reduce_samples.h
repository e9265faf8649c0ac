#pragma once
// Op-info samples for the reductions: dim lists (none, one, several, negative, keepdim),
// non-contiguous and transposed inputs, 0-dim, empty, an integer input where valid.
#include "ops/samples.h"

namespace kiln::ops {

// (self, dim, keepdim, dtype) for sum/mean; floating_only leaves integer inputs to dtype=.
std::vector<Sample> sum_samples(bool floating_only);
// (self, dim, keepdim) with an int[1] dim. allow_empty: samples that reduce an empty dim;
// allow_all_dims: samples with an empty dim list (PyTorch's logsumexp rejects those).
std::vector<Sample> dim_list_samples(bool with_int, bool allow_empty, bool allow_all_dims);
// (self): reductions over everything. small_values keeps products in range.
std::vector<Sample> full_reduction_samples(bool allow_empty, bool small_values);
// (self, dim, keepdim) with a single int dim.
std::vector<Sample> single_dim_samples(bool allow_empty, bool small_values);
// Inputs with exact zeros for prod and cumprod, whose gradients divide by nothing:
// (self) for prod, (self, dim, keepdim) for prod.dim_int, (self, dim) for cumprod.
std::vector<Sample> prod_zero_samples();
std::vector<Sample> prod_dim_zero_samples();
std::vector<Sample> cumprod_zero_samples();
// (self, dim, keepdim) with an optional int dim (argmax/argmin).
std::vector<Sample> optional_dim_samples();
// (self, dim, correction, keepdim) for var/std/var_mean.
std::vector<Sample> var_samples();
// (self, ord, dim, keepdim, dtype) for linalg_vector_norm.
std::vector<Sample> norm_samples();
// any/all: (self) and (self, dim, keepdim), over float (with zeros), int, uint8 and bool.
std::vector<Sample> logical_full_samples();
std::vector<Sample> logical_dim_samples();
// (self, dim, dtype) for cumsum/cumprod.
std::vector<Sample> scan_samples(bool is_prod);

}  // namespace kiln::ops
