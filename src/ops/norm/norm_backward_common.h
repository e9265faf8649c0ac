#pragma once
// Shared pieces of the normalization backward ops: output_mask handling (an output left out of
// the mask is None, as in aten) and the derivative helpers the forward ops' declarations use.
#include "ops/norm/norm_common.h"

#include <array>
#include <optional>
#include <vector>

namespace kiln::ops::norm {

using MaybeMetas = std::array<std::optional<TensorMeta>, 3>;

// The bool[3] output_mask argument.
std::array<bool, 3> output_mask(const IValue& v);

// Allocates the outputs a backward op computes; the others stay undefined (None).
Outs allocate(const MaybeMetas& metas);

// The metas as a Custom op's meta-device result.
Outs meta_outputs(const MaybeMetas& metas);

// A [C] meta for grad_weight/grad_bias of a per-channel op.
TensorMeta channel_meta(int64_t C, DType dtype, Device device);

// The first n values of `t` (any floating dtype) as doubles; n times `fallback` when t is
// undefined (an absent weight or statistic).
std::vector<double> as_doubles(const Tensor& t, int64_t n, double fallback);

// Derivatives of the forward ops (one gradient per tensor argument, None included).
std::vector<Tensor> native_layer_norm_derivative(const BackwardArgs& a);
std::vector<Tensor> rms_norm_derivative(const BackwardArgs& a);
std::vector<Tensor> native_batch_norm_derivative(const BackwardArgs& a);
std::vector<Tensor> native_group_norm_derivative(const BackwardArgs& a);

}  // namespace kiln::ops::norm
