#pragma once
// The collectives on the default process group (torch.distributed.all_reduce etc.). See
// ProcessGroup for what each one computes; async_op returns a Work to wait on.
#include <kiln/distributed/init.h>
#include <kiln/distributed/process_group.h>

#include <vector>

namespace kiln::distributed {

Work all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum, bool async_op = false);
Work broadcast(Tensor& tensor, int src, bool async_op = false);
Work all_gather(std::vector<Tensor>& outputs, const Tensor& input, bool async_op = false);
Work all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op = false);
Work reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op = ReduceOp::Sum,
                    bool async_op = false);
Work reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum,
                           bool async_op = false);
Work barrier(bool async_op = false);

}  // namespace kiln::distributed
