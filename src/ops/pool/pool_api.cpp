// The typed C++ API of the pooling ops: each calls its registry declaration.
#include <kiln/ops/pool.h>
#include <kiln/ops/registry.h>

namespace kiln {
namespace {

using ops::op_named;

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntList kernel_size,
                                                   IntList stride, IntList padding,
                                                   IntList dilation, bool ceil_mode,
                                                   const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("max_pool2d_with_indices");
  auto r = ops::call(o, {self, kernel_size, stride, padding, dilation, ceil_mode}, &loc);
  return {r[0], r[1]};
}

Tensor max_pool2d(const Tensor& self, IntList kernel_size, IntList stride, IntList padding,
                  IntList dilation, bool ceil_mode, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("max_pool2d");
  return ops::call1(o, {self, kernel_size, stride, padding, dilation, ceil_mode}, &loc);
}

Tensor avg_pool2d(const Tensor& self, IntList kernel_size, IntList stride, IntList padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override,
                  const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("avg_pool2d");
  return ops::call1(
      o, {self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override},
      &loc);
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntList output_size,
                           const kiln::SourceLocation& loc) {
  static const auto& o = op_named("adaptive_avg_pool2d");
  return ops::call1(o, {self, output_size}, &loc);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntList output_size,
                                               const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("adaptive_max_pool2d");
  auto r = ops::call(o, {self, output_size}, &loc);
  return {r[0], r[1]};
}

}  // namespace kiln
