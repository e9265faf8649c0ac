#pragma once
// Printing tensors as PyTorch prints them:
//   tensor([[1.0000, 2.0000],
//           [3.0000, 4.0000]], dtype=kiln.float64)
// with PyTorch's choice of fixed or scientific notation, precision 4, and summarization ("...")
// past 1000 elements, three items at each edge.
#include <kiln/core/tensor.h>

#include <string>

namespace kiln {

struct PrintOptions {
  int precision = 4;
  int64_t threshold = 1000;
  int64_t edgeitems = 3;
  int linewidth = 80;
  bool sci_mode_auto = true;
  bool sci_mode = false;  // used when sci_mode_auto is false
};

void set_printoptions(const PrintOptions& options);
PrintOptions get_printoptions();
std::string format_tensor(const Tensor& t);

}  // namespace kiln
