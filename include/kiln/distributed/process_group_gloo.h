#pragma once
// ProcessGroupGloo: collectives on CPU tensors through Gloo's algorithms over TCP. The ranks meet
// through a Store, then connect to each other directly; each collective runs on the group's
// worker thread and fails with a kiln::Error (never hangs) when a peer is gone for longer than
// the timeout.
#include <kiln/distributed/process_group.h>
#include <kiln/distributed/store.h>

#include <chrono>
#include <memory>
#include <string>

namespace kiln::distributed {

struct ProcessGroupGlooOptions {
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
  // The address peers reach this rank at; empty: this machine's host name.
  std::string hostname;
  // Or the network interface to use (GLOO_SOCKET_IFNAME), which wins over hostname.
  std::string interface;
  // Distinguishes groups that meet through one store.
  std::string store_prefix = "kiln/pg0/";
};

class ProcessGroupGloo : public ProcessGroup {
 public:
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int world_size,
                   ProcessGroupGlooOptions options = {});
  ~ProcessGroupGloo() override;

  std::string backend_name() const override { return "gloo"; }
  std::chrono::milliseconds timeout() const;

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
  // Runs task on the worker thread; waits for it unless async_op.
  Work submit(std::string description, std::function<void()> task, bool async_op);

  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::distributed
