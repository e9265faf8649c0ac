// Softmax, log-softmax and the fused cross-entropy forward. Numerically stable: every row is
// shifted by its maximum before exp. The row-wise (last dim) path makes three passes over a row
// while it sits in L1 (max; exp and sum; scale), rows in parallel; the inner-dim path vectorizes
// across the inner dimension, one SIMD block of columns at a time.
#include "ops/softmax/softmax_kernels.h"
// unary_math.h after the kernels header: it needs capability.h's namespace macro.
#include "ops/unary/unary_math.h"

#include <kiln/core/parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

template <typename T>
Vec<T> lane_index() {
  Vec<T> r(T(0));
  for (int i = 0; i < Vec<T>::size; ++i) r.v[i] = T(i);
  return r;
}

// The max of lanes, NaN propagating like torch.max.
template <typename T>
T reduce_max(Vec<T> a) {
  T m = a[0];
  for (int i = 1; i < Vec<T>::size; ++i) {
    const T x = a[i];
    if (x > m || x != x) m = x;
    if (m != m) break;
  }
  return m;
}

template <typename T>
T row_max(const T* x, int64_t n) {
  using V = Vec<T>;
  constexpr int W = V::size;
  const V lowest(-std::numeric_limits<T>::infinity());
  V m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    m0 = maximum(m0, V::loadu(x + i));
    m1 = maximum(m1, V::loadu(x + i + W));
    m2 = maximum(m2, V::loadu(x + i + 2 * W));
    m3 = maximum(m3, V::loadu(x + i + 3 * W));
  }
  for (; i + W <= n; i += W) m0 = maximum(m0, V::loadu(x + i));
  // The padding lanes of a partial load repeat x[i], which is in the row.
  if (i < n) m1 = maximum(m1, V::loadu(x + i, static_cast<int>(n - i)));
  return reduce_max(maximum(maximum(m0, m1), maximum(m2, m3)));
}

// sum(exp(x - max)) over a row, also storing each exp into out when kStore.
template <typename T, bool kStore>
T exp_sum(const T* x, T* out, int64_t n, T max) {
  using V = Vec<T>;
  constexpr int W = V::size;
  const V mx(max);
  V s0(T(0)), s1(T(0));
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const V e0 = fast_exp(V::loadu(x + i) - mx);
    const V e1 = fast_exp(V::loadu(x + i + W) - mx);
    if constexpr (kStore) {
      e0.storeu(out + i);
      e1.storeu(out + i + W);
    }
    s0 = s0 + e0;
    s1 = s1 + e1;
  }
  for (; i + W <= n; i += W) {
    const V e = fast_exp(V::loadu(x + i) - mx);
    if constexpr (kStore) e.storeu(out + i);
    s0 = s0 + e;
  }
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    const V e = fast_exp(V::loadu(x + i, rest) - mx);
    if constexpr (kStore) e.storeu(out + i, rest);
    s1 = s1 + select<T>(lane_index<T>() < V(T(rest)), e, V(T(0)));
  }
  return reduce_add(s0 + s1);
}

// out = x * scale (softmax), or out = (x - max) - log_sum (log-softmax: subtracting max + log_sum
// in one step would round it to x's magnitude first).
template <typename T>
void scale_row(T* out, int64_t n, T scale) {
  using V = Vec<T>;
  constexpr int W = V::size;
  const V s(scale);
  int64_t i = 0;
  for (; i + W <= n; i += W) (V::loadu(out + i) * s).storeu(out + i);
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    (V::loadu(out + i, rest) * s).storeu(out + i, rest);
  }
}
template <typename T>
void shift_row(const T* x, T* out, int64_t n, T max, T log_sum) {
  using V = Vec<T>;
  constexpr int W = V::size;
  const V m(max), l(log_sum);
  int64_t i = 0;
  for (; i + W <= n; i += W) (V::loadu(x + i) - m - l).storeu(out + i);
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    (V::loadu(x + i, rest) - m - l).storeu(out + i, rest);
  }
}

template <typename T>
void softmax_rows(const T* in, T* out, int64_t rows, int64_t n, bool log) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
  parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* x = in + r * n;
      T* o = out + r * n;
      const T max = row_max(x, n);
      if (log) {
        const T sum = exp_sum<T, false>(x, nullptr, n, max);
        shift_row(x, o, n, max, static_cast<T>(std::log(sum)));
      } else {
        const T sum = exp_sum<T, true>(x, o, n, max);
        scale_row(o, n, T(1) / sum);
      }
    }
  });
}

// Softmax along the middle dim of (outer, d, inner), one block of up to W columns at a time:
// column j of outer slice o is x[(o * d + k) * inner + j] for k in [0, d).
template <typename T>
void softmax_inner(const T* in, T* out, int64_t outer, int64_t d, int64_t inner, bool log) {
  using V = Vec<T>;
  constexpr int W = V::size;
  const int64_t blocks_per_slice = (inner + W - 1) / W;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d * W, 1));
  parallel_for(0, outer * blocks_per_slice, grain, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t o = b / blocks_per_slice;
      const int64_t j = (b % blocks_per_slice) * W;
      const int width = static_cast<int>(std::min<int64_t>(W, inner - j));
      const T* x = in + o * d * inner + j;
      T* y = out + o * d * inner + j;
      auto load = [&](const T* p) { return width == W ? V::loadu(p) : V::loadu(p, width); };
      auto store = [&](V v, T* p) { width == W ? v.storeu(p) : v.storeu(p, width); };
      V mx(-std::numeric_limits<T>::infinity());
      for (int64_t k = 0; k < d; ++k) mx = maximum(mx, load(x + k * inner));
      V sum(T(0));
      for (int64_t k = 0; k < d; ++k) {
        const V e = fast_exp(load(x + k * inner) - mx);
        if (!log) store(e, y + k * inner);
        sum = sum + e;
      }
      if (log) {
        const V log_sum = cpu::KILN_CAP_NAMESPACE::log(sum);
        for (int64_t k = 0; k < d; ++k) store(load(x + k * inner) - mx - log_sum, y + k * inner);
      } else {
        const V scale = V(T(1)) / sum;
        for (int64_t k = 0; k < d; ++k) store(load(y + k * inner) * scale, y + k * inner);
      }
    }
  });
}

void softmax_kernel(const void* in, void* out, DType dtype, int64_t outer, int64_t dim_size,
                    int64_t inner, bool log) {
  auto run = [&]<typename T>() {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    if (inner == 1) {
      softmax_rows(x, y, outer, dim_size, log);
    } else {
      softmax_inner(x, y, outer, dim_size, inner, log);
    }
  };
  if (dtype == DType::Float64) {
    run.template operator()<double>();
  } else {
    KILN_CHECK(dtype == DType::Float32, "internal error: softmax kernel for {}", dtype_name(dtype));
    run.template operator()<float>();
  }
}

void cross_entropy_rows_kernel(const void* logits, DType dtype, int64_t n, int64_t c,
                               const int64_t* target, const void* weight, int64_t ignore_index,
                               double* row_loss, double* row_weight) {
  auto run = [&]<typename T>() {
    const T* x = static_cast<const T*>(logits);
    const T* w = static_cast<const T*>(weight);
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(c, 1));
    parallel_for(0, n, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t t = target[i];
        if (t == ignore_index) {
          row_loss[i] = 0.0;
          row_weight[i] = 0.0;
          continue;
        }
        const T* row = x + i * c;
        const T max = row_max(row, c);
        const T sum = exp_sum<T, false>(row, nullptr, c, max);
        const double log_sum = std::log(static_cast<double>(sum));
        const double wt = w ? static_cast<double>(w[t]) : 1.0;
        row_loss[i] = -((static_cast<double>(row[t]) - static_cast<double>(max)) - log_sum) * wt;
        row_weight[i] = wt;
      }
    });
  };
  if (dtype == DType::Float64) {
    run.template operator()<double>();
  } else {
    KILN_CHECK(dtype == DType::Float32, "internal error: cross_entropy kernel for {}",
               dtype_name(dtype));
    run.template operator()<float>();
  }
}

}  // namespace
KILN_REGISTER_KERNEL(ops::softmax_kernels, &softmax_kernel);
KILN_REGISTER_KERNEL(ops::cross_entropy_rows_kernels, &cross_entropy_rows_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
