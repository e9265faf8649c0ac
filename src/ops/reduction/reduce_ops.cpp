// The reductions and scans: sum, mean, prod, max/min (full and .dim), amax/amin, argmax/argmin,
// var/std/var_mean, linalg_vector_norm, logsumexp, any/all, cumsum/cumprod. Each is declared
// once with aten's schema; the kernels are in reduce.kernel.cpp and scan.kernel.cpp.
#include "ops/reduction/reduce_derivatives.h"
#include "ops/reduction/reduce_kernels.h"
#include "ops/reduction/reduce_meta.h"
#include "ops/reduction/reduce_samples.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/unary.h>

#include <cmath>
#include <limits>

namespace kiln::ops {
namespace {

using Metas = std::vector<TensorMeta>;
using Outs = std::vector<Tensor>;

Tensor cast(const Tensor& t, DType d) { return t.dtype() == d ? t : t.to(d); }

// The dtype a kernel computes a result of dtype `result` in: 16-bit floats through float32,
// integers and bool through int64.
DType compute_dtype(DType result) {
  if (result == DType::Float16 || result == DType::BFloat16) return DType::Float32;
  if (is_integral(result, /*include_bool=*/true)) return DType::Int64;
  return result;
}

// sum/prod/cumsum/cumprod: integral and bool inputs give int64 unless dtype says otherwise.
DType accumulate_dtype(DType self, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self, /*include_bool=*/true) ? DType::Int64 : self;
}

// Runs a reduction kernel on `in` (already in its compute dtype) into outs, through temporaries
// of the kernel's output dtypes where outs differ (out= tensors of another dtype, float16).
void run_reduce(ReduceKind kind, const Tensor& in, const Outs& outs,
                const std::vector<DType>& kernel_dtypes, const std::vector<bool>& mask,
                bool keepdim, const ReduceParams& params = {}, bool logical_order = false) {
  Outs targets;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined() || outs[i].dtype() == kernel_dtypes[i]) {
      targets.push_back(outs[i]);
    } else {
      targets.push_back(empty(outs[i].sizes(), kernel_dtypes[i]));
    }
  }
  reduce_kernels(kind, make_reduce_plan(in, targets, mask, keepdim, logical_order), params);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].defined() && !outs[i].is_same(targets[i])) {
      Tensor dst = outs[i];
      dst.copy_(targets[i]);
    }
  }
}

std::vector<bool> single_dim_mask(const Tensor& self, int64_t dim, const char* op) {
  return reduction_mask(self.dim(), IntList(&dim, 1), op);
}

bool selects_all(const IValue& dims) { return dims.is_none() || dims.to_int_list().empty(); }

// ---- sum, mean, prod ----

DType mean_dtype(const Tensor& self, std::optional<DType> dtype) {
  if (dtype) {
    KILN_CHECK_T(TypeError, is_floating_point(*dtype),
                 "mean(): could not infer output dtype. Optional dtype must be either a floating "
                 "point or complex dtype. Got: {}",
                 torch_type_name(*dtype));
    return *dtype;
  }
  KILN_CHECK_T(TypeError, self.is_floating_point(),
               "mean(): could not infer output dtype. Input dtype must be either a floating point "
               "or complex dtype. Got: {}",
               torch_type_name(self.dtype()));
  return self.dtype();
}

// sum and mean share a schema: (self, dim, keepdim, *, dtype).
template <bool IsMean>
Metas sum_meta(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  auto mask = reduction_mask(self.dim(), a[1], IsMean ? "mean" : "sum");
  DType dt = IsMean ? mean_dtype(self, a[3].to_optional_dtype())
                    : accumulate_dtype(self.dtype(), a[3].to_optional_dtype());
  return {reduction_meta(self, mask, a[2].to_bool(), dt)};
}

template <bool IsMean>
void sum_impl(const Stack& a, const Outs& out) {
  const Tensor& self = a[0].to_tensor();
  auto mask = reduction_mask(self.dim(), a[1], IsMean ? "mean" : "sum");
  DType dt = IsMean ? mean_dtype(self, a[3].to_optional_dtype())
                    : accumulate_dtype(self.dtype(), a[3].to_optional_dtype());
  DType c = compute_dtype(dt);
  run_reduce(IsMean ? ReduceKind::Mean : ReduceKind::Sum, cast(self, c), out, {c}, mask,
             a[2].to_bool());
}

void prod_run(const Tensor& self, const std::vector<bool>& mask, bool keepdim,
              std::optional<DType> dtype, const Outs& out) {
  DType c = compute_dtype(accumulate_dtype(self.dtype(), dtype));
  run_reduce(ReduceKind::Prod, cast(self, c), out, {c}, mask, keepdim);
}

// ---- max/min ----

template <bool IsMax>
constexpr const char* extreme_name() {
  return IsMax ? "max" : "min";
}

template <bool IsMax>
void extreme_dim_impl(const Stack& a, const Outs& out) {
  const Tensor& self = a[0].to_tensor();
  auto mask = single_dim_mask(self, a[1].to_int(), extreme_name<IsMax>());
  run_reduce(IsMax ? ReduceKind::ArgMax : ReduceKind::ArgMin, self, out,
             {self.dtype(), DType::Int64}, mask, a[2].to_bool(), {}, true);
}

// ---- var/std ----

void check_var_dtype(const Tensor& self) {
  KILN_CHECK_T(TypeError, self.is_floating_point(),
               "std and var only support floating point and complex dtypes, got {}",
               dtype_name(self.dtype()));
}

// var/std/var_mean: (self, dim, *, correction, keepdim).
template <int NOut>
Metas var_meta(const Stack& a, const char* op) {
  const Tensor& self = a[0].to_tensor();
  check_var_dtype(self);
  auto mask = reduction_mask(self.dim(), a[1], op);
  TensorMeta m = reduction_meta(self, mask, a[3].to_bool(), self.dtype());
  return Metas(NOut, m);
}

void var_run(const Stack& a, const Outs& out, bool take_sqrt, const char* op) {
  const Tensor& self = a[0].to_tensor();
  auto mask = reduction_mask(self.dim(), a[1], op);
  ReduceParams params;
  params.correction = a[2].is_none() ? 1.0 : a[2].to_scalar().to_double();
  params.take_sqrt = take_sqrt;
  DType c = compute_dtype(self.dtype());
  Outs outs = out;
  if (outs.size() == 1) outs.emplace_back();
  run_reduce(ReduceKind::Var, cast(self, c), outs, {c, c}, mask, a[3].to_bool(), params);
}

// ---- linalg_vector_norm ----

DType norm_dtype(const Tensor& self, std::optional<DType> dtype) {
  KILN_CHECK_T(TypeError, self.is_floating_point(),
               "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
               torch_type_name(self.dtype()));
  if (dtype) {
    KILN_CHECK_T(TypeError, is_floating_point(*dtype),
                 "linalg.vector_norm: dtype should be floating point or complex, but got {}",
                 torch_type_name(*dtype));
  }
  return dtype.value_or(self.dtype());
}

std::vector<bool> norm_mask(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  auto mask = reduction_mask(self.dim(), a[2], "linalg.vector_norm");
  const double ord = a[1].to_scalar().to_double();
  if (ord < 0 || std::isinf(ord)) {
    // No identity: every reduced dim must be non-empty.
    bool empty_reduced = false;
    for (size_t d = 0; d < mask.size(); ++d) empty_reduced |= mask[d] && self.sym_sizes()[d] == 0;
    KILN_CHECK(!empty_reduced,
               "linalg.vector_norm cannot compute the {} norm on an empty tensor because the "
               "operation does not have an identity",
               a[1].to_scalar().str());
  }
  return mask;
}

// ---- logsumexp, any/all, cumsum/cumprod ----

DType logsumexp_dtype(const Tensor& self) {
  return self.is_floating_point() ? self.dtype() : default_float_dtype();
}

// any/all give bool, except uint8 in uint8 (as PyTorch does).
DType logical_dtype(const Tensor& self) {
  return self.dtype() == DType::UInt8 ? DType::UInt8 : DType::Bool;
}

template <bool IsAny>
void logical_run(const Tensor& self, const std::vector<bool>& mask, bool keepdim, const Outs& out) {
  run_reduce(IsAny ? ReduceKind::Any : ReduceKind::All, cast(self, DType::Bool), out, {DType::Bool},
             mask, keepdim);
}

template <bool IsProd>
Metas scan_meta(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  wrap_dim(a[1].to_int(), self.dim(), IsProd ? "cumprod" : "cumsum");
  return {TensorMeta::contiguous(self.sym_sizes().vec(),
                                 accumulate_dtype(self.dtype(), a[2].to_optional_dtype()),
                                 self.device())};
}

template <bool IsProd>
void scan_impl(const Stack& a, const Outs& out) {
  const Tensor& self = a[0].to_tensor();
  const int64_t dim = wrap_dim(a[1].to_int(), self.dim(), IsProd ? "cumprod" : "cumsum");
  DType c = compute_dtype(accumulate_dtype(self.dtype(), a[2].to_optional_dtype()));
  Tensor in = cast(self, c).contiguous();
  Tensor target = out[0];
  if (target.dtype() != c || !target.is_contiguous()) target = empty(self.sizes(), c);
  scan_kernels(IsProd, target, in, self.dim() == 0 ? 0 : dim);
  if (!target.is_same(out[0])) {
    Tensor dst = out[0];
    dst.copy_(target);
  }
}

// ---- decompositions (into the sum, prod.dim_int, amax/amin, argmax/argmin and var_mean prims)
// ----

// sum in the kernel's compute dtype divided by the count, as the kernel does.
std::vector<Tensor> mean_decomposition(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  const auto mask = reduction_mask(self.dim(), a[1], "mean");
  const DType dt = mean_dtype(self, a[3].to_optional_dtype());
  const Tensor total =
      call1(op_named("sum"), {cast(self, compute_dtype(dt)), a[1], a[2], IValue()});
  return {cast(divide_by_reduced_count(total, self, mask), dt)};
}

// The product of the flattened tensor along its one dim.
std::vector<Tensor> prod_decomposition(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  return {call1(op_named("prod.dim_int"), {self.reshape({-1}), int64_t{0}, false, a[1]})};
}

template <bool IsMax>
std::vector<Tensor> extreme_full_decomposition(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  std::vector<bool> mask(static_cast<size_t>(self.dim()), true);
  check_nonempty_reduction(self, mask, true, extreme_name<IsMax>());
  return {call1(op_named(IsMax ? "amax" : "amin"), {self, std::vector<int64_t>{}, false})};
}

// Values from amax/amin, indices from argmax/argmin (the same reduction order and tie rule).
template <bool IsMax>
std::vector<Tensor> extreme_dim_decomposition(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  const int64_t dim = a[1].to_int();
  const bool keepdim = a[2].to_bool();
  check_nonempty_reduction(self, single_dim_mask(self, dim, extreme_name<IsMax>()), false,
                           extreme_name<IsMax>());
  const Tensor values =
      call1(op_named(IsMax ? "amax" : "amin"), {self, std::vector<int64_t>{dim}, keepdim});
  // argmax takes no bool input; uint8 orders false < true the same way.
  const Tensor ordered = self.dtype() == DType::Bool ? self.to(DType::UInt8) : self;
  const Tensor indices = call1(op_named(IsMax ? "argmax" : "argmin"), {ordered, dim, keepdim});
  return {values, indices};
}

// var/std: var_mean's variance (std its square root).
std::vector<Tensor> var_decomposition(const Stack& a, bool take_sqrt) {
  check_var_dtype(a[0].to_tensor());
  const Tensor var = call(op_named("var_mean.correction"), {a[0], a[1], a[2], a[3]})[0];
  return {take_sqrt ? var.sqrt() : var};
}

// any/all: whether the count of nonzero (any) or zero (all) elements is positive (zero).
template <bool IsAny>
Tensor logical_decomposition(const Tensor& self, const IValue& dims, bool keepdim) {
  const Tensor hits = IsAny ? self != 0 : self == 0;
  const Tensor count = call1(op_named("sum"), {hits, dims, keepdim, IValue()});
  return cast(IsAny ? count > 0 : count == 0, logical_dtype(self));
}

}  // namespace

// ---------------------------------------------------------------- declarations

// The gradient of a sum spreads back over the reduced dims (divided by their count for mean).
template <bool IsMean>
std::vector<Tensor> sum_derivative(const BackwardArgs& a) {
  const Tensor& self = a.inputs[0].to_tensor();
  Tensor g = a.grad_outputs[0];
  auto mask = reduction_mask(self.dim(), a.inputs[1], IsMean ? "mean" : "sum");
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (mask[static_cast<size_t>(d)] && !a.inputs[2].to_bool()) g = g.unsqueeze(d);
  }
  g = expand_symint(g, self.sym_sizes());
  if (IsMean) g = divide_by_reduced_count(g, self, mask);
  return {g};
}

KILN_OP(
    "sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
    .meta(sum_meta<false>)
    .derivative(sum_derivative<false>, DerivativeReads::Nothing)
    .cpu(sum_impl<false>)
    .out_variant()
    .samples([] { return sum_samples(/*floating_only=*/false); });

KILN_OP(
    "mean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
    .meta(sum_meta<true>)
    .derivative(sum_derivative<true>, DerivativeReads::Nothing)
    .cpu(sum_impl<true>)
    .decomposition(mean_decomposition)
    .out_variant()
    .samples([] { return sum_samples(/*floating_only=*/true); });

KILN_OP("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor")
    .meta([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      return Metas{reduction_meta(self, std::vector<bool>(static_cast<size_t>(self.dim()), true),
                                  false, accumulate_dtype(self.dtype(), a[1].to_optional_dtype()))};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      prod_run(self, std::vector<bool>(static_cast<size_t>(self.dim()), true), false,
               a[1].to_optional_dtype(), out);
    })
    .decomposition(prod_decomposition)
    .derivative(prod_derivative)
    .out_variant()
    .tolerance(1e-4, 1e-6)
    .samples([] {
      auto s = full_reduction_samples(/*allow_empty=*/true, /*small_values=*/true);
      for (Sample& z : prod_zero_samples()) s.push_back(std::move(z));
      return s;
    });

KILN_OP(
    "prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
    .meta([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      auto mask = single_dim_mask(self, a[1].to_int(), "prod");
      return Metas{reduction_meta(self, mask, a[2].to_bool(),
                                  accumulate_dtype(self.dtype(), a[3].to_optional_dtype()))};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      prod_run(self, single_dim_mask(self, a[1].to_int(), "prod"), a[2].to_bool(),
               a[3].to_optional_dtype(), out);
    })
    .derivative(prod_dim_derivative)
    .tolerance(1e-4, 1e-6)
    .samples([] {
      auto s = single_dim_samples(/*allow_empty=*/true, /*small_values=*/true);
      for (Sample& z : prod_dim_zero_samples()) s.push_back(std::move(z));
      return s;
    });

KILN_REGISTER_OPS(extremes) {
  auto full_meta = [](const char* op) {
    return [op](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      std::vector<bool> mask(static_cast<size_t>(self.dim()), true);
      check_nonempty_reduction(self, mask, true, op);
      return Metas{reduction_meta(self, mask, false, self.dtype())};
    };
  };
  auto full_impl = [](ReduceKind kind) {
    return [kind](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      std::vector<bool> mask(static_cast<size_t>(self.dim()), true);
      run_reduce(kind, self, out, {self.dtype()}, mask, false);
    };
  };
  auto dim_meta = [](const char* op) {
    return [op](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      auto mask = single_dim_mask(self, a[1].to_int(), op);
      check_nonempty_reduction(self, mask, false, op);
      TensorMeta values = reduction_meta(self, mask, a[2].to_bool(), self.dtype());
      TensorMeta indices = values;
      indices.dtype = DType::Int64;
      return Metas{values, indices};
    };
  };
  auto amax_meta = [](const char* op) {
    return [op](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      auto mask = reduction_mask(self.dim(), a[1], op);
      check_nonempty_reduction(self, mask, selects_all(a[1]), op);
      return Metas{reduction_meta(self, mask, a[2].to_bool(), self.dtype())};
    };
  };
  auto amax_impl = [](ReduceKind kind, const char* op) {
    return [kind, op](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      run_reduce(kind, self, out, {self.dtype()}, reduction_mask(self.dim(), a[1], op),
                 a[2].to_bool());
    };
  };
  auto arg_meta = [](const char* op) {
    return [op](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      KILN_CHECK_T(TypeError, self.dtype() != DType::Bool, "{}(): does not support bool input", op);
      auto mask = reduction_mask(self.dim(), a[1], op);
      check_nonempty_reduction(self, mask, a[1].is_none(), op);
      return Metas{reduction_meta(self, mask, a[2].to_bool(), DType::Int64)};
    };
  };
  auto arg_impl = [](ReduceKind kind, const char* op) {
    return [kind, op](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      run_reduce(kind, self, {Tensor(), out[0]}, {self.dtype(), DType::Int64},
                 reduction_mask(self.dim(), a[1], op), a[2].to_bool(), {}, true);
    };
  };
  declare(OpBuilder("max(Tensor self) -> Tensor")
              .meta(full_meta("max"))
              .cpu(full_impl(ReduceKind::Max))
              .decomposition(extreme_full_decomposition<true>)
              .derivative(extreme_full_derivative, DerivativeReads::InputsAndOutputs)
              .samples([] { return full_reduction_samples(false, false); }));
  declare(OpBuilder("min(Tensor self) -> Tensor")
              .meta(full_meta("min"))
              .cpu(full_impl(ReduceKind::Min))
              .decomposition(extreme_full_decomposition<false>)
              .derivative(extreme_full_derivative, DerivativeReads::InputsAndOutputs)
              .samples([] { return full_reduction_samples(false, false); }));
  declare(
      OpBuilder(
          "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
          .meta(dim_meta("max"))
          .cpu(extreme_dim_impl<true>)
          .decomposition(extreme_dim_decomposition<true>)
          .derivative(extreme_dim_derivative, DerivativeReads::Outputs)
          .samples([] { return single_dim_samples(false, false); }));
  declare(
      OpBuilder(
          "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
          .meta(dim_meta("min"))
          .cpu(extreme_dim_impl<false>)
          .decomposition(extreme_dim_decomposition<false>)
          .derivative(extreme_dim_derivative, DerivativeReads::Outputs)
          .samples([] { return single_dim_samples(false, false); }));
  declare(OpBuilder("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor")
              .meta(amax_meta("amax"))
              .cpu(amax_impl(ReduceKind::Max, "amax"))
              .derivative(amax_derivative, DerivativeReads::InputsAndOutputs)
              .out_variant()
              .samples([] { return dim_list_samples(true, false, true); }));
  declare(OpBuilder("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor")
              .meta(amax_meta("amin"))
              .cpu(amax_impl(ReduceKind::Min, "amin"))
              .derivative(amax_derivative, DerivativeReads::InputsAndOutputs)
              .out_variant()
              .samples([] { return dim_list_samples(true, false, true); }));
  declare(OpBuilder("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
              .meta(arg_meta("argmax"))
              .cpu(arg_impl(ReduceKind::ArgMax, "argmax"))
              .out_variant()
              .not_differentiable()
              .samples([] { return optional_dim_samples(); }));
  declare(OpBuilder("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
              .meta(arg_meta("argmin"))
              .cpu(arg_impl(ReduceKind::ArgMin, "argmin"))
              .out_variant()
              .not_differentiable()
              .samples([] { return optional_dim_samples(); }));
}

KILN_OP(
    "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) "
    "-> Tensor")
    .meta([](const Stack& a) { return var_meta<1>(a, "var"); })
    .cpu([](const Stack& a, const Outs& out) { var_run(a, out, false, "var"); })
    .decomposition([](const Stack& a) { return var_decomposition(a, /*take_sqrt=*/false); })
    .derivative(var_derivative)
    .out_variant()
    .samples(var_samples);

KILN_OP(
    "std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) "
    "-> Tensor")
    .meta([](const Stack& a) { return var_meta<1>(a, "std"); })
    .cpu([](const Stack& a, const Outs& out) { var_run(a, out, true, "std"); })
    .decomposition([](const Stack& a) { return var_decomposition(a, /*take_sqrt=*/true); })
    .derivative(std_derivative, DerivativeReads::InputsAndOutputs)
    .out_variant()
    .samples(var_samples);

KILN_OP(
    "var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
    "keepdim=False) -> (Tensor, Tensor)")
    .meta([](const Stack& a) { return var_meta<2>(a, "var_mean"); })
    .cpu([](const Stack& a, const Outs& out) { var_run(a, out, false, "var_mean"); })
    .derivative(var_mean_derivative)
    .samples(var_samples);

// The dims a mask reduces, in order.
std::vector<int64_t> masked_dims(const std::vector<bool>& mask) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (mask[d]) dims.push_back(static_cast<int64_t>(d));
  }
  return dims;
}

// linalg_vector_norm in kiln ops, accumulating in float64 as the kernel does.
std::vector<Tensor> vector_norm_decomposition(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  const DType out = norm_dtype(self, a[4].to_optional_dtype());  // the checks too
  const std::vector<int64_t> dims = masked_dims(norm_mask(a));
  const bool keepdim = a[3].to_bool();
  const double ord = a[1].to_scalar().to_double();
  const Tensor x = abs(self.to(compute_dtype(out)).to(DType::Float64));
  Tensor r;
  if (ord == std::numeric_limits<double>::infinity()) {
    r = amax(x, dims, keepdim);
  } else if (ord == -std::numeric_limits<double>::infinity()) {
    r = amin(x, dims, keepdim);
  } else if (ord == 0.0) {
    r = sum((x != 0.0).to(DType::Float64), dims, keepdim);
  } else if (ord == 1.0) {
    r = sum(x, dims, keepdim);
  } else if (ord == 2.0) {
    r = sqrt(sum(x * x, dims, keepdim));
  } else {
    r = pow(sum(pow(x, ord), dims, keepdim), 1.0 / ord);
  }
  return {r.to(out)};
}

// logsumexp in kiln ops: max + log(sum(exp(x - max))), the max taken as 0 where it is infinite
// (so that rows of -inf give -inf, and +inf gives +inf), -inf over empty dims.
std::vector<Tensor> logsumexp_decomposition(const Stack& a) {
  const Tensor& self = a[0].to_tensor();
  const DType out = logsumexp_dtype(self);
  const std::vector<bool> mask = reduction_mask(self.dim(), a[1], "logsumexp");
  const bool keepdim = a[2].to_bool();
  const std::vector<int64_t> dims = masked_dims(mask);
  if (self.numel() == 0) {
    DimVector sizes;
    for (const SymInt& s : reduced_sizes(self.sym_sizes(), mask, keepdim)) {
      sizes.push_back(s.expect_int());
    }
    return {full(sizes, -std::numeric_limits<double>::infinity(),
                 TensorOptions(out).device(self.device()))};
  }
  const Tensor x = self.to(compute_dtype(out));
  const Tensor m = amax(x, dims, /*keepdim=*/true);
  const Tensor shift = where(abs(m) == std::numeric_limits<double>::infinity(), 0.0, m);
  const Tensor total = sum(exp(x - shift), dims, keepdim);
  return {(log(total) + (keepdim ? shift : shift.squeeze(dims))).to(out)};
}

KILN_OP(
    "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor")
    .meta([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      DType dt = norm_dtype(self, a[4].to_optional_dtype());
      return Metas{reduction_meta(self, norm_mask(a), a[3].to_bool(), dt)};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      DType c = compute_dtype(norm_dtype(self, a[4].to_optional_dtype()));
      ReduceParams params;
      params.ord = a[1].to_scalar().to_double();
      run_reduce(ReduceKind::Norm, cast(self, c), out, {c}, norm_mask(a), a[3].to_bool(), params);
    })
    .derivative(vector_norm_derivative, DerivativeReads::InputsAndOutputs)
    .decomposition(vector_norm_decomposition)
    .out_variant()
    .tolerance(1e-4, 1e-5)
    .samples(norm_samples);

KILN_OP("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor")
    .meta([](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      auto mask = reduction_mask(self.dim(), a[1], "logsumexp");
      return Metas{reduction_meta(self, mask, a[2].to_bool(), logsumexp_dtype(self))};
    })
    .cpu([](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      DType c = compute_dtype(logsumexp_dtype(self));
      run_reduce(ReduceKind::LogSumExp, cast(self, c), out, {c},
                 reduction_mask(self.dim(), a[1], "logsumexp"), a[2].to_bool());
    })
    .derivative(logsumexp_derivative, DerivativeReads::InputsAndOutputs)
    .decomposition(logsumexp_decomposition)
    .out_variant()
    .tolerance(1e-5, 1e-5)
    .samples([] { return dim_list_samples(true, true, /*allow_all_dims=*/false); });

KILN_REGISTER_OPS(logical) {
  auto full_meta = [](const Stack& a) {
    const Tensor& self = a[0].to_tensor();
    return Metas{reduction_meta(self, std::vector<bool>(static_cast<size_t>(self.dim()), true),
                                false, logical_dtype(self))};
  };
  auto dim_meta = [](const char* op) {
    return [op](const Stack& a) {
      const Tensor& self = a[0].to_tensor();
      return Metas{reduction_meta(self, single_dim_mask(self, a[1].to_int(), op), a[2].to_bool(),
                                  logical_dtype(self))};
    };
  };
  auto full_impl = [](bool is_any) {
    return [is_any](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      std::vector<bool> mask(static_cast<size_t>(self.dim()), true);
      is_any ? logical_run<true>(self, mask, false, out)
             : logical_run<false>(self, mask, false, out);
    };
  };
  auto dim_impl = [](bool is_any, const char* op) {
    return [is_any, op](const Stack& a, const Outs& out) {
      const Tensor& self = a[0].to_tensor();
      auto mask = single_dim_mask(self, a[1].to_int(), op);
      const bool keepdim = a[2].to_bool();
      is_any ? logical_run<true>(self, mask, keepdim, out)
             : logical_run<false>(self, mask, keepdim, out);
    };
  };
  declare(OpBuilder("any(Tensor self) -> Tensor")
              .meta(full_meta)
              .cpu(full_impl(true))
              .decomposition([](const Stack& a) {
                return Outs{logical_decomposition<true>(a[0].to_tensor(), IValue(), false)};
              })
              .not_differentiable()
              .samples(logical_full_samples));
  declare(OpBuilder("all(Tensor self) -> Tensor")
              .meta(full_meta)
              .cpu(full_impl(false))
              .decomposition([](const Stack& a) {
                return Outs{logical_decomposition<false>(a[0].to_tensor(), IValue(), false)};
              })
              .not_differentiable()
              .samples(logical_full_samples));
  declare(OpBuilder("any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor")
              .meta(dim_meta("any"))
              .cpu(dim_impl(true, "any"))
              .decomposition([](const Stack& a) {
                const Tensor& self = a[0].to_tensor();
                single_dim_mask(self, a[1].to_int(), "any");
                return Outs{logical_decomposition<true>(
                    self, IValue(std::vector<int64_t>{a[1].to_int()}), a[2].to_bool())};
              })
              .out_variant()
              .not_differentiable()
              .samples(logical_dim_samples));
  declare(OpBuilder("all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor")
              .meta(dim_meta("all"))
              .cpu(dim_impl(false, "all"))
              .decomposition([](const Stack& a) {
                const Tensor& self = a[0].to_tensor();
                single_dim_mask(self, a[1].to_int(), "all");
                return Outs{logical_decomposition<false>(
                    self, IValue(std::vector<int64_t>{a[1].to_int()}), a[2].to_bool())};
              })
              .out_variant()
              .not_differentiable()
              .samples(logical_dim_samples));
}

KILN_OP("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")
    .meta(scan_meta<false>)
    .cpu(scan_impl<false>)
    .derivative(cumsum_derivative, DerivativeReads::Nothing)
    .inplace_variant()
    .out_variant()
    .samples([] { return scan_samples(false); });

KILN_OP("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")
    .meta(scan_meta<true>)
    .cpu(scan_impl<true>)
    .derivative(cumprod_derivative, DerivativeReads::InputsAndOutputs)
    .inplace_variant()
    .out_variant()
    .tolerance(1e-4, 1e-6)
    .samples([] {
      auto s = scan_samples(true);
      for (Sample& z : cumprod_zero_samples()) s.push_back(std::move(z));
      return s;
    });

}  // namespace kiln::ops

// ---------------------------------------------------------------- typed API

namespace kiln {
namespace {

using ops::op_named;

std::tuple<Tensor, Tensor> pair(std::vector<Tensor> r) {
  return {std::move(r[0]), std::move(r[1])};
}

}  // namespace

Tensor sum(const Tensor& self, IntList dims, bool keepdim, std::optional<DType> dtype,
           const kiln::SourceLocation& loc) {
  static const auto& o = op_named("sum");
  return ops::call1(o, {self, dims, keepdim, dtype}, &loc);
}

Tensor mean(const Tensor& self, IntList dims, bool keepdim, std::optional<DType> dtype,
            const kiln::SourceLocation& loc) {
  static const auto& o = op_named("mean");
  return ops::call1(o, {self, dims, keepdim, dtype}, &loc);
}

Tensor prod(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
            std::optional<DType> dtype, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  if (!dim) {
    static const auto& o = op_named("prod");
    return ops::call1(o, {self, dtype}, &loc);
  }
  static const auto& o = op_named("prod.dim_int");
  return ops::call1(o, {self, *dim, keepdim, dtype}, &loc);
}

Tensor max(const Tensor& self, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("max");
  return ops::call1(o, {self}, &loc);
}

Tensor min(const Tensor& self, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("min");
  return ops::call1(o, {self}, &loc);
}

std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim,
                               const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("max.dim");
  return pair(ops::call(o, {self, dim, keepdim}, &loc));
}

std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim,
                               const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("min.dim");
  return pair(ops::call(o, {self, dim, keepdim}, &loc));
}

Tensor amax(const Tensor& self, IntList dims, bool keepdim, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("amax");
  return ops::call1(o, {self, dims, keepdim}, &loc);
}

Tensor amin(const Tensor& self, IntList dims, bool keepdim, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("amin");
  return ops::call1(o, {self, dims, keepdim}, &loc);
}

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
              const kiln::SourceLocation& loc) {
  static const auto& o = op_named("argmax");
  return ops::call1(o, {self, dim, keepdim}, &loc);
}

Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
              const kiln::SourceLocation& loc) {
  static const auto& o = op_named("argmin");
  return ops::call1(o, {self, dim, keepdim}, &loc);
}

Tensor var(const Tensor& self, IntList dims, std::optional<Scalar> correction, bool keepdim,
           const kiln::SourceLocation& loc) {
  static const auto& o = op_named("var.correction");
  return ops::call1(o, {self, dims, correction, keepdim}, &loc);
}

Tensor std(const Tensor& self, IntList dims, std::optional<Scalar> correction, bool keepdim,
           const kiln::SourceLocation& loc) {
  static const auto& o = op_named("std.correction");
  return ops::call1(o, {self, dims, correction, keepdim}, &loc);
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& self, IntList dims,
                                    std::optional<Scalar> correction, bool keepdim,
                                    const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("var_mean.correction");
  return pair(ops::call(o, {self, dims, correction, keepdim}, &loc));
}

Tensor norm(const Tensor& self, const Scalar& p, IntList dims, bool keepdim,
            const kiln::SourceLocation& loc) {
  static const auto& o = op_named("linalg_vector_norm");
  return ops::call1(o, {self, p, dims, keepdim}, &loc);
}

Tensor logsumexp(const Tensor& self, IntList dims, bool keepdim, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("logsumexp");
  return ops::call1(o, {self, dims, keepdim}, &loc);
}

Tensor any(const Tensor& self, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("any");
  return ops::call1(o, {self}, &loc);
}

Tensor any(const Tensor& self, int64_t dim, bool keepdim, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("any.dim");
  return ops::call1(o, {self, dim, keepdim}, &loc);
}

Tensor all(const Tensor& self, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("all");
  return ops::call1(o, {self}, &loc);
}

Tensor all(const Tensor& self, int64_t dim, bool keepdim, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("all.dim");
  return ops::call1(o, {self, dim, keepdim}, &loc);
}

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype,
              const kiln::SourceLocation& loc) {
  static const auto& o = op_named("cumsum");
  return ops::call1(o, {self, dim, dtype}, &loc);
}

Tensor cumprod(const Tensor& self, int64_t dim, std::optional<DType> dtype,
               const kiln::SourceLocation& loc) {
  static const auto& o = op_named("cumprod");
  return ops::call1(o, {self, dim, dtype}, &loc);
}

}  // namespace kiln
