// The 2-d pooling ops in kiln ops. Window positions and divisors depend only on sizes: they are
// arange arithmetic following the kernel's own rules (pool.kernel.cpp), never host data, so that
// the decompositions trace on memory-less proxies. The arithmetic runs in the kernel's
// accumulation type (int64 for integers, float64 for float64, float32 otherwise) and rounds once
// at the end.
#include "ops/pool/pool_decompositions.h"

#include "ops/pool/pool_common.h"
#include "ops/reduction/reduce_derivatives.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/resample.h>
#include <kiln/ops/sym_size_ops.h>

#include <algorithm>

namespace kiln::ops::pool {

namespace {

using IV = std::vector<int64_t>;

// The kernel's accumulation type of a floating dtype.
DType float_acc(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

template <typename Input>
Tensor batched(const Tensor& t, const Input& in) {
  return in.batched ? t : t.unsqueeze(0);
}
template <typename Input>
Tensor unbatched(const Tensor& t, const Input& in) {
  return in.batched ? t : t.squeeze(IntList{0});
}

Tensor iota(int64_t n, Device device) {
  return arange(Scalar(int64_t{0}), Scalar(n), Scalar(int64_t{1}),
                TensorOptions(DType::Int64).device(device));
}
// min(t, hi) and max(t, lo) with numbers.
Tensor at_most(const Tensor& t, int64_t hi) { return where(t > hi, hi, t); }
Tensor at_least(const Tensor& t, int64_t lo) { return where(t < lo, lo, t); }

// avg_pool2d's (and its backward's) window arguments from a[first] on.
Pool2dArgs avg_args(const Stack& a, const PoolInput& in, size_t first) {
  Pool2dArgs p;
  p.kind = PoolKind::Avg;
  window_geometry(p, in, a[first].to_int_list(), a[first + 1].to_int_list(),
                  a[first + 2].to_int_list(), IntList{1}, a[first + 3].to_bool(), "avg_pool2d");
  p.count_include_pad = a[first + 4].to_bool();
  p.divisor = a[first + 5].to_optional_int().value_or(0);
  return p;
}

// One axis of avg windows (the kernel's Window for Avg): each window's size within the padded
// input, and within the input (<= 0 for a window wholly in the padding).
struct AvgAxis {
  Tensor padded, clipped;
};

AvgAxis avg_axis(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, Device device) {
  const Tensor start = iota(out, device) * s - p;
  const Tensor end = at_most(start + k, in + p);
  return {end - start, at_most(end, in) - at_least(start, 0)};
}

// The (out_h, out_w) divisors in float64, as the kernel's avg_divisor picks them; 1 for windows
// wholly in the padding (their sum is 0, as the kernel's output).
Tensor avg_divisors(const Pool2dArgs& p, Device device) {
  const AvgAxis h = avg_axis(p.in_h, p.out_h, p.kernel_h, p.stride_h, p.pad_h, device);
  const AvgAxis w = avg_axis(p.in_w, p.out_w, p.kernel_w, p.stride_w, p.pad_w, device);
  const Tensor hc = h.clipped.view({p.out_h, 1}), wc = w.clipped.view({1, p.out_w});
  Tensor div = hc * wc;
  if (p.divisor != 0) {
    div = full({p.out_h, p.out_w}, p.divisor, TensorOptions(DType::Int64).device(device));
  } else if (p.count_include_pad) {
    div = h.padded.view({p.out_h, 1}) * w.padded.view({1, p.out_w});
  }
  return where((hc <= 0) | (wc <= 0), 1, div).to(DType::Float64);
}

// The padded extent that holds every window: left padding, input, and whatever the last window
// (ceil_mode) reaches past it.
int64_t padded_extent(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p) {
  return std::max((out - 1) * s + k, in + p);
}

// Positions o * s + i (padded coordinates) as an (out, k) table.
Tensor window_positions(int64_t out, int64_t k, int64_t s, Device device) {
  return (iota(out, device) * s).view({out, 1}) + iota(k, device).view({1, k});
}

// One axis of adaptive windows [floor(o * in / out), ceil((o + 1) * in / out)), gathered at the
// largest window's size k: positions clamped into the input, and which of them are in the
// window. The bounds are exact in float64 (an integer quotient is exact; others are at least
// 1 / out away from an integer).
struct AdaptiveAxis {
  int64_t k = 0;
  Tensor positions, in_window, sizes;  // (out, k), (out, k), (out)
};

AdaptiveAxis adaptive_axis(int64_t in, int64_t out, Device device) {
  AdaptiveAxis a;
  for (int64_t o = 0; o < out; ++o) {
    a.k = std::max(a.k, ((o + 1) * in + out - 1) / out - (o * in) / out);
  }
  const Tensor o = iota(out, device).to(DType::Float64);
  const auto in_f = static_cast<double>(in), out_f = static_cast<double>(out);
  const Tensor start = (o * in_f / out_f).floor().to(DType::Int64);
  const Tensor end = ((o + 1.0) * in_f / out_f).ceil().to(DType::Int64);
  const Tensor i = iota(a.k, device).view({1, a.k});
  a.sizes = end - start;
  a.positions = at_most(start.view({out, 1}) + i, in - 1);
  a.in_window = i < a.sizes.view({out, 1});
  return a;
}

// The adaptive windows of an (out_h, out_w) output over (in_h, in_w): index tensors for
// [:, :, rows, cols] giving (N, C, out_h, kh, out_w, kw), the mask of real window positions,
// and the (out_h, out_w) window sizes in float64.
struct AdaptiveWindows {
  Tensor rows, cols, mask, sizes;
};

AdaptiveWindows adaptive_windows(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                                 Device device) {
  const AdaptiveAxis h = adaptive_axis(in_h, out_h, device);
  const AdaptiveAxis w = adaptive_axis(in_w, out_w, device);
  AdaptiveWindows aw;
  aw.rows = h.positions.view({out_h, h.k, 1, 1});
  aw.cols = w.positions.view({1, 1, out_w, w.k});
  aw.mask = h.in_window.view({out_h, h.k, 1, 1}) & w.in_window.view({1, 1, out_w, w.k});
  aw.sizes = (h.sizes.view({out_h, 1}) * w.sizes.view({1, out_w})).to(DType::Float64);
  return aw;
}

}  // namespace

std::vector<Tensor> avg_pool2d_decomposition(const Stack& a) {
  static const OpDef& op = OpRegistry::instance().get("avg_pool2d");
  op.meta(a);  // the op's checks
  const Tensor& self = a[0].to_tensor();
  const PoolInput in = pool_input(self, "avg_pool2d");
  const Pool2dArgs p = avg_args(a, in, 1);
  const bool integral = !self.is_floating_point();
  Tensor x = batched(self, in).to(integral ? DType::Int64 : float_acc(self.dtype()));
  const int64_t right_h =
      padded_extent(p.in_h, p.out_h, p.kernel_h, p.stride_h, p.pad_h) - p.in_h - p.pad_h;
  const int64_t right_w =
      padded_extent(p.in_w, p.out_w, p.kernel_w, p.stride_w, p.pad_w) - p.in_w - p.pad_w;
  if (p.pad_h != 0 || p.pad_w != 0 || right_h != 0 || right_w != 0) {
    x = constant_pad_nd(x, {p.pad_w, right_w, p.pad_h, right_h}, 0);
  }
  const Tensor windows =
      x.as_strided({x.size(0), x.size(1), p.out_h, p.out_w, p.kernel_h, p.kernel_w},
                   {x.stride(0), x.stride(1), x.stride(2) * p.stride_h, x.stride(3) * p.stride_w,
                    x.stride(2), x.stride(3)},
                   x.storage_offset());
  const Tensor sums = windows.sum({4, 5});
  const Tensor divisors = avg_divisors(p, self.device());
  // Integer pooling divides in int64 (truncating), which float64 reproduces for these sums.
  const Tensor mean =
      integral ? (sums.to(DType::Float64) / divisors).trunc() : sums / divisors.to(sums.dtype());
  return {unbatched(mean.to(self.dtype()), in)};
}

std::vector<Tensor> avg_pool2d_backward_decomposition(const Stack& a) {
  static const OpDef& op = OpRegistry::instance().get("avg_pool2d_backward");
  op.meta(a);
  const Tensor& self = a[1].to_tensor();
  const PoolInput in = pool_input(self, "avg_pool2d_backward");
  const Pool2dArgs p = avg_args(a, in, 2);
  const DType acc = float_acc(self.dtype());
  const Tensor g = batched(a[0].to_tensor(), in).to(acc);
  const Tensor share = g / avg_divisors(p, self.device()).to(acc);
  const int64_t n = g.size(0), c = g.size(1);
  const Tensor values =
      share.unsqueeze(3).unsqueeze(5).expand({n, c, p.out_h, p.kernel_h, p.out_w, p.kernel_w});
  const Tensor rows = window_positions(p.out_h, p.kernel_h, p.stride_h, self.device())
                          .view({p.out_h, p.kernel_h, 1, 1});
  const Tensor cols = window_positions(p.out_w, p.kernel_w, p.stride_w, self.device())
                          .view({1, 1, p.out_w, p.kernel_w});
  const int64_t hp = padded_extent(p.in_h, p.out_h, p.kernel_h, p.stride_h, p.pad_h);
  const int64_t wp = padded_extent(p.in_w, p.out_w, p.kernel_w, p.stride_w, p.pad_w);
  const Tensor padded = zeros({n, c, hp, wp}, TensorOptions(acc).device(self.device()))
                            .index_put({Tensor(), Tensor(), rows, cols}, values, true);
  // What landed in the padding is dropped, as the kernel's clipped windows never reach it.
  const Tensor grad =
      padded.slice(2, p.pad_h, p.pad_h + p.in_h).slice(3, p.pad_w, p.pad_w + p.in_w);
  return {unbatched(grad.to(self.dtype()), in)};
}

std::vector<Tensor> max_pool_backward_decomposition(const Stack& a, const char* op,
                                                    size_t indices_at) {
  OpRegistry::instance().get(op).meta(a);
  const Tensor& grad = a[0].to_tensor();
  const Tensor& self = a[1].to_tensor();
  const Tensor& indices = a[indices_at].to_tensor();
  // Planes flattened: each index is h * W + w within its plane.
  IV lead(self.sizes().begin(), self.sizes().end() - 2);
  IV grad_flat = lead, self_flat = lead;
  grad_flat.push_back(grad.size(-2) * grad.size(-1));
  self_flat.push_back(self.size(-2) * self.size(-1));
  const DType acc = float_acc(self.dtype());
  const Tensor summed =
      zeros(self_flat, TensorOptions(acc).device(self.device()))
          .scatter_reduce(-1, indices.reshape(grad_flat), grad.to(acc).reshape(grad_flat), "sum");
  return {summed.view(self.sizes()).to(self.dtype())};
}

// The adaptive average pools read their windows from tables of the input's height and width,
// which must be plain sizes; the batch may be symbolic (dynamic shapes), and so may the height
// and width of a global (1x1) pool.
std::vector<Tensor> adaptive_avg_pool2d_decomposition(const Stack& a) {
  static const OpDef& op = OpRegistry::instance().get("_adaptive_avg_pool2d");
  op.meta(a);
  const Tensor& self = a[0].to_tensor();
  const SymPoolInput in = sym_pool_input(self, "adaptive_avg_pool2d");
  const IV output_size = a[1].to_int_list();
  const int64_t out_h = output_size.front(), out_w = output_size.back();
  if (out_h == 0 || out_w == 0) {
    std::vector<SymInt> sizes(self.sym_sizes().begin(), self.sym_sizes().end() - 2);
    sizes.insert(sizes.end(), {SymInt(out_h), SymInt(out_w)});
    return {full_symint(sizes, 0, TensorOptions(self.dtype()).device(self.device()))};
  }
  const DType acc = float_acc(self.dtype());
  if (out_h == 1 && out_w == 1) {
    // A global pool (ResNet's): the plane's mean, which needs no window tables and so takes a
    // symbolic height and width too.
    return {unbatched(batched(self, in).to(acc).mean({2, 3}, true).to(self.dtype()), in)};
  }
  const AdaptiveWindows w =
      adaptive_windows(in.height.expect_int(), in.width.expect_int(), out_h, out_w, self.device());
  const Tensor values = batched(self, in).to(acc).index({Tensor(), Tensor(), w.rows, w.cols});
  const Tensor sums = where(w.mask, values, 0).sum({3, 5});
  return {unbatched((sums / w.sizes.to(acc)).to(self.dtype()), in)};
}

std::vector<Tensor> adaptive_avg_pool2d_backward_decomposition(const Stack& a) {
  static const OpDef& op = OpRegistry::instance().get("_adaptive_avg_pool2d_backward");
  op.meta(a);
  const Tensor& self = a[1].to_tensor();
  const SymPoolInput in = sym_pool_input(self, "_adaptive_avg_pool2d_backward");
  const DType acc = float_acc(self.dtype());
  const Tensor g = batched(a[0].to_tensor(), in).to(acc);
  const SymIntList gs = g.sym_sizes();
  const SymInt n = gs[0], c = gs[1];
  const int64_t out_h = gs[2].expect_int(), out_w = gs[3].expect_int();
  if (out_h == 1 && out_w == 1) {
    // A global pool: every input element gets its plane's gradient over the plane's size.
    const Tensor share = divide_by_reduced_count(g, batched(self, in), {false, false, true, true});
    const Tensor grad = expand_symint(share, {n, c, in.height, in.width}).contiguous();
    return {unbatched(grad.to(self.dtype()), in)};
  }
  const int64_t height = in.height.expect_int(), width = in.width.expect_int();
  Tensor grad = full_symint({n, c, SymInt(height), SymInt(width)}, 0,
                            TensorOptions(acc).device(self.device()));
  if (out_h != 0 && out_w != 0) {
    const AdaptiveWindows w = adaptive_windows(height, width, out_h, out_w, self.device());
    const Tensor share = (g / w.sizes.to(acc)).unsqueeze(3).unsqueeze(5);
    const Tensor values = expand_symint(
        where(w.mask, share, 0),
        {n, c, SymInt(out_h), SymInt(w.rows.size(1)), SymInt(out_w), SymInt(w.cols.size(3))});
    grad = grad.index_put({Tensor(), Tensor(), w.rows, w.cols}, values, true);
  }
  return {unbatched(grad.to(self.dtype()), in)};
}

}  // namespace kiln::ops::pool
