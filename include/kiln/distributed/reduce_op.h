#pragma once
// How a collective combines the ranks' values (torch.distributed.ReduceOp).
#include <string_view>

namespace kiln::distributed {

enum class ReduceOp {
  Sum,
  Avg,  // Sum, then divided by the world size; floating-point dtypes only
  Product,
  Max,
  Min,
};

std::string_view reduce_op_name(ReduceOp op);

}  // namespace kiln::distributed
