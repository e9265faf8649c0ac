#include <kiln/ops/registry.h>
#include <kiln/ops/sym_size_ops.h>

namespace kiln {

Tensor view_symint(const Tensor& self, SymIntList size, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("view");
  return ops::call1(op, {self, size}, &loc);
}

Tensor reshape_symint(const Tensor& self, SymIntList shape, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("reshape");
  return ops::call1(op, {self, shape}, &loc);
}

Tensor expand_symint(const Tensor& self, SymIntList size, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("expand");
  return ops::call1(op, {self, size, false}, &loc);
}

Tensor narrow_symint(const Tensor& self, int64_t dim, SymInt start, SymInt length,
                     const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("narrow");
  return ops::call1(op, {self, dim, std::move(start), std::move(length)}, &loc);
}

Tensor full_symint(SymIntList size, const Scalar& fill_value, TensorOptions options,
                   const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("full");
  return ops::call1(op, {size, fill_value, options.dtype_opt(), options.device()}, &loc);
}

}  // namespace kiln
