#pragma once
// The element formatter of tensor printing (PyTorch's _Formatter in torch/_tensor_str.py): one
// look at the values that will be shown decides, for floating tensors, between integer mode
// ("1.", "-2."), fixed mode (precision digits) and scientific mode, and the common width every
// element is right-aligned to.
#include <kiln/core/dtype.h>
#include <kiln/ops/print.h>

#include <cstdint>
#include <string>

namespace kiln::print_detail {

// Reads one element of dtype `dtype` at `p`: floats widen to double, integers and bool to int64.
double read_floating(const char* p, DType dtype);
int64_t read_integral(const char* p, DType dtype);

class ElementFormatter {
 public:
  ElementFormatter(DType dtype, const PrintOptions& options);

  // Feed every element that will be shown (after summarization), then format them.
  void observe(const char* p);
  void finish_observing();

  // The element at p, padded on the left to width().
  std::string format(const char* p) const;
  int width() const { return max_width_; }

 private:
  std::string format_floating(double v) const;
  std::string format_integral(int64_t v) const;

  DType dtype_;
  PrintOptions options_;
  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  int max_width_ = 1;
  // Floating statistics over the nonzero finite values.
  bool any_nonzero_finite_ = false;
  bool all_integers_ = true;
  double min_abs_ = 0.0;
  double max_abs_ = 0.0;
  // Widths of the nonzero finite values in each notation, computed as they are seen because
  // the mode is known only at the end.
  int width_int_ = 0;
  int width_fixed_ = 0;
  int width_sci_ = 0;
};

}  // namespace kiln::print_detail
