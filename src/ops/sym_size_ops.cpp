#include <kiln/ops/registry.h>
#include <kiln/ops/sym_size_ops.h>

#include <algorithm>

namespace kiln {

namespace {

// Concrete sizes go in as plain ints, so that a static trace records exactly the arguments the
// IntList overloads record (graph keys and common-subexpression matching see no difference).
ops::IValue sizes_arg(SymIntList sizes) {
  if (std::any_of(sizes.begin(), sizes.end(), [](const SymInt& s) { return s.is_symbolic(); })) {
    return ops::IValue(sizes);
  }
  std::vector<int64_t> plain;
  plain.reserve(sizes.size());
  for (const SymInt& s : sizes) plain.push_back(s.raw());
  return ops::IValue(std::move(plain));
}

ops::IValue size_arg(SymInt size) {
  return size.is_symbolic() ? ops::IValue(std::move(size)) : ops::IValue(size.raw());
}

}  // namespace

Tensor view_symint(const Tensor& self, SymIntList size, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("view");
  return ops::call1(op, {self, sizes_arg(size)}, &loc);
}

Tensor reshape_symint(const Tensor& self, SymIntList shape, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("reshape");
  return ops::call1(op, {self, sizes_arg(shape)}, &loc);
}

Tensor expand_symint(const Tensor& self, SymIntList size, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("expand");
  return ops::call1(op, {self, sizes_arg(size), false}, &loc);
}

Tensor narrow_symint(const Tensor& self, int64_t dim, SymInt start, SymInt length,
                     const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("narrow");
  return ops::call1(op, {self, dim, size_arg(std::move(start)), size_arg(std::move(length))}, &loc);
}

Tensor full_symint(SymIntList size, const Scalar& fill_value, TensorOptions options,
                   const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("full");
  Tensor t =
      ops::call1(op, {sizes_arg(size), fill_value, options.dtype_opt(), options.device()}, &loc);
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor numel_tensor(const Tensor& t, TensorOptions options) {
  return full_symint(t.sym_sizes(), 1, options).sum();
}

}  // namespace kiln
