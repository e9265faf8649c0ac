#pragma once
// Shared pieces of the normalization ops: optional-tensor arguments, PyTorch's mixed-dtype rule
// and the argument checks that several ops make.
#include <kiln/ops/registry.h>

#include <initializer_list>

namespace kiln::ops::norm {

using Metas = std::vector<TensorMeta>;
using Outs = std::vector<Tensor>;

// A Tensor? argument: undefined stays None.
inline IValue optional_arg(const Tensor& t) { return t.defined() ? IValue(t) : IValue(); }

inline bool is_reduced_float(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

// The dtype the kernels compute a dtype's values in: float32 for float16/bfloat16.
inline DType opmath_dtype(DType d) { return is_reduced_float(d) ? DType::Float32 : d; }

// PyTorch's mixed type: a float16/bfloat16 input with float32 parameters keeps its statistics
// (and parameters) in float32.
bool is_mixed(const Tensor& input, std::initializer_list<Tensor> params);

// The dtype of the statistics outputs (mean, rstd): float32 when mixed, else the input's.
inline DType stats_dtype(const Tensor& input, bool mixed) {
  return mixed ? DType::Float32 : input.dtype();
}

// Raises kiln::TypeError unless input is floating point.
void check_floating(const Tensor& input, const char* op);

// `param` (if defined) converted to dtype and made contiguous, for a kernel to read.
Tensor contiguous_as(const Tensor& param, DType dtype);

// Concrete sizes as the symbolic sizes a TensorMeta holds.
SymDimVector sym(IntList sizes);

// Whether a 4-D input is laid out channels last: it is normalized, and returned, in that layout
// (as in PyTorch).
bool channels_last(const Tensor& input);

// Writes float64 values into a 1-D tensor of any floating dtype and layout.
void assign(const Tensor& dst, const std::vector<double>& values);

}  // namespace kiln::ops::norm
