#pragma once
// The dtypes the gloo backend carries, as the C++ types Gloo's templates take, and the reduction
// function Gloo applies for each ReduceOp. kiln's Half and BFloat16 convert to and from float, so
// Gloo's elementwise templates reduce them in float precision.
#include <kiln/core/dtype.h>
#include <kiln/core/error.h>
#include <kiln/core/half.h>
#include <kiln/distributed/reduce_op.h>

#include <gloo/allreduce.h>
#include <gloo/math.h>

#include <cstdint>

namespace kiln::distributed::detail {

constexpr bool is_gloo_dtype(DType dtype) {
  switch (dtype) {
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64:
    case DType::Int32:
    case DType::Int64:
    case DType::Int8:
    case DType::UInt8:
      return true;
    default:
      return false;
  }
}

inline const char* gloo_dtype_names() {
  return "float16, bfloat16, float32, float64, int32, int64, int8 and uint8";
}

// Calls f(T{}) with the C++ type of dtype (checked by is_gloo_dtype beforehand).
template <typename F>
decltype(auto) visit_gloo_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float16:
      return f(Half{});
    case DType::BFloat16:
      return f(BFloat16{});
    case DType::Float32:
      return f(float{});
    case DType::Float64:
      return f(double{});
    case DType::Int32:
      return f(int32_t{});
    case DType::Int64:
      return f(int64_t{});
    case DType::Int8:
      return f(int8_t{});
    case DType::UInt8:
      return f(uint8_t{});
    default:
      KILN_FAIL("distributed: dtype {} reached the gloo backend unchecked", dtype_name(dtype));
  }
}

template <typename T>
gloo::AllreduceOptions::Func gloo_reduce_function(ReduceOp op) {
  using Elementwise = void (*)(void*, const void*, const void*, size_t);
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:  // Sum, divided afterwards
      return static_cast<Elementwise>(&gloo::sum<T>);
    case ReduceOp::Product:
      return static_cast<Elementwise>(&gloo::product<T>);
    case ReduceOp::Max:
      return static_cast<Elementwise>(&gloo::max<T>);
    case ReduceOp::Min:
      return static_cast<Elementwise>(&gloo::min<T>);
  }
  KILN_FAIL("distributed: unknown ReduceOp {}", static_cast<int>(op));
}

}  // namespace kiln::distributed::detail
