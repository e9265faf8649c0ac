// Tensor's op methods: each forwards to the free function of the same name.
#include <kiln/kiln.h>

namespace kiln {

// ---- conversion, copies ----
Tensor Tensor::contiguous() const { return kiln::contiguous(*this); }
Tensor Tensor::contiguous(MemoryFormat fmt) const { return kiln::contiguous(*this, fmt); }
bool Tensor::is_contiguous(MemoryFormat fmt) const {
  return fmt == MemoryFormat::Contiguous ? is_contiguous()
                                         : is_contiguous_in(sizes(), strides(), fmt);
}
MemoryFormat Tensor::suggest_memory_format() const {
  return kiln::suggest_memory_format(sizes(), strides());
}
Tensor Tensor::clone() const { return kiln::clone(*this); }
Tensor Tensor::to(DType dtype, bool copy) const { return kiln::to(*this, dtype, copy); }
Tensor Tensor::to(Device device, bool copy) const {
  KILN_CHECK(device == this->device() || (device.is_cpu() && this->device().is_cpu()),
             "to: copying from {} to {} needs the CUDA backend", this->device().str(),
             device.str());
  return copy ? clone() : *this;
}
Tensor Tensor::to(TensorOptions options, bool copy) const {
  Tensor t = to(options.device(), copy);
  if (options.dtype_opt()) t = kiln::to(t, *options.dtype_opt(), copy && t.is_same(*this));
  return t;
}
Tensor& Tensor::copy_(const Tensor& src) { return kiln::copy_(*this, src); }
Tensor& Tensor::fill_(const Scalar& value) { return kiln::fill_(*this, value); }
Tensor& Tensor::fill_(const Tensor& value) {
  KILN_CHECK(value.dim() == 0, "fill_: expected a 0-dim value tensor, got {} dims", value.dim());
  return kiln::fill_(*this, value.item());
}
Tensor& Tensor::zero_() { return kiln::zero_(*this); }
std::string Tensor::str() const { return format_tensor(*this); }
std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << format_tensor(t); }

// ---- views ----
Tensor Tensor::view(IntList size) const { return kiln::view(*this, size); }
Tensor Tensor::view_as(const Tensor& other) const { return kiln::view(*this, other.sizes()); }
Tensor Tensor::reshape(IntList size) const { return kiln::reshape(*this, size); }
Tensor Tensor::reshape_as(const Tensor& other) const { return kiln::reshape(*this, other.sizes()); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return kiln::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t d, IntList sizes) const {
  return kiln::unflatten(*this, d, sizes);
}
Tensor Tensor::permute(IntList dims) const { return kiln::permute(*this, dims); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return kiln::transpose(*this, a, b); }
Tensor Tensor::t() const { return kiln::t(*this); }
Tensor Tensor::mT() const { return kiln::transpose(*this, -2, -1); }
Tensor Tensor::squeeze() const { return kiln::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return kiln::squeeze(*this, d); }
Tensor Tensor::squeeze(IntList dims) const { return kiln::squeeze(*this, dims); }
Tensor Tensor::unsqueeze(int64_t d) const { return kiln::unsqueeze(*this, d); }
Tensor Tensor::expand(IntList size) const { return kiln::expand(*this, size); }
Tensor Tensor::expand_as(const Tensor& o) const { return kiln::expand_as(*this, o); }
Tensor Tensor::broadcast_to(IntList size) const { return kiln::broadcast_to(*this, size); }
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const {
  return kiln::narrow(*this, d, s, l);
}
Tensor Tensor::slice(int64_t d, std::optional<int64_t> s, std::optional<int64_t> e,
                     int64_t step) const {
  return kiln::slice(*this, d, s, e, step);
}
Tensor Tensor::select(int64_t d, int64_t i) const { return kiln::select(*this, d, i); }
std::vector<Tensor> Tensor::unbind(int64_t d) const { return kiln::unbind(*this, d); }
std::vector<Tensor> Tensor::split(int64_t n, int64_t d) const { return kiln::split(*this, n, d); }
std::vector<Tensor> Tensor::split(IntList s, int64_t d) const {
  return kiln::split_with_sizes(*this, s, d);
}
std::vector<Tensor> Tensor::split_with_sizes(IntList s, int64_t d) const {
  return kiln::split_with_sizes(*this, s, d);
}
std::vector<Tensor> Tensor::chunk(int64_t c, int64_t d) const { return kiln::chunk(*this, c, d); }
Tensor Tensor::as_strided(IntList size, IntList stride, std::optional<int64_t> off) const {
  return kiln::as_strided(*this, size, stride, off);
}
Tensor Tensor::movedim(int64_t s, int64_t d) const { return kiln::movedim(*this, s, d); }
Tensor Tensor::movedim(IntList s, IntList d) const { return kiln::movedim(*this, s, d); }
Tensor Tensor::diagonal(int64_t o, int64_t a, int64_t b) const {
  return kiln::diagonal(*this, o, a, b);
}

// ---- unary ----
#define KILN_UNARY_METHOD(name)                                         \
  Tensor Tensor::name() const { return kiln::name(*this); }             \
  Tensor& Tensor::name##_() {                                           \
    static const auto& op = ops::OpRegistry::instance().get(#name "_"); \
    ops::call(op, {*this});                                             \
    return *this;                                                       \
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
Tensor Tensor::round(int64_t decimals) const { return kiln::round(*this, decimals); }
Tensor& Tensor::round_(int64_t decimals) {
  static const auto& plain = ops::OpRegistry::instance().get("round_");
  static const auto& with_decimals = ops::OpRegistry::instance().get("round_.decimals");
  if (decimals == 0) {
    ops::call(plain, {*this});
  } else {
    ops::call(with_decimals, {*this, decimals});
  }
  return *this;
}
Tensor Tensor::logit(std::optional<double> eps) const { return kiln::logit(*this, eps); }
Tensor Tensor::isnan() const { return kiln::isnan(*this); }
Tensor Tensor::isinf() const { return kiln::isinf(*this); }
Tensor Tensor::isfinite() const { return kiln::isfinite(*this); }
Tensor Tensor::nan_to_num(std::optional<double> n, std::optional<double> p,
                          std::optional<double> m) const {
  return kiln::nan_to_num(*this, n, p, m);
}

// ---- binary ----
namespace {
Tensor& call_inplace(Tensor& self, const char* name, ops::Stack args) {
  const auto& op = ops::OpRegistry::instance().get(name);
  args.insert(args.begin(), self);
  ops::call(op, std::move(args));
  return self;
}
}  // namespace
Tensor Tensor::add(const Tensor& o, const Scalar& a) const { return kiln::add(*this, o, a); }
Tensor Tensor::add(const Scalar& o, const Scalar& a) const { return kiln::add(*this, o, a); }
Tensor& Tensor::add_(const Tensor& o, const Scalar& a) {
  return call_inplace(*this, "add_", {o, a});
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& a) {
  return call_inplace(*this, "add_", {wrapped_scalar(o, device()), a});
}
Tensor Tensor::sub(const Tensor& o, const Scalar& a) const { return kiln::sub(*this, o, a); }
Tensor Tensor::sub(const Scalar& o, const Scalar& a) const { return kiln::sub(*this, o, a); }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& a) {
  return call_inplace(*this, "sub_", {o, a});
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& a) {
  return call_inplace(*this, "sub_", {wrapped_scalar(o, device()), a});
}
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> m) const {
  return kiln::div(*this, o, m);
}
Tensor Tensor::div(const Scalar& o, std::optional<std::string_view> m) const {
  return kiln::div(*this, o, m);
}
Tensor& Tensor::div_(const Tensor& o, std::optional<std::string_view> m) {
  return call_inplace(*this, "div_", {o, m});
}
Tensor& Tensor::div_(const Scalar& o, std::optional<std::string_view> m) {
  return call_inplace(*this, "div_", {wrapped_scalar(o, device()), m});
}
#define KILN_BINARY_METHOD(name)                                                           \
  Tensor Tensor::name(const Tensor& o) const { return kiln::name(*this, o); }              \
  Tensor Tensor::name(const Scalar& o) const { return kiln::name(*this, o); }              \
  Tensor& Tensor::name##_(const Tensor& o) { return call_inplace(*this, #name "_", {o}); } \
  Tensor& Tensor::name##_(const Scalar& o) {                                               \
    return call_inplace(*this, #name "_", {wrapped_scalar(o, device())});                  \
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
Tensor Tensor::maximum(const Tensor& o) const { return kiln::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return kiln::minimum(*this, o); }
Tensor Tensor::where(const Tensor& c, const Tensor& o) const { return kiln::where(c, *this, o); }
Tensor Tensor::where(const Tensor& c, const Scalar& o) const { return kiln::where(c, *this, o); }
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return kiln::clamp(*this, lo, hi);
}
Tensor Tensor::clamp(const Tensor& lo, const Tensor& hi) const {
  return kiln::clamp(*this, lo, hi);
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return call_inplace(*this, "clamp_", {lo, hi});
}
Tensor Tensor::clamp_min(const Scalar& lo) const { return kiln::clamp_min(*this, lo); }
Tensor Tensor::clamp_max(const Scalar& hi) const { return kiln::clamp_max(*this, hi); }
Tensor Tensor::lerp(const Tensor& e, const Scalar& w) const { return kiln::lerp(*this, e, w); }
Tensor Tensor::lerp(const Tensor& e, const Tensor& w) const { return kiln::lerp(*this, e, w); }
Tensor& Tensor::lerp_(const Tensor& e, const Scalar& w) {
  return call_inplace(*this, "lerp_", {e, wrapped_scalar(w, device())});
}
Tensor Tensor::addcmul(const Tensor& a, const Tensor& b, const Scalar& v) const {
  return kiln::addcmul(*this, a, b, v);
}
Tensor& Tensor::addcmul_(const Tensor& a, const Tensor& b, const Scalar& v) {
  return call_inplace(*this, "addcmul_", {a, b, v});
}
Tensor Tensor::addcdiv(const Tensor& a, const Tensor& b, const Scalar& v) const {
  return kiln::addcdiv(*this, a, b, v);
}
Tensor& Tensor::addcdiv_(const Tensor& a, const Tensor& b, const Scalar& v) {
  return call_inplace(*this, "addcdiv_", {a, b, v});
}

// ---- operators ----
Tensor operator-(const Tensor& a) { return kiln::neg(a); }
Tensor operator~(const Tensor& a) { return kiln::bitwise_not(a); }
#define KILN_OPERATOR(op, fn)                                                     \
  Tensor operator op(const Tensor& a, const Tensor& b) { return kiln::fn(a, b); } \
  Tensor operator op(const Tensor& a, const Scalar& b) { return kiln::fn(a, b); } \
  Tensor operator op(const Scalar& a, const Tensor& b) {                          \
    return kiln::fn(wrapped_scalar(a, b.device()), b);                            \
  }
KILN_OPERATOR(+, add)
KILN_OPERATOR(-, sub)
KILN_OPERATOR(*, mul)
KILN_OPERATOR(/, div)
KILN_OPERATOR(%, remainder)
KILN_OPERATOR(==, eq)
KILN_OPERATOR(!=, ne)
KILN_OPERATOR(<, lt)
KILN_OPERATOR(<=, le)
KILN_OPERATOR(>, gt)
KILN_OPERATOR(>=, ge)
KILN_OPERATOR(&, bitwise_and)
KILN_OPERATOR(|, bitwise_or)
KILN_OPERATOR(^, bitwise_xor)
KILN_OPERATOR(<<, bitwise_left_shift)
KILN_OPERATOR(>>, bitwise_right_shift)
#undef KILN_OPERATOR
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }

// ---- reductions ----
Tensor Tensor::sum(std::optional<DType> d) const { return kiln::sum(*this, {}, false, d); }
Tensor Tensor::sum(IntList dims, bool k, std::optional<DType> d) const {
  return kiln::sum(*this, dims, k, d);
}
Tensor Tensor::mean(std::optional<DType> d) const { return kiln::mean(*this, {}, false, d); }
Tensor Tensor::mean(IntList dims, bool k, std::optional<DType> d) const {
  return kiln::mean(*this, dims, k, d);
}
Tensor Tensor::prod(std::optional<DType> d) const {
  return kiln::prod(*this, std::nullopt, false, d);
}
Tensor Tensor::prod(int64_t dim, bool k, std::optional<DType> d) const {
  return kiln::prod(*this, dim, k, d);
}
Tensor Tensor::max() const { return kiln::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool k) const { return kiln::max(*this, d, k); }
Tensor Tensor::min() const { return kiln::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool k) const { return kiln::min(*this, d, k); }
Tensor Tensor::amax(IntList dims, bool k) const { return kiln::amax(*this, dims, k); }
Tensor Tensor::amin(IntList dims, bool k) const { return kiln::amin(*this, dims, k); }
Tensor Tensor::argmax(std::optional<int64_t> d, bool k) const { return kiln::argmax(*this, d, k); }
Tensor Tensor::argmin(std::optional<int64_t> d, bool k) const { return kiln::argmin(*this, d, k); }
Tensor Tensor::var(IntList dims, std::optional<Scalar> c, bool k) const {
  return kiln::var(*this, dims, c, k);
}
Tensor Tensor::std(IntList dims, std::optional<Scalar> c, bool k) const {
  return kiln::std(*this, dims, c, k);
}
Tensor Tensor::norm(const Scalar& p, IntList dims, bool k) const {
  return kiln::norm(*this, p, dims, k);
}
Tensor Tensor::logsumexp(IntList dims, bool k) const { return kiln::logsumexp(*this, dims, k); }
Tensor Tensor::any() const { return kiln::any(*this); }
Tensor Tensor::any(int64_t d, bool k) const { return kiln::any(*this, d, k); }
Tensor Tensor::all() const { return kiln::all(*this); }
Tensor Tensor::all(int64_t d, bool k) const { return kiln::all(*this, d, k); }
Tensor Tensor::cumsum(int64_t d, std::optional<DType> dt) const {
  return kiln::cumsum(*this, d, dt);
}
Tensor Tensor::cumprod(int64_t d, std::optional<DType> dt) const {
  return kiln::cumprod(*this, d, dt);
}

// ---- random ----
Tensor& Tensor::uniform_(double from, double to) { return kiln::uniform_(*this, from, to); }
Tensor& Tensor::normal_(double mean, double std) { return kiln::normal_(*this, mean, std); }
Tensor& Tensor::bernoulli_(double p) { return kiln::bernoulli_(*this, p); }
Tensor Tensor::bernoulli() const { return kiln::bernoulli(*this); }

}  // namespace kiln
