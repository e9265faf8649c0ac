#pragma once
// Helpers for the binary-op tests: tensors from values, strided views built directly on a
// storage (no view ops needed), and a float64 broadcasting reference computed in the test.
#include "test_util.h"

#include <functional>
#include <memory>

namespace kiln::testing {

// A tensor of `dtype` holding v (row-major), built through a float64 or int64 buffer (exact for
// the values these tests use).
template <typename T>
Tensor make(const std::vector<T>& v, IntList shape, DType dtype) {
  using B = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  Tensor t = empty(shape, TensorOptions().dtype(dtype_of_v<B>));
  B* p = t.data_ptr<B>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<B>(v[i]);
  return t.to(dtype);
}
inline Tensor f32(std::vector<double> v, IntList shape) { return make(v, shape, kFloat32); }
inline Tensor f64(std::vector<double> v, IntList shape) { return make(v, shape, kFloat64); }
inline Tensor i64(std::vector<int64_t> v, IntList shape) { return make(v, shape, kInt64); }
inline Tensor i32(std::vector<int64_t> v, IntList shape) { return make(v, shape, kInt32); }
inline Tensor bools(std::vector<int64_t> v, IntList shape) {
  return make(v, shape, kInt64).to(kBool);
}

// A view of base's storage with the given geometry (element strides).
inline Tensor strided(const Tensor& base, IntList sizes, IntList strides, int64_t offset = 0) {
  return Tensor(std::make_shared<TensorImpl>(
      base.storage(), base.dtype(), SymDimVector(sizes.begin(), sizes.end()),
      SymDimVector(strides.begin(), strides.end()), SymInt(offset)));
}
// The transpose of a contiguous 2-D tensor, as a strided view.
inline Tensor transposed(const Tensor& t) {
  return strided(t, {t.size(1), t.size(0)}, {1, t.size(1)});
}

// f over a and b broadcast NumPy-style, in float64, from their values alone.
inline Tensor reference(const Tensor& a, const Tensor& b,
                        const std::function<double(double, double)>& f) {
  std::vector<double> va = values(a), vb = values(b);
  size_t nd = std::max(a.dim(), b.dim());
  DimVector shape(nd);
  auto size_at = [&](const Tensor& t, size_t d) {
    size_t off = nd - static_cast<size_t>(t.dim());
    return d < off ? int64_t{1} : t.size(static_cast<int64_t>(d - off));
  };
  for (size_t d = 0; d < nd; ++d) shape[d] = std::max(size_at(a, d), size_at(b, d));
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (size_t d = nd; d-- > 0;) {
      int64_t idx = rem % shape[d];
      rem /= shape[d];
      int64_t da = size_at(a, d), db = size_at(b, d);
      ia += (da == 1 ? 0 : idx) * sa;
      ib += (db == 1 ? 0 : idx) * sb;
      sa *= da;
      sb *= db;
    }
    out[static_cast<size_t>(i)] = f(va[static_cast<size_t>(ia)], vb[static_cast<size_t>(ib)]);
  }
  return make(out, shape, kFloat64);
}

// Deterministic values in [lo, hi) of a given shape (independent of kiln's random ops).
inline Tensor ramp(IntList shape, DType dtype, double lo = -3.0, double hi = 3.0, int seed = 1) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double u = std::fmod(0.6180339887 * static_cast<double>(i * 7 + seed * 13 + 1), 1.0);
    v[static_cast<size_t>(i)] = lo + (hi - lo) * u;
    if (is_integral(dtype, true)) v[static_cast<size_t>(i)] = std::floor(v[static_cast<size_t>(i)]);
  }
  return make(v, shape, dtype);
}

}  // namespace kiln::testing
