#pragma once
// kiln::nn::DistributedDataParallel: torch.nn.parallel.DistributedDataParallel on kiln's process
// groups. Every rank holds a replica of the module; construction broadcasts rank 0's parameters
// and buffers, forward broadcasts the buffers again (broadcast_buffers), and backward averages
// the gradients over the ranks, so that an optimizer step on each rank keeps the replicas equal.
//
// Gradients are reduced in flat buckets: parameters in reverse registration order (about the
// order backward produces their gradients), the first bucket capped at 1 MB so communication
// starts early, the others at bucket_cap_mb. A gradient hook copies each gradient into its bucket;
// once a bucket is full it is all-reduced asynchronously on the process group's worker thread
// while backward goes on computing the next gradients (buckets start in index order, the same on
// every rank). At the end of backward (an autograd queue_callback) the averaged gradients are
// written to each parameter's .grad.
#include <kiln/distributed/process_group.h>
#include <kiln/nn/module.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::distributed::detail {
class Reducer;
}

namespace kiln::nn {

struct DistributedDataParallelOptions {
  // The ranks that train together; default: the default process group.
  std::shared_ptr<distributed::ProcessGroup> process_group;
  // Bucket size in MiB (PyTorch's default 25); the first bucket holds at most 1 MiB of it.
  double bucket_cap_mb = 25;
  // Parameters that get no gradient in a backward pass (a branch not taken) count as zero.
  // Without it such a parameter raises kiln::Error at the end of backward.
  bool find_unused_parameters = false;
  // Broadcast rank 0's buffers (running statistics) before each forward.
  bool broadcast_buffers = true;
};

class DistributedDataParallel : public Module {
 public:
  explicit DistributedDataParallel(ModulePtr module, DistributedDataParallelOptions options = {});
  ~DistributedDataParallel() override;

  Tensor forward(const Tensor& input) override;
  // The wrapped module (registered as the submodule "module", as in PyTorch).
  const ModulePtr& module() const { return module_; }
  // Runs the wrapped module through `runner` from now on: a module computing the same function
  // with the same parameters (kiln::compile(ddp) passes the compiled module). DDP's own work
  // around it (buffer broadcast, the reducer's bookkeeping, the hooks) is unchanged.
  void run_module_through(ModulePtr runner);

  // While a NoSync lives, forward/backward leave gradients on this rank (accumulating into
  // .grad); the first backward after it reduces the accumulated sum. PyTorch's no_sync().
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp);
    ~NoSync();
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(*this); }

  // Each bucket's parameter names ("module.fc.weight"), in the order the buckets are reduced.
  std::vector<std::vector<std::string>> bucket_parameter_names() const;
  // The buckets' size limits in bytes: the first bucket's, then every later one's (what
  // kiln::compile(ddp) cuts the compiled graph by, so that its pieces match the buckets).
  const std::vector<size_t>& bucket_size_limits_bytes() const { return bucket_size_limits_; }

 private:
  ModulePtr module_;
  ModulePtr runner_;  // what forward calls: module_, or a compiled module of it
  DistributedDataParallelOptions options_;
  std::vector<size_t> bucket_size_limits_;
  std::unique_ptr<distributed::detail::Reducer> reducer_;
  bool require_backward_grad_sync_ = true;
};

}  // namespace kiln::nn
