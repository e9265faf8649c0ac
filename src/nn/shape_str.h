#pragma once
// A tensor's sizes for error messages, "2, s0, 16": symbolic sizes print as their expressions
// (Tensor::sizes() would raise for them).
#include <kiln/core/tensor.h>

#include <string>

namespace kiln::nn::detail {

inline std::string shape_str(const Tensor& t) {
  std::string s;
  for (const SymInt& d : t.sym_sizes()) s += (s.empty() ? "" : ", ") + d.str();
  return s;
}

}  // namespace kiln::nn::detail
