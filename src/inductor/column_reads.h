#pragma once
// Whether a reduction reads across its outputs' innermost loop (a bias gradient, [rows,
// features].sum(0); channels-last batch norm's per-channel sums): its loads step by one along
// the last output variable and stride along the reduction's last variable. The GPU code
// generator gives such reductions its column form, a tile of outputs to a block, and split
// reductions count those tiles as blocks.
#include "inductor/loop_ir.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace kiln::inductor {

class ColumnReads {
 public:
  // Counts the loads of reduction `k`'s body, its last output variable `output_var` and last
  // reduction variable `reduction_var`.
  void add(const Kernel& k, int64_t output_var, int64_t reduction_var) {
    for_each_load(k.body, [&](const ExprNode& load) {
      const std::optional<int64_t> o = linear_coefficient(load.index, output_var);
      const std::optional<int64_t> r = linear_coefficient(load.index, reduction_var);
      if (r == std::optional<int64_t>(1)) {
        ++along_;
      } else if (o == std::optional<int64_t>(1) && r != std::optional<int64_t>(0)) {
        ++across_;
        narrowest_ = std::min(narrowest_, itemsize(load.dtype));
      }
    });
  }
  // Whether more loads read across the outputs than along the reduction.
  bool across() const { return across_ > 0 && across_ > along_; }
  // Outputs a column-form block takes: a 32-byte sector of the narrowest load across (8 floats,
  // 16 bfloat16), at least 8.
  int tile() const { return std::max(8, 32 / static_cast<int>(narrowest_)); }

 private:
  int along_ = 0, across_ = 0;
  size_t narrowest_ = 8;
};

}  // namespace kiln::inductor
