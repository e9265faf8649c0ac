// Normalization kernels: one pass over memory per row for layer/rms norm (the row's statistics
// are computed and the row normalized while it is still in L1/L2), per-channel moments and the
// per-channel affine map that batch and group norm are built from.
#include "ops/cpu/vec.h"
#include "ops/norm/norm_kernels.h"

#include <kiln/core/half.h>
#include <kiln/core/parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using ops::ChannelAffineArgs;
using ops::ChannelMomentsArgs;
using ops::RowNormArgs;

// Elements summed in the vector registers before the partial sum joins a float64 total: keeps
// float32 sums of long rows accurate without slowing the inner loop.
constexpr int64_t kBlock = 4096;

// Sum of f(x[i]) over n contiguous elements of A (float or double), in float64.
template <typename A, typename F>
double block_sum(const A* x, int64_t n, F f) {
  using V = Vec<A>;
  constexpr int W = V::size;
  double total = 0;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = std::min(n, start + kBlock);
    V s0(A(0)), s1(A(0)), s2(A(0)), s3(A(0));
    int64_t i = start;
    for (; i + 4 * W <= end; i += 4 * W) {
      s0 = f(V::loadu(x + i), s0);
      s1 = f(V::loadu(x + i + W), s1);
      s2 = f(V::loadu(x + i + 2 * W), s2);
      s3 = f(V::loadu(x + i + 3 * W), s3);
    }
    for (; i + W <= end; i += W) s0 = f(V::loadu(x + i), s0);
    A tail = A(0);
    for (; i < end; ++i) tail = f(V(x[i]), V(A(0)))[0] + tail;
    total += static_cast<double>(reduce_add((s0 + s1) + (s2 + s3)) + tail);
  }
  return total;
}

// Writes one normalized row: y = (x - shift) * rstd [* w] [+ b].
template <typename A, bool HasW, bool HasB>
void write_row(const A* x, A* y, const A* w, const A* b, int64_t n, A shift, A rstd) {
  using V = Vec<A>;
  constexpr int W = V::size;
  const V vs(shift), vr(rstd);
  auto one = [&](V xv, int64_t i, int rest) {
    V yv = (xv - vs) * vr;
    if constexpr (HasW && HasB) {
      yv = fmadd(yv, rest == W ? V::loadu(w + i) : V::loadu(w + i, rest),
                 rest == W ? V::loadu(b + i) : V::loadu(b + i, rest));
    } else if constexpr (HasW) {
      yv = yv * (rest == W ? V::loadu(w + i) : V::loadu(w + i, rest));
    } else if constexpr (HasB) {
      yv = yv + (rest == W ? V::loadu(b + i) : V::loadu(b + i, rest));
    }
    return yv;
  };
  int64_t i = 0;
  for (; i + W <= n; i += W) one(V::loadu(x + i), i, W).storeu(y + i);
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    one(V::loadu(x + i, rest), i, rest).storeu(y + i, rest);
  }
}

// Statistics and normalization of one row held in A (float or double).
template <typename A>
void norm_row(const A* x, A* y, const A* w, const A* b, int64_t n, A eps, bool rms, A& mean_out,
              A& rstd_out) {
  using V = Vec<A>;
  A mean = A(0), var;
  if (n == 0) {
    var = std::numeric_limits<A>::quiet_NaN();
  } else if (rms) {
    var = static_cast<A>(block_sum(x, n, [](V v, V acc) { return fmadd(v, v, acc); }) /
                         static_cast<double>(n));
  } else {
    // Two passes over the cached row: the mean, then squared deviations from it (no
    // cancellation for rows with a large mean, unlike E[x^2] - E[x]^2). The mean sums x - x[0],
    // so partial sums in A stay at the scale of the spread, not of the mean.
    const A pilot = x[0];
    const V vp(pilot);
    mean = pilot + static_cast<A>(block_sum(x, n, [vp](V v, V acc) { return (v - vp) + acc; }) /
                                  static_cast<double>(n));
    const V vm(mean);
    var = static_cast<A>(block_sum(x, n,
                                   [vm](V v, V acc) {
                                     V d = v - vm;
                                     return fmadd(d, d, acc);
                                   }) /
                         static_cast<double>(n));
  }
  const A rstd = A(1) / std::sqrt(std::max(var, A(0)) + eps);
  if (w && b) {
    write_row<A, true, true>(x, y, w, b, n, mean, rstd);
  } else if (w) {
    write_row<A, true, false>(x, y, w, b, n, mean, rstd);
  } else if (b) {
    write_row<A, false, true>(x, y, w, b, n, mean, rstd);
  } else {
    write_row<A, false, false>(x, y, w, b, n, mean, rstd);
  }
  mean_out = mean;
  rstd_out = n == 0 ? std::numeric_limits<A>::quiet_NaN() : rstd;
}

template <typename A, typename P>
const A* params_as(const void* p, int64_t n, std::vector<A>& buffer) {
  if (!p) return nullptr;
  if constexpr (std::is_same_v<A, P>) {
    return static_cast<const A*>(p);
  } else {
    buffer.resize(static_cast<size_t>(n));
    const P* src = static_cast<const P*>(p);
    for (int64_t i = 0; i < n; ++i) buffer[i] = static_cast<A>(src[i]);
    return buffer.data();
  }
}

// T: input/output element type; P: weight, bias and statistics type (T, or float when mixed).
template <typename T, typename P>
void row_norm_typed(const RowNormArgs& a) {
  using A = opmath_t<T>;
  const int64_t n = a.cols;
  std::vector<A> wbuf, bbuf;
  const A* w = params_as<A, P>(a.weight, n, wbuf);
  const A* b = params_as<A, P>(a.bias, n, bbuf);
  const T* in = static_cast<const T*>(a.input);
  T* out = static_cast<T*>(a.out);
  P* mean = static_cast<P*>(a.mean);
  P* rstd = static_cast<P*>(a.rstd);
  const A eps = static_cast<A>(a.eps);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
  parallel_for(0, a.rows, grain, [&](int64_t r0, int64_t r1) {
    std::vector<A> xbuf, ybuf;
    if constexpr (!std::is_same_v<T, A>) {
      xbuf.resize(static_cast<size_t>(n));
      ybuf.resize(static_cast<size_t>(n));
    }
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = in + r * n;
      T* yr = out + r * n;
      A m, s;
      if constexpr (std::is_same_v<T, A>) {
        norm_row<A>(xr, yr, w, b, n, eps, a.rms, m, s);
      } else {
        for (int64_t i = 0; i < n; ++i) xbuf[i] = static_cast<A>(xr[i]);
        norm_row<A>(xbuf.data(), ybuf.data(), w, b, n, eps, a.rms, m, s);
        for (int64_t i = 0; i < n; ++i) yr[i] = T(ybuf[i]);
      }
      if (mean) mean[r] = static_cast<P>(m);
      if (rstd) rstd[r] = static_cast<P>(s);
    }
  });
}

void row_norm_kernel(const RowNormArgs& a) {
  KILN_DISPATCH_FLOATING(a.dtype, "layer_norm", [&]<typename T>() {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      if (a.mixed) return (row_norm_typed<T, float>)(a);
    }
    (row_norm_typed<T, T>)(a);
  });
}

// Sum of f(x) over n contiguous elements of any floating type, in float64.
template <typename T, typename F, typename G>
double plane_sum(const T* x, int64_t n, F vec_f, G scalar_f) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return block_sum(x, n, vec_f);
  } else {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += scalar_f(static_cast<double>(static_cast<float>(x[i])));
    return s;
  }
}

template <typename T>
void moments_planes(const ChannelMomentsArgs& a) {
  using A = opmath_t<T>;
  using VA = std::conditional_t<std::is_same_v<T, double>, double, float>;
  using V = Vec<VA>;
  const T* x = static_cast<const T*>(a.input);
  const int64_t C = a.channels, HW = a.inner;
  parallel_for(0, C, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      // Chan et al.'s combination of each plane's (count, mean, M2): exact per plane, stable.
      double count = 0, mean = 0, m2 = 0;
      for (int64_t n = 0; n < a.outer; ++n) {
        const T* p = x + (n * C + c) * HW;
        if (HW == 0) continue;
        // Sums of x - p[0] keep float partial sums at the scale of the spread.
        const VA pilot = static_cast<VA>(static_cast<A>(p[0]));
        const V vp(pilot);
        const double pm = static_cast<double>(pilot) +
                          plane_sum(
                              p, HW, [vp](V v, V acc) { return (v - vp) + acc; },
                              [pilot](double v) { return v - static_cast<double>(pilot); }) /
                              static_cast<double>(HW);
        const A pma = static_cast<A>(pm);
        const V vm(static_cast<VA>(pm));
        const double pm2 = plane_sum(
            p, HW,
            [vm](V v, V acc) {
              V d = v - vm;
              return fmadd(d, d, acc);
            },
            [pma](double v) { return (v - pma) * (v - pma); });
        const double total = count + static_cast<double>(HW);
        const double delta = pm - mean;
        mean += delta * static_cast<double>(HW) / total;
        m2 += pm2 + delta * delta * count * static_cast<double>(HW) / total;
        count = total;
      }
      a.mean[c] = count > 0 ? mean : std::numeric_limits<double>::quiet_NaN();
      a.var[c] = count > 0 ? m2 / count : std::numeric_limits<double>::quiet_NaN();
    }
  });
}

// Channels last: rows of `channels` values; per-chunk partial sums in float64, then merged.
template <typename T>
void moments_channels_last(const ChannelMomentsArgs& a) {
  const T* x = static_cast<const T*>(a.input);
  const int64_t C = a.channels, R = a.outer;
  const int64_t chunks =
      std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), R * C / kGrainSize));
  std::vector<double> partial(static_cast<size_t>(chunks * C));
  auto pass = [&](const double* center, double* result) {
    std::fill(partial.begin(), partial.end(), 0.0);
    parallel_for(0, chunks, 1, [&](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        double* acc = partial.data() + k * C;
        for (int64_t r = k * R / chunks; r < (k + 1) * R / chunks; ++r) {
          const T* row = x + r * C;
          if (center) {
            for (int64_t c = 0; c < C; ++c) {
              const double d = static_cast<double>(static_cast<opmath_t<T>>(row[c])) - center[c];
              acc[c] += d * d;
            }
          } else {
            for (int64_t c = 0; c < C; ++c) {
              acc[c] += static_cast<double>(static_cast<opmath_t<T>>(row[c]));
            }
          }
        }
      }
    });
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      for (int64_t k = 0; k < chunks; ++k) s += partial[k * C + c];
      result[c] = R > 0 ? s / static_cast<double>(R) : std::numeric_limits<double>::quiet_NaN();
    }
  };
  pass(nullptr, a.mean);
  pass(a.mean, a.var);
}

void channel_moments_kernel(const ChannelMomentsArgs& a) {
  KILN_DISPATCH_FLOATING(a.dtype, "batch_norm", [&]<typename T>() {
    if (a.channels_last) {
      moments_channels_last<T>(a);
    } else {
      moments_planes<T>(a);
    }
  });
}

// y = x * s + t over n contiguous elements.
template <typename T>
void affine_span(const T* x, T* y, int64_t n, double s, double t) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using V = Vec<T>;
    constexpr int W = V::size;
    const V vs(static_cast<T>(s)), vt(static_cast<T>(t));
    int64_t i = 0;
    for (; i + W <= n; i += W) fmadd(V::loadu(x + i), vs, vt).storeu(y + i);
    if (i < n) {
      const int rest = static_cast<int>(n - i);
      fmadd(V::loadu(x + i, rest), vs, vt).storeu(y + i, rest);
    }
  } else {
    const float fs = static_cast<float>(s), ft = static_cast<float>(t);
    for (int64_t i = 0; i < n; ++i) y[i] = T(static_cast<float>(x[i]) * fs + ft);
  }
}

template <typename T>
void affine_typed(const ChannelAffineArgs& a) {
  const T* x = static_cast<const T*>(a.input);
  T* y = static_cast<T*>(a.out);
  const int64_t C = a.channels;
  if (!a.channels_last) {
    const int64_t HW = a.inner, planes = a.outer * C;
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(HW, 1));
    parallel_for(0, planes, grain, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        affine_span(x + p * HW, y + p * HW, HW, a.scale[p % C], a.shift[p % C]);
      }
    });
    return;
  }
  using A = opmath_t<T>;
  std::vector<A> scale(a.scale, a.scale + C), shift(a.shift, a.shift + C);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1));
  parallel_for(0, a.outer, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* row = x + r * C;
      T* out = y + r * C;
      if constexpr (std::is_same_v<T, A>) {
        using V = Vec<A>;
        constexpr int W = V::size;
        int64_t c = 0;
        for (; c + W <= C; c += W) {
          fmadd(V::loadu(row + c), V::loadu(scale.data() + c), V::loadu(shift.data() + c))
              .storeu(out + c);
        }
        for (; c < C; ++c) out[c] = row[c] * scale[c] + shift[c];
      } else {
        for (int64_t c = 0; c < C; ++c) out[c] = T(static_cast<A>(row[c]) * scale[c] + shift[c]);
      }
    }
  });
}

void channel_affine_kernel(const ChannelAffineArgs& a) {
  KILN_DISPATCH_FLOATING(a.dtype, "batch_norm", [&]<typename T>() { affine_typed<T>(a); });
}

}  // namespace
KILN_REGISTER_KERNEL(ops::row_norm_kernels, &row_norm_kernel);
KILN_REGISTER_KERNEL(ops::channel_moments_kernels, &channel_moments_kernel);
KILN_REGISTER_KERNEL(ops::channel_affine_kernels, &channel_affine_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
