// _softmax and _log_softmax (structured, with kernels in softmax.kernel.cpp) and the public
// softmax.int / log_softmax.int composites, as aten has them.
#include "ops/samples.h"
#include "ops/softmax/softmax_kernels.h"

#include <kiln/ops/creation.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/softmax.h>
#include <kiln/ops/sym_size_ops.h>
#include <kiln/ops/unary.h>

#include <limits>

namespace kiln::ops {

cpu::KernelDispatch<SoftmaxKernel> softmax_kernels;
cpu::KernelDispatch<CrossEntropyRowsKernel> cross_entropy_rows_kernels;

namespace {

using Metas = std::vector<TensorMeta>;
using Outs = std::vector<Tensor>;

bool is_16bit_float(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

// The output dtype of _softmax/_log_softmax: the input's, or float32 for a 16-bit float input
// with half_to_float.
DType softmax_out_dtype(const Tensor& self, bool half_to_float, const char* op) {
  KILN_CHECK_T(TypeError, is_floating_point(self.dtype()),
               "{}: expected a floating point input, got {} (pass dtype= to softmax to convert)",
               op, dtype_name(self.dtype()));
  if (!half_to_float) return self.dtype();
  KILN_CHECK(is_16bit_float(self.dtype()),
             "{}: half_to_float is only supported for float16 and bfloat16 inputs, got {}", op,
             dtype_name(self.dtype()));
  return DType::Float32;
}

Metas softmax_meta(const Stack& a, const char* op) {
  const Tensor& self = a[0].to_tensor();
  wrap_dim(a[1].to_int(), std::max<int64_t>(self.dim(), 1), op);
  DType dtype = softmax_out_dtype(self, a[2].to_bool(), op);
  return {TensorMeta::contiguous(self.sym_sizes().vec(), dtype, self.device())};
}

void softmax_impl(const Stack& a, const Outs& out, bool log) {
  const Tensor& self = a[0].to_tensor();
  if (self.numel() == 0) return;
  const int64_t dim = wrap_dim(a[1].to_int(), std::max<int64_t>(self.dim(), 1), "softmax");
  int64_t outer = 1, inner = 1, dim_size = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d < dim) outer *= self.size(d);
    if (d == dim) dim_size = self.size(d);
    if (d > dim) inner *= self.size(d);
  }
  // 16-bit floats compute in float32.
  const DType compute = self.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor x = self.to(compute).contiguous();
  const bool direct = out[0].is_contiguous() && out[0].dtype() == compute;
  Tensor y = direct ? out[0] : empty(self.sizes(), compute);
  softmax_kernels(x.data_ptr(), y.data_ptr(), compute, outer, dim_size, inner, log);
  if (!direct) {
    Tensor target = out[0];
    target.copy_(y);
  }
}

// _softmax/_log_softmax in kiln ops, as the kernel computes them: in float32 (float64 for
// float64), every row shifted by its max before exp.
std::vector<Tensor> softmax_decomposition(const Stack& a, bool log) {
  const char* op = log ? "_log_softmax" : "_softmax";
  const Tensor& self = a[0].to_tensor();
  const DType out_dtype = softmax_meta(a, op)[0].dtype;  // the argument checks too
  if (self.sym_numel() == 0) {
    return {full_symint(self.sym_sizes(), 0, TensorOptions(out_dtype).device(self.device()))};
  }
  const int64_t dim = wrap_dim(a[1].to_int(), std::max<int64_t>(self.dim(), 1), op);
  // A 0-dim input is a row of one.
  Tensor x = self.to(self.dtype() == DType::Float64 ? DType::Float64 : DType::Float32);
  if (self.dim() == 0) x = x.reshape({1});
  const Tensor shifted = x - amax(x, {dim}, /*keepdim=*/true);
  const Tensor e = exp(shifted);
  const Tensor total = sum(e, {dim}, /*keepdim=*/true);
  const Tensor y = log ? shifted - kiln::log(total) : e / total;
  return {(self.dim() == 0 ? y.reshape({}) : y).to(out_dtype)};
}

// A row with -inf, and one of large magnitude that overflows exp without the max shift.
Tensor special_rows(DType dtype) {
  const double inf = std::numeric_limits<double>::infinity();
  return tensor({{1.0, -inf, 3.0, 0.5, -inf}, {1e4, -1e4, 9999.0, 1e4, 0.0}}, dtype);
}

std::vector<Sample> softmax_samples() {
  return {
      {{make_sample({3, 5}, kFloat32), int64_t{1}, false}, "rows"},
      {{make_sample({3, 5}, kFloat32), int64_t{0}, false}, "dim 0"},
      {{make_sample({2, 4, 3}, kFloat32), int64_t{-2}, false}, "middle dim"},
      {{make_sample({2, 3, 19}, kFloat64), int64_t{1}, false}, "inner tail"},
      {{make_sample({4, 37}, kFloat32), int64_t{-1}, false}, "SIMD tail"},
      {{make_sample({2, 100}, kFloat64, -20.0, 20.0), int64_t{1}, false}, "float64 wide"},
      {{make_noncontiguous_sample({4, 6}, kFloat32), int64_t{1}, false}, "non-contiguous"},
      {{make_sample({}, kFloat32), int64_t{0}, false}, "0-dim"},
      {{make_sample({}, kFloat64), int64_t{-1}, false}, "0-dim dim -1"},
      {{make_sample({0, 5}, kFloat32), int64_t{1}, false}, "empty"},
      {{make_sample({3, 0}, kFloat32), int64_t{1}, false}, "empty dim"},
      {{special_rows(kFloat32), int64_t{1}, false}, "-inf and 1e4"},
      {{special_rows(kFloat64), int64_t{0}, false}, "-inf and 1e4 along dim 0"},
      {{make_sample({3, 7}, kFloat16), int64_t{1}, false}, "float16"},
      {{make_sample({3, 7}, kBFloat16), int64_t{0}, false}, "bfloat16"},
      {{make_sample({3, 5}, kFloat32), int64_t{2}, false}, "dim out of range"},
  };
}

std::vector<Sample> softmax_int_samples() {
  return {
      {{make_sample({3, 5}, kFloat32), int64_t{1}}, "rows"},
      {{make_sample({2, 4, 3}, kFloat64), int64_t{1}}, "middle dim"},
      {{make_sample({3, 5}, kFloat32), int64_t{1}, kFloat64}, "dtype float64"},
      {{make_sample({3, 5}, kInt64), int64_t{0}, kFloat32}, "int64 with dtype"},
      {{make_sample({}, kFloat32), int64_t{0}}, "0-dim"},
      {{make_sample({0, 3}, kFloat32), int64_t{0}}, "empty"},
  };
}

}  // namespace

KILN_OP("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // y (g - sum(g y)) along dim.
          const Tensor& y = a.outputs[0];
          const Tensor& g = a.grad_outputs[0];
          const int64_t dim = a.inputs[1].to_int();
          return {y * (g - (g * y).sum({dim}, /*keepdim=*/true))};
        },
        DerivativeReads::Outputs)
    .meta([](const Stack& a) { return softmax_meta(a, "_softmax"); })
    .cpu([](const Stack& a, const Outs& out) { softmax_impl(a, out, false); })
    .decomposition([](const Stack& a) { return softmax_decomposition(a, false); })
    .out_variant()
    .samples(softmax_samples);

KILN_OP("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
    .derivative(
        [](const BackwardArgs& a) -> std::vector<Tensor> {
          // g - exp(y) sum(g) along dim.
          const Tensor& g = a.grad_outputs[0];
          const int64_t dim = a.inputs[1].to_int();
          return {g - kiln::exp(a.outputs[0]) * g.sum({dim}, /*keepdim=*/true)};
        },
        DerivativeReads::Outputs)
    .meta([](const Stack& a) { return softmax_meta(a, "_log_softmax"); })
    .cpu([](const Stack& a, const Outs& out) { softmax_impl(a, out, true); })
    .decomposition([](const Stack& a) { return softmax_decomposition(a, true); })
    .out_variant()
    .samples(softmax_samples);

KILN_OP("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& op = OpRegistry::instance().get("_softmax");
      Tensor self = a[0].to_tensor();
      if (auto dtype = a[2].to_optional_dtype()) self = self.to(*dtype);
      return call(op, {self, a[1], false});
    })
    .samples(softmax_int_samples);

KILN_OP("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
    .composite([](const Stack& a) {
      static const OpDef& op = OpRegistry::instance().get("_log_softmax");
      Tensor self = a[0].to_tensor();
      if (auto dtype = a[2].to_optional_dtype()) self = self.to(*dtype);
      return call(op, {self, a[1], false});
    })
    .samples(softmax_int_samples);

}  // namespace kiln::ops

namespace kiln {

Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype,
               const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("softmax.int");
  return ops::call1(op, {self, dim, dtype}, &loc);
}

Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype,
                   const kiln::SourceLocation& loc) {
  static const auto& op = ops::OpRegistry::instance().get("log_softmax.int");
  return ops::call1(op, {self, dim, dtype}, &loc);
}

Tensor Tensor::softmax(int64_t dim, std::optional<DType> dtype,
                       const kiln::SourceLocation& loc) const {
  return kiln::softmax(*this, dim, dtype, loc);
}

Tensor Tensor::log_softmax(int64_t dim, std::optional<DType> dtype,
                           const kiln::SourceLocation& loc) const {
  return kiln::log_softmax(*this, dim, dtype, loc);
}

}  // namespace kiln
