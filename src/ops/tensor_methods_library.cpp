// Tensor's methods for the linear-algebra, shape and indexing ops: each forwards to the free
// function (or, for in-place forms without one, to the registry's derived variant).
#include <kiln/kiln.h>

namespace kiln {

// ---- linear algebra ----
Tensor Tensor::matmul(const Tensor& other) const { return kiln::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& mat2) const { return kiln::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const { return kiln::bmm(*this, mat2); }
Tensor Tensor::dot(const Tensor& other) const { return kiln::dot(*this, other); }
Tensor Tensor::outer(const Tensor& vec2) const { return kiln::outer(*this, vec2); }
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                     const Scalar& alpha) const {
  return kiln::addmm(*this, mat1, mat2, beta, alpha);
}
Tensor& Tensor::addmm_(const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                       const Scalar& alpha) {
  static const auto& op = ops::OpRegistry::instance().get("addmm_");
  ops::call(op, {*this, mat1, mat2, beta, alpha});
  return *this;
}
Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                       const Scalar& alpha) const {
  return kiln::baddbmm(*this, batch1, batch2, beta, alpha);
}
Tensor& Tensor::baddbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                         const Scalar& alpha) {
  static const auto& op = ops::OpRegistry::instance().get("baddbmm_");
  ops::call(op, {*this, batch1, batch2, beta, alpha});
  return *this;
}

// ---- shape ----
Tensor Tensor::flip(IntList dims) const { return kiln::flip(*this, dims); }
Tensor Tensor::roll(IntList shifts, IntList dims) const { return kiln::roll(*this, shifts, dims); }
Tensor Tensor::repeat(IntList repeats) const { return kiln::repeat(*this, repeats); }
Tensor Tensor::tile(IntList dims) const { return kiln::tile(*this, dims); }
Tensor Tensor::tril(int64_t diagonal) const { return kiln::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return kiln::triu(*this, diagonal); }
Tensor& Tensor::tril_(int64_t diagonal) { return kiln::tril_(*this, diagonal); }
Tensor& Tensor::triu_(int64_t diagonal) { return kiln::triu_(*this, diagonal); }

// ---- indexing ----
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return kiln::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return kiln::gather(*this, dim, index);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return kiln::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value) const {
  return kiln::scatter(*this, dim, index, value);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  return kiln::scatter_(*this, dim, index, src);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value) {
  return kiln::scatter_(*this, dim, index, value);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return kiln::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  return kiln::scatter_add_(*this, dim, index, src);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return kiln::masked_fill(*this, mask, value);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  return kiln::masked_fill_(*this, mask, value);
}

}  // namespace kiln
