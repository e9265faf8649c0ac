#include "distributed/reducer.h"

#include "distributed/bucket_assignment.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/autograd/node.h>
#include <kiln/autograd/queue_callback.h>
#include <kiln/core/error.h>
#include <kiln/ops/creation.h>

#include <algorithm>
#include <unordered_set>

namespace kiln::distributed::detail {

Reducer::Reducer(std::vector<Tensor> params, std::vector<std::string> names,
                 std::shared_ptr<ProcessGroup> group, const std::vector<size_t>& size_limits_bytes,
                 bool find_unused_parameters)
    : params_(std::move(params)),
      names_(std::move(names)),
      group_(std::move(group)),
      find_unused_parameters_(find_unused_parameters),
      slots_(params_.size()),
      ready_(params_.size(), false) {
  // Backward produces the last-registered parameters' gradients first (as PyTorch assumes).
  std::vector<Tensor> reversed(params_.rbegin(), params_.rend());
  for (const auto& positions : assign_buckets(reversed, size_limits_bytes)) {
    Bucket bucket;
    int64_t numel = 0;
    for (size_t position : positions) {
      const size_t index = params_.size() - 1 - position;
      slots_[index] = {buckets_.size(), numel};
      bucket.params.push_back(index);
      numel += params_[index].numel();
    }
    const Tensor& first = params_[bucket.params.front()];
    bucket.flat = zeros({numel}, TensorOptions(first.dtype()).device(first.device()));
    buckets_.push_back(std::move(bucket));
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    hooks_.push_back(params_[i].register_hook([this, i](const Tensor& grad) {
      on_gradient(i, grad);
      return Tensor();  // .grad accumulates as usual; finalize overwrites it with the average
    }));
  }
}

Reducer::~Reducer() {
  for (size_t i = 0; i < params_.size(); ++i) params_[i].remove_hook(hooks_[i]);
  settle_buckets(/*report=*/false);  // swallows the buckets' failures
}

void Reducer::settle_buckets(bool report) {
  std::optional<std::string> failure;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    try {
      buckets_[b].work.wait();
    } catch (const Error& e) {
      if (report && !failure) failure = bucket_failure(b, e.what());
    }
    buckets_[b].work = Work();
  }
  if (failure) throw_error(*failure);
}

std::string Reducer::bucket_failure(size_t b, const std::string& error) const {
  return fmt::format(
      "DistributedDataParallel: reducing gradient bucket {} of {} ({} parameters, starting with "
      "'{}') failed: {}",
      b, buckets_.size(), buckets_[b].params.size(), names_[buckets_[b].params.front()], error);
}

std::vector<std::vector<std::string>> Reducer::bucket_parameter_names() const {
  std::vector<std::vector<std::string>> out;
  for (const Bucket& bucket : buckets_) {
    out.emplace_back();
    for (size_t index : bucket.params) out.back().push_back(names_[index]);
  }
  return out;
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  for (size_t i = 0; i < params_.size(); ++i)
    KILN_CHECK(!expect_backward_ || !ready_[i],
               "DistributedDataParallel: forward ran again while the previous backward pass was "
               "still reducing gradients (parameter '{}' was ready, others were not); finish "
               "each backward before the next forward",
               names_[i]);
  // The previous backward's all-reduces must be done before their buckets are refilled. On the
  // CPU they are (finalize_backward waited); on the GPU finalize only ordered the stream after
  // them, and the host waits here, a forward later, so that it runs at most about one step ahead
  // and a reduction that failed after finalize (a peer died) is raised here, not lost.
  settle_buckets(/*report=*/true);
  expect_backward_ = true;
  finalize_queued_ = false;
  std::fill(ready_.begin(), ready_.end(), false);
  for (Bucket& bucket : buckets_) bucket.pending = bucket.params.size();
  next_bucket_ = 0;
  unused_.clear();
  if (!find_unused_parameters_) return;
  // The accumulators reachable from the outputs; parameters whose accumulator is not among them
  // get no gradient in this backward.
  std::unordered_set<const autograd::Node*> reachable;
  std::vector<std::shared_ptr<autograd::Node>> stack;
  for (const Tensor& out : outputs)
    if (out.defined() && out.grad_fn()) stack.push_back(out.grad_fn());
  while (!stack.empty()) {
    std::shared_ptr<autograd::Node> node = std::move(stack.back());
    stack.pop_back();
    if (!reachable.insert(node.get()).second) continue;
    for (const autograd::Edge& edge : node->next_edges())
      if (edge.function) stack.push_back(edge.function);
  }
  for (size_t i = 0; i < params_.size(); ++i)
    if (!reachable.contains(autograd::gradient_edge(params_[i]).function.get()))
      unused_.push_back(i);
}

Tensor Reducer::bucket_view(size_t index) const {
  const Slot& slot = slots_[index];
  return buckets_[slot.bucket]
      .flat.narrow(0, slot.offset, params_[index].numel())
      .view(params_[index].sizes());
}

void Reducer::queue_finalize_once() {
  if (finalize_queued_) return;
  finalize_queued_ = true;
  autograd::queue_callback([this] { finalize_backward(); });
}

void Reducer::on_gradient(size_t index, const Tensor& grad) {
  if (!expect_backward_) return;  // a no_sync step: the gradient stays on this rank
  KILN_CHECK(!ready_[index],
             "DistributedDataParallel: parameter '{}' got a gradient twice in one backward pass "
             "(a second backward over the same forward, or a reentrant backward); each forward "
             "may be followed by one backward",
             names_[index]);
  queue_finalize_once();
  // Unused parameters count as ready once backward runs (not earlier: a collective the caller
  // runs between forward and backward must come first on every rank).
  std::vector<size_t> unused = std::move(unused_);
  unused_.clear();
  for (size_t i : unused) mark_unused(i);
  autograd::NoGradGuard no_grad;
  Tensor view = bucket_view(index);
  view.copy_(grad.detach());
  // What earlier no_sync steps accumulated is reduced too (.grad gets grad added after this hook).
  if (params_[index].grad().defined()) view.add_(params_[index].grad());
  mark_ready(index);
}

void Reducer::mark_unused(size_t index) {
  autograd::NoGradGuard no_grad;
  Tensor view = bucket_view(index);
  if (params_[index].grad().defined()) {
    view.copy_(params_[index].grad());
  } else {
    view.zero_();
  }
  mark_ready(index);
}

void Reducer::mark_ready(size_t index) {
  ready_[index] = true;
  --buckets_[slots_[index].bucket].pending;
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    Bucket& bucket = buckets_[next_bucket_++];
    bucket.work = group_->all_reduce(bucket.flat, ReduceOp::Avg, /*async_op=*/true);
  }
}

void Reducer::finalize_backward() {
  expect_backward_ = false;
  std::vector<std::string> missing;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (ready_[i]) continue;
    if (find_unused_parameters_) {
      mark_unused(i);
    } else {
      missing.push_back("'" + names_[i] + "'");
    }
  }
  KILN_CHECK(missing.empty(),
             "DistributedDataParallel: {} of {} parameters got no gradient in this backward pass "
             "({}); their buckets cannot be reduced, and the other ranks would wait for them. "
             "Pass find_unused_parameters=true when parts of the model are skipped in some "
             "forward passes, or set requires_grad=false on parameters that are never trained",
             missing.size(), params_.size(), fmt::join(missing, ", "));
  for (size_t b = 0; b < buckets_.size(); ++b) {
    try {
      buckets_[b].work.block_current_stream();
    } catch (const Error& e) {
      const std::string failure = bucket_failure(b, e.what());
      buckets_[b].work = Work();  // raised here: not again at the next forward
      throw_error(failure);
    }
  }
  autograd::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor average = bucket_view(i);
    Tensor& grad = params_[i].mutable_grad();
    if (grad.defined()) {
      grad.copy_(average);
    } else {
      grad = average.clone();
    }
  }
}

}  // namespace kiln::distributed::detail
