#pragma once
// Ops that resample the spatial dims of a tensor: padding (constant, reflect, replicate,
// circular), interpolation (nearest, nearest-exact, linear, bilinear) and pixel (un)shuffle.
// Semantics follow torch.nn.functional.pad / interpolate / pixel_shuffle.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

// pad lists (left, right) pairs starting from the last dim; negative entries crop.
Tensor constant_pad_nd(const Tensor& self, IntList pad, const Scalar& value = 0,
                       const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor reflection_pad1d(const Tensor& self, IntList padding,
                        const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor reflection_pad2d(const Tensor& self, IntList padding,
                        const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor reflection_pad3d(const Tensor& self, IntList padding,
                        const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor replication_pad1d(const Tensor& self, IntList padding,
                         const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor replication_pad2d(const Tensor& self, IntList padding,
                         const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor replication_pad3d(const Tensor& self, IntList padding,
                         const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor pad_circular(const Tensor& self, IntList pad,
                    const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// F.pad: mode is "constant", "reflect", "replicate" or "circular"; value only with "constant".
Tensor pad(const Tensor& self, IntList pad, const std::string& mode = "constant",
           std::optional<double> value = std::nullopt,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// F.interpolate. Exactly one of size / scale_factor is given, with one entry per spatial dim
// (or a single entry used for every spatial dim). mode: "nearest", "nearest-exact", "linear"
// (3-D input), "bilinear" (4-D input). align_corners only for linear modes (default false).
// recompute_scale_factor true: the kernel uses input/output size ratios instead of the given
// scale factors (the default passes the scale factors through, as PyTorch does).
struct InterpolateOptions {
  std::vector<int64_t> size;
  std::vector<double> scale_factor;
  std::string mode = "nearest";
  std::optional<bool> align_corners;
  std::optional<bool> recompute_scale_factor;
};
Tensor interpolate(const Tensor& input, const InterpolateOptions& options,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor interpolate(const Tensor& input, std::optional<std::vector<int64_t>> size,
                   std::optional<std::vector<double>> scale_factor,
                   const std::string& mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt,
                   std::optional<bool> recompute_scale_factor = std::nullopt,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());

Tensor upsample_nearest1d(const Tensor& self, IntList output_size,
                          std::optional<double> scales = std::nullopt,
                          const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor upsample_nearest2d(const Tensor& self, IntList output_size,
                          std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt,
                          const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor upsample_nearest_exact1d(const Tensor& self, IntList output_size,
                                std::optional<double> scales = std::nullopt,
                                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor upsample_nearest_exact2d(const Tensor& self, IntList output_size,
                                std::optional<double> scales_h = std::nullopt,
                                std::optional<double> scales_w = std::nullopt,
                                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor upsample_linear1d(const Tensor& self, IntList output_size, bool align_corners,
                         std::optional<double> scales = std::nullopt,
                         const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor upsample_bilinear2d(const Tensor& self, IntList output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt,
                           std::optional<double> scales_w = std::nullopt,
                           const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// (*, C*r*r, H, W) -> (*, C, H*r, W*r) and back.
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor,
                       const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
