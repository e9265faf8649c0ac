#pragma once
// Normalization ops (aten's semantics): layer norm, RMS norm, group norm, batch norm. An
// undefined Tensor for weight, bias or a running statistic means None.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <tuple>

namespace kiln {

// (output, mean, rstd); mean/rstd have the input's leading dims and size 1 in normalized dims.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(
    const Tensor& input, IntList normalized_shape, const Tensor& weight, const Tensor& bias,
    double eps, const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor layer_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// eps defaults to the epsilon of the dtype the op computes in (float for 16-bit floats).
Tensor rms_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight = Tensor(),
                std::optional<double> eps = std::nullopt,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// (output, mean, rstd) with mean/rstd of shape (N, group).
std::tuple<Tensor, Tensor, Tensor> native_group_norm(
    const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t N, int64_t C,
    int64_t HxW, int64_t group, double eps,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// (output, save_mean, save_invstd); in training, updates running_mean/running_var in place.
// save_mean/save_invstd are empty in evaluation mode.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(
    const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
    const Tensor& running_var, bool training, double momentum, double eps,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
