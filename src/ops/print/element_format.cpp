#include "ops/print/element_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::print_detail {

namespace {
template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

std::string format_fixed(double v, int precision) { return fmt::format("{:.{}f}", v, precision); }
std::string format_sci(double v, int precision) { return fmt::format("{:.{}e}", v, precision); }
}  // namespace

double read_floating(const char* p, DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return load<float>(p);
    case DType::Float64:
      return load<double>(p);
    case DType::Float16:
      return static_cast<float>(load<Half>(p));
    case DType::BFloat16:
      return static_cast<float>(load<BFloat16>(p));
    default:
      return static_cast<double>(read_integral(p, dtype));
  }
}

int64_t read_integral(const char* p, DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return load<bool>(p) ? 1 : 0;
    case DType::UInt8:
      return load<uint8_t>(p);
    case DType::Int8:
      return load<int8_t>(p);
    case DType::Int16:
      return load<int16_t>(p);
    case DType::Int32:
      return load<int32_t>(p);
    case DType::Int64:
      return load<int64_t>(p);
    default:
      return static_cast<int64_t>(read_floating(p, dtype));
  }
}

ElementFormatter::ElementFormatter(DType dtype, const PrintOptions& options)
    : dtype_(dtype), options_(options), floating_(is_floating_point(dtype)) {}

void ElementFormatter::observe(const char* p) {
  if (!floating_) {
    max_width_ =
        std::max(max_width_, static_cast<int>(format_integral(read_integral(p, dtype_)).size()));
    return;
  }
  double v = read_floating(p, dtype_);
  if (!std::isfinite(v) || v == 0.0) return;
  double a = std::abs(v);
  if (!any_nonzero_finite_) {
    min_abs_ = max_abs_ = a;
    any_nonzero_finite_ = true;
  } else {
    min_abs_ = std::min(min_abs_, a);
    max_abs_ = std::max(max_abs_, a);
  }
  if (v != std::ceil(v)) all_integers_ = false;
  int p10 = options_.precision;
  width_int_ = std::max(width_int_, static_cast<int>(format_fixed(v, 0).size()) + 1);
  width_fixed_ = std::max(width_fixed_, static_cast<int>(format_fixed(v, p10).size()));
  width_sci_ = std::max(width_sci_, static_cast<int>(format_sci(v, p10).size()));
}

void ElementFormatter::finish_observing() {
  // With no nonzero finite value PyTorch keeps integer mode and width 1.
  if (!floating_ || !any_nonzero_finite_) return;
  int_mode_ = all_integers_;
  sci_mode_ = options_.sci_mode_auto
                  ? (max_abs_ / min_abs_ > 1000.0 || max_abs_ > 1.0e8 || min_abs_ < 1.0e-4)
                  : options_.sci_mode;
  int w = sci_mode_ ? width_sci_ : (int_mode_ ? width_int_ : width_fixed_);
  max_width_ = std::max(max_width_, w);
}

std::string ElementFormatter::format_integral(int64_t v) const {
  if (dtype_ == DType::Bool) return v ? "True" : "False";
  return std::to_string(v);
}

std::string ElementFormatter::format_floating(double v) const {
  // Python spells every NaN "nan" (printf would write "-nan" for a negative one).
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (sci_mode_) return format_sci(v, options_.precision);
  if (int_mode_) return format_fixed(v, 0) + ".";
  return format_fixed(v, options_.precision);
}

std::string ElementFormatter::format(const char* p) const {
  std::string s = floating_ ? format_floating(read_floating(p, dtype_))
                            : format_integral(read_integral(p, dtype_));
  if (static_cast<int>(s.size()) < max_width_) s.insert(0, max_width_ - s.size(), ' ');
  return s;
}

}  // namespace kiln::print_detail
