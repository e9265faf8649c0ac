#pragma once
// Float64 references for reduction tests, computed with plain loops over row-major values.
#include "test_util.h"

#include "ops/samples.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

namespace kiln::testing {

// A tensor of the given shape holding values (row-major), converted to T.
template <typename T>
Tensor make(const std::vector<double>& values, std::vector<int64_t> shape) {
  Tensor t = empty(IntList(shape), dtype_of_v<T>);
  T* p = t.data_ptr<T>();
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      p[i] = T(static_cast<float>(values[i]));
    } else {
      p[i] = static_cast<T>(values[i]);
    }
  }
  return t;
}

// A view of base's storage with the given geometry (the view ops are another family's).
inline Tensor strided_view(const Tensor& base, std::vector<int64_t> sizes,
                           std::vector<int64_t> strides, int64_t offset = 0) {
  SymDimVector ssz = to_sym(IntList(sizes)), sst = to_sym(IntList(strides));
  return Tensor(std::make_shared<TensorImpl>(base.storage(), base.dtype(), SymIntList(ssz),
                                             SymIntList(sst), SymInt(offset)));
}

// The transpose of a 2-D tensor, as a view.
inline Tensor transposed(const Tensor& x) {
  return strided_view(x, {x.size(1), x.size(0)}, {x.stride(1), x.stride(0)}, x.storage_offset());
}

inline Tensor random(std::vector<int64_t> shape, DType dtype = kFloat32, uint64_t seed = 0,
                     double low = -3, double high = 3) {
  return ops::make_sample(IntList(shape), dtype, low, high, seed);
}

// Groups the values of x by output element (the selected dims dropped; an empty list selects
// every dim) in row-major order, and applies f to each group.
inline Tensor reference_reduce(const Tensor& x, std::vector<int64_t> dims, bool keepdim,
                               const std::function<double(const std::vector<double>&)>& f) {
  const int64_t nd = x.dim();
  std::vector<bool> mask(static_cast<size_t>(nd), dims.empty());
  for (int64_t d : dims) {
    if (nd > 0) mask[static_cast<size_t>(d < 0 ? d + nd : d)] = true;
  }
  std::vector<int64_t> out_shape, kept_sizes;
  for (int64_t d = 0; d < nd; ++d) {
    if (!mask[static_cast<size_t>(d)]) {
      out_shape.push_back(x.size(d));
      kept_sizes.push_back(x.size(d));
    } else if (keepdim) {
      out_shape.push_back(1);
    }
  }
  int64_t n_out = 1;
  for (int64_t s : kept_sizes) n_out *= s;
  std::vector<std::vector<double>> groups(static_cast<size_t>(n_out));
  const std::vector<double> v = values(x);
  for (size_t lin = 0; lin < v.size(); ++lin) {
    int64_t rem = static_cast<int64_t>(lin), out = 0, scale = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      const int64_t i = rem % x.size(d);
      rem /= x.size(d);
      if (!mask[static_cast<size_t>(d)]) {
        out += i * scale;
        scale *= x.size(d);
      }
    }
    groups[static_cast<size_t>(out)].push_back(v[lin]);
  }
  std::vector<double> result;
  for (const auto& g : groups) result.push_back(f(g));
  return make<double>(result, out_shape);
}

inline double ref_sum(const std::vector<double>& g) {
  double s = 0;
  for (double x : g) s += x;
  return s;
}

inline double ref_mean(const std::vector<double>& g) {
  return ref_sum(g) / static_cast<double>(g.size());
}

inline double ref_var(const std::vector<double>& g, double correction) {
  const double m = ref_mean(g);
  double s = 0;
  for (double x : g) s += (x - m) * (x - m);
  return s / std::max(0.0, static_cast<double>(g.size()) - correction);
}

}  // namespace kiln::testing
