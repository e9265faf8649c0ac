#pragma once
// float64 references for the linalg tests, computed with explicit loops from the inputs' values.
#include "test_util.h"

#include <algorithm>
#include <vector>

namespace kiln::testing {

inline Tensor f64_tensor(const std::vector<double>& v, const std::vector<int64_t>& shape) {
  return from_vector(v, IntList(shape), TensorOptions(kFloat64));
}

// PyTorch's matmul semantics (1-D promotion, batch broadcasting) as plain loops in float64.
inline Tensor ref_matmul(const Tensor& a, const Tensor& b) {
  std::vector<int64_t> sa = a.sizes().vec(), sb = b.sizes().vec();
  const std::vector<double> va = values(a), vb = values(b);
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  EXPECT_EQ(k, sb[sb.size() - 2]);
  std::vector<int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const size_t nb = std::max(ba.size(), bb.size());
  ba.insert(ba.begin(), nb - ba.size(), 1);
  bb.insert(bb.begin(), nb - bb.size(), 1);
  std::vector<int64_t> bo(nb);
  int64_t batches = 1;
  for (size_t d = 0; d < nb; ++d) {
    bo[d] = std::max(ba[d], bb[d]);
    if (ba[d] == 0 || bb[d] == 0) bo[d] = 0;
    batches *= bo[d];
  }
  std::vector<double> out(static_cast<size_t>(batches * m * n), 0.0);
  for (int64_t batch = 0; batch < batches; ++batch) {
    // Row-major offsets of this batch in a and b (size-1 dims broadcast).
    int64_t rest = batch, oa = 0, ob = 0, stride_a = 1, stride_b = 1;
    for (size_t d = nb; d-- > 0;) {
      const int64_t idx = rest % bo[d];
      rest /= bo[d];
      oa += (ba[d] == 1 ? 0 : idx) * stride_a;
      ob += (bb[d] == 1 ? 0 : idx) * stride_b;
      stride_a *= ba[d];
      stride_b *= bb[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += va[static_cast<size_t>((oa * m + i) * k + p)] *
                 vb[static_cast<size_t>((ob * k + p) * n + j)];
        }
        out[static_cast<size_t>((batch * m + i) * n + j)] = acc;
      }
    }
  }
  std::vector<int64_t> shape = bo;
  if (!a_vec) shape.push_back(m);
  if (!b_vec) shape.push_back(n);
  return f64_tensor(out, shape);
}

// Restores the thread count a test changed.
struct ThreadsGuard {
  int saved = get_num_threads();
  ~ThreadsGuard() { set_num_threads(saved); }
};

inline const ops::OpDef& registry_op(const char* name) {
  return ops::OpRegistry::instance().get(name);
}

// A rows x cols matrix stored in one of four layouts: 0 row-major, 1 column-major, 2 strided
// columns (no BLAS layout), 3 row-major with padded rows.
inline Tensor matrix_in_layout(int64_t rows, int64_t cols, DType dtype, int layout) {
  TensorOptions o(dtype);
  switch (layout) {
    case 0:
      return randn({rows, cols}, o);
    case 1:
      return randn({cols, rows}, o).t();
    case 2:
      return randn({rows, 2 * cols}, o).slice(1, 0, 2 * cols, 2);
    default:
      return randn({rows, cols + 3}, o).narrow(1, 1, cols);
  }
}

}  // namespace kiln::testing
