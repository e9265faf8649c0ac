// Tensor's op methods: each forwards to the free function of the same name.
#include <kiln/kiln.h>

#include "ops/iterator/tensor_iterator.h"

namespace kiln {

// ---- conversion, copies ----
Tensor Tensor::contiguous(const kiln::SourceLocation& loc) const {
  return kiln::contiguous(*this, loc);
}
Tensor Tensor::contiguous(MemoryFormat fmt, const kiln::SourceLocation& loc) const {
  return kiln::contiguous(*this, fmt, loc);
}
bool Tensor::is_contiguous(MemoryFormat fmt) const {
  if (fmt == MemoryFormat::Contiguous) return is_contiguous();
  if (impl()->has_symbolic_sizes_strides()) [[unlikely]]
    return is_contiguous_in(sym_sizes(), sym_strides(), fmt);
  return is_contiguous_in(sizes(), strides(), fmt);
}
MemoryFormat Tensor::suggest_memory_format() const {
  if (impl()->has_symbolic_sizes_strides()) [[unlikely]]
    return kiln::suggest_memory_format(sym_sizes(), sym_strides());
  return kiln::suggest_memory_format(sizes(), strides());
}
Tensor Tensor::clone(const kiln::SourceLocation& loc) const { return kiln::clone(*this, loc); }
Tensor Tensor::to(DType dtype, bool copy, const kiln::SourceLocation& loc) const {
  return kiln::to(*this, dtype, copy, loc);
}
Tensor Tensor::to(Device device, bool copy, const kiln::SourceLocation& loc) const {
  const Device here = this->device();
  // "cuda" (no index) names whichever CUDA device the tensor is on.
  if (device.type() == here.type() && (!device.has_index() || device == here || here.is_cpu()))
    return copy ? clone(loc) : *this;
  KILN_CHECK(!device.is_meta() && !here.is_meta(), "to: cannot copy from {} to {}", here.str(),
             device.str());
  // Across devices: a tensor in this one's layout there (PyTorch's preserve_format: a dense
  // channels-last or transposed tensor stays so), filled by copy_ (whose kernel for the pair of
  // devices the CUDA layer registers; without it, allocating on the device raises).
  ops::CallSiteScope call_site(&loc);
  const TensorOptions options = TensorOptions(dtype()).device(device);
  Tensor out;
  if (impl()->has_symbolic_sizes_strides()) {
    out = kiln::empty(sizes(), options);
  } else {
    std::vector<int64_t> strides;
    for (const SymInt& s : ops::layout_following_strides(sym_sizes(), std::span(this, 1))) {
      strides.push_back(s.raw());
    }
    out = kiln::empty_strided(sizes(), strides, options);
  }
  out.copy_(*this);
  return out;
}
Tensor Tensor::to(TensorOptions options, bool copy, const kiln::SourceLocation& loc) const {
  Tensor t = to(options.device(), copy, loc);
  if (options.dtype_opt()) t = kiln::to(t, *options.dtype_opt(), copy && t.is_same(*this), loc);
  return t;
}
Tensor& Tensor::copy_(const Tensor& src, const kiln::SourceLocation& loc) {
  return kiln::copy_(*this, src, loc);
}
Tensor& Tensor::fill_(const Scalar& value, const kiln::SourceLocation& loc) {
  return kiln::fill_(*this, value, loc);
}
Tensor& Tensor::fill_(const Tensor& value, const kiln::SourceLocation& loc) {
  KILN_CHECK(value.dim() == 0, "fill_: expected a 0-dim value tensor, got {} dims", value.dim());
  return kiln::fill_(*this, value.item(loc), loc);
}
Tensor& Tensor::zero_(const kiln::SourceLocation& loc) { return kiln::zero_(*this, loc); }
std::string Tensor::str() const { return format_tensor(*this); }
std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << format_tensor(t); }

// ---- views ----
Tensor Tensor::view(IntList size, const kiln::SourceLocation& loc) const {
  return kiln::view(*this, size, loc);
}
Tensor Tensor::view_as(const Tensor& other, const kiln::SourceLocation& loc) const {
  return kiln::view(*this, other.sizes(), loc);
}
Tensor Tensor::reshape(IntList size, const kiln::SourceLocation& loc) const {
  return kiln::reshape(*this, size, loc);
}
Tensor Tensor::reshape_as(const Tensor& other, const kiln::SourceLocation& loc) const {
  return kiln::reshape(*this, other.sizes(), loc);
}
Tensor Tensor::flatten(int64_t s, int64_t e, const kiln::SourceLocation& loc) const {
  return kiln::flatten(*this, s, e, loc);
}
Tensor Tensor::unflatten(int64_t d, IntList sizes, const kiln::SourceLocation& loc) const {
  return kiln::unflatten(*this, d, sizes, loc);
}
Tensor Tensor::permute(IntList dims, const kiln::SourceLocation& loc) const {
  return kiln::permute(*this, dims, loc);
}
Tensor Tensor::transpose(int64_t a, int64_t b, const kiln::SourceLocation& loc) const {
  return kiln::transpose(*this, a, b, loc);
}
Tensor Tensor::t(const kiln::SourceLocation& loc) const { return kiln::t(*this, loc); }
Tensor Tensor::mT(const kiln::SourceLocation& loc) const {
  return kiln::transpose(*this, -2, -1, loc);
}
Tensor Tensor::squeeze(const kiln::SourceLocation& loc) const { return kiln::squeeze(*this, loc); }
Tensor Tensor::squeeze(int64_t d, const kiln::SourceLocation& loc) const {
  return kiln::squeeze(*this, d, loc);
}
Tensor Tensor::squeeze(IntList dims, const kiln::SourceLocation& loc) const {
  return kiln::squeeze(*this, dims, loc);
}
Tensor Tensor::unsqueeze(int64_t d, const kiln::SourceLocation& loc) const {
  return kiln::unsqueeze(*this, d, loc);
}
Tensor Tensor::expand(IntList size, const kiln::SourceLocation& loc) const {
  return kiln::expand(*this, size, loc);
}
Tensor Tensor::expand_as(const Tensor& o, const kiln::SourceLocation& loc) const {
  return kiln::expand_as(*this, o, loc);
}
Tensor Tensor::broadcast_to(IntList size, const kiln::SourceLocation& loc) const {
  return kiln::broadcast_to(*this, size, loc);
}
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l, const kiln::SourceLocation& loc) const {
  return kiln::narrow(*this, d, s, l, loc);
}
Tensor Tensor::slice(int64_t d, std::optional<int64_t> s, std::optional<int64_t> e, int64_t step,
                     const kiln::SourceLocation& loc) const {
  return kiln::slice(*this, d, s, e, step, loc);
}
Tensor Tensor::select(int64_t d, int64_t i, const kiln::SourceLocation& loc) const {
  return kiln::select(*this, d, i, loc);
}
std::vector<Tensor> Tensor::unbind(int64_t d, const kiln::SourceLocation& loc) const {
  return kiln::unbind(*this, d, loc);
}
std::vector<Tensor> Tensor::split(int64_t n, int64_t d, const kiln::SourceLocation& loc) const {
  return kiln::split(*this, n, d, loc);
}
std::vector<Tensor> Tensor::split(IntList s, int64_t d, const kiln::SourceLocation& loc) const {
  return kiln::split_with_sizes(*this, s, d, loc);
}
std::vector<Tensor> Tensor::split_with_sizes(IntList s, int64_t d,
                                             const kiln::SourceLocation& loc) const {
  return kiln::split_with_sizes(*this, s, d, loc);
}
std::vector<Tensor> Tensor::chunk(int64_t c, int64_t d, const kiln::SourceLocation& loc) const {
  return kiln::chunk(*this, c, d, loc);
}
Tensor Tensor::as_strided(IntList size, IntList stride, std::optional<int64_t> off,
                          const kiln::SourceLocation& loc) const {
  return kiln::as_strided(*this, size, stride, off, loc);
}
Tensor Tensor::movedim(int64_t s, int64_t d, const kiln::SourceLocation& loc) const {
  return kiln::movedim(*this, s, d, loc);
}
Tensor Tensor::movedim(IntList s, IntList d, const kiln::SourceLocation& loc) const {
  return kiln::movedim(*this, s, d, loc);
}
Tensor Tensor::diagonal(int64_t o, int64_t a, int64_t b, const kiln::SourceLocation& loc) const {
  return kiln::diagonal(*this, o, a, b, loc);
}

Tensor Tensor::operator[](int64_t index) const {
  return select(0, index, *ops::no_call_site());  // an operator: see the operators below
}

// ---- unary ----
#define KILN_UNARY_METHOD(name)                                                                 \
  Tensor Tensor::name(const kiln::SourceLocation& loc) const { return kiln::name(*this, loc); } \
  Tensor& Tensor::name##_(const kiln::SourceLocation& loc) {                                    \
    static const auto& op = ops::OpRegistry::instance().get(#name "_");                         \
    ops::call(op, {*this}, &loc);                                                               \
    return *this;                                                                               \
  }
KILN_UNARY_METHOD(neg)
KILN_UNARY_METHOD(abs)
KILN_UNARY_METHOD(sign)
KILN_UNARY_METHOD(exp)
KILN_UNARY_METHOD(exp2)
KILN_UNARY_METHOD(expm1)
KILN_UNARY_METHOD(log)
KILN_UNARY_METHOD(log2)
KILN_UNARY_METHOD(log10)
KILN_UNARY_METHOD(log1p)
KILN_UNARY_METHOD(sqrt)
KILN_UNARY_METHOD(rsqrt)
KILN_UNARY_METHOD(sin)
KILN_UNARY_METHOD(cos)
KILN_UNARY_METHOD(tan)
KILN_UNARY_METHOD(asin)
KILN_UNARY_METHOD(acos)
KILN_UNARY_METHOD(atan)
KILN_UNARY_METHOD(sinh)
KILN_UNARY_METHOD(cosh)
KILN_UNARY_METHOD(tanh)
KILN_UNARY_METHOD(asinh)
KILN_UNARY_METHOD(acosh)
KILN_UNARY_METHOD(atanh)
KILN_UNARY_METHOD(erf)
KILN_UNARY_METHOD(erfc)
KILN_UNARY_METHOD(erfinv)
KILN_UNARY_METHOD(sigmoid)
KILN_UNARY_METHOD(relu)
KILN_UNARY_METHOD(floor)
KILN_UNARY_METHOD(ceil)
KILN_UNARY_METHOD(trunc)
KILN_UNARY_METHOD(frac)
KILN_UNARY_METHOD(reciprocal)
KILN_UNARY_METHOD(square)
KILN_UNARY_METHOD(logical_not)
KILN_UNARY_METHOD(bitwise_not)
#undef KILN_UNARY_METHOD
Tensor Tensor::round(int64_t decimals, const kiln::SourceLocation& loc) const {
  return kiln::round(*this, decimals, loc);
}
Tensor& Tensor::round_(int64_t decimals, const kiln::SourceLocation& loc) {
  static const auto& plain = ops::OpRegistry::instance().get("round_");
  static const auto& with_decimals = ops::OpRegistry::instance().get("round_.decimals");
  if (decimals == 0) {
    ops::call(plain, {*this}, &loc);
  } else {
    ops::call(with_decimals, {*this, decimals}, &loc);
  }
  return *this;
}
Tensor Tensor::logit(std::optional<double> eps, const kiln::SourceLocation& loc) const {
  return kiln::logit(*this, eps, loc);
}
Tensor Tensor::isnan(const kiln::SourceLocation& loc) const { return kiln::isnan(*this, loc); }
Tensor Tensor::isinf(const kiln::SourceLocation& loc) const { return kiln::isinf(*this, loc); }
Tensor Tensor::isfinite(const kiln::SourceLocation& loc) const {
  return kiln::isfinite(*this, loc);
}
Tensor Tensor::nan_to_num(std::optional<double> n, std::optional<double> p, std::optional<double> m,
                          const kiln::SourceLocation& loc) const {
  return kiln::nan_to_num(*this, n, p, m, loc);
}

// ---- binary ----
namespace {
Tensor& call_inplace(Tensor& self, const char* name, ops::Stack args,
                     const kiln::SourceLocation& loc) {
  const auto& op = ops::OpRegistry::instance().get(name);
  args.insert(args.begin(), self);
  ops::call(op, std::move(args), &loc);
  return self;
}
}  // namespace
Tensor Tensor::add(const Tensor& o, const Scalar& a, const kiln::SourceLocation& loc) const {
  return kiln::add(*this, o, a, loc);
}
Tensor Tensor::add(const Scalar& o, const Scalar& a, const kiln::SourceLocation& loc) const {
  return kiln::add(*this, o, a, loc);
}
Tensor& Tensor::add_(const Tensor& o, const Scalar& a, const kiln::SourceLocation& loc) {
  return call_inplace(*this, "add_", {o, a}, loc);
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& a, const kiln::SourceLocation& loc) {
  return call_inplace(*this, "add_", {wrapped_scalar(o, device()), a}, loc);
}
Tensor Tensor::sub(const Tensor& o, const Scalar& a, const kiln::SourceLocation& loc) const {
  return kiln::sub(*this, o, a, loc);
}
Tensor Tensor::sub(const Scalar& o, const Scalar& a, const kiln::SourceLocation& loc) const {
  return kiln::sub(*this, o, a, loc);
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& a, const kiln::SourceLocation& loc) {
  return call_inplace(*this, "sub_", {o, a}, loc);
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& a, const kiln::SourceLocation& loc) {
  return call_inplace(*this, "sub_", {wrapped_scalar(o, device()), a}, loc);
}
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> m,
                   const kiln::SourceLocation& loc) const {
  return kiln::div(*this, o, m, loc);
}
Tensor Tensor::div(const Scalar& o, std::optional<std::string_view> m,
                   const kiln::SourceLocation& loc) const {
  return kiln::div(*this, o, m, loc);
}
Tensor& Tensor::div_(const Tensor& o, std::optional<std::string_view> m,
                     const kiln::SourceLocation& loc) {
  return call_inplace(*this, "div_", {o, m}, loc);
}
Tensor& Tensor::div_(const Scalar& o, std::optional<std::string_view> m,
                     const kiln::SourceLocation& loc) {
  return call_inplace(*this, "div_", {wrapped_scalar(o, device()), m}, loc);
}
#define KILN_BINARY_METHOD(name)                                                \
  Tensor Tensor::name(const Tensor& o, const kiln::SourceLocation& loc) const { \
    return kiln::name(*this, o, loc);                                           \
  }                                                                             \
  Tensor Tensor::name(const Scalar& o, const kiln::SourceLocation& loc) const { \
    return kiln::name(*this, o, loc);                                           \
  }                                                                             \
  Tensor& Tensor::name##_(const Tensor& o, const kiln::SourceLocation& loc) {   \
    return call_inplace(*this, #name "_", {o}, loc);                            \
  }                                                                             \
  Tensor& Tensor::name##_(const Scalar& o, const kiln::SourceLocation& loc) {   \
    return call_inplace(*this, #name "_", {wrapped_scalar(o, device())}, loc);  \
  }
KILN_BINARY_METHOD(mul)
KILN_BINARY_METHOD(floor_divide)
KILN_BINARY_METHOD(remainder)
KILN_BINARY_METHOD(fmod)
KILN_BINARY_METHOD(pow)
KILN_BINARY_METHOD(atan2)
KILN_BINARY_METHOD(eq)
KILN_BINARY_METHOD(ne)
KILN_BINARY_METHOD(lt)
KILN_BINARY_METHOD(le)
KILN_BINARY_METHOD(gt)
KILN_BINARY_METHOD(ge)
KILN_BINARY_METHOD(logical_and)
KILN_BINARY_METHOD(logical_or)
KILN_BINARY_METHOD(logical_xor)
KILN_BINARY_METHOD(bitwise_and)
KILN_BINARY_METHOD(bitwise_or)
KILN_BINARY_METHOD(bitwise_xor)
KILN_BINARY_METHOD(bitwise_left_shift)
KILN_BINARY_METHOD(bitwise_right_shift)
#undef KILN_BINARY_METHOD
Tensor Tensor::maximum(const Tensor& o, const kiln::SourceLocation& loc) const {
  return kiln::maximum(*this, o, loc);
}
Tensor Tensor::minimum(const Tensor& o, const kiln::SourceLocation& loc) const {
  return kiln::minimum(*this, o, loc);
}
Tensor Tensor::where(const Tensor& c, const Tensor& o, const kiln::SourceLocation& loc) const {
  return kiln::where(c, *this, o, loc);
}
Tensor Tensor::where(const Tensor& c, const Scalar& o, const kiln::SourceLocation& loc) const {
  return kiln::where(c, *this, o, loc);
}
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi,
                     const kiln::SourceLocation& loc) const {
  return kiln::clamp(*this, lo, hi, loc);
}
Tensor Tensor::clamp(const Tensor& lo, const Tensor& hi, const kiln::SourceLocation& loc) const {
  return kiln::clamp(*this, lo, hi, loc);
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi,
                       const kiln::SourceLocation& loc) {
  return call_inplace(*this, "clamp_", {lo, hi}, loc);
}
Tensor Tensor::clamp_min(const Scalar& lo, const kiln::SourceLocation& loc) const {
  return kiln::clamp_min(*this, lo, loc);
}
Tensor Tensor::clamp_max(const Scalar& hi, const kiln::SourceLocation& loc) const {
  return kiln::clamp_max(*this, hi, loc);
}
Tensor Tensor::lerp(const Tensor& e, const Scalar& w, const kiln::SourceLocation& loc) const {
  return kiln::lerp(*this, e, w, loc);
}
Tensor Tensor::lerp(const Tensor& e, const Tensor& w, const kiln::SourceLocation& loc) const {
  return kiln::lerp(*this, e, w, loc);
}
Tensor& Tensor::lerp_(const Tensor& e, const Scalar& w, const kiln::SourceLocation& loc) {
  return call_inplace(*this, "lerp_", {e, wrapped_scalar(w, device())}, loc);
}
Tensor Tensor::addcmul(const Tensor& a, const Tensor& b, const Scalar& v,
                       const kiln::SourceLocation& loc) const {
  return kiln::addcmul(*this, a, b, v, loc);
}
Tensor& Tensor::addcmul_(const Tensor& a, const Tensor& b, const Scalar& v,
                         const kiln::SourceLocation& loc) {
  return call_inplace(*this, "addcmul_", {a, b, v}, loc);
}
Tensor Tensor::addcdiv(const Tensor& a, const Tensor& b, const Scalar& v,
                       const kiln::SourceLocation& loc) const {
  return kiln::addcdiv(*this, a, b, v, loc);
}
Tensor& Tensor::addcdiv_(const Tensor& a, const Tensor& b, const Scalar& v,
                         const kiln::SourceLocation& loc) {
  return call_inplace(*this, "addcdiv_", {a, b, v}, loc);
}

// ---- operators ----
// An operator cannot take a defaulted source_location: it passes the site that names none, so an
// enclosing op call's or scope's site stays and kiln's own line is never reported. (Passed as the
// wrappers' argument rather than held by a CallSiteScope: no extra thread-local work.)
namespace {
const kiln::SourceLocation& no_site() { return *ops::no_call_site(); }
}  // namespace
Tensor operator-(const Tensor& a) { return kiln::neg(a, no_site()); }
Tensor operator~(const Tensor& a) { return kiln::bitwise_not(a, no_site()); }
// The variadic part: the arguments between the operands and the call site (add's alpha).
#define KILN_OPERATOR(op, fn, ...)                                            \
  Tensor operator op(const Tensor& a, const Tensor& b) {                      \
    return kiln::fn(a, b, __VA_ARGS__ no_site());                             \
  }                                                                           \
  Tensor operator op(const Tensor& a, const Scalar& b) {                      \
    return kiln::fn(a, b, __VA_ARGS__ no_site());                             \
  }                                                                           \
  Tensor operator op(const Scalar& a, const Tensor& b) {                      \
    return kiln::fn(wrapped_scalar(a, b.device()), b, __VA_ARGS__ no_site()); \
  }
KILN_OPERATOR(+, add, 1, )
KILN_OPERATOR(-, sub, 1, )
KILN_OPERATOR(*, mul, )
KILN_OPERATOR(/, div, std::nullopt, )
KILN_OPERATOR(%, remainder, )
KILN_OPERATOR(==, eq, )
KILN_OPERATOR(!=, ne, )
KILN_OPERATOR(<, lt, )
KILN_OPERATOR(<=, le, )
KILN_OPERATOR(>, gt, )
KILN_OPERATOR(>=, ge, )
KILN_OPERATOR(&, bitwise_and, )
KILN_OPERATOR(|, bitwise_or, )
KILN_OPERATOR(^, bitwise_xor, )
KILN_OPERATOR(<<, bitwise_left_shift, )
KILN_OPERATOR(>>, bitwise_right_shift, )
#undef KILN_OPERATOR
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b, 1, no_site()); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b, 1, no_site()); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b, 1, no_site()); }
Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b, 1, no_site()); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b, no_site()); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b, no_site()); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b, std::nullopt, no_site()); }
Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b, std::nullopt, no_site()); }

// ---- reductions ----
Tensor Tensor::sum(std::optional<DType> d, const kiln::SourceLocation& loc) const {
  return kiln::sum(*this, {}, false, d, loc);
}
Tensor Tensor::sum(IntList dims, bool k, std::optional<DType> d,
                   const kiln::SourceLocation& loc) const {
  return kiln::sum(*this, dims, k, d, loc);
}
Tensor Tensor::mean(std::optional<DType> d, const kiln::SourceLocation& loc) const {
  return kiln::mean(*this, {}, false, d, loc);
}
Tensor Tensor::mean(IntList dims, bool k, std::optional<DType> d,
                    const kiln::SourceLocation& loc) const {
  return kiln::mean(*this, dims, k, d, loc);
}
Tensor Tensor::prod(std::optional<DType> d, const kiln::SourceLocation& loc) const {
  return kiln::prod(*this, std::nullopt, false, d, loc);
}
Tensor Tensor::prod(int64_t dim, bool k, std::optional<DType> d,
                    const kiln::SourceLocation& loc) const {
  return kiln::prod(*this, dim, k, d, loc);
}
Tensor Tensor::max(const kiln::SourceLocation& loc) const { return kiln::max(*this, loc); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool k, const kiln::SourceLocation& loc) const {
  return kiln::max(*this, d, k, loc);
}
Tensor Tensor::min(const kiln::SourceLocation& loc) const { return kiln::min(*this, loc); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool k, const kiln::SourceLocation& loc) const {
  return kiln::min(*this, d, k, loc);
}
Tensor Tensor::amax(IntList dims, bool k, const kiln::SourceLocation& loc) const {
  return kiln::amax(*this, dims, k, loc);
}
Tensor Tensor::amin(IntList dims, bool k, const kiln::SourceLocation& loc) const {
  return kiln::amin(*this, dims, k, loc);
}
Tensor Tensor::argmax(std::optional<int64_t> d, bool k, const kiln::SourceLocation& loc) const {
  return kiln::argmax(*this, d, k, loc);
}
Tensor Tensor::argmin(std::optional<int64_t> d, bool k, const kiln::SourceLocation& loc) const {
  return kiln::argmin(*this, d, k, loc);
}
Tensor Tensor::var(IntList dims, std::optional<Scalar> c, bool k,
                   const kiln::SourceLocation& loc) const {
  return kiln::var(*this, dims, c, k, loc);
}
Tensor Tensor::std(IntList dims, std::optional<Scalar> c, bool k,
                   const kiln::SourceLocation& loc) const {
  return kiln::std(*this, dims, c, k, loc);
}
Tensor Tensor::norm(const Scalar& p, IntList dims, bool k, const kiln::SourceLocation& loc) const {
  return kiln::norm(*this, p, dims, k, loc);
}
Tensor Tensor::logsumexp(IntList dims, bool k, const kiln::SourceLocation& loc) const {
  return kiln::logsumexp(*this, dims, k, loc);
}
Tensor Tensor::any(const kiln::SourceLocation& loc) const { return kiln::any(*this, loc); }
Tensor Tensor::any(int64_t d, bool k, const kiln::SourceLocation& loc) const {
  return kiln::any(*this, d, k, loc);
}
Tensor Tensor::all(const kiln::SourceLocation& loc) const { return kiln::all(*this, loc); }
Tensor Tensor::all(int64_t d, bool k, const kiln::SourceLocation& loc) const {
  return kiln::all(*this, d, k, loc);
}
Tensor Tensor::cumsum(int64_t d, std::optional<DType> dt, const kiln::SourceLocation& loc) const {
  return kiln::cumsum(*this, d, dt, loc);
}
Tensor Tensor::cumprod(int64_t d, std::optional<DType> dt, const kiln::SourceLocation& loc) const {
  return kiln::cumprod(*this, d, dt, loc);
}

// ---- random ----
Tensor& Tensor::uniform_(double from, double to, const kiln::SourceLocation& loc) {
  return kiln::uniform_(*this, from, to, nullptr, loc);
}
Tensor& Tensor::normal_(double mean, double std, const kiln::SourceLocation& loc) {
  return kiln::normal_(*this, mean, std, nullptr, loc);
}
Tensor& Tensor::bernoulli_(double p, const kiln::SourceLocation& loc) {
  return kiln::bernoulli_(*this, p, nullptr, loc);
}
Tensor Tensor::bernoulli(const kiln::SourceLocation& loc) const {
  return kiln::bernoulli(*this, nullptr, loc);
}

}  // namespace kiln
