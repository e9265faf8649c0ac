// ProcessGroupNccl (include/kiln/distributed/process_group_nccl.h): NCCL communicators, one per
// group, on a high-priority stream of the group's own; a watchdog thread that retires finished
// collectives and aborts the communicator on a timeout or an error NCCL reports.
//
// The communicator is non-blocking (ncclConfig_t::blocking = 0): initialization and every call
// return at once, possibly "in progress", and are settled by polling ncclCommGetAsyncError under
// the group's timeout. A blocking communicator could hang forever in its initialization when a
// peer never arrives, where nothing else could abort it.
#include <kiln/distributed/process_group_nccl.h>

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/cuda/graph.h>
#include <kiln/ops/creation.h>

#include "cuda/cuda_check.h"
#include "cuda/device_state.h"
#include "cuda/nccl/nccl_library.h"
#include "distributed/collective_checks.h"
#include "distributed/environment.h"
#include "distributed/work_state.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace kiln::distributed {

namespace {

using Clock = std::chrono::steady_clock;

// How often the watchdog looks at the collectives in flight and at NCCL's error state.
constexpr auto kWatchdogPeriod = std::chrono::milliseconds(20);

std::optional<ncclDataType_t> nccl_dtype(DType dtype) {
  switch (dtype) {
    case DType::Bool:  // reduced as bytes: Sum as Max, Product as Min (logical or / and)
    case DType::UInt8:
      return ncclUint8;
    case DType::Int8:
      return ncclInt8;
    case DType::Int32:
      return ncclInt32;
    case DType::Int64:
      return ncclInt64;
    case DType::Float16:
      return ncclFloat16;
    case DType::BFloat16:
      return ncclBfloat16;
    case DType::Float32:
      return ncclFloat32;
    case DType::Float64:
      return ncclFloat64;
    case DType::Int16:
      return std::nullopt;
  }
  return std::nullopt;
}

ncclRedOp_t nccl_op(ReduceOp op, DType dtype) {
  const bool boolean = dtype == DType::Bool;
  switch (op) {
    case ReduceOp::Sum:
      return boolean ? ncclMax : ncclSum;
    case ReduceOp::Avg:
      return ncclAvg;
    case ReduceOp::Product:
      return boolean ? ncclMin : ncclProd;
    case ReduceOp::Max:
      return ncclMax;
    case ReduceOp::Min:
      return ncclMin;
  }
  return ncclSum;
}

}  // namespace

namespace detail {

// What the group's collectives share with their Work handles, which may outlive the group.
struct NcclGroupState {
  int rank = 0;
  int world_size = 1;
  int device = 0;
  std::chrono::milliseconds timeout{0};
  std::mutex mutex;
  // Why the communicator was aborted (the first cause); every later call raises it.
  std::optional<std::string> failure;

  std::string work_error(const std::string& description, const std::string& cause) const {
    return fmt::format(
        "ProcessGroupNccl: {} failed on rank {} of {} (cuda:{}, collective timeout {} ms; a peer "
        "that died, stopped calling collectives or called a different one ends in this error): "
        "{}",
        description, rank, world_size, device, timeout.count(), cause);
  }
  std::optional<std::string> failed() {
    std::lock_guard lock(mutex);
    return failure;
  }
};

// One collective in flight: done when its end event, recorded on the group's stream after it,
// has happened. Holds the tensors it reads and writes until then, so that the caching allocator
// does not hand their memory to another tensor while NCCL still uses it.
class NcclWorkState final : public WorkState {
 public:
  NcclWorkState(std::string description, std::shared_ptr<NcclGroupState> group,
                std::vector<Tensor> tensors, cuda::Event end)
      : WorkState(std::move(description)),
        group_(std::move(group)),
        tensors_(std::move(tensors)),
        end_(std::move(end)),
        deadline_(Clock::now() + group_->timeout) {}

  void wait() override {
    while (!finished()) {
      if (Clock::now() > deadline_) raise_failure("it did not finish within the timeout");
      if (auto failure = group_->failed()) raise_failure(*failure);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  void block_current_stream() override {
    if (auto failure = group_->failed(); failure && !finished()) raise_failure(*failure);
    cuda::DeviceGuard guard(group_->device);
    KILN_CUDA_CHECK(cudaStreamWaitEvent(cuda::stream_of(group_->device), end_.handle(), 0));
  }

  bool completed() const override { return finished() || group_->failed().has_value(); }
  bool succeeded() const override { return finished(); }

  // True once the collective ran to its end (then its tensors are released).
  bool finished() const {
    std::lock_guard lock(mutex_);
    if (done_) return true;
    if (!end_.query()) return false;
    done_ = true;
    tensors_.clear();
    return true;
  }
  bool expired(Clock::time_point now) const { return now > deadline_; }

 private:
  [[noreturn]] void raise_failure(const std::string& cause) const {
    throw_error(group_->work_error(description(), cause));
  }

  std::shared_ptr<NcclGroupState> group_;
  mutable std::mutex mutex_;
  mutable std::vector<Tensor> tensors_;
  mutable bool done_ = false;
  cuda::Event end_;
  const Clock::time_point deadline_;
};

}  // namespace detail

using detail::NcclGroupState;
using detail::NcclWorkState;

struct ProcessGroupNccl::Impl {
  std::shared_ptr<NcclGroupState> state = std::make_shared<NcclGroupState>();
  ProcessGroupNcclOptions options;
  ncclComm_t comm = nullptr;
  bool comm_aborted = false;  // under state->mutex
  // The collectives' stream, and the event each one waits for on the caller's stream (made once
  // the device is known).
  std::optional<cuda::Stream> stream;
  std::optional<cuda::Event> ready;
  std::deque<std::shared_ptr<NcclWorkState>> in_flight;  // under state->mutex

  std::mutex watchdog_mutex;
  std::condition_variable watchdog_wake;
  bool stopping = false;
  std::thread watchdog;

  ~Impl();
  void watch();
  // Aborts the communicator and records why (the first cause wins). Needs state->mutex held.
  void abort_locked(const std::string& cause);
  // Returns once `result` (of `call`) and whatever it left in progress settled; raises
  // kiln::Error (aborting the communicator) on an error or after the timeout. Needs
  // state->mutex held: the watchdog must not abort the communicator during a call on it.
  void settle_locked(ncclResult_t result, const char* call, const std::string& what);
  std::string nccl_error(ncclResult_t result, const char* call);

  // Runs `enqueue` (the NCCL calls, given the group's stream) after the work queued on the
  // caller's stream, then records the collective's end. Keeps `tensors` alive until it ran.
  template <typename Enqueue>
  Work launch(std::string description, std::vector<Tensor> tensors, bool async_op,
              Enqueue&& enqueue);
  void check_tensor(const Tensor& tensor, const char* op, const char* which) const;
  void check_tensors(std::span<const Tensor> tensors, DType dtype, int64_t numel, const char* op,
                     const char* which) const;
};

std::string ProcessGroupNccl::Impl::nccl_error(ncclResult_t result, const char* call) {
  const char* last = comm ? detail::nccl().get_last_error(comm) : nullptr;
  return fmt::format("{} failed: {}{}{}", call, detail::nccl().get_error_string(result),
                     last && *last ? ": " : "", last ? last : "");
}

void ProcessGroupNccl::Impl::abort_locked(const std::string& cause) {
  if (!state->failure) state->failure = cause;
  if (comm && !comm_aborted) {
    comm_aborted = true;
    detail::nccl().comm_abort(comm);  // ends NCCL's kernels still waiting for peers
  }
}

void ProcessGroupNccl::Impl::settle_locked(ncclResult_t result, const char* call,
                                           const std::string& what) {
  const auto deadline = Clock::now() + options.timeout;
  while (result == ncclInProgress) {
    if (Clock::now() > deadline) {
      abort_locked(fmt::format("{} did not finish within the timeout of {} ms", call,
                               options.timeout.count()));
      KILN_FAIL(
          "{}: {} timed out after {} ms (did every rank start, with the same world size and "
          "master address, and is each on a GPU of its own?)",
          what, call, options.timeout.count());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    detail::nccl().comm_get_async_error(comm, &result);
  }
  if (result != ncclSuccess) {
    const std::string error = nccl_error(result, call);
    abort_locked(error);
    KILN_FAIL("{}: {}", what, error);
  }
}

ProcessGroupNccl::Impl::~Impl() {
  {
    std::lock_guard lock(watchdog_mutex);
    stopping = true;
  }
  watchdog_wake.notify_all();
  if (watchdog.joinable()) watchdog.join();
  if (!comm) return;
  // Collectives still in flight get the timeout to finish; the communicator is then finalized
  // (its peers are told) or, when they did not, aborted.
  std::lock_guard lock(state->mutex);
  bool drained = !comm_aborted;
  for (const auto& work : in_flight) {
    while (drained && !work->finished()) {
      if (work->expired(Clock::now())) drained = false;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  if (drained) {
    ncclResult_t result = detail::nccl().comm_finalize(comm);
    const auto deadline = Clock::now() + options.timeout;
    while (result == ncclInProgress && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      detail::nccl().comm_get_async_error(comm, &result);
    }
    drained = result == ncclSuccess;
  }
  if (drained) {
    detail::nccl().comm_destroy(comm);
  } else if (!comm_aborted) {
    detail::nccl().comm_abort(comm);
  }
}

void ProcessGroupNccl::Impl::watch() {
  std::unique_lock wake_lock(watchdog_mutex);
  while (!watchdog_wake.wait_for(wake_lock, kWatchdogPeriod, [&] { return stopping; })) {
    std::lock_guard lock(state->mutex);
    if (comm_aborted) continue;
    const auto now = Clock::now();
    std::erase_if(in_flight, [](const auto& work) { return work->finished(); });
    for (const auto& work : in_flight) {
      if (work->expired(now)) {
        abort_locked(fmt::format("{} did not finish within the timeout of {} ms",
                                 work->description(), options.timeout.count()));
        break;
      }
    }
    if (comm_aborted) continue;
    ncclResult_t async_error = ncclSuccess;
    detail::nccl().comm_get_async_error(comm, &async_error);
    if (async_error != ncclSuccess && async_error != ncclInProgress)
      abort_locked(nccl_error(async_error, "a collective in flight"));
  }
}

void ProcessGroupNccl::Impl::check_tensor(const Tensor& tensor, const char* op,
                                          const char* which) const {
  KILN_CHECK(tensor.defined(), "{}: {} is an undefined tensor", op, which);
  KILN_CHECK(tensor.is_cuda() && tensor.device().index() == state->device,
             "{}: {} is on {}; this rank's nccl group drives cuda:{} (move the tensor there, or "
             "choose the group's device with ProcessGroupNcclOptions::device)",
             op, which, tensor.device().str(), state->device);
  KILN_CHECK(tensor.is_contiguous(),
             "{}: {} (sizes {}, strides {}) must be contiguous; call .contiguous() first", op,
             which, tensor.sizes(), tensor.strides());
  KILN_CHECK_T(TypeError, nccl_dtype(tensor.dtype()).has_value(),
               "{}: {} has dtype {}, which NCCL cannot reduce or move; the nccl backend supports "
               "bool, uint8, int8, int32, int64, float16, bfloat16, float32 and float64",
               op, which, dtype_name(tensor.dtype()));
}

void ProcessGroupNccl::Impl::check_tensors(std::span<const Tensor> tensors, DType dtype,
                                           int64_t numel, const char* op, const char* which) const {
  detail::check_same_dtype_and_numel(
      tensors, dtype, numel, op, which,
      [this](const Tensor& t, const char* o, const char* w) { check_tensor(t, o, w); });
}

template <typename Enqueue>
Work ProcessGroupNccl::Impl::launch(std::string description, std::vector<Tensor> tensors,
                                    bool async_op, Enqueue&& enqueue) {
  KILN_CHECK(!cuda::is_capturing(state->device),
             "ProcessGroupNccl: {} was called while a CUDA graph is being captured on cuda:{}; "
             "collectives run on the group's own stream and cannot be part of a graph",
             description, state->device);
  cuda::DeviceGuard guard(state->device);
  cudaStream_t nccl_stream = stream->handle();
  const std::string what = fmt::format("ProcessGroupNccl: {} on rank {} of {}", description,
                                       state->rank, state->world_size);
  std::shared_ptr<NcclWorkState> work;
  {
    // Under the lock: callers on several threads each get their own ordering event's record.
    std::lock_guard lock(state->mutex);
    if (state->failure) throw_error(state->work_error(description, *state->failure));
    ready->record();  // on the caller's current stream of the group's device
    KILN_CUDA_CHECK(cudaStreamWaitEvent(nccl_stream, ready->handle(), 0));
    enqueue(nccl_stream, what);
    cuda::Event end;
    end.record(*stream);
    work = std::make_shared<NcclWorkState>(std::move(description), state, std::move(tensors),
                                           std::move(end));
    in_flight.push_back(work);
  }
  Work handle(work);
  if (!async_op) handle.wait();
  return handle;
}

ProcessGroupNccl::ProcessGroupNccl(std::shared_ptr<Store> store, int rank, int world_size,
                                   ProcessGroupNcclOptions options)
    : ProcessGroup(rank, world_size), impl_(std::make_unique<Impl>()) {
  detail::check_group_arguments(store.get(), rank, world_size, options.timeout, "ProcessGroupNccl");
  KILN_CHECK(cuda::is_available(),
             "ProcessGroupNccl: the nccl backend drives GPUs, and no CUDA device is visible (use "
             "backend 'gloo' for CPU tensors)");
  detail::nccl();  // raises, saying what is missing, when NCCL cannot be loaded
  const int count = cuda::device_count();
  const int device = options.device.value_or(detail::env_int("LOCAL_RANK").value_or(rank) % count);
  KILN_CHECK(device >= 0 && device < count,
             "ProcessGroupNccl: device must be in [0, {}) (the visible GPUs), got {}", count,
             device);
  Impl& impl = *impl_;
  impl.options = options;
  impl.state->rank = rank;
  impl.state->world_size = world_size;
  impl.state->device = device;
  impl.state->timeout = options.timeout;
  cuda::DeviceGuard guard(device);

  // Rank 0 makes the communicator's id; the others read it from the store (which raises after
  // the store's timeout when rank 0 never publishes it).
  ncclUniqueId id;
  const std::string key = options.store_prefix + "nccl_unique_id";
  if (rank == 0) {
    const ncclResult_t result = detail::nccl().get_unique_id(&id);
    KILN_CHECK(result == ncclSuccess, "ProcessGroupNccl: ncclGetUniqueId failed: {}",
               detail::nccl().get_error_string(result));
    const auto* bytes = reinterpret_cast<const uint8_t*>(&id);
    store->set(key, std::vector<uint8_t>(bytes, bytes + sizeof(id)));
  } else {
    const std::vector<uint8_t> bytes = store->get(key);
    KILN_CHECK(bytes.size() == sizeof(id),
               "ProcessGroupNccl: the store's '{}' holds {} bytes, not an NCCL unique id ({} "
               "bytes); do two jobs share one store prefix?",
               key, bytes.size(), sizeof(id));
    std::memcpy(&id, bytes.data(), sizeof(id));
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  std::unique_lock lock(impl.state->mutex);
  const ncclResult_t init =
      detail::nccl().comm_init_rank_config(&impl.comm, world_size, id, rank, &config);
  impl.settle_locked(
      init, "ncclCommInitRankConfig",
      fmt::format("ProcessGroupNccl: rank {} of {} (cuda:{}) could not connect to its "
                  "peers within the timeout of {} ms",
                  rank, world_size, device, options.timeout.count()));
  lock.unlock();

  // High priority: the collectives overlap with compute (DDP), and a bucket's all-reduce that
  // waits behind compute kernels delays the end of backward.
  impl.stream = cuda::Stream::create(device, /*high_priority=*/true);
  impl.ready.emplace();
  impl.watchdog = std::thread([&impl] { impl.watch(); });
}

ProcessGroupNccl::~ProcessGroupNccl() = default;

std::chrono::milliseconds ProcessGroupNccl::timeout() const { return impl_->options.timeout; }

int ProcessGroupNccl::device() const { return impl_->state->device; }

Work ProcessGroupNccl::all_reduce(Tensor& tensor, ReduceOp op, bool async_op) {
  impl_->check_tensor(tensor, "all_reduce", "tensor");
  detail::check_reduce_op(op, tensor.dtype(), "all_reduce");
  Impl* impl = impl_.get();
  return impl->launch(
      detail::describe_collective(fmt::format("all_reduce ({})", reduce_op_name(op)), tensor),
      {tensor}, async_op, [&](cudaStream_t stream, const std::string& what) {
        if (tensor.numel() == 0) return;
        impl->settle_locked(
            detail::nccl().all_reduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                                      *nccl_dtype(tensor.dtype()), nccl_op(op, tensor.dtype()),
                                      impl->comm, stream),
            "ncclAllReduce", what);
      });
}

Work ProcessGroupNccl::broadcast(Tensor& tensor, int src, bool async_op) {
  impl_->check_tensor(tensor, "broadcast", "tensor");
  detail::check_rank(src, world_size(), "broadcast", "src");
  Impl* impl = impl_.get();
  return impl->launch(
      detail::describe_collective(fmt::format("broadcast from rank {}", src), tensor), {tensor},
      async_op, [&](cudaStream_t stream, const std::string& what) {
        if (tensor.numel() == 0) return;
        impl->settle_locked(
            detail::nccl().broadcast(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                                     *nccl_dtype(tensor.dtype()), src, impl->comm, stream),
            "ncclBroadcast", what);
      });
}

Work ProcessGroupNccl::all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op) {
  impl_->check_tensor(input, "all_gather_into_tensor", "input");
  impl_->check_tensors(std::span(&output, 1), input.dtype(), world_size() * input.numel(),
                       "all_gather_into_tensor", "output");
  Impl* impl = impl_.get();
  return impl->launch(detail::describe_collective("all_gather_into_tensor", input), {input, output},
                      async_op, [&](cudaStream_t stream, const std::string& what) {
                        if (input.numel() == 0) return;
                        impl->settle_locked(detail::nccl().all_gather(
                                                input.data_ptr(), output.data_ptr(), input.numel(),
                                                *nccl_dtype(input.dtype()), impl->comm, stream),
                                            "ncclAllGather", what);
                      });
}

Work ProcessGroupNccl::all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                  bool async_op) {
  impl_->check_tensor(input, "all_gather", "input");
  KILN_CHECK(static_cast<int>(outputs.size()) == world_size(),
             "all_gather: expected one output tensor per rank ({}), got {}", world_size(),
             outputs.size());
  impl_->check_tensors(outputs, input.dtype(), input.numel(), "all_gather", "outputs");
  // NCCL gathers into one buffer; its slices are then copied to the outputs on the same stream.
  Tensor gathered =
      empty({world_size() * input.numel()}, TensorOptions(input.dtype()).device(input.device()));
  std::vector<Tensor> tensors = outputs;
  tensors.push_back(input);
  tensors.push_back(gathered);
  Impl* impl = impl_.get();
  return impl->launch(
      detail::describe_collective("all_gather", input), std::move(tensors), async_op,
      [&](cudaStream_t stream, const std::string& what) {
        if (input.numel() == 0) return;
        impl->settle_locked(
            detail::nccl().all_gather(input.data_ptr(), gathered.data_ptr(), input.numel(),
                                      *nccl_dtype(input.dtype()), impl->comm, stream),
            "ncclAllGather", what);
        const auto* bytes = static_cast<const uint8_t*>(gathered.data_ptr());
        for (size_t r = 0; r < outputs.size(); ++r)
          KILN_CUDA_CHECK(cudaMemcpyAsync(outputs[r].data_ptr(), bytes + r * input.nbytes(),
                                          input.nbytes(), cudaMemcpyDeviceToDevice, stream));
      });
}

Work ProcessGroupNccl::reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                                             bool async_op) {
  impl_->check_tensor(output, "reduce_scatter_tensor", "output");
  detail::check_reduce_op(op, output.dtype(), "reduce_scatter_tensor");
  impl_->check_tensors(std::span(&input, 1), output.dtype(), world_size() * output.numel(),
                       "reduce_scatter_tensor", "input");
  Impl* impl = impl_.get();
  return impl->launch(detail::describe_collective(
                          fmt::format("reduce_scatter_tensor ({})", reduce_op_name(op)), output),
                      {input, output}, async_op, [&](cudaStream_t stream, const std::string& what) {
                        if (output.numel() == 0) return;
                        impl->settle_locked(detail::nccl().reduce_scatter(
                                                input.data_ptr(), output.data_ptr(), output.numel(),
                                                *nccl_dtype(output.dtype()),
                                                nccl_op(op, output.dtype()), impl->comm, stream),
                                            "ncclReduceScatter", what);
                      });
}

Work ProcessGroupNccl::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                      ReduceOp op, bool async_op) {
  impl_->check_tensor(output, "reduce_scatter", "output");
  detail::check_reduce_op(op, output.dtype(), "reduce_scatter");
  KILN_CHECK(static_cast<int>(inputs.size()) == world_size(),
             "reduce_scatter: expected one input tensor per rank ({}), got {}", world_size(),
             inputs.size());
  impl_->check_tensors(inputs, output.dtype(), output.numel(), "reduce_scatter", "inputs");
  // The inputs laid end to end on the group's stream, then one NCCL reduce-scatter.
  Tensor laid_out =
      empty({world_size() * output.numel()}, TensorOptions(output.dtype()).device(output.device()));
  std::vector<Tensor> tensors = inputs;
  tensors.push_back(output);
  tensors.push_back(laid_out);
  Impl* impl = impl_.get();
  return impl->launch(
      detail::describe_collective(fmt::format("reduce_scatter ({})", reduce_op_name(op)), output),
      std::move(tensors), async_op, [&](cudaStream_t stream, const std::string& what) {
        if (output.numel() == 0) return;
        auto* bytes = static_cast<uint8_t*>(laid_out.data_ptr());
        for (size_t r = 0; r < inputs.size(); ++r)
          KILN_CUDA_CHECK(cudaMemcpyAsync(bytes + r * output.nbytes(), inputs[r].data_ptr(),
                                          output.nbytes(), cudaMemcpyDeviceToDevice, stream));
        impl->settle_locked(
            detail::nccl().reduce_scatter(bytes, output.data_ptr(), output.numel(),
                                          *nccl_dtype(output.dtype()), nccl_op(op, output.dtype()),
                                          impl->comm, stream),
            "ncclReduceScatter", what);
      });
}

// An all-reduce of one value (torch.distributed's NCCL barrier); synchronous, waited for on the
// host as every synchronous collective is.
Work ProcessGroupNccl::barrier(bool async_op) {
  Tensor token = zeros({1}, TensorOptions(DType::Float32).device(Device::cuda(device())));
  Impl* impl = impl_.get();
  return impl->launch(
      "barrier", {token}, async_op, [&](cudaStream_t stream, const std::string& what) {
        impl->settle_locked(detail::nccl().all_reduce(token.data_ptr(), token.data_ptr(), 1,
                                                      ncclFloat32, ncclSum, impl->comm, stream),
                            "ncclAllReduce", what);
      });
}

}  // namespace kiln::distributed
