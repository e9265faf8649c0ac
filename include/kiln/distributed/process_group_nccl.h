#pragma once
// ProcessGroupNccl: collectives on CUDA tensors through NCCL (torch.distributed's "nccl" backend).
// Each rank drives one GPU. The ranks meet through a Store (rank 0 publishes NCCL's unique id),
// then NCCL connects them (NVLink, PCIe or the network). Collectives run on a stream of the
// group's own, after the work already queued on the caller's current stream, so that they overlap
// with later kernels (DDP's gradient buckets); Work::block_current_stream() orders the caller's
// stream after one, Work::wait() and async_op = false block the host until it finished.
//
// A collective that does not finish within the timeout (a peer that died, stalled, or called a
// different collective), or an error NCCL reports while it runs, aborts the communicator: the
// collective's Work and every later call on the group raise kiln::Error saying what happened. A
// build without CUDA or NCCL raises from the constructor.
#include <kiln/distributed/process_group.h>
#include <kiln/distributed/store.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace kiln::distributed {

struct ProcessGroupNcclOptions {
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
  // The GPU this rank drives; default: $LOCAL_RANK modulo the devices visible (the rank when
  // LOCAL_RANK is unset), as torchrun-launched programs expect.
  std::optional<int> device;
  // Distinguishes groups that meet through one store.
  std::string store_prefix = "kiln/pg0/";
};

class ProcessGroupNccl : public ProcessGroup {
 public:
  ProcessGroupNccl(std::shared_ptr<Store> store, int rank, int world_size,
                   ProcessGroupNcclOptions options = {});
  ~ProcessGroupNccl() override;

  std::string backend_name() const override { return "nccl"; }
  std::chrono::milliseconds timeout() const;
  // The CUDA device index this rank's collectives run on.
  int device() const;

  Work all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::Sum, bool async_op = false) override;
  Work broadcast(Tensor& tensor, int src, bool async_op = false) override;
  Work all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                  bool async_op = false) override;
  Work all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op = false) override;
  Work reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                      ReduceOp op = ReduceOp::Sum, bool async_op = false) override;
  Work reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum,
                             bool async_op = false) override;
  Work barrier(bool async_op = false) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::distributed
