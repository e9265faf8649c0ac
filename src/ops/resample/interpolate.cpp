// interpolate: torch.nn.functional.interpolate's argument handling (size vs scale_factor,
// align_corners, recompute_scale_factor), then the .vec upsample op for the mode and rank, as
// F.interpolate itself decomposes.
#include "ops/sizes_str.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/resample.h>

#include <cmath>

namespace kiln {

namespace {

using ops::sizes_str;

bool is_linear_mode(const std::string& mode) {
  return mode == "linear" || mode == "bilinear" || mode == "bicubic" || mode == "trilinear";
}

// One entry per spatial dim: a single entry stands for all of them (F.interpolate's int form).
template <typename T>
std::vector<T> per_dim(const std::vector<T>& v, int64_t dims, const Tensor& input,
                       const char* what) {
  if (v.size() == 1) return std::vector<T>(static_cast<size_t>(dims), v[0]);
  KILN_CHECK(static_cast<int64_t>(v.size()) == dims,
             "interpolate: input and {} must have the same number of spatial dimensions, but got "
             "input with spatial dimensions of {} and {} with {} entries. Please provide input "
             "tensor in (N, C, d1, d2, ...,dK) format and {} in (o1, o2, ...,oK) format.",
             what, sizes_str(IntList(input.sizes().data() + 2, input.sizes().size() - 2)), what,
             v.size(), what);
  return v;
}

}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateOptions& o,
                   const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  const int64_t dims = input.dim() - 2;
  KILN_CHECK(dims >= 1,
             "interpolate: expected an input of at least 3 dims (N, C, d1, ...), but got sizes {}",
             sizes_str(input.sizes()));
  const bool has_size = !o.size.empty(), has_scale = !o.scale_factor.empty();
  KILN_CHECK(!(has_size && has_scale),
             "interpolate: only one of size or scale_factor should be "
             "defined");
  KILN_CHECK(has_size || has_scale, "interpolate: either size or scale_factor should be defined");
  if (!is_linear_mode(o.mode)) {
    KILN_CHECK(!o.align_corners.has_value(),
               "interpolate: align_corners option can only be set with the interpolating modes: "
               "linear | bilinear | bicubic | trilinear (got mode '{}')",
               o.mode);
  }
  const bool align_corners = o.align_corners.value_or(false);
  KILN_CHECK(!(has_size && o.recompute_scale_factor.value_or(false)),
             "interpolate: recompute_scale_factor is not meaningful with an explicit size.");

  std::optional<std::vector<int64_t>> size;
  std::optional<std::vector<double>> scales;
  if (has_size) {
    size = per_dim(o.size, dims, input, "output size");
  } else {
    std::vector<double> factors = per_dim(o.scale_factor, dims, input, "scale_factor");
    if (o.recompute_scale_factor.value_or(false)) {
      // The output size from the factors; the kernel then uses the in/out ratio.
      std::vector<int64_t> computed;
      for (int64_t d = 0; d < dims; ++d) {
        computed.push_back(static_cast<int64_t>(
            std::floor(static_cast<double>(input.size(2 + d)) * factors[static_cast<size_t>(d)])));
      }
      size = computed;
    } else {
      scales = factors;
    }
  }

  const char* op = nullptr;
  bool linear = false;
  if (o.mode == "nearest" || o.mode == "nearest-exact") {
    const bool exact = o.mode == "nearest-exact";
    KILN_CHECK(dims <= 2,
               "interpolate: mode '{}' supports 3-D and 4-D inputs in kiln, but got a {}-D input",
               o.mode, input.dim());
    op = dims == 1 ? (exact ? "_upsample_nearest_exact1d.vec" : "upsample_nearest1d.vec")
                   : (exact ? "_upsample_nearest_exact2d.vec" : "upsample_nearest2d.vec");
  } else if (o.mode == "linear" || o.mode == "bilinear") {
    const int64_t want = o.mode == "linear" ? 3 : 4;
    KILN_CHECK(input.dim() == want, "interpolate: got {}D input, but {} mode needs {}D input",
               input.dim(), o.mode, want);
    op = dims == 1 ? "upsample_linear1d.vec" : "upsample_bilinear2d.vec";
    linear = true;
  } else {
    KILN_CHECK(false,
               "interpolate: mode '{}' is not supported (expected nearest, nearest-exact, linear "
               "or bilinear)",
               o.mode);
  }
  ops::Stack args{input, size ? ops::IValue(to_sym(*size)) : ops::IValue()};
  if (linear) args.emplace_back(align_corners);
  args.emplace_back(scales ? ops::IValue(*scales) : ops::IValue());
  return ops::call1(ops::OpRegistry::instance().get(op), std::move(args), &loc);
}

Tensor interpolate(const Tensor& input, std::optional<std::vector<int64_t>> size,
                   std::optional<std::vector<double>> scale_factor, const std::string& mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor,
                   const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  InterpolateOptions o;
  if (size) o.size = *size;
  if (scale_factor) o.scale_factor = *scale_factor;
  o.mode = mode;
  o.align_corners = align_corners;
  o.recompute_scale_factor = recompute_scale_factor;
  return interpolate(input, o);
}

}  // namespace kiln
