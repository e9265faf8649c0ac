#include "fuzz/compare.h"

#include <kiln/kiln.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace kiln::fuzz {

std::string compare(const Tensor& got, const Tensor& eager32, const Tensor& eager64,
                    const Tolerance& tol) {
  if (got.defined() != eager32.defined()) {
    return got.defined() ? "defined where eager's is undefined" : "undefined where eager's is not";
  }
  if (!got.defined()) return "";
  if (got.sizes().vec() != eager32.sizes().vec()) {
    return fmt::format("sizes [{}] vs eager's [{}]", fmt::join(got.sizes(), ", "),
                       fmt::join(eager32.sizes(), ", "));
  }
  if (got.dtype() != eager32.dtype()) {
    return fmt::format("dtype {} vs eager's {}", dtype_name(got.dtype()),
                       dtype_name(eager32.dtype()));
  }
  if (got.numel() == 0) return "";
  const auto as_doubles = [](const Tensor& t) {
    return t.detach().to(DType::Float64).contiguous().tolist<double>();
  };
  const std::vector<double> g = as_doubles(got), e = as_doubles(eager32);
  if (!is_floating_point(got.dtype())) {
    for (size_t i = 0; i < g.size(); ++i) {
      if (g[i] != e[i]) return fmt::format("element {}: {} vs eager's {}", i, g[i], e[i]);
    }
    return "";
  }
  const std::vector<double> r = as_doubles(eager64);
  double scale = 1, ref_err = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    if (std::isfinite(r[i])) scale = std::max(scale, std::abs(r[i]));
    if (std::isfinite(e[i]) && std::isfinite(r[i]))
      ref_err = std::max(ref_err, std::abs(e[i] - r[i]));
  }
  double worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (!std::isfinite(e[i]) || !std::isfinite(g[i])) {
      const bool same = (std::isnan(e[i]) && std::isnan(g[i])) || e[i] == g[i];
      // float32 overflowing where float64 does not is rounding too: allow it if float64 is huge.
      const bool near_overflow = std::isfinite(r[i]) && std::abs(r[i]) > 1e37;
      if (!same && !near_overflow) {
        return fmt::format("element {}: {} vs eager's {} (float64: {})", i, g[i], e[i], r[i]);
      }
      continue;
    }
    const double bound = tol.rtol * std::abs(e[i]) + tol.rtol * 0.1 * scale + 4 * ref_err;
    const double excess = std::abs(g[i] - e[i]) / bound;
    if (excess > worst) {
      worst = excess;
      worst_at = i;
    }
  }
  if (worst > 1) {
    const size_t i = worst_at;
    const double diff = std::abs(g[i] - e[i]);
    // Off by more than 1% of the value's magnitude is a wrong result, not a precision issue.
    const bool slight = diff <= 1e-2 * (std::abs(e[i]) + 0.1 * scale);
    return fmt::format("element {}: {} vs eager's {} (float64: {}; |diff| {:.3g} > bound {:.3g}){}",
                       i, g[i], e[i], r[i], diff,
                       tol.rtol * std::abs(e[i]) + tol.rtol * 0.1 * scale + 4 * ref_err,
                       slight ? " [slight]" : "");
  }
  return "";
}

}  // namespace kiln::fuzz
