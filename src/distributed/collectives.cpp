#include <kiln/distributed/collectives.h>

namespace kiln::distributed {

Work all_reduce(Tensor& tensor, ReduceOp op, bool async_op) {
  return default_process_group("all_reduce")->all_reduce(tensor, op, async_op);
}

Work broadcast(Tensor& tensor, int src, bool async_op) {
  return default_process_group("broadcast")->broadcast(tensor, src, async_op);
}

Work all_gather(std::vector<Tensor>& outputs, const Tensor& input, bool async_op) {
  return default_process_group("all_gather")->all_gather(outputs, input, async_op);
}

Work all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op) {
  return default_process_group("all_gather_into_tensor")
      ->all_gather_into_tensor(output, input, async_op);
}

Work reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op, bool async_op) {
  return default_process_group("reduce_scatter")->reduce_scatter(output, inputs, op, async_op);
}

Work reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op, bool async_op) {
  return default_process_group("reduce_scatter_tensor")
      ->reduce_scatter_tensor(output, input, op, async_op);
}

Work barrier(bool async_op) { return default_process_group("barrier")->barrier(async_op); }

}  // namespace kiln::distributed
