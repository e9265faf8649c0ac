#pragma once
// What the upsampling ops and their backward ops share: which op family, and the per-dim source
// tables (aten's nearest / nearest-exact indices and linear blend weights).
#include "ops/resample/upsample_kernels.h"

#include <kiln/core/tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace kiln::ops::upsample {

enum class Interp { Nearest, NearestExact, Linear };

struct UpsampleKind {
  Interp interp;
  int64_t dims;  // spatial dims: 1 or 2
  std::string name;
};

// One optional scale per spatial dim.
using Scales = std::vector<std::optional<double>>;

// aten's compute_scales_value in T: 1/scale when a positive scale is given, else in/out.
template <typename T>
T scale_value(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0.0 ? static_cast<T>(1.0 / *scale)
                               : static_cast<T>(in) / static_cast<T>(out);
}

// Source positions of nearest / nearest-exact upsampling along a dim of size in resized to out.
std::vector<int64_t> nearest_map(int64_t in, int64_t out, std::optional<double> scale, bool exact);

// The two source positions and weights of linear upsampling along a dim, in dtype's math type.
LinearTable linear_table_for(DType dtype, int64_t in, int64_t out, bool align_corners,
                             std::optional<double> scale);

// The same tables as tensors, computed with arange arithmetic in the kernels' types (so that
// decompositions hold no host data): int64 positions, weights in dtype's math type.
Tensor nearest_index(int64_t in, int64_t out, std::optional<double> scale, bool exact,
                     Device device);
struct LinearWeights {
  Tensor index0, index1, lambda0, lambda1;
};
LinearWeights linear_weights(DType dtype, int64_t in, int64_t out, bool align_corners,
                             std::optional<double> scale, Device device);

// The upsampling in kiln ops (the ops' decomposition; arguments already checked): self resized to
// output_size along its spatial dims.
Tensor upsample_decomposition(const Tensor& self, IntList output_size, const UpsampleKind& kind,
                              bool align_corners, const Scales& scales);

}  // namespace kiln::ops::upsample
