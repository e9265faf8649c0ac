#pragma once
// Work: the handle an asynchronous collective returns. Copies share one state; wait() blocks until
// the collective ran and rethrows its failure as kiln::Error. A collective of the nccl backend runs
// on a GPU stream of its group: block_current_stream() orders the caller's current stream after it
// without blocking the host (what torch.distributed's wait() does for NCCL work).
#include <memory>
#include <string>

namespace kiln::distributed {

namespace detail {
class WorkState;
}

class Work {
 public:
  Work() = default;  // a handle to nothing: completed
  explicit Work(std::shared_ptr<detail::WorkState> state) : state_(std::move(state)) {}

  // Blocks until the collective finished; raises its kiln::Error if it failed.
  void wait() const;
  // GPU work: the calling thread's current CUDA stream waits for the collective, the host does
  // not; failures known so far are raised. Work run on the host: the same as wait().
  void block_current_stream() const;
  bool is_completed() const;
  // Completed without an error (false while running).
  bool is_success() const;
  // What the work does, e.g. "all_reduce (Sum) of 12 float32 elements".
  std::string description() const;

 private:
  std::shared_ptr<detail::WorkState> state_;
};

}  // namespace kiln::distributed
