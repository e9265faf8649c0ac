// The upsampling ops written in kiln ops (their decompositions): along each spatial dim, nearest
// modes index the source positions the kernel reads; linear modes blend the two sources of each
// output with the kernel's weights, in the kernel's math type and order (width, then height).
#include "ops/resample/upsample_common.h"

#include <kiln/ops/creation.h>

namespace kiln::ops::upsample {

namespace {

// x indexed along dim by a host table of positions.
Tensor index_along(const Tensor& x, int64_t dim, const std::vector<int64_t>& positions) {
  std::vector<Tensor> indices(static_cast<size_t>(dim));  // full slices before dim
  indices.push_back(from_vector(positions));
  return x.index(indices);
}

// Per-output weights along dim, shaped to broadcast over the dims after it.
Tensor weights_along(const std::vector<double>& w, int64_t dim, int64_t ndim, DType dtype) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim - dim), 1);
  shape[0] = static_cast<int64_t>(w.size());
  return from_vector(w, shape).to(dtype);
}

}  // namespace

Tensor upsample_decomposition(const Tensor& self, IntList output_size, const UpsampleKind& kind,
                              bool align_corners, const Scales& scales) {
  if (kind.interp != Interp::Linear) {
    Tensor x = self;
    for (int64_t d = 0; d < kind.dims; ++d) {
      const int64_t dim = 2 + d;
      x = index_along(
          x, dim,
          nearest_map(self.size(dim), output_size[static_cast<size_t>(d)],
                      scales[static_cast<size_t>(d)], kind.interp == Interp::NearestExact));
    }
    return x;
  }
  // The kernel blends in the dtype's math type: float64, else float32.
  const DType math = self.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor x = self.to(math);
  for (int64_t d = kind.dims - 1; d >= 0; --d) {
    const int64_t dim = 2 + d;
    const LinearTable t =
        linear_table_for(self.dtype(), self.size(dim), output_size[static_cast<size_t>(d)],
                         align_corners, scales[static_cast<size_t>(d)]);
    x = weights_along(t.lambda0, dim, x.dim(), math) * index_along(x, dim, t.index0) +
        weights_along(t.lambda1, dim, x.dim(), math) * index_along(x, dim, t.index1);
  }
  return x.to(self.dtype());
}

}  // namespace kiln::ops::upsample
