// Normalization backward kernels: layer norm's rows (grad_input per row while it is cached, and
// per-thread partial grad_weight/grad_bias), and the per-channel sums and per-channel affine
// grad_input that batch and group norm's backward are built from.
#include "ops/cpu/vec.h"
#include "ops/norm/norm_backward_kernels.h"

#include <kiln/core/half.h>
#include <kiln/core/parallel.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using ops::ChannelGradInputArgs;
using ops::ChannelGradSumsArgs;
using ops::RowNormBackwardArgs;

// Elements summed in vector registers before a partial sum joins a float64 total.
constexpr int64_t kBlock = 4096;

template <typename T>
constexpr bool kVectorized = std::is_same_v<T, float> || std::is_same_v<T, double>;

// One row of layer norm's backward in A (float or double): grad_input, and grad_out * xhat and
// grad_out added into dw/db (either may be null).
template <typename A>
void row_backward(const A* dy, const A* x, const A* w, A mean, A rstd, int64_t n, A* dx, A* dw,
                  A* db) {
  using V = Vec<A>;
  constexpr int W = V::size;
  const V vm(mean), vr(rstd);
  V sg(A(0)), sgx(A(0));
  double total_g = 0, total_gx = 0;
  auto flush = [&] {
    total_g += static_cast<double>(reduce_add(sg));
    total_gx += static_cast<double>(reduce_add(sgx));
    sg = V(A(0));
    sgx = V(A(0));
  };
  auto step = [&](int64_t i, int k) {
    // A partial load repeats element 0 in the other lanes: grad_out's padding must be zero so
    // that the sums below ignore it.
    V dyv(A(0));
    if (k == W) {
      dyv = V::loadu(dy + i);
    } else {
      std::memcpy(&dyv.v, dy + i, static_cast<size_t>(k) * sizeof(A));
    }
    const V xh = ((k == W ? V::loadu(x + i) : V::loadu(x + i, k)) - vm) * vr;
    const V g = w ? dyv * (k == W ? V::loadu(w + i) : V::loadu(w + i, k)) : dyv;
    sg = sg + g;
    sgx = fmadd(g, xh, sgx);
    if (dw) {
      const V acc = k == W ? V::loadu(dw + i) : V::loadu(dw + i, k);
      const V r = fmadd(dyv, xh, acc);
      if (k == W) {
        r.storeu(dw + i);
      } else {
        r.storeu(dw + i, k);
      }
    }
    if (db) {
      const V r = (k == W ? V::loadu(db + i) : V::loadu(db + i, k)) + dyv;
      if (k == W) {
        r.storeu(db + i);
      } else {
        r.storeu(db + i, k);
      }
    }
  };
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    step(i, W);
    if (i % kBlock == 0 && i > 0) flush();
  }
  if (i < n) step(i, static_cast<int>(n - i));
  flush();
  if (!dx) return;
  const A inv_n = A(1) / static_cast<A>(n);
  const V c1(static_cast<A>(total_g) * inv_n), c2(static_cast<A>(total_gx) * inv_n);
  for (i = 0; i < n; i += W) {
    const int k = static_cast<int>(std::min<int64_t>(W, n - i));
    const V dyv = k == W ? V::loadu(dy + i) : V::loadu(dy + i, k);
    const V xh = ((k == W ? V::loadu(x + i) : V::loadu(x + i, k)) - vm) * vr;
    const V g = w ? dyv * (k == W ? V::loadu(w + i) : V::loadu(w + i, k)) : dyv;
    const V r = (g - c1 - xh * c2) * vr;
    if (k == W) {
      r.storeu(dx + i);
    } else {
      r.storeu(dx + i, k);
    }
  }
}

template <typename A, typename P>
const A* as_opmath(const void* p, int64_t n, std::vector<A>& buffer) {
  if (!p) return nullptr;
  if constexpr (std::is_same_v<A, P>) {
    return static_cast<const A*>(p);
  } else {
    const P* src = static_cast<const P*>(p);
    buffer.assign(src, src + n);
    return buffer.data();
  }
}

template <typename T, typename P>
void row_norm_backward_typed(const RowNormBackwardArgs& a) {
  using A = opmath_t<T>;
  const int64_t n = a.cols, R = a.rows;
  std::vector<A> wbuf;
  const A* w = as_opmath<A, P>(a.weight, n, wbuf);
  const T* dy = static_cast<const T*>(a.grad_out);
  const T* x = static_cast<const T*>(a.input);
  const P* mean = static_cast<const P*>(a.mean);
  const P* rstd = static_cast<const P*>(a.rstd);
  T* dx = static_cast<T*>(a.grad_input);
  const bool want_dw = a.grad_weight != nullptr, want_db = a.grad_bias != nullptr;
  // Rows are split in one chunk per thread, each summing its own grad_weight/grad_bias.
  const int64_t chunks = std::max<int64_t>(
      1, std::min<int64_t>(get_num_threads(), (R * n + kGrainSize - 1) / kGrainSize));
  std::vector<A> partial_w(want_dw ? static_cast<size_t>(chunks * n) : 0);
  std::vector<A> partial_b(want_db ? static_cast<size_t>(chunks * n) : 0);
  parallel_for(0, chunks, 1, [&](int64_t k0, int64_t k1) {
    std::vector<A> dybuf, xbuf, dxbuf;
    if constexpr (!std::is_same_v<T, A>) {
      dybuf.resize(static_cast<size_t>(n));
      xbuf.resize(static_cast<size_t>(n));
      dxbuf.resize(static_cast<size_t>(n));
    }
    for (int64_t k = k0; k < k1; ++k) {
      A* pw = want_dw ? partial_w.data() + k * n : nullptr;
      A* pb = want_db ? partial_b.data() + k * n : nullptr;
      for (int64_t r = k * R / chunks; r < (k + 1) * R / chunks; ++r) {
        const A m = static_cast<A>(mean[r]), s = static_cast<A>(rstd[r]);
        if constexpr (std::is_same_v<T, A>) {
          row_backward<A>(dy + r * n, x + r * n, w, m, s, n, dx ? dx + r * n : nullptr, pw, pb);
        } else {
          for (int64_t i = 0; i < n; ++i) {
            dybuf[i] = static_cast<A>(dy[r * n + i]);
            xbuf[i] = static_cast<A>(x[r * n + i]);
          }
          row_backward<A>(dybuf.data(), xbuf.data(), w, m, s, n, dx ? dxbuf.data() : nullptr, pw,
                          pb);
          if (dx) {
            for (int64_t i = 0; i < n; ++i) dx[r * n + i] = T(dxbuf[i]);
          }
        }
      }
    }
  });
  auto reduce = [&](const std::vector<A>& partial, void* out) {
    P* o = static_cast<P*>(out);
    for (int64_t i = 0; i < n; ++i) {
      A s = A(0);
      for (int64_t k = 0; k < chunks; ++k) s += partial[k * n + i];
      o[i] = static_cast<P>(s);
    }
  };
  if (want_dw) reduce(partial_w, a.grad_weight);
  if (want_db) reduce(partial_b, a.grad_bias);
}

void row_norm_backward_kernel(const RowNormBackwardArgs& a) {
  KILN_DISPATCH_FLOATING(a.dtype, "native_layer_norm_backward", [&]<typename T>() {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      if (a.mixed) return (row_norm_backward_typed<T, float>)(a);
    }
    (row_norm_backward_typed<T, T>)(a);
  });
}

// Sums of dy and dy * (x - c) over n contiguous elements, added into s_dy and s_dyx.
template <typename T>
void span_sums(const T* dy, const T* x, int64_t n, double c, double& s_dy, double& s_dyx) {
  if constexpr (kVectorized<T>) {
    using V = Vec<T>;
    constexpr int W = V::size;
    const V vc(static_cast<T>(c));
    for (int64_t start = 0; start < n; start += kBlock) {
      const int64_t end = std::min(n, start + kBlock);
      V a0(T(0)), a1(T(0)), b0(T(0)), b1(T(0));
      int64_t i = start;
      for (; i + 2 * W <= end; i += 2 * W) {
        const V d0 = V::loadu(dy + i), d1 = V::loadu(dy + i + W);
        a0 = a0 + d0;
        a1 = a1 + d1;
        b0 = fmadd(d0, V::loadu(x + i) - vc, b0);
        b1 = fmadd(d1, V::loadu(x + i + W) - vc, b1);
      }
      T ta = T(0), tb = T(0);
      for (; i < end; ++i) {
        ta += dy[i];
        tb += dy[i] * (x[i] - static_cast<T>(c));
      }
      s_dy += static_cast<double>(reduce_add(a0 + a1) + ta);
      s_dyx += static_cast<double>(reduce_add(b0 + b1) + tb);
    }
  } else {
    const float fc = static_cast<float>(c);
    float ta = 0, tb = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float d = static_cast<float>(dy[i]);
      ta += d;
      tb += d * (static_cast<float>(x[i]) - fc);
    }
    s_dy += ta;
    s_dyx += tb;
  }
}

template <typename T>
void grad_sums_typed(const ChannelGradSumsArgs& a) {
  const T* dy = static_cast<const T*>(a.grad_out);
  const T* x = static_cast<const T*>(a.input);
  const int64_t C = a.channels;
  auto center = [&](int64_t c) { return a.center ? a.center[c] : 0.0; };
  if (!a.channels_last) {
    const int64_t HW = a.inner;
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(HW * std::max<int64_t>(a.outer, 1), 1));
    parallel_for(0, C, grain, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        double s_dy = 0, s_dyx = 0;
        for (int64_t n = 0; n < a.outer; ++n) {
          const int64_t off = (n * C + c) * HW;
          span_sums(dy + off, x + off, HW, center(c), s_dy, s_dyx);
        }
        a.sum_dy[c] = s_dy;
        a.sum_dy_xc[c] = s_dyx;
      }
    });
    return;
  }
  // Channels last: rows of C values; one chunk of rows per thread, partial sums per channel.
  using A = opmath_t<T>;
  const int64_t R = a.outer;
  const int64_t chunks =
      std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), R * C / kGrainSize));
  std::vector<double> part_dy(static_cast<size_t>(chunks * C), 0.0);
  std::vector<double> part_dyx(static_cast<size_t>(chunks * C), 0.0);
  std::vector<A> centers(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) centers[c] = static_cast<A>(center(c));
  parallel_for(0, chunks, 1, [&](int64_t k0, int64_t k1) {
    std::vector<A> acc_dy(static_cast<size_t>(C)), acc_dyx(static_cast<size_t>(C));
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t r_end = (k + 1) * R / chunks;
      for (int64_t r0 = k * R / chunks; r0 < r_end; r0 += 256) {
        // Blocks of rows summed in A, then into float64.
        std::fill(acc_dy.begin(), acc_dy.end(), A(0));
        std::fill(acc_dyx.begin(), acc_dyx.end(), A(0));
        for (int64_t r = r0; r < std::min(r_end, r0 + 256); ++r) {
          const T* dr = dy + r * C;
          const T* xr = x + r * C;
          int64_t c = 0;
          if constexpr (kVectorized<T>) {
            using V = Vec<A>;
            constexpr int W = V::size;
            for (; c + W <= C; c += W) {
              const V d = V::loadu(dr + c);
              (V::loadu(acc_dy.data() + c) + d).storeu(acc_dy.data() + c);
              fmadd(d, V::loadu(xr + c) - V::loadu(centers.data() + c),
                    V::loadu(acc_dyx.data() + c))
                  .storeu(acc_dyx.data() + c);
            }
          }
          for (; c < C; ++c) {
            const A d = static_cast<A>(dr[c]);
            acc_dy[c] += d;
            acc_dyx[c] += d * (static_cast<A>(xr[c]) - centers[c]);
          }
        }
        for (int64_t c = 0; c < C; ++c) {
          part_dy[k * C + c] += static_cast<double>(acc_dy[c]);
          part_dyx[k * C + c] += static_cast<double>(acc_dyx[c]);
        }
      }
    }
  });
  for (int64_t c = 0; c < C; ++c) {
    double s1 = 0, s2 = 0;
    for (int64_t k = 0; k < chunks; ++k) {
      s1 += part_dy[k * C + c];
      s2 += part_dyx[k * C + c];
    }
    a.sum_dy[c] = s1;
    a.sum_dy_xc[c] = s2;
  }
}

void channel_grad_sums_kernel(const ChannelGradSumsArgs& a) {
  KILN_DISPATCH_FLOATING(a.dtype, "native_batch_norm_backward",
                         [&]<typename T>() { grad_sums_typed<T>(a); });
}

// out = dy * s + x * t + u over n contiguous elements (x null: t is zero).
template <typename T>
void affine2_span(const T* dy, const T* x, T* out, int64_t n, double s, double t, double u) {
  if constexpr (kVectorized<T>) {
    using V = Vec<T>;
    constexpr int W = V::size;
    const V vs(static_cast<T>(s)), vt(static_cast<T>(t)), vu(static_cast<T>(u));
    for (int64_t i = 0; i < n; i += W) {
      const int k = static_cast<int>(std::min<int64_t>(W, n - i));
      V r = fmadd(k == W ? V::loadu(dy + i) : V::loadu(dy + i, k), vs, vu);
      if (x) r = fmadd(k == W ? V::loadu(x + i) : V::loadu(x + i, k), vt, r);
      if (k == W) {
        r.storeu(out + i);
      } else {
        r.storeu(out + i, k);
      }
    }
  } else {
    const float fs = static_cast<float>(s), ft = static_cast<float>(t), fu = static_cast<float>(u);
    for (int64_t i = 0; i < n; ++i) {
      float r = static_cast<float>(dy[i]) * fs + fu;
      if (x) r += static_cast<float>(x[i]) * ft;
      out[i] = T(r);
    }
  }
}

template <typename T>
void grad_input_typed(const ChannelGradInputArgs& a) {
  const T* dy = static_cast<const T*>(a.grad_out);
  const T* x = static_cast<const T*>(a.input);
  T* out = static_cast<T*>(a.grad_input);
  const int64_t C = a.channels;
  if (!a.channels_last) {
    const int64_t HW = a.inner, planes = a.outer * C;
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(HW, 1));
    parallel_for(0, planes, grain, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t c = p % C;
        affine2_span(dy + p * HW, x ? x + p * HW : nullptr, out + p * HW, HW, a.a[c], a.b[c],
                     a.d[c]);
      }
    });
    return;
  }
  using A = opmath_t<T>;
  std::vector<A> s(a.a, a.a + C), t(a.b, a.b + C), u(a.d, a.d + C);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1));
  parallel_for(0, a.outer, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* dr = dy + r * C;
      const T* xr = x ? x + r * C : nullptr;
      T* o = out + r * C;
      int64_t c = 0;
      if constexpr (kVectorized<T>) {
        using V = Vec<A>;
        constexpr int W = V::size;
        for (; c + W <= C; c += W) {
          V v = fmadd(V::loadu(dr + c), V::loadu(s.data() + c), V::loadu(u.data() + c));
          if (xr) v = fmadd(V::loadu(xr + c), V::loadu(t.data() + c), v);
          v.storeu(o + c);
        }
      }
      for (; c < C; ++c) {
        A v = static_cast<A>(dr[c]) * s[c] + u[c];
        if (xr) v += static_cast<A>(xr[c]) * t[c];
        o[c] = T(v);
      }
    }
  });
}

void channel_grad_input_kernel(const ChannelGradInputArgs& a) {
  KILN_DISPATCH_FLOATING(a.dtype, "native_batch_norm_backward",
                         [&]<typename T>() { grad_input_typed<T>(a); });
}

}  // namespace
KILN_REGISTER_KERNEL(ops::row_norm_backward_kernels, &row_norm_backward_kernel);
KILN_REGISTER_KERNEL(ops::channel_grad_sums_kernels, &channel_grad_sums_kernel);
KILN_REGISTER_KERNEL(ops::channel_grad_input_kernels, &channel_grad_input_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
