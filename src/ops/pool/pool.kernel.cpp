// 2-d pooling kernels: max (with indices, dilation), average (padding counted or not, divisor
// override) and the adaptive forms, and their backward kernels. Planes layout runs in parallel
// over planes, channels last over (batch, output row) with the channels as the inner, contiguous
// loop; the backward kernels, which scatter into overlapping windows, over planes or samples.
#include "ops/cpu/vec.h"
#include "ops/pool/pool_kernels.h"

#include <kiln/core/half.h>
#include <kiln/core/parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using ops::Pool2dArgs;
using ops::PoolKind;

// One pooling window along an axis: positions start, start + step, ... below end; for Avg,
// `count` is the window's size including padding (clipped to the padded input).
struct Window {
  int64_t start, end, step, count;
};

Window window(const Pool2dArgs& a, int64_t o, bool vertical) {
  const int64_t in = vertical ? a.in_h : a.in_w;
  const int64_t out = vertical ? a.out_h : a.out_w;
  const int64_t k = vertical ? a.kernel_h : a.kernel_w;
  const int64_t s = vertical ? a.stride_h : a.stride_w;
  const int64_t p = vertical ? a.pad_h : a.pad_w;
  const int64_t d = vertical ? a.dilation_h : a.dilation_w;
  switch (a.kind) {
    case PoolKind::Max: {
      int64_t start = o * s - p;
      const int64_t end = std::min(start + (k - 1) * d + 1, in);
      while (start < 0) start += d;
      return {start, end, d, 0};
    }
    case PoolKind::Avg: {
      int64_t start = o * s - p;
      int64_t end = std::min(start + k, in + p);
      const int64_t count = end - start;
      return {std::max<int64_t>(start, 0), std::min(end, in), 1, count};
    }
    default: {  // adaptive: [floor(o * in / out), ceil((o + 1) * in / out))
      const int64_t start = (o * in) / out;
      const int64_t end = ((o + 1) * in + out - 1) / out;
      return {start, end, 1, end - start};
    }
  }
}

template <typename T>
using acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;

template <typename T>
inline bool is_nan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    const opmath_t<T> f = static_cast<opmath_t<T>>(v);
    return f != f;
  }
}

// The windows of every output row and column, computed once per call.
std::vector<Window> windows(const Pool2dArgs& a, bool vertical) {
  std::vector<Window> out;
  const int64_t n = vertical ? a.out_h : a.out_w;
  for (int64_t o = 0; o < n; ++o) out.push_back(window(a, o, vertical));
  return out;
}

template <typename T>
T lowest() {
  if constexpr (std::is_integral_v<T>) {
    return std::numeric_limits<T>::lowest();
  } else {
    return T(-std::numeric_limits<float>::infinity());
  }
}

// The divisor of an Avg window after clipping to the input.
int64_t avg_divisor(const Pool2dArgs& a, const Window& h, const Window& w) {
  if (a.kind != PoolKind::Avg) return (h.end - h.start) * (w.end - w.start);
  if (a.divisor != 0) return a.divisor;
  if (a.count_include_pad) return h.count * w.count;
  return (h.end - h.start) * (w.end - w.start);
}

bool is_max(PoolKind k) { return k == PoolKind::Max || k == PoolKind::AdaptiveMax; }

// The output columns [first, last) whose window column `kw` lies inside the input: w = ow * s -
// p + kw * d with 0 <= w < W.
std::pair<int64_t, int64_t> columns_inside(const Pool2dArgs& a, int64_t kw) {
  const int64_t shift = kw * a.dilation_w - a.pad_w;  // w = ow * s + shift
  const int64_t s = a.stride_w;
  const int64_t first = shift >= 0 ? 0 : (-shift + s - 1) / s;
  const int64_t last = a.in_w - 1 - shift < 0 ? 0 : (a.in_w - 1 - shift) / s + 1;
  return {std::min(first, a.out_w), std::min(last, a.out_w)};
}

// Max pooling of one output row of one plane, a window position at a time across the whole row
// (a loop over output columns the compiler vectorizes), instead of a window at a time per output.
// Each output sees its window's positions in the same order as a per-window scan (rows, then
// columns), so the result is the same: the first maximum, or the last NaN (PyTorch's rule: every
// NaN replaces the running maximum); an all -inf window keeps its first position.
template <typename T>
void max_pool_row(const Pool2dArgs& a, const T* x, const Window& wh,
                  const std::vector<Window>& cols, T* y, int64_t* idx) {
  using A = acc_t<T>;
  const int64_t W = a.in_w, OW = a.out_w, s = a.stride_w;
  for (int64_t ow = 0; ow < OW; ++ow) {
    y[ow] = lowest<T>();
    idx[ow] = wh.start * W + cols[static_cast<size_t>(ow)].start;
  }
  for (int64_t h = wh.start; h < wh.end; h += wh.step) {
    for (int64_t kw = 0; kw < a.kernel_w; ++kw) {
      const auto [first, last] = columns_inside(a, kw);
      const int64_t shift = h * W + kw * a.dilation_w - a.pad_w;  // position = ow * s + shift
      for (int64_t ow = first; ow < last; ++ow) {
        const int64_t at = ow * s + shift;
        const T v = x[at];
        const bool take = static_cast<A>(v) > static_cast<A>(y[ow]) || is_nan(v);
        y[ow] = take ? v : y[ow];
        idx[ow] = take ? at : idx[ow];
      }
    }
  }
}

template <typename T>
void pool_planes(const Pool2dArgs& a) {
  const T* in = static_cast<const T*>(a.input);
  T* out = static_cast<T*>(a.out);
  const int64_t H = a.in_h, W = a.in_w, OH = a.out_h, OW = a.out_w;
  const int64_t planes = a.batch * a.channels;
  const std::vector<Window> rows = windows(a, true), cols = windows(a, false);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(OH * OW * 4, 1));
  parallel_for(0, planes, grain, [&](int64_t p0, int64_t p1) {
    // Values only (_max_pool2d_values): the row kernel's positions go to a scratch row.
    std::vector<int64_t> scratch(a.indices ? 0 : static_cast<size_t>(OW));
    for (int64_t p = p0; p < p1; ++p) {
      const T* x = in + p * H * W;
      T* y = out + p * OH * OW;
      int64_t* idx = a.indices ? a.indices + p * OH * OW : nullptr;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const Window& wh = rows[oh];
        if (a.kind == PoolKind::Max) {
          max_pool_row<T>(a, x, wh, cols, y + oh * OW, idx ? idx + oh * OW : scratch.data());
          continue;
        }
        for (int64_t ow = 0; ow < OW; ++ow) {
          const Window& ww = cols[ow];
          if (is_max(a.kind)) {
            // Two passes over the (cached) window: the maximum with branch-free max
            // operations, then the first position holding it. A NaN propagates, and its
            // index is the last NaN's (PyTorch's rule: every NaN replaces the running maximum).
            using A = acc_t<T>;
            A best = static_cast<A>(lowest<T>());
            bool nan = false;
            for (int64_t h = wh.start; h < wh.end; h += wh.step) {
              for (int64_t w = ww.start; w < ww.end; w += ww.step) {
                const A v = static_cast<A>(x[h * W + w]);
                best = v > best ? v : best;
                nan |= is_nan(v);
              }
            }
            int64_t best_at = -1;
            for (int64_t h = wh.start; h < wh.end && (nan || best_at < 0); h += wh.step) {
              for (int64_t w = ww.start; w < ww.end; w += ww.step) {
                const A v = static_cast<A>(x[h * W + w]);
                if (nan ? is_nan(v) : v == best) {
                  best_at = h * W + w;
                  if (!nan) break;
                }
              }
            }
            if (best_at < 0) best_at = wh.start * W + ww.start;  // no element above -inf
            if (idx != nullptr) idx[oh * OW + ow] = best_at;
            y[oh * OW + ow] = nan ? x[best_at] : static_cast<T>(best);
          } else {
            if (wh.start >= wh.end || ww.start >= ww.end) {
              y[oh * OW + ow] = T(0);
              continue;
            }
            acc_t<T> sum = 0;
            for (int64_t h = wh.start; h < wh.end; ++h) {
              for (int64_t w = ww.start; w < ww.end; ++w)
                sum += static_cast<acc_t<T>>(x[h * W + w]);
            }
            y[oh * OW + ow] = T(sum / static_cast<acc_t<T>>(avg_divisor(a, wh, ww)));
          }
        }
      }
    }
  });
}

// The maxima (and their positions h * W + w) of one window over all C channels of a channels-last
// image `x`, into y and idx. Channels go in blocks held in locals, so that the compiler keeps them
// in vector registers across the window (through y and idx it reloaded them per position).
template <typename T>
void max_window_channels_last(const T* x, int64_t W, int64_t C, const Window& wh, const Window& ww,
                              T* y, int64_t* idx) {
  constexpr int64_t kBlock = 64;
  T best[kBlock];
  int64_t at[kBlock];
  for (int64_t c0 = 0; c0 < C; c0 += kBlock) {
    const int64_t n = std::min(kBlock, C - c0);
    for (int64_t c = 0; c < n; ++c) {
      best[c] = lowest<T>();
      at[c] = wh.start * W + ww.start;
    }
    for (int64_t h = wh.start; h < wh.end; h += wh.step) {
      for (int64_t w = ww.start; w < ww.end; w += ww.step) {
        const T* v = x + (h * W + w) * C + c0;
        const int64_t position = h * W + w;
        for (int64_t c = 0; c < n; ++c) {
          const bool take =
              static_cast<acc_t<T>>(v[c]) > static_cast<acc_t<T>>(best[c]) || is_nan(v[c]);
          best[c] = take ? v[c] : best[c];
          at[c] = take ? position : at[c];
        }
      }
    }
    std::copy(best, best + n, y + c0);
    if (idx != nullptr) std::copy(at, at + n, idx + c0);
  }
}

template <typename T>
void pool_channels_last(const Pool2dArgs& a) {
  const T* in = static_cast<const T*>(a.input);
  T* out = static_cast<T*>(a.out);
  const int64_t H = a.in_h, W = a.in_w, OH = a.out_h, OW = a.out_w, C = a.channels;
  const std::vector<Window> rows = windows(a, true), cols = windows(a, false);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(OW * C * 4, 1));
  parallel_for(0, a.batch * OH, grain, [&](int64_t r0, int64_t r1) {
    std::vector<acc_t<T>> acc(static_cast<size_t>(C));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / OH, oh = r % OH;
      const Window& wh = rows[oh];
      const T* x = in + n * H * W * C;
      for (int64_t ow = 0; ow < OW; ++ow) {
        const Window& ww = cols[ow];
        const int64_t o = ((n * OH + oh) * OW + ow) * C;
        T* y = out + o;
        if (is_max(a.kind)) {
          max_window_channels_last(x, W, C, wh, ww, y, a.indices ? a.indices + o : nullptr);
        } else {
          if (wh.start >= wh.end || ww.start >= ww.end) {
            std::fill(y, y + C, T(0));
            continue;
          }
          std::fill(acc.begin(), acc.end(), acc_t<T>(0));
          for (int64_t h = wh.start; h < wh.end; ++h) {
            for (int64_t w = ww.start; w < ww.end; ++w) {
              const T* v = x + (h * W + w) * C;
              for (int64_t c = 0; c < C; ++c) acc[c] += static_cast<acc_t<T>>(v[c]);
            }
          }
          const acc_t<T> div = static_cast<acc_t<T>>(avg_divisor(a, wh, ww));
          for (int64_t c = 0; c < C; ++c) y[c] = T(acc[c] / div);
        }
      }
    }
  });
}

void pool2d_kernel(const Pool2dArgs& a) {
  KILN_DISPATCH_ALL_NO_BOOL(a.dtype, "pool2d", [&]<typename T>() {
    if (a.channels_last) {
      pool_channels_last<T>(a);
    } else {
      pool_planes<T>(a);
    }
  });
}

// ---- backward: a.input is grad_output (output sizes), a.out grad_input (input sizes) ----

// Each output's gradient goes to its maximum (max kinds) or, divided by the window's divisor, to
// every element of its window (avg kinds); overlapping windows add up.
template <typename T>
void pool_backward_planes(const Pool2dArgs& a) {
  const T* go = static_cast<const T*>(a.input);
  T* gi = static_cast<T*>(a.out);
  const int64_t H = a.in_h, W = a.in_w, OH = a.out_h, OW = a.out_w;
  const std::vector<Window> rows = windows(a, true), cols = windows(a, false);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>((H * W + OH * OW), 1));
  parallel_for(0, a.batch * a.channels, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* g = go + p * OH * OW;
      T* x = gi + p * H * W;
      std::fill(x, x + H * W, T(0));
      if (is_max(a.kind)) {
        const int64_t* idx = a.indices + p * OH * OW;
        for (int64_t o = 0; o < OH * OW; ++o) x[idx[o]] = static_cast<T>(x[idx[o]] + g[o]);
        continue;
      }
      for (int64_t oh = 0; oh < OH; ++oh) {
        const Window& wh = rows[oh];
        for (int64_t ow = 0; ow < OW; ++ow) {
          const Window& ww = cols[ow];
          if (wh.start >= wh.end || ww.start >= ww.end) continue;
          const T v = static_cast<T>(static_cast<acc_t<T>>(g[oh * OW + ow]) /
                                     static_cast<acc_t<T>>(avg_divisor(a, wh, ww)));
          for (int64_t h = wh.start; h < wh.end; ++h) {
            for (int64_t w = ww.start; w < ww.end; ++w)
              x[h * W + w] = static_cast<T>(x[h * W + w] + v);
          }
        }
      }
    }
  });
}

template <typename T>
void pool_backward_channels_last(const Pool2dArgs& a) {
  const T* go = static_cast<const T*>(a.input);
  T* gi = static_cast<T*>(a.out);
  const int64_t H = a.in_h, W = a.in_w, OH = a.out_h, OW = a.out_w, C = a.channels;
  const std::vector<Window> rows = windows(a, true), cols = windows(a, false);
  parallel_for(0, a.batch, 1, [&](int64_t n0, int64_t n1) {
    std::vector<T> v(static_cast<size_t>(C));
    for (int64_t n = n0; n < n1; ++n) {
      T* x = gi + n * H * W * C;
      std::fill(x, x + H * W * C, T(0));
      for (int64_t oh = 0; oh < OH; ++oh) {
        const Window& wh = rows[oh];
        for (int64_t ow = 0; ow < OW; ++ow) {
          const Window& ww = cols[ow];
          const int64_t o = ((n * OH + oh) * OW + ow) * C;
          const T* g = go + o;
          if (is_max(a.kind)) {
            const int64_t* idx = a.indices + o;
            for (int64_t c = 0; c < C; ++c) {
              T& dst = x[idx[c] * C + c];
              dst = static_cast<T>(dst + g[c]);
            }
            continue;
          }
          if (wh.start >= wh.end || ww.start >= ww.end) continue;
          const acc_t<T> div = static_cast<acc_t<T>>(avg_divisor(a, wh, ww));
          for (int64_t c = 0; c < C; ++c) v[c] = static_cast<T>(static_cast<acc_t<T>>(g[c]) / div);
          for (int64_t h = wh.start; h < wh.end; ++h) {
            for (int64_t w = ww.start; w < ww.end; ++w) {
              T* dst = x + (h * W + w) * C;
              for (int64_t c = 0; c < C; ++c) dst[c] = static_cast<T>(dst[c] + v[c]);
            }
          }
        }
      }
    }
  });
}

void pool2d_backward_kernel(const Pool2dArgs& a) {
  KILN_DISPATCH_FLOATING(a.dtype, "pool2d_backward", [&]<typename T>() {
    if (a.channels_last) {
      pool_backward_channels_last<T>(a);
    } else {
      pool_backward_planes<T>(a);
    }
  });
}

}  // namespace
KILN_REGISTER_KERNEL(ops::pool2d_kernels, &pool2d_kernel);
KILN_REGISTER_KERNEL(ops::pool2d_backward_kernels, &pool2d_backward_kernel);
}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
