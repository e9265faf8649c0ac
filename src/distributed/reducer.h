#pragma once
// The gradient side of DistributedDataParallel (PyTorch's c10d Reducer). It keeps flat buckets of
// the parameters' gradients; a hook on each parameter copies its gradient (plus what .grad already
// holds from no_sync steps) into its bucket, and a full bucket is all-reduced (Avg) asynchronously
// on the process group's worker thread while backward continues. Buckets start strictly in index
// order, so every rank issues the same collectives in the same order. At the end of backward (an
// autograd queue_callback) the reducer waits for the buckets and writes the averages to .grad.
#include <kiln/core/tensor.h>
#include <kiln/distributed/process_group.h>
#include <kiln/distributed/work.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::distributed::detail {

class Reducer {
 public:
  // params: the parameters that require grad, with their names (for messages). The buckets take
  // them in reverse order; size_limits_bytes as in assign_buckets.
  Reducer(std::vector<Tensor> params, std::vector<std::string> names,
          std::shared_ptr<ProcessGroup> group, const std::vector<size_t>& size_limits_bytes,
          bool find_unused_parameters);
  ~Reducer();  // removes the hooks
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // The next backward pass reduces gradients. outputs: the forward's results, from which
  // find_unused_parameters searches the graph for parameters that will get no gradient.
  void prepare_for_backward(const std::vector<Tensor>& outputs);

  // Each bucket's parameter names, in reduction order.
  std::vector<std::vector<std::string>> bucket_parameter_names() const;

 private:
  struct Bucket {
    Tensor flat;                 // the gradients laid end to end
    std::vector<size_t> params;  // indices into params_
    size_t pending = 0;          // gradients still missing in this backward
    Work work;                   // its all-reduce, once started
  };
  struct Slot {  // where a parameter's gradient lives
    size_t bucket = 0;
    int64_t offset = 0;
  };

  void on_gradient(size_t index, const Tensor& grad);
  // The gradient of parameter `index` is in its bucket: start every bucket that is complete.
  void mark_ready(size_t index);
  // A parameter that got no gradient contributes what its .grad holds (zero when none).
  void mark_unused(size_t index);
  Tensor bucket_view(size_t index) const;
  void finalize_backward();
  void queue_finalize_once();
  // Waits on the host for the buckets' collectives still in flight; with report, raises the
  // first failure (as bucket_failure says it).
  void settle_buckets(bool report);
  std::string bucket_failure(size_t bucket, const std::string& error) const;

  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  std::shared_ptr<ProcessGroup> group_;
  bool find_unused_parameters_;
  std::vector<Bucket> buckets_;
  std::vector<Slot> slots_;
  std::vector<size_t> hooks_;

  // The current backward pass.
  bool expect_backward_ = false;
  bool finalize_queued_ = false;
  std::vector<bool> ready_;
  std::vector<size_t> unused_;  // found by prepare_for_backward, marked at the first gradient
  size_t next_bucket_ = 0;      // the next bucket to start
};

}  // namespace kiln::distributed::detail
