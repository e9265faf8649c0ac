#pragma once
// Tensor: a shared handle to a TensorImpl, with PyTorch's methods. Copying a Tensor shares the
// data (like `b = a` in Python); `clone()` copies it. Op methods forward to the free functions in
// <kiln/ops/...>, which dispatch through the op registry.
#include <kiln/core/memory_format.h>
#include <kiln/core/scalar.h>
#include <kiln/core/tensor_impl.h>
#include <kiln/core/tensor_options.h>

#include <kiln/core/source_location.h>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace kiln {
namespace autograd {
class Node;
}

class Tensor;
using TensorList = ArrayRef<Tensor>;

class Tensor {
 public:
  Tensor() = default;  // undefined
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  long use_count() const { return impl_.use_count(); }

  // ---- metadata ----
  int64_t dim() const { return checked()->dim(); }
  int64_t ndimension() const { return dim(); }
  IntList sizes() const { return checked()->sizes(); }
  IntList strides() const { return checked()->strides(); }
  IntList shape() const { return sizes(); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t stride(int64_t d) const;
  SymIntList sym_sizes() const { return checked()->sym_sizes(); }
  SymIntList sym_strides() const { return checked()->sym_strides(); }
  SymInt sym_size(int64_t d) const;
  int64_t numel() const { return checked()->numel(); }
  SymInt sym_numel() const { return checked()->sym_numel(); }
  int64_t storage_offset() const { return checked()->storage_offset(); }
  SymInt sym_storage_offset() const { return checked()->sym_storage_offset(); }
  DType dtype() const { return checked()->dtype(); }
  DType scalar_type() const { return dtype(); }
  Device device() const { return checked()->device(); }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
  size_t itemsize() const { return kiln::itemsize(dtype()); }
  size_t element_size() const { return itemsize(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(); }
  bool is_contiguous() const { return checked()->is_contiguous(); }
  bool is_contiguous(MemoryFormat fmt) const;
  // ChannelsLast(3d) when dense in that layout and not row-major contiguous, else Contiguous.
  MemoryFormat suggest_memory_format() const;
  bool is_floating_point() const { return kiln::is_floating_point(dtype()); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_meta() const { return device().is_meta(); }
  const Storage& storage() const { return checked()->storage(); }
  uint32_t _version() const { return checked()->version(); }

  // Pointer to the first element. T must match dtype() (raises kiln::Error otherwise).
  template <typename T>
  T* data_ptr() const;
  void* data_ptr() const { return checked()->data(); }

  // ---- autograd (src/autograd gives these meaning) ----
  bool requires_grad() const { return checked()->requires_grad(); }
  // Only leaves may change the flag (PyTorch's rule); floating-point dtypes only.
  Tensor& requires_grad_(bool r = true);
  Tensor& set_requires_grad(bool r) { return requires_grad_(r); }
  // A leaf: created by the user (or with requires_grad false), not by a recorded op.
  bool is_leaf() const;
  // The gradient accumulated by backward(): leaves, and non-leaves after retain_grad().
  const Tensor& grad() const;
  Tensor& mutable_grad();  // for `t.mutable_grad() = ...` (PyTorch's `t.grad = ...`)
  // The node that computes this tensor's gradient contributions; null for leaves.
  std::shared_ptr<autograd::Node> grad_fn() const;
  uint32_t output_nr() const;  // which output of grad_fn's forward op this tensor is
  // autograd::backward({*this}, {gradient}, ...): gradient may be omitted for one element.
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, TensorList inputs = {}) const;
  void retain_grad() const;
  bool retains_grad() const;
  // hook(grad) runs when this tensor's gradient is computed; a defined result replaces it.
  // Returns a handle for remove_hook.
  size_t register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void remove_hook(size_t handle) const;

  // ---- conversion, copies ----
  Scalar item(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  template <typename T>
  T item(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const {
    return item(loc).to<T>();
  }
  Tensor contiguous(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor contiguous(MemoryFormat fmt,
                    const kiln::SourceLocation& loc = kiln::SourceLocation::current())
      const;  // a copy in fmt's layout unless already so
  Tensor clone(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor to(DType dtype, bool copy = false,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor to(Device device, bool copy = false,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor to(TensorOptions options, bool copy = false,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& copy_(const Tensor& src,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& fill_(const Scalar& value,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& fill_(const Tensor& value,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& zero_(const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor detach() const;
  std::string str() const;  // as print() shows it
  std::string to_string() const { return str(); }
  // The values as a flat vector in row-major order, converted to T.
  template <typename T>
  std::vector<T> tolist() const;

  // ---- views ----
  Tensor view(IntList size,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor view_as(const Tensor& other,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor reshape(IntList size,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor reshape_as(const Tensor& other,
                    const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor unflatten(int64_t dim, IntList sizes,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor permute(IntList dims,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor transpose(int64_t dim0, int64_t dim1,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor t(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor mT(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor squeeze(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor squeeze(int64_t dim,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor squeeze(IntList dims,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor unsqueeze(int64_t dim,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor expand(IntList size,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor expand_as(const Tensor& other,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor broadcast_to(IntList size,
                      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor select(int64_t dim, int64_t index,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor operator[](int64_t index) const;  // select(0, index); names no call site of its own
  std::vector<Tensor> unbind(
      int64_t dim = 0, const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  std::vector<Tensor> split(
      int64_t split_size, int64_t dim = 0,
      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  std::vector<Tensor> split(
      IntList split_sizes, int64_t dim = 0,
      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  std::vector<Tensor> split_with_sizes(
      IntList split_sizes, int64_t dim = 0,
      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  std::vector<Tensor> chunk(
      int64_t chunks, int64_t dim = 0,
      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor as_strided(IntList size, IntList stride,
                    std::optional<int64_t> storage_offset = std::nullopt,
                    const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor movedim(int64_t source, int64_t destination,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor movedim(IntList source, IntList destination,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;

  // ---- unary ----
#define KILN_TENSOR_UNARY_METHOD(name)                                                  \
  Tensor name(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const; \
  Tensor& name##_(const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  KILN_TENSOR_UNARY_METHOD(neg)
  KILN_TENSOR_UNARY_METHOD(abs)
  KILN_TENSOR_UNARY_METHOD(sign)
  KILN_TENSOR_UNARY_METHOD(exp)
  KILN_TENSOR_UNARY_METHOD(exp2)
  KILN_TENSOR_UNARY_METHOD(expm1)
  KILN_TENSOR_UNARY_METHOD(log)
  KILN_TENSOR_UNARY_METHOD(log2)
  KILN_TENSOR_UNARY_METHOD(log10)
  KILN_TENSOR_UNARY_METHOD(log1p)
  KILN_TENSOR_UNARY_METHOD(sqrt)
  KILN_TENSOR_UNARY_METHOD(rsqrt)
  KILN_TENSOR_UNARY_METHOD(sin)
  KILN_TENSOR_UNARY_METHOD(cos)
  KILN_TENSOR_UNARY_METHOD(tan)
  KILN_TENSOR_UNARY_METHOD(asin)
  KILN_TENSOR_UNARY_METHOD(acos)
  KILN_TENSOR_UNARY_METHOD(atan)
  KILN_TENSOR_UNARY_METHOD(sinh)
  KILN_TENSOR_UNARY_METHOD(cosh)
  KILN_TENSOR_UNARY_METHOD(tanh)
  KILN_TENSOR_UNARY_METHOD(asinh)
  KILN_TENSOR_UNARY_METHOD(acosh)
  KILN_TENSOR_UNARY_METHOD(atanh)
  KILN_TENSOR_UNARY_METHOD(erf)
  KILN_TENSOR_UNARY_METHOD(erfc)
  KILN_TENSOR_UNARY_METHOD(erfinv)
  KILN_TENSOR_UNARY_METHOD(sigmoid)
  KILN_TENSOR_UNARY_METHOD(relu)
  KILN_TENSOR_UNARY_METHOD(floor)
  KILN_TENSOR_UNARY_METHOD(ceil)
  KILN_TENSOR_UNARY_METHOD(trunc)
  KILN_TENSOR_UNARY_METHOD(frac)
  KILN_TENSOR_UNARY_METHOD(reciprocal)
  KILN_TENSOR_UNARY_METHOD(square)
  KILN_TENSOR_UNARY_METHOD(logical_not)
  KILN_TENSOR_UNARY_METHOD(bitwise_not)
#undef KILN_TENSOR_UNARY_METHOD
  Tensor round(int64_t decimals = 0,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& round_(int64_t decimals = 0,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor logit(std::optional<double> eps = std::nullopt,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor isnan(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor isinf(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor isfinite(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor nan_to_num(std::optional<double> nan = std::nullopt,
                    std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt,
                    const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;

  // ---- binary and ternary ----
  Tensor add(const Tensor& other, const Scalar& alpha = 1,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor sub(const Tensor& other, const Scalar& alpha = 1,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& sub_(const Scalar& other, const Scalar& alpha = 1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor div(const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor div(const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& div_(const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& div_(const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
#define KILN_TENSOR_BINARY_METHOD(name)                                                 \
  Tensor name(const Tensor& other,                                                      \
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const; \
  Tensor name(const Scalar& other,                                                      \
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const; \
  Tensor& name##_(const Tensor& other,                                                  \
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());   \
  Tensor& name##_(const Scalar& other,                                                  \
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  KILN_TENSOR_BINARY_METHOD(mul)
  KILN_TENSOR_BINARY_METHOD(floor_divide)
  KILN_TENSOR_BINARY_METHOD(remainder)
  KILN_TENSOR_BINARY_METHOD(fmod)
  KILN_TENSOR_BINARY_METHOD(pow)
  KILN_TENSOR_BINARY_METHOD(atan2)
  KILN_TENSOR_BINARY_METHOD(eq)
  KILN_TENSOR_BINARY_METHOD(ne)
  KILN_TENSOR_BINARY_METHOD(lt)
  KILN_TENSOR_BINARY_METHOD(le)
  KILN_TENSOR_BINARY_METHOD(gt)
  KILN_TENSOR_BINARY_METHOD(ge)
  KILN_TENSOR_BINARY_METHOD(logical_and)
  KILN_TENSOR_BINARY_METHOD(logical_or)
  KILN_TENSOR_BINARY_METHOD(logical_xor)
  KILN_TENSOR_BINARY_METHOD(bitwise_and)
  KILN_TENSOR_BINARY_METHOD(bitwise_or)
  KILN_TENSOR_BINARY_METHOD(bitwise_xor)
  KILN_TENSOR_BINARY_METHOD(bitwise_left_shift)
  KILN_TENSOR_BINARY_METHOD(bitwise_right_shift)
#undef KILN_TENSOR_BINARY_METHOD
  Tensor maximum(const Tensor& other,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor minimum(const Tensor& other,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor where(const Tensor& condition, const Tensor& other,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor where(const Tensor& condition, const Scalar& other,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor clamp(const Tensor& min, const Tensor& max,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor clamp_min(const Scalar& min,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor clamp_max(const Scalar& max,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor lerp(const Tensor& end, const Scalar& weight,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor lerp(const Tensor& end, const Tensor& weight,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& lerp_(const Tensor& end, const Scalar& weight,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value = 1,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value = 1,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());

  // ---- reductions (an empty dim list reduces over every dim, as in PyTorch) ----
  Tensor sum(std::optional<DType> dtype = std::nullopt,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor sum(IntList dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor mean(std::optional<DType> dtype = std::nullopt,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor mean(IntList dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor prod(std::optional<DType> dtype = std::nullopt,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor max(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  std::tuple<Tensor, Tensor> max(
      int64_t dim, bool keepdim = false,
      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor min(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  std::tuple<Tensor, Tensor> min(
      int64_t dim, bool keepdim = false,
      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor amax(IntList dims = {}, bool keepdim = false,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor amin(IntList dims = {}, bool keepdim = false,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor var(IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
             bool keepdim = false,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor std(IntList dims = {}, std::optional<Scalar> correction = std::nullopt,
             bool keepdim = false,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor norm(const Scalar& p = 2, IntList dims = {}, bool keepdim = false,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor logsumexp(IntList dims, bool keepdim = false,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor any(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor any(int64_t dim, bool keepdim = false,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor all(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor all(int64_t dim, bool keepdim = false,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor cumprod(int64_t dim, std::optional<DType> dtype = std::nullopt,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;

  // ---- linear algebra ----
  Tensor matmul(const Tensor& other,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor mm(const Tensor& mat2,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor bmm(const Tensor& mat2,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor dot(const Tensor& other,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor outer(const Tensor& vec2,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
               const Scalar& alpha = 1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& addmm_(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
                 const Scalar& alpha = 1,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                 const Scalar& alpha = 1,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& baddbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
                   const Scalar& alpha = 1,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());

  // ---- shape ----
  Tensor flip(IntList dims,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor roll(IntList shifts, IntList dims = {},
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor repeat(IntList repeats,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor tile(IntList dims,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor tril(int64_t diagonal = 0,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor triu(int64_t diagonal = 0,
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& tril_(int64_t diagonal = 0,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& triu_(int64_t diagonal = 0,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  // (values, indices); stable keeps the order of equal elements.
  std::tuple<Tensor, Tensor> sort(
      int64_t dim = -1, bool descending = false, bool stable = false,
      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, bool stable = false,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  std::tuple<Tensor, Tensor> topk(
      int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true,
      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;

  // ---- indexing ----
  Tensor index_select(int64_t dim, const Tensor& index,
                      const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor gather(int64_t dim, const Tensor& index,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src,
                       const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  // reduce: "sum", "prod", "mean", "amax" or "amin".
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, bool include_self = true,
                        const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src,
                          std::string_view reduce, bool include_self = true,
                          const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor masked_fill(const Tensor& mask, const Scalar& value,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value,
                       const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor masked_select(const Tensor& mask,
                       const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor nonzero(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt,
                        const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  // Advanced indexing, self[indices...]: one entry per leading dim; an undefined Tensor stands
  // for a full slice (":"). Integer (int64/int32) and boolean index tensors.
  Tensor index(TensorList indices,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor index_put(TensorList indices, const Tensor& values, bool accumulate = false,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor& index_put_(TensorList indices, const Tensor& values, bool accumulate = false,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());

  // ---- neural-network ops that PyTorch also offers as methods ----
  Tensor softmax(int64_t dim, std::optional<DType> dtype = std::nullopt,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;
  Tensor log_softmax(int64_t dim, std::optional<DType> dtype = std::nullopt,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;

  // ---- random (in place, from the default Philox generator) ----
  Tensor& uniform_(double from = 0.0, double to = 1.0,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& normal_(double mean = 0.0, double std = 1.0,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor& bernoulli_(double p = 0.5,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());
  Tensor bernoulli(const kiln::SourceLocation& loc = kiln::SourceLocation::current()) const;

 private:
  TensorImpl* checked() const {
    if (!impl_) [[unlikely]]
      throw_undefined();
    return impl_.get();
  }
  [[noreturn]] static void throw_undefined();
  std::shared_ptr<TensorImpl> impl_;
};

template <typename T>
T* Tensor::data_ptr() const {
  KILN_CHECK_T(TypeError, dtype_of_v<std::remove_const_t<T>> == dtype(),
               "Tensor.data_ptr: expected a tensor of dtype {}, got {}",
               dtype_name(dtype_of_v<std::remove_const_t<T>>), dtype_name(dtype()));
  return static_cast<T*>(checked()->data());
}

// Wraps a dim index (negative counts from the end); raises kiln::IndexError naming op.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op = "dim");

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- operators, as in PyTorch ----
Tensor operator-(const Tensor& a);
Tensor operator~(const Tensor& a);
#define KILN_TENSOR_OPERATOR(op)                        \
  Tensor operator op(const Tensor& a, const Tensor& b); \
  Tensor operator op(const Tensor& a, const Scalar& b); \
  Tensor operator op(const Scalar& a, const Tensor& b);
KILN_TENSOR_OPERATOR(+)
KILN_TENSOR_OPERATOR(-)
KILN_TENSOR_OPERATOR(*)
KILN_TENSOR_OPERATOR(/)
KILN_TENSOR_OPERATOR(%)
KILN_TENSOR_OPERATOR(==)
KILN_TENSOR_OPERATOR(!=)
KILN_TENSOR_OPERATOR(<)
KILN_TENSOR_OPERATOR(<=)
KILN_TENSOR_OPERATOR(>)
KILN_TENSOR_OPERATOR(>=)
KILN_TENSOR_OPERATOR(&)
KILN_TENSOR_OPERATOR(|)
KILN_TENSOR_OPERATOR(^)
KILN_TENSOR_OPERATOR(<<)
KILN_TENSOR_OPERATOR(>>)
#undef KILN_TENSOR_OPERATOR
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Scalar& b);

}  // namespace kiln
