#include <kiln/distributed/reduce_op.h>

namespace kiln::distributed {

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "Sum";
    case ReduceOp::Avg:
      return "Avg";
    case ReduceOp::Product:
      return "Product";
    case ReduceOp::Max:
      return "Max";
    case ReduceOp::Min:
      return "Min";
  }
  return "unknown";
}

}  // namespace kiln::distributed
