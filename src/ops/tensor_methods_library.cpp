// Tensor's methods for the linear-algebra, shape and indexing ops: each forwards to the free
// function (or, for in-place forms without one, to the registry's derived variant).
#include <kiln/kiln.h>

namespace kiln {

// ---- linear algebra ----
Tensor Tensor::matmul(const Tensor& other, const kiln::SourceLocation& loc) const {
  return kiln::matmul(*this, other, loc);
}
Tensor Tensor::mm(const Tensor& mat2, const kiln::SourceLocation& loc) const {
  return kiln::mm(*this, mat2, loc);
}
Tensor Tensor::bmm(const Tensor& mat2, const kiln::SourceLocation& loc) const {
  return kiln::bmm(*this, mat2, loc);
}
Tensor Tensor::dot(const Tensor& other, const kiln::SourceLocation& loc) const {
  return kiln::dot(*this, other, loc);
}
Tensor Tensor::outer(const Tensor& vec2, const kiln::SourceLocation& loc) const {
  return kiln::outer(*this, vec2, loc);
}
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                     const Scalar& alpha, const kiln::SourceLocation& loc) const {
  return kiln::addmm(*this, mat1, mat2, beta, alpha, loc);
}
Tensor& Tensor::addmm_(const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                       const Scalar& alpha, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("addmm_");
  ops::call(op, {*this, mat1, mat2, beta, alpha}, &loc);
  return *this;
}
Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                       const Scalar& alpha, const kiln::SourceLocation& loc) const {
  return kiln::baddbmm(*this, batch1, batch2, beta, alpha, loc);
}
Tensor& Tensor::baddbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                         const Scalar& alpha, const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("baddbmm_");
  ops::call(op, {*this, batch1, batch2, beta, alpha}, &loc);
  return *this;
}

// ---- shape ----
Tensor Tensor::flip(IntList dims, const kiln::SourceLocation& loc) const {
  return kiln::flip(*this, dims, loc);
}
Tensor Tensor::roll(IntList shifts, IntList dims, const kiln::SourceLocation& loc) const {
  return kiln::roll(*this, shifts, dims, loc);
}
Tensor Tensor::repeat(IntList repeats, const kiln::SourceLocation& loc) const {
  return kiln::repeat(*this, repeats, loc);
}
Tensor Tensor::tile(IntList dims, const kiln::SourceLocation& loc) const {
  return kiln::tile(*this, dims, loc);
}
Tensor Tensor::tril(int64_t diagonal, const kiln::SourceLocation& loc) const {
  return kiln::tril(*this, diagonal, loc);
}
Tensor Tensor::triu(int64_t diagonal, const kiln::SourceLocation& loc) const {
  return kiln::triu(*this, diagonal, loc);
}
Tensor& Tensor::tril_(int64_t diagonal, const kiln::SourceLocation& loc) {
  return kiln::tril_(*this, diagonal, loc);
}
Tensor& Tensor::triu_(int64_t diagonal, const kiln::SourceLocation& loc) {
  return kiln::triu_(*this, diagonal, loc);
}

// ---- indexing ----
Tensor Tensor::index_select(int64_t dim, const Tensor& index,
                            const kiln::SourceLocation& loc) const {
  return kiln::index_select(*this, dim, index, loc);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index, const kiln::SourceLocation& loc) const {
  return kiln::gather(*this, dim, index, /*sparse_grad=*/false, loc);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src,
                       const kiln::SourceLocation& loc) const {
  return kiln::scatter(*this, dim, index, src, loc);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value,
                       const kiln::SourceLocation& loc) const {
  return kiln::scatter(*this, dim, index, value, loc);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src,
                         const kiln::SourceLocation& loc) {
  return kiln::scatter_(*this, dim, index, src, loc);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value,
                         const kiln::SourceLocation& loc) {
  return kiln::scatter_(*this, dim, index, value, loc);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src,
                           const kiln::SourceLocation& loc) const {
  return kiln::scatter_add(*this, dim, index, src, loc);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src,
                             const kiln::SourceLocation& loc) {
  return kiln::scatter_add_(*this, dim, index, src, loc);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value,
                           const kiln::SourceLocation& loc) const {
  return kiln::masked_fill(*this, mask, value, loc);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value,
                             const kiln::SourceLocation& loc) {
  return kiln::masked_fill_(*this, mask, value, loc);
}

}  // namespace kiln
