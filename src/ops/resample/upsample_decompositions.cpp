// The upsampling ops written in kiln ops (their decompositions): along each spatial dim, nearest
// modes index the source positions the kernel reads; linear modes blend the two sources of each
// output with the kernel's weights, in the kernel's math type and order (width, then height).
// The source tables are arange arithmetic that mirrors upsample.cpp's host tables step by step.
#include "ops/resample/upsample_common.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>

namespace kiln::ops::upsample {

namespace {

Tensor iota(int64_t n, DType dtype, Device device) {
  return arange(Scalar(int64_t{0}), Scalar(n), Scalar(int64_t{1}),
                TensorOptions(dtype).device(device));
}

// min(t, hi) with a number.
Tensor at_most(const Tensor& t, const Scalar& hi) { return where(t > hi, hi, t); }
// max(t, lo) with a number.
Tensor at_least(const Tensor& t, const Scalar& lo) { return where(t < lo, lo, t); }

// x indexed along dim by a 1-D tensor of positions.
Tensor index_along(const Tensor& x, int64_t dim, const Tensor& positions) {
  std::vector<Tensor> indices(static_cast<size_t>(dim));  // full slices before dim
  indices.push_back(positions);
  return x.index(indices);
}

// Per-output weights along dim, shaped to broadcast over the dims after it.
Tensor along(const Tensor& w, int64_t dim, int64_t ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim - dim), 1);
  shape[0] = w.size(0);
  return w.view(shape);
}

}  // namespace

// nearest_map's arithmetic: floor(j * s) or floor(float((j + 0.5) * s)) with s in float.
Tensor nearest_index(int64_t in, int64_t out, std::optional<double> scale, bool exact,
                     Device device) {
  const Tensor j = iota(out, DType::Int64, device);
  if (!exact && out == in) return j;
  if (!exact && out == 2 * in) return j >> 1;
  const auto s = static_cast<double>(scale_value<float>(scale, in, out));
  const Tensor src = exact ? ((j.to(DType::Float64) + 0.5) * s).to(DType::Float32).floor()
                           : (j.to(DType::Float32) * s).floor();
  return at_most(src.to(DType::Int64), in - 1);
}

// linear_table's arithmetic (aten's area_pixel_compute_source_index and
// guard_index_and_lambda) in dtype's math type.
LinearWeights linear_weights(DType dtype, int64_t in, int64_t out, bool align_corners,
                             std::optional<double> scale, Device device) {
  const DType math = dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  const Tensor j = iota(out, DType::Int64, device);
  LinearWeights w;
  if (in == out) {
    w.index0 = w.index1 = j;
    w.lambda0 = full({out}, 1.0, TensorOptions(math).device(device));
    w.lambda1 = full({out}, 0.0, TensorOptions(math).device(device));
    return w;
  }
  double ratio = 0;
  if (math == DType::Float64) {
    ratio = align_corners
                ? (out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0)
                : scale_value<double>(scale, in, out);
  } else {
    ratio = align_corners
                ? (out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f)
                : scale_value<float>(scale, in, out);
  }
  const Tensor jf = j.to(math);
  Tensor real = align_corners ? jf * ratio : (jf + 0.5) * ratio - 0.5;
  if (!align_corners) real = at_least(real, 0.0);
  const Tensor i0 = at_most(real.floor().to(DType::Int64), in - 1);
  w.lambda1 = at_most(at_least(real - i0.to(math), 0.0), 1.0);
  w.lambda0 = 1.0 - w.lambda1;
  w.index0 = i0;
  w.index1 = where(i0 < in - 1, i0 + 1, i0);
  return w;
}

Tensor upsample_decomposition(const Tensor& self, IntList output_size, const UpsampleKind& kind,
                              bool align_corners, const Scales& scales) {
  if (kind.interp != Interp::Linear) {
    Tensor x = self;
    for (int64_t d = 0; d < kind.dims; ++d) {
      const int64_t dim = 2 + d;
      x = index_along(x, dim,
                      nearest_index(self.size(dim), output_size[static_cast<size_t>(d)],
                                    scales[static_cast<size_t>(d)],
                                    kind.interp == Interp::NearestExact, self.device()));
    }
    return x;
  }
  // The kernel blends in the dtype's math type: float64, else float32.
  const DType math = self.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor x = self.to(math);
  for (int64_t d = kind.dims - 1; d >= 0; --d) {
    const int64_t dim = 2 + d;
    const LinearWeights w =
        linear_weights(self.dtype(), self.size(dim), output_size[static_cast<size_t>(d)],
                       align_corners, scales[static_cast<size_t>(d)], self.device());
    x = along(w.lambda0, dim, x.dim()) * index_along(x, dim, w.index0) +
        along(w.lambda1, dim, x.dim()) * index_along(x, dim, w.index1);
  }
  return x.to(self.dtype());
}

}  // namespace kiln::ops::upsample
