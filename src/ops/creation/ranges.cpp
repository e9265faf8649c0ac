// arange, linspace and eye: factories whose values follow from their arguments alone.
#include "ops/creation/range_kernels.h"
#include "ops/samples.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>

#include <cmath>
#include <limits>

namespace kiln::ops {

cpu::KernelDispatch<ArangeKernel> arange_kernels;
cpu::KernelDispatch<LinspaceKernel> linspace_kernels;
cpu::KernelDispatch<EyeKernel> eye_kernels;

namespace {

// arange's dtype: int64 when every bound is integral (or bool), else the default float dtype.
DType arange_dtype(const Scalar& start, const Scalar& end, const Scalar& step) {
  const bool integral =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  return integral ? kInt64 : default_float_dtype();
}

// The number of elements of arange(start, end, step) in dtype, with PyTorch's checks: the bounds
// and step are first converted to the dtype's accumulation type (int64 or double).
int64_t arange_length(const Scalar& start, const Scalar& end, const Scalar& step, DType dtype) {
  KILN_CHECK_T(TypeError, dtype != DType::Bool, "arange: bool is not supported");
  double size;
  if (is_integral(dtype)) {
    const int64_t s = start.to<int64_t>(), e = end.to<int64_t>(), d = step.to<int64_t>();
    KILN_CHECK(d != 0, "arange: step must be nonzero");
    KILN_CHECK((d > 0 && e >= s) || (d < 0 && e <= s),
               "arange: upper bound and larger bound inconsistent with step sign (start {}, "
               "end {}, step {})",
               s, e, d);
    if (dtype == kInt64) {
      const int64_t sgn = d > 0 ? 1 : -1;
      return (e - s + d - sgn) / d;
    }
    size = std::ceil((end.to<double>() - start.to<double>()) / step.to<double>());
  } else {
    const double s = start.to<double>(), e = end.to<double>(), d = step.to<double>();
    KILN_CHECK(d != 0, "arange: step must be nonzero");
    KILN_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: {} -> {}", s, e);
    KILN_CHECK((d > 0 && e >= s) || (d < 0 && e <= s),
               "arange: upper bound and larger bound inconsistent with step sign (start {}, "
               "end {}, step {})",
               s, e, d);
    size = std::ceil((e - s) / d);
  }
  KILN_CHECK(size >= 0 && size <= static_cast<double>(std::numeric_limits<int64_t>::max()),
             "arange: invalid size {}, possible overflow?", size);
  return static_cast<int64_t>(size);
}

TensorMeta arange_meta(const Scalar& start, const Scalar& end, const Scalar& step,
                       const IValue& dtype_arg, const IValue& device) {
  DType dtype = dtype_arg.to_optional_dtype().value_or(arange_dtype(start, end, step));
  int64_t n = arange_length(start, end, step, dtype);
  return TensorMeta::contiguous({SymInt(n)}, dtype, device.to_device_or_cpu());
}

void arange_impl(const Scalar& start, const Scalar& step, const Tensor& out) {
  if (out.numel() == 0) return;
  arange_kernels(out.data_ptr(), out.dtype(), out.numel(), start, step);
}

TensorMeta eye_meta(int64_t n, int64_t m, const IValue& dtype, const IValue& device) {
  KILN_CHECK(n >= 0, "eye: n must be greater or equal to 0, got {}", n);
  KILN_CHECK(m >= 0, "eye: m must be greater or equal to 0, got {}", m);
  return TensorMeta::contiguous({SymInt(n), SymInt(m)},
                                dtype.to_optional_dtype().value_or(default_float_dtype()),
                                device.to_device_or_cpu());
}

void eye_impl(const Tensor& out) {
  if (out.numel() == 0) return;
  eye_kernels(out.data_ptr(), out.dtype(), out.size(0), out.size(1));
}

// ---- decompositions: arange.start_step, and elementwise math on aranges ----

// eye.m: ones where the row index equals the column index.
std::vector<Tensor> eye_decomposition(int64_t n, int64_t m, const IValue& dtype,
                                      const IValue& device) {
  const TensorMeta meta = eye_meta(n, m, dtype, device);
  const TensorOptions index = TensorOptions(kInt64).device(meta.device);
  return {(arange(n, index).unsqueeze(1) == arange(m, index).unsqueeze(0)).to(meta.dtype)};
}

// The kernel's symmetric formula: start + step * i for the first half, end - step * (steps - 1
// - i) for the second, in the dtype's step type (float for float32 and the half types, double
// otherwise), then converted to the dtype.
std::vector<Tensor> linspace_decomposition(const Stack& args) {
  const Scalar start = args[0].to_scalar(), end = args[1].to_scalar();
  const int64_t steps = args[2].to_int();
  KILN_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got {}", steps);
  const DType dtype = args[3].to_optional_dtype().value_or(default_float_dtype());
  KILN_CHECK_T(TypeError, dtype != DType::Bool, "linspace: bool is not supported");
  const TensorOptions options = TensorOptions(dtype).device(args[4].to_device_or_cpu());
  const bool in_double = dtype == kFloat64 || is_integral(dtype);
  // The endpoints and step as the kernel holds them (exact as doubles).
  auto endpoint = [&](const Scalar& v) {
    if (is_integral(dtype)) return static_cast<double>(v.to<int64_t>());
    return in_double ? v.to<double>() : static_cast<double>(v.to<float>());
  };
  const double a = endpoint(start), b = endpoint(end);
  const DType step_dtype = in_double ? kFloat64 : kFloat32;
  if (steps <= 1) return {full({steps}, a, options)};
  const double step = in_double
                          ? (b - a) / static_cast<double>(steps - 1)
                          : static_cast<double>((static_cast<float>(b) - static_cast<float>(a)) /
                                                static_cast<float>(steps - 1));
  const Tensor i = arange(steps, TensorOptions(step_dtype).device(options.device()));
  const Tensor up = i * step + a;
  const Tensor down = -((-i + static_cast<double>(steps - 1)) * step) + b;
  return {where(i < static_cast<double>(steps / 2), up, down).to(dtype)};
}

}  // namespace

KILN_OP("arange(Scalar end, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      return std::vector<TensorMeta>{arange_meta(0, args[0].to_scalar(), 1, args[1], args[2])};
    })
    .cpu([](const Stack&, const std::vector<Tensor>& out) { arange_impl(0, 1, out[0]); })
    .decomposition([](const Stack& args) {
      return call(op_named("arange.start_step"),
                  {Scalar(int64_t{0}), args[0], Scalar(int64_t{1}), args[1], args[2]});
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{Scalar(int64_t{5})}, "int"}, {{Scalar(3.5)}, "float"}, {{Scalar(int64_t{0})}, "empty"}};
    });

KILN_OP(
    "arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Device? device=None) -> "
    "Tensor")
    .meta([](const Stack& args) {
      return std::vector<TensorMeta>{
          arange_meta(args[0].to_scalar(), args[1].to_scalar(), 1, args[2], args[3])};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      arange_impl(args[0].to_scalar(), 1, out[0]);
    })
    .decomposition([](const Stack& args) {
      return call(op_named("arange.start_step"),
                  {args[0], args[1], Scalar(int64_t{1}), args[2], args[3]});
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{{{Scalar(int64_t{-3}), Scalar(int64_t{4})}, "int"},
                                 {{Scalar(0.5), Scalar(4.0)}, "float"}};
    });

KILN_OP(
    "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, "
    "Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      return std::vector<TensorMeta>{arange_meta(args[0].to_scalar(), args[1].to_scalar(),
                                                 args[2].to_scalar(), args[3], args[4])};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      arange_impl(args[0].to_scalar(), args[2].to_scalar(), out[0]);
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{Scalar(int64_t{10}), Scalar(int64_t{-3}), Scalar(int64_t{-4})}, "negative step"},
          {{Scalar(0.0), Scalar(1.0), Scalar(0.1)}, "float step"},
          {{Scalar(int64_t{1}), Scalar(int64_t{8}), Scalar(int64_t{3}), kFloat64}, "float64"}};
    });

KILN_OP(
    "linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Device? "
    "device=None) -> Tensor")
    .meta([](const Stack& args) {
      const int64_t steps = args[2].to_int();
      KILN_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got {}", steps);
      DType dtype = args[3].to_optional_dtype().value_or(default_float_dtype());
      KILN_CHECK_T(TypeError, dtype != DType::Bool, "linspace: bool is not supported");
      return std::vector<TensorMeta>{
          TensorMeta::contiguous({SymInt(steps)}, dtype, args[4].to_device_or_cpu())};
    })
    .cpu([](const Stack& args, const std::vector<Tensor>& out) {
      if (out[0].numel() == 0) return;
      linspace_kernels(out[0].data_ptr(), out[0].dtype(), out[0].numel(), args[0].to_scalar(),
                       args[1].to_scalar());
    })
    .decomposition(linspace_decomposition)
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{
          {{Scalar(-1.0), Scalar(1.0), int64_t{7}}, "odd steps"},
          {{Scalar(0.0), Scalar(10.0), int64_t{4}}, "even steps"},
          {{Scalar(int64_t{0}), Scalar(int64_t{10}), int64_t{4}, kInt64}, "int64"},
          {{Scalar(2.0), Scalar(5.0), int64_t{1}}, "one step"},
          {{Scalar(2.0), Scalar(5.0), int64_t{0}}, "empty"}};
    });

KILN_OP("eye(SymInt n, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      const int64_t n = args[0].to_int();
      return std::vector<TensorMeta>{eye_meta(n, n, args[1], args[2])};
    })
    .cpu([](const Stack&, const std::vector<Tensor>& out) { eye_impl(out[0]); })
    .decomposition([](const Stack& args) {
      return eye_decomposition(args[0].to_int(), args[0].to_int(), args[1], args[2]);
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{{{int64_t{3}}, "3x3"}, {{int64_t{0}}, "empty"}};
    });

KILN_OP("eye.m(SymInt n, SymInt m, *, ScalarType? dtype=None, Device? device=None) -> Tensor")
    .meta([](const Stack& args) {
      return std::vector<TensorMeta>{
          eye_meta(args[0].to_int(), args[1].to_int(), args[2], args[3])};
    })
    .cpu([](const Stack&, const std::vector<Tensor>& out) { eye_impl(out[0]); })
    .decomposition([](const Stack& args) {
      return eye_decomposition(args[0].to_int(), args[1].to_int(), args[2], args[3]);
    })
    .not_differentiable()
    .samples([] {
      return std::vector<Sample>{{{int64_t{2}, int64_t{4}}, "wide"},
                                 {{int64_t{4}, int64_t{2}, kInt32}, "tall int32"}};
    });

}  // namespace kiln::ops

namespace kiln {

namespace {
Tensor with_grad(Tensor t, const TensorOptions& options) {
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}
}  // namespace

Tensor arange(const Scalar& end, TensorOptions options, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("arange");
  return with_grad(ops::call1(op, {end, options.dtype_opt(), options.device()}, &loc), options);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options,
              const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("arange.start_step");
  return with_grad(ops::call1(op, {start, end, step, options.dtype_opt(), options.device()}, &loc),
                   options);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions options,
                const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("linspace");
  return with_grad(ops::call1(op, {start, end, steps, options.dtype_opt(), options.device()}, &loc),
                   options);
}

Tensor eye(int64_t n, TensorOptions options, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("eye");
  return with_grad(ops::call1(op, {n, options.dtype_opt(), options.device()}, &loc), options);
}

Tensor eye(int64_t n, int64_t m, TensorOptions options, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& op = ops::OpRegistry::instance().get("eye.m");
  return with_grad(ops::call1(op, {n, m, options.dtype_opt(), options.device()}, &loc), options);
}

}  // namespace kiln
