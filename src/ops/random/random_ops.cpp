// Random ops: rand, randn, randint, normal, bernoulli, randperm, rand_like, randn_like and the
// in-place uniform_, normal_, bernoulli_. Each draw reserves its Philox counters from the current
// generator (generator_scope.h) when it runs, so a seed fixes every number drawn after it.
#include "ops/creation/layout_samples.h"
#include "ops/random/generator_scope.h"
#include "ops/random/random_kernels.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/random.h>
#include <kiln/ops/registry.h>

#include <cmath>

namespace kiln::ops {

cpu::KernelDispatch<UniformFillKernel> uniform_fill_kernels;
cpu::KernelDispatch<NormalFillKernel> normal_fill_kernels;
cpu::KernelDispatch<RandintFillKernel> randint_fill_kernels;
cpu::KernelDispatch<RandpermFillKernel> randperm_fill_kernels;
cpu::KernelDispatch<NormalAffineKernel> normal_affine_kernels;
cpu::KernelDispatch<BernoulliKernel> bernoulli_kernels;

namespace {

using random_detail::current_generator;
using random_detail::philox_blocks;

PhiloxStream reserve_stream(int64_t n, int words) {
  auto [seed, offset] = current_generator().seed_and_reserve(philox_blocks(n, words));
  return {seed, offset};
}

void check_sizes(SymIntList sizes, const char* op) {
  for (const SymInt& s : sizes) {
    auto v = s.maybe_int();
    KILN_CHECK(!v || *v >= 0, "{}: negative dimension {} in size [{}]", op, s.str(),
               IValue(sizes).repr());
  }
}

void check_floating(DType dtype, const char* op) {
  KILN_CHECK_T(TypeError, is_floating_point(dtype), "{}: expected a floating point dtype, got {}",
               op, dtype_name(dtype));
}

// A factory's output: contiguous, with the dtype argument or `fallback`.
TensorMeta factory_meta(const Stack& args, size_t size_i, DType fallback, const char* op) {
  auto sizes = args[size_i].to_sym_int_list();
  check_sizes(sizes, op);
  return TensorMeta::contiguous(std::move(sizes),
                                args[size_i + 1].to_optional_dtype().value_or(fallback),
                                args[size_i + 2].to_device_or_cpu());
}

// An output shaped and laid out like `self` (dense layouts kept, as PyTorch's preserve_format).
TensorMeta like_meta(const Tensor& self, DType dtype, Device device) {
  TensorMeta m;
  m.sizes = self.sym_sizes().vec();
  m.strides = layout_following_strides(self.sym_sizes(), std::span<const Tensor>(&self, 1));
  m.dtype = dtype;
  m.device = device;
  return m;
}

// Runs fill(data) on out's memory when out is contiguous, else on a contiguous buffer copied into
// out afterwards: element i of a draw is always out's i-th element in row-major order.
template <typename Fill>
void fill_row_major(const Tensor& out, const Fill& fill) {
  if (out.numel() == 0) return;
  if (out.is_contiguous()) {
    fill(out.data_ptr());
    return;
  }
  Tensor buffer = empty(out.sizes(), out.dtype());
  fill(buffer.data_ptr());
  Tensor target = out;
  target.copy_(buffer);
}

void uniform_into(const Tensor& out, double from, double to) {
  const int64_t n = out.numel();
  if (n == 0) return;
  PhiloxStream s = reserve_stream(n, uniform_words(out.dtype()));
  fill_row_major(out, [&](void* data) { uniform_fill_kernels(data, out.dtype(), n, from, to, s); });
}

void normal_into(const Tensor& out, double mean, double std) {
  const int64_t n = out.numel();
  if (n == 0) return;
  PhiloxStream s = reserve_stream(n, normal_words(out.dtype()));
  fill_row_major(out, [&](void* data) { normal_fill_kernels(data, out.dtype(), n, mean, std, s); });
}

// out = 1 with probability p (p broadcast to out), else 0; one float64 uniform per element.
void bernoulli_into(const Tensor& out, const Tensor& p) {
  const int64_t n = out.numel();
  if (n == 0) return;
  Tensor u = empty(out.sizes(), kFloat64);
  uniform_into(u, 0.0, 1.0);
  auto iter = TensorIteratorConfig()
                  .add_output(out)
                  .add_input(p)
                  .add_input(u)
                  .compute_dtype(kFloat64)
                  .op_name("bernoulli")
                  .build();
  bernoulli_kernels(iter);
}

void check_probability(double p, const char* op) {
  KILN_CHECK(p >= 0.0 && p <= 1.0, "{}: expects 0 <= p <= 1, but got p={}", op, p);
}

// The largest integer n such that every integer in [0, n] is exact in dtype.
double exact_integer_limit(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return 1;
    case DType::UInt8:
      return 255;
    case DType::Int8:
      return 127;
    case DType::Int16:
      return 32767;
    case DType::Int32:
      return 2147483647.0;
    case DType::Int64:
      return 9.2233720368547758e18;
    case DType::Float16:
      return 2048;
    case DType::BFloat16:
      return 256;
    case DType::Float32:
      return 16777216.0;
    case DType::Float64:
      return 9007199254740992.0;
  }
  return 0;
}

double lowest_value(DType dtype) {
  if (dtype == DType::UInt8 || dtype == DType::Bool) return 0;
  return -exact_integer_limit(dtype) - (is_integral(dtype) ? 1 : 0);
}

void check_randint(int64_t low, int64_t high, DType dtype) {
  KILN_CHECK(low < high, "randint: expects 'from' to be less than 'to', but got from={} >= to={}",
             low, high);
  KILN_CHECK_T(TypeError, dtype != DType::Bool, "randint: bool is not supported");
  KILN_CHECK(static_cast<double>(low) >= lowest_value(dtype) &&
                 static_cast<double>(high - 1) <= exact_integer_limit(dtype),
             "randint: range [{}, {}) is out of bounds for dtype {}", low, high, dtype_name(dtype));
}

// The mean/std operands of normal: tensors, or numbers made 0-dim float64 wrapped scalars.
Tensor normal_operand(const IValue& v) {
  return v.is_tensor() ? v.to_tensor() : wrapped_scalar(v.to_double());
}

TensorMeta normal_tensor_meta(const Stack& args) {
  Tensor mean = normal_operand(args[0]), std = normal_operand(args[1]);
  DimVector shape = broadcast_shapes(mean.sizes(), std.sizes(), "normal");
  DType dtype;
  if (args[0].is_tensor() && args[1].is_tensor()) {
    dtype = promote_types(mean.dtype(), std.dtype());
  } else {
    dtype = args[0].is_tensor() ? mean.dtype() : std.dtype();
  }
  check_floating(dtype, "normal");
  Device device = args[0].is_tensor() ? mean.device() : std.device();
  return TensorMeta::contiguous(to_sym(IntList(shape)), dtype, device);
}

void normal_tensor_impl(const Stack& args, const std::vector<Tensor>& out) {
  Tensor mean = normal_operand(args[0]), std = normal_operand(args[1]);
  if (out[0].numel() == 0) return;
  Tensor std64 = std.to(kFloat64).contiguous();
  const double* sp = std64.data_ptr<double>();
  for (int64_t i = 0; i < std64.numel(); ++i) {
    KILN_CHECK(sp[i] >= 0.0, "normal: expects all elements of std >= 0.0, but found {}", sp[i]);
  }
  Tensor z = empty(out[0].sizes(), out[0].dtype());
  normal_into(z, 0.0, 1.0);
  auto iter = TensorIteratorConfig()
                  .add_output(out[0])
                  .add_input(mean)
                  .add_input(std)
                  .add_input(z)
                  .compute_dtype(kFloat64)
                  .op_name("normal")
                  .build();
  normal_affine_kernels(iter);
}

std::vector<Sample> size_samples() {
  return {{{std::vector<int64_t>{3, 4}}, "2-D"},
          {{std::vector<int64_t>{1000}}, "1-D"},
          {{std::vector<int64_t>{}}, "0-dim"},
          {{std::vector<int64_t>{0, 3}}, "empty"}};
}

std::vector<Sample> like_samples() {
  return {{{make_sample({3, 4}, kFloat32)}, "2-D"},
          {{transposed_sample(4, 6, kFloat64)}, "transposed"},
          {{make_sample({}, kFloat32)}, "0-dim"},
          {{make_sample({0, 3}, kFloat32)}, "empty"}};
}

// In-place random ops write into self's existing memory; on the meta device nothing is written.
std::vector<Tensor> inplace_meta(const Stack& args) { return {args[0].to_tensor()}; }

// ---- decompositions: draws through the rand/randn/randint.low prims (the same Philox counters
// and offset advance as the kernels above), then elementwise math in float64 as the kernels ----

// A draw of `prim` shaped like self, with the dtype/device arguments at args[1], args[2].
std::vector<Tensor> like_draw(const Stack& args, const char* prim, const char* op) {
  const Tensor& self = args[0].to_tensor();
  const DType dtype = args[1].to_optional_dtype().value_or(self.dtype());
  check_floating(dtype, op);
  const IValue device = args[2].is_none() ? IValue(self.device()) : args[2];
  return call(op_named(prim), {self.sym_sizes(), dtype, device});
}

// mean + std * z in float64, z a standard normal draw of dtype (what normal_fill computes).
Tensor affine_normal(const Tensor& z, const IValue& mean, const IValue& std, DType dtype) {
  const Tensor z64 = z.to(kFloat64);
  const Tensor scaled =
      std.is_tensor() ? std.to_tensor().to(kFloat64) * z64 : z64 * std.to_double();
  const Tensor shifted =
      mean.is_tensor() ? mean.to_tensor().to(kFloat64) + scaled : scaled + mean.to_double();
  return shifted.to(dtype);
}

std::vector<Tensor> normal_tensor_decomposition(const Stack& args) {
  const TensorMeta m = normal_tensor_meta(args);
  const Tensor z = call1(op_named("randn"), {m.sizes, m.dtype, m.device});
  return {affine_normal(z, args[0], args[1], m.dtype)};
}

// 1 where a float64 uniform is below p (what bernoulli_into draws), in self's dtype.
Tensor bernoulli_draw(const Tensor& self, const IValue& p) {
  const Tensor u = call1(op_named("rand"), {self.sym_sizes(), kFloat64, self.device()});
  const Tensor hit = p.is_tensor() ? u < p.to_tensor() : u < p.to_double();
  return hit.to(self.dtype());
}

// uniform_/normal_/bernoulli_ write their draw into self.
std::vector<Tensor> write_into_self(const Stack& args, const Tensor& value) {
  Tensor self = args[0].to_tensor();
  self.copy_(value);
  return {self};
}

}  // namespace

KILN_OP("rand(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      TensorMeta m = factory_meta(args, 0, default_float_dtype(), "rand");
      check_floating(m.dtype, "rand");
      return std::vector<TensorMeta>{m};
    })
    .cpu([](const Stack&, const std::vector<Tensor>& out) { uniform_into(out[0], 0.0, 1.0); })
    .random()
    .samples(size_samples);

KILN_OP("randn(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      TensorMeta m = factory_meta(args, 0, default_float_dtype(), "randn");
      check_floating(m.dtype, "randn");
      return std::vector<TensorMeta>{m};
    })
    .cpu([](const Stack&, const std::vector<Tensor>& out) { normal_into(out[0], 0.0, 1.0); })
    .random()
    .samples(size_samples);

KILN_OP(
    "randint(SymInt high, SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> "
    "Tensor")
    .meta([](const Stack& args) {
      TensorMeta m = factory_meta(args, 1, kInt64, "randint");
      check_randint(0, args[0].to_int(), m.dtype);
      return std::vector<TensorMeta>{m};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      const int64_t high = args[0].to_int(), n = out[0].numel();
      if (n == 0) return;
      const auto range = static_cast<uint64_t>(high);
      PhiloxStream s = reserve_stream(n, randint_words(range));
      randint_fill_kernels(out[0].data_ptr(), out[0].dtype(), n, 0, range, s);
    })
    .decomposition([](const Stack& a) {
      return call(op_named("randint.low"), {int64_t{0}, a[0], a[1], a[2], a[3]});
    })
    .random()
    .samples([] {
      return std::vector<Sample>{{{int64_t{10}, std::vector<int64_t>{3, 4}}, "2-D"},
                                 {{int64_t{3}, std::vector<int64_t>{0}}, "empty"}};
    });

KILN_OP(
    "randint.low(SymInt low, SymInt high, SymInt[] size, *, ScalarType? dtype=None, Device? "
    "device=None) -> Tensor")
    .meta([](const Stack& args) {
      TensorMeta m = factory_meta(args, 2, kInt64, "randint");
      check_randint(args[0].to_int(), args[1].to_int(), m.dtype);
      return std::vector<TensorMeta>{m};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      const int64_t low = args[0].to_int(), high = args[1].to_int(), n = out[0].numel();
      if (n == 0) return;
      const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
      PhiloxStream s = reserve_stream(n, randint_words(range));
      randint_fill_kernels(out[0].data_ptr(), out[0].dtype(), n, low, range, s);
    })
    .random()
    .samples([] {
      return std::vector<Sample>{{{int64_t{-5}, int64_t{5}, std::vector<int64_t>{3, 4}}, "2-D"},
                                 {{int64_t{0}, int64_t{2}, std::vector<int64_t>{}}, "0-dim"}};
    });

KILN_OP(
    "normal.float_float(float mean, float std, SymInt[] size, *, ScalarType? dtype=None, Device? "
    "device=None) -> Tensor")
    .meta([](const Stack& args) {
      TensorMeta m = factory_meta(args, 2, default_float_dtype(), "normal");
      check_floating(m.dtype, "normal");
      const double std = args[1].to_double();
      KILN_CHECK(std >= 0.0, "normal: expects std >= 0.0, but found std {}", std);
      return std::vector<TensorMeta>{m};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      normal_into(out[0], args[0].to_double(), args[1].to_double());
    })
    .decomposition([](const Stack& a) -> std::vector<Tensor> {
      const TensorMeta m = factory_meta(a, 2, default_float_dtype(), "normal");
      check_floating(m.dtype, "normal");
      KILN_CHECK(a[1].to_double() >= 0.0, "normal: expects std >= 0.0, but found std {}",
                 a[1].to_double());
      const Tensor z = call1(op_named("randn"), {m.sizes, m.dtype, m.device});
      return {affine_normal(z, a[0], a[1], m.dtype)};
    })
    .random()
    .samples([] {
      return std::vector<Sample>{{{2.0, 0.5, std::vector<int64_t>{3, 4}}, "2-D"}};
    });

namespace {
// The derivative PyTorch gives random ops of tensors (derivatives.yaml): zero for every tensor
// argument. The draws are not reparameterized: normal(mean, std) is not mean + std * z here.
std::vector<Tensor> zero_derivative(const BackwardArgs& a) {
  std::vector<Tensor> out;
  for (const IValue& v : a.inputs) {
    if (v.is_tensor())
      out.push_back(v.to_tensor().defined() ? zeros_like(v.to_tensor()) : Tensor());
  }
  return out;
}
}  // namespace

KILN_OP("normal.Tensor_Tensor(Tensor mean, Tensor std) -> Tensor")
    .meta([](const Stack& args) { return std::vector<TensorMeta>{normal_tensor_meta(args)}; })
    .cpu(normal_tensor_impl)
    .decomposition(normal_tensor_decomposition)
    .random()
    .derivative(zero_derivative, DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{
          {{make_sample({3, 4}, kFloat32), make_sample({4}, kFloat32, 0.5, 2.0)}, "broadcast"}};
    });

KILN_OP("normal.Tensor_float(Tensor mean, float std=1) -> Tensor")
    .meta([](const Stack& args) {
      const double std = args[1].to_double();
      KILN_CHECK(std >= 0.0, "normal: expects std >= 0.0, but found std {}", std);
      return std::vector<TensorMeta>{normal_tensor_meta(args)};
    })
    .cpu(normal_tensor_impl)
    .decomposition([](const Stack& a) {
      KILN_CHECK(a[1].to_double() >= 0.0, "normal: expects std >= 0.0, but found std {}",
                 a[1].to_double());
      return normal_tensor_decomposition(a);
    })
    .random()
    .derivative(zero_derivative, DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{{{make_sample({3, 4}, kFloat32), 2.0}, "2-D"}};
    });

KILN_OP("normal.float_Tensor(float mean, Tensor std) -> Tensor")
    .meta([](const Stack& args) { return std::vector<TensorMeta>{normal_tensor_meta(args)}; })
    .cpu(normal_tensor_impl)
    .decomposition(normal_tensor_decomposition)
    .random()
    .derivative(zero_derivative, DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{{{1.0, make_sample({3, 4}, kFloat32, 0.5, 2.0)}, "2-D"}};
    });

KILN_OP("bernoulli(Tensor self) -> Tensor")
    .meta([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      check_floating(self.dtype(), "bernoulli");
      return std::vector<TensorMeta>{like_meta(self, self.dtype(), self.device())};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      const Tensor& p = args[0].to_tensor();
      if (p.numel() == 0) return;
      Tensor p64 = p.to(kFloat64).contiguous();
      const double* pp = p64.data_ptr<double>();
      for (int64_t i = 0; i < p64.numel(); ++i) {
        KILN_CHECK(pp[i] >= 0.0 && pp[i] <= 1.0,
                   "bernoulli: expects all elements of p in [0, 1], but found {}", pp[i]);
      }
      bernoulli_into(out[0], p);
    })
    .decomposition([](const Stack& a) -> std::vector<Tensor> {
      const Tensor& self = a[0].to_tensor();
      check_floating(self.dtype(), "bernoulli");
      return {bernoulli_draw(self, a[0])};
    })
    .random()
    .derivative(zero_derivative, DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{{{make_sample({3, 4}, kFloat32, 0.0, 1.0)}, "2-D"},
                                 {{transposed_sample(4, 6, kFloat64, 0.0, 1.0)}, "transposed"},
                                 {{make_sample({0}, kFloat32, 0.0, 1.0)}, "empty"}};
    });

KILN_OP("bernoulli.p(Tensor self, float p) -> Tensor")
    .meta([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      check_probability(args[1].to_double(), "bernoulli");
      return std::vector<TensorMeta>{like_meta(self, self.dtype(), self.device())};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      bernoulli_into(out[0], scalar_tensor(args[1].to_double(), kFloat64));
    })
    .decomposition([](const Stack& a) -> std::vector<Tensor> {
      check_probability(a[1].to_double(), "bernoulli");
      return {bernoulli_draw(a[0].to_tensor(), a[1])};
    })
    .random()
    .derivative(zero_derivative, DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{{{make_sample({3, 4}, kFloat32), 0.3}, "2-D"},
                                 {{make_sample({5}, kInt64), 0.5}, "int64"}};
    });

KILN_OP("bernoulli_.float(Tensor(a!) self, float p=0.5) -> Tensor(a!)")
    .custom(DeviceType::CPU,
            [](const Stack& args) -> std::vector<Tensor> {
              const Tensor& self = args[0].to_tensor();
              const double p = args[1].to_double();
              check_probability(p, "bernoulli_");
              bernoulli_into(self, scalar_tensor(p, kFloat64));
              self.impl()->bump_version();
              return {self};
            })
    .custom(DeviceType::Meta, inplace_meta)
    .decomposition([](const Stack& a) {
      check_probability(a[1].to_double(), "bernoulli_");
      return write_into_self(a, bernoulli_draw(a[0].to_tensor(), a[1]));
    })
    .random()
    .derivative(zero_derivative, DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{{{make_sample({3, 4}, kFloat32), 0.25}, "2-D"},
                                 {{gapped_sample(3, 4, kFloat32), 0.5}, "strided"}};
    });

KILN_OP("uniform_(Tensor(a!) self, float from=0, float to=1) -> Tensor(a!)")
    .custom(DeviceType::CPU,
            [](const Stack& args) -> std::vector<Tensor> {
              const Tensor& self = args[0].to_tensor();
              const double from = args[1].to_double(), to = args[2].to_double();
              check_floating(self.dtype(), "uniform_");
              KILN_CHECK(from <= to,
                         "uniform_: expects to return a [from, to) range, but found from={} > "
                         "to={}",
                         from, to);
              uniform_into(self, from, to);
              self.impl()->bump_version();
              return {self};
            })
    .custom(DeviceType::Meta, inplace_meta)
    .decomposition([](const Stack& a) {
      // from + (to - from) * u in float64, u a rand draw of self's dtype (exact in it).
      const Tensor& self = a[0].to_tensor();
      const double from = a[1].to_double(), to = a[2].to_double();
      check_floating(self.dtype(), "uniform_");
      KILN_CHECK(from <= to,
                 "uniform_: expects to return a [from, to) range, but found from={} > to={}", from,
                 to);
      const Tensor u = call1(op_named("rand"), {self.sym_sizes(), self.dtype(), self.device()});
      return write_into_self(a, (u.to(kFloat64) * (to - from) + from).to(self.dtype()));
    })
    .random()
    .derivative(zero_derivative, DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{{{make_sample({3, 4}, kFloat32), -2.0, 3.0}, "2-D"},
                                 {{gapped_sample(3, 4, kFloat64), 0.0, 1.0}, "strided"}};
    });

KILN_OP("normal_(Tensor(a!) self, float mean=0, float std=1) -> Tensor(a!)")
    .custom(DeviceType::CPU,
            [](const Stack& args) -> std::vector<Tensor> {
              const Tensor& self = args[0].to_tensor();
              const double mean = args[1].to_double(), std = args[2].to_double();
              check_floating(self.dtype(), "normal_");
              KILN_CHECK(std >= 0.0, "normal_: expects std >= 0.0, but found std {}", std);
              normal_into(self, mean, std);
              self.impl()->bump_version();
              return {self};
            })
    .custom(DeviceType::Meta, inplace_meta)
    .decomposition([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      check_floating(self.dtype(), "normal_");
      KILN_CHECK(a[2].to_double() >= 0.0, "normal_: expects std >= 0.0, but found std {}",
                 a[2].to_double());
      const Tensor z = call1(op_named("randn"), {self.sym_sizes(), self.dtype(), self.device()});
      return write_into_self(a, affine_normal(z, a[1], a[2], self.dtype()));
    })
    .random()
    .derivative(zero_derivative, DerivativeReads::Nothing)
    .samples([] {
      return std::vector<Sample>{{{make_sample({3, 4}, kFloat32), 1.0, 2.0}, "2-D"},
                                 {{transposed_sample(3, 4, kFloat64), 0.0, 1.0}, "transposed"}};
    });

KILN_OP("randperm(SymInt n, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      const int64_t n = args[0].to_int();
      KILN_CHECK(n >= 0, "randperm: n must be non-negative, got {}", n);
      DType dtype = args[1].to_optional_dtype().value_or(kInt64);
      KILN_CHECK(n == 0 || static_cast<double>(n - 1) <= exact_integer_limit(dtype),
                 "randperm: n ({}) is too large for dtype {}", n, dtype_name(dtype));
      return std::vector<TensorMeta>{
          TensorMeta::contiguous({SymInt(n)}, dtype, args[2].to_device_or_cpu())};
    })
    .cpu([](const Stack&, const std::vector<Tensor>& out) {
      const int64_t n = out[0].numel();
      if (n == 0) return;
      PhiloxStream s = reserve_stream(n, kRandpermWords);
      if (out[0].dtype() == kInt64) {
        randperm_fill_kernels(out[0].data_ptr<int64_t>(), n, s);
        return;
      }
      Tensor perm = empty({n}, kInt64);
      randperm_fill_kernels(perm.data_ptr<int64_t>(), n, s);
      Tensor target = out[0];
      target.copy_(perm);
    })
    .random()
    .samples([] {
      return std::vector<Sample>{{{int64_t{10}}, "10"}, {{int64_t{0}}, "empty"}};
    });

KILN_OP("rand_like(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      DType dtype = args[1].to_optional_dtype().value_or(self.dtype());
      check_floating(dtype, "rand_like");
      Device device = args[2].is_none() ? self.device() : args[2].to_device();
      return std::vector<TensorMeta>{like_meta(self, dtype, device)};
    })
    .cpu([](const Stack&, const std::vector<Tensor>& out) { uniform_into(out[0], 0.0, 1.0); })
    .decomposition([](const Stack& a) { return like_draw(a, "rand", "rand_like"); })
    .random()
    .not_differentiable()
    .samples(like_samples);

KILN_OP("randn_like(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      const Tensor& self = args[0].to_tensor();
      DType dtype = args[1].to_optional_dtype().value_or(self.dtype());
      check_floating(dtype, "randn_like");
      Device device = args[2].is_none() ? self.device() : args[2].to_device();
      return std::vector<TensorMeta>{like_meta(self, dtype, device)};
    })
    .cpu([](const Stack&, const std::vector<Tensor>& out) { normal_into(out[0], 0.0, 1.0); })
    .decomposition([](const Stack& a) { return like_draw(a, "randn", "randn_like"); })
    .random()
    .not_differentiable()
    .samples(like_samples);

}  // namespace kiln::ops

namespace kiln {

namespace {
using random_detail::GeneratorScope;

using ops::op_named;

Device like_device(const Tensor& other, const TensorOptions& options) {
  return options.device().is_cpu() ? other.device() : options.device();
}

Tensor finish_factory(Tensor t, const TensorOptions& options) {
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}
}  // namespace

Tensor rand(IntList size, TensorOptions options, Generator* gen, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("rand");
  GeneratorScope scope(gen);
  return finish_factory(ops::call1(op, {size, options.dtype_opt(), options.device()}, &loc),
                        options);
}

Tensor randn(IntList size, TensorOptions options, Generator* gen, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("randn");
  GeneratorScope scope(gen);
  return finish_factory(ops::call1(op, {size, options.dtype_opt(), options.device()}, &loc),
                        options);
}

Tensor randint(int64_t low, int64_t high, IntList size, TensorOptions options, Generator* gen,
               const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("randint.low");
  GeneratorScope scope(gen);
  return ops::call1(op, {low, high, size, options.dtype_opt(), options.device()}, &loc);
}

Tensor randint(int64_t high, IntList size, TensorOptions options, Generator* gen,
               const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("randint");
  GeneratorScope scope(gen);
  return ops::call1(op, {high, size, options.dtype_opt(), options.device()}, &loc);
}

Tensor rand_like(const Tensor& other, TensorOptions options, Generator* gen,
                 const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("rand_like");
  GeneratorScope scope(gen);
  return finish_factory(
      ops::call1(op, {other, options.dtype_opt(), like_device(other, options)}, &loc), options);
}

Tensor randn_like(const Tensor& other, TensorOptions options, Generator* gen,
                  const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("randn_like");
  GeneratorScope scope(gen);
  return finish_factory(
      ops::call1(op, {other, options.dtype_opt(), like_device(other, options)}, &loc), options);
}

Tensor normal(double mean, double std, IntList size, TensorOptions options, Generator* gen,
              const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("normal.float_float");
  GeneratorScope scope(gen);
  return finish_factory(
      ops::call1(op, {mean, std, size, options.dtype_opt(), options.device()}, &loc), options);
}

Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen,
              const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("normal.Tensor_Tensor");
  GeneratorScope scope(gen);
  return ops::call1(op, {mean, std}, &loc);
}

Tensor bernoulli(const Tensor& p, Generator* gen, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("bernoulli");
  GeneratorScope scope(gen);
  return ops::call1(op, {p}, &loc);
}

Tensor bernoulli(const Tensor& self, double p, Generator* gen, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("bernoulli.p");
  GeneratorScope scope(gen);
  return ops::call1(op, {self, p}, &loc);
}

Tensor randperm(int64_t n, TensorOptions options, Generator* gen, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("randperm");
  GeneratorScope scope(gen);
  return ops::call1(op, {n, options.dtype_opt(), options.device()}, &loc);
}

Tensor& uniform_(Tensor& self, double from, double to, Generator* gen,
                 const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("uniform_");
  GeneratorScope scope(gen);
  ops::call(op, {self, from, to}, &loc);
  return self;
}

Tensor& normal_(Tensor& self, double mean, double std, Generator* gen,
                const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("normal_");
  GeneratorScope scope(gen);
  ops::call(op, {self, mean, std}, &loc);
  return self;
}

Tensor& bernoulli_(Tensor& self, double p, Generator* gen, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = op_named("bernoulli_.float");
  GeneratorScope scope(gen);
  ops::call(op, {self, p}, &loc);
  return self;
}

}  // namespace kiln
