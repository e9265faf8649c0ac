#pragma once
// Non-contiguous sample inputs built with empty_strided and copy_ alone, so that the factory and
// random ops' samples need no view ops (which live in another family).
#include "ops/samples.h"

#include <kiln/ops/creation.h>

namespace kiln::ops {

// A [rows, cols] tensor laid out column-major (strides [1, rows]), like make_sample({cols,
// rows}).t().
inline Tensor transposed_sample(int64_t rows, int64_t cols, DType dtype, double low = -3.0,
                                double high = 3.0) {
  Tensor t = empty_strided({rows, cols}, {1, rows}, dtype);
  t.copy_(make_sample({rows, cols}, dtype, low, high));
  return t;
}

// A [rows, cols] tensor with a gap after every element (strides [2 * cols, 2]).
inline Tensor gapped_sample(int64_t rows, int64_t cols, DType dtype, double low = -3.0,
                            double high = 3.0) {
  Tensor t = empty_strided({rows, cols}, {2 * cols, 2}, dtype);
  t.copy_(make_sample({rows, cols}, dtype, low, high));
  return t;
}

}  // namespace kiln::ops
