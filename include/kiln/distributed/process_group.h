#pragma once
// ProcessGroup: the ranks of a job that run collectives together, and the collectives themselves
// on kiln tensors (torch.distributed's c10d ProcessGroup). A backend (ProcessGroupGloo for CPU
// tensors) implements them; calls run in issue order, and async_op returns before they finish.
#include <kiln/core/tensor.h>
#include <kiln/distributed/reduce_op.h>
#include <kiln/distributed/work.h>

#include <chrono>
#include <string>
#include <vector>

namespace kiln::distributed {

class ProcessGroup {
 public:
  ProcessGroup(int rank, int world_size) : rank_(rank), world_size_(world_size) {}
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  virtual std::string backend_name() const = 0;

  // Every rank's tensor becomes the reduction of all of them.
  virtual Work all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum, bool async_op = false) = 0;
  // Every rank's tensor becomes src's.
  virtual Work broadcast(Tensor& tensor, int src, bool async_op = false) = 0;
  // outputs[r] becomes rank r's input (one output per rank, each shaped as input).
  virtual Work all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                          bool async_op = false) = 0;
  // output (world_size * input.numel() elements) becomes the ranks' inputs laid end to end.
  virtual Work all_gather_into_tensor(Tensor& output, const Tensor& input,
                                      bool async_op = false) = 0;
  // output becomes the reduction over ranks of inputs[rank] (one input per rank).
  virtual Work reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                              ReduceOp op = ReduceOp::Sum, bool async_op = false) = 0;
  // output becomes slice `rank` of the reduction of input (world_size * output.numel() elements).
  virtual Work reduce_scatter_tensor(Tensor& output, const Tensor& input,
                                     ReduceOp op = ReduceOp::Sum, bool async_op = false) = 0;
  // Returns once every rank reached it.
  virtual Work barrier(bool async_op = false) = 0;

 private:
  int rank_;
  int world_size_;
};

}  // namespace kiln::distributed
