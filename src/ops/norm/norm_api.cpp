// The typed C++ API of the normalization ops: each calls its registry declaration.
#include "ops/norm/norm_common.h"

#include <kiln/ops/norm.h>
#include <kiln/ops/registry.h>

namespace kiln {
namespace {

using ops::norm::optional_arg;

using ops::op_named;

std::tuple<Tensor, Tensor, Tensor> triple(const std::vector<Tensor>& r) {
  return {r[0], r[1], r[2]};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntList normalized_shape,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("native_layer_norm");
  return triple(
      ops::call(o, {input, normalized_shape, optional_arg(weight), optional_arg(bias), eps}, &loc));
}

Tensor layer_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("layer_norm");
  return ops::call1(o, {input, normalized_shape, optional_arg(weight), optional_arg(bias), eps},
                    &loc);
}

Tensor rms_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight,
                std::optional<double> eps, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("rms_norm");
  return ops::call1(o, {input, normalized_shape, optional_arg(weight), eps}, &loc);
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight,
                                                     const Tensor& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps,
                                                     const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("native_group_norm");
  return triple(
      ops::call(o, {input, optional_arg(weight), optional_arg(bias), N, C, HxW, group, eps}, &loc));
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("group_norm");
  return ops::call1(o, {input, num_groups, optional_arg(weight), optional_arg(bias), eps}, &loc);
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight,
                                                     const Tensor& bias, const Tensor& running_mean,
                                                     const Tensor& running_var, bool training,
                                                     double momentum, double eps,
                                                     const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("native_batch_norm");
  return triple(
      ops::call(o,
                {input, optional_arg(weight), optional_arg(bias), optional_arg(running_mean),
                 optional_arg(running_var), training, momentum, eps},
                &loc));
}

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("batch_norm");
  return ops::call1(o,
                    {input, optional_arg(weight), optional_arg(bias), optional_arg(running_mean),
                     optional_arg(running_var), training, momentum, eps, false},
                    &loc);
}

}  // namespace kiln
