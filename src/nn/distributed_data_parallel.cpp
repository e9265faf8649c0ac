#include <kiln/nn/distributed_data_parallel.h>

#include "capture/trace_session.h"
#include "distributed/reducer.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/distributed/init.h>
#include <kiln/ops/shape.h>

#include <map>

namespace kiln::nn {
namespace {

constexpr size_t kMiB = 1024 * 1024;
// PyTorch's _DEFAULT_FIRST_BUCKET_BYTES: the first bucket is small so that the first all-reduce
// starts early in backward.
constexpr size_t kFirstBucketBytes = 1 * kMiB;

// Rank 0's values of `tensors` on every rank (PyTorch's _sync_module_states and buffer
// broadcast): one broadcast per dtype of the tensors laid end to end, ordered on the current
// stream, not one host-synchronized collective per tensor (resnet18 has 60 buffers).
void broadcast_from_rank0(distributed::ProcessGroup& group, const std::vector<Tensor>& tensors) {
  autograd::NoGradGuard no_grad;
  std::map<DType, std::vector<Tensor>> by_dtype;
  for (const Tensor& t : tensors) by_dtype[t.dtype()].push_back(t);
  for (auto& [dtype, group_tensors] : by_dtype) {
    std::vector<Tensor> flat_pieces;
    for (const Tensor& t : group_tensors) flat_pieces.push_back(t.reshape({-1}));
    Tensor flat = cat(flat_pieces, 0);
    group.broadcast(flat, 0, /*async_op=*/true).block_current_stream();
    int64_t offset = 0;
    for (Tensor t : group_tensors) {
      t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

// DDP keeps one replica per process on one device (PyTorch's single-device modules).
Device replica_device(const std::vector<Tensor>& states) {
  Device device = states.empty() ? kCPU : states.front().device();
  for (const Tensor& t : states)
    KILN_CHECK(t.device() == device,
               "DistributedDataParallel: the module's parameters and buffers must be on one device "
               "(this process's replica), found {} and {}; move the module with .to(device) first",
               device.str(), t.device().str());
  return device;
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(ModulePtr module,
                                                 DistributedDataParallelOptions options)
    : Module("DistributedDataParallel"),
      module_(std::move(module)),
      runner_(module_),
      options_(std::move(options)) {
  KILN_CHECK(module_ != nullptr, "DistributedDataParallel: expected a module, got nullptr");
  KILN_CHECK(options_.bucket_cap_mb > 0,
             "DistributedDataParallel: bucket_cap_mb must be positive, got {}",
             options_.bucket_cap_mb);
  if (!options_.process_group)
    options_.process_group = distributed::default_process_group("DistributedDataParallel");
  register_module("module", module_);

  std::vector<Tensor> params, states;
  std::vector<std::string> names;
  for (const auto& [name, param] : named_parameters()) {
    states.push_back(param);
    if (!param.requires_grad()) continue;  // frozen: never reduced
    params.push_back(param);
    names.push_back(name);
  }
  for (const Tensor& buffer : buffers()) states.push_back(buffer);
  replica_device(states);
  broadcast_from_rank0(*options_.process_group, states);

  const auto bucket_bytes = static_cast<size_t>(options_.bucket_cap_mb * kMiB);
  bucket_size_limits_ = {std::min(kFirstBucketBytes, bucket_bytes), bucket_bytes};
  reducer_ = std::make_unique<distributed::detail::Reducer>(
      std::move(params), std::move(names), options_.process_group, bucket_size_limits_,
      options_.find_unused_parameters);
}

DistributedDataParallel::~DistributedDataParallel() = default;

void DistributedDataParallel::run_module_through(ModulePtr runner) {
  KILN_CHECK(runner != nullptr, "DistributedDataParallel: expected a module to run, got nullptr");
  runner_ = std::move(runner);
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  // Traced, its collectives and the reducer's bookkeeping would run once at trace time and never
  // again on the compiled path: the gradients would silently stay unreduced.
  KILN_CHECK(capture::TraceSession::current() == nullptr,
             "DistributedDataParallel: its forward cannot be captured into a graph (it runs "
             "collectives and prepares the gradient reduction on every call); compile the DDP "
             "module itself with kiln::compile(ddp), which compiles the module it wraps, or wrap "
             "a compiled module: DistributedDataParallel(kiln::compile(model))");
  if (options_.broadcast_buffers && options_.process_group->world_size() > 1)
    broadcast_from_rank0(*options_.process_group, module_->buffers());
  Tensor output = runner_->forward(input);
  if (autograd::GradMode::is_enabled() && require_backward_grad_sync_)
    reducer_->prepare_for_backward({output});
  return output;
}

std::vector<std::vector<std::string>> DistributedDataParallel::bucket_parameter_names() const {
  return reducer_->bucket_parameter_names();
}

DistributedDataParallel::NoSync::NoSync(DistributedDataParallel& ddp)
    : ddp_(ddp), previous_(ddp.require_backward_grad_sync_) {
  ddp_.require_backward_grad_sync_ = false;
}

DistributedDataParallel::NoSync::~NoSync() { ddp_.require_backward_grad_sync_ = previous_; }

}  // namespace kiln::nn
