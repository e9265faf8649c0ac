#include <kiln/distributed/process_group_gloo.h>

#include <kiln/core/error.h>
#include <kiln/ops/creation.h>

#include "distributed/collective_checks.h"
#include "distributed/collective_fingerprint.h"
#include "distributed/gloo_dtype.h"
#include "distributed/gloo_store.h"
#include "distributed/sigpipe_blocked.h"
#include "distributed/work_queue.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <unistd.h>

#include <cstring>
#include <type_traits>

namespace kiln::distributed {

using detail::check_collective_tensor;
using detail::check_reduce_op;
using detail::check_same_dtype_and_numel;
using detail::CollectiveFingerprint;
using detail::CollectiveKind;
using detail::visit_gloo_dtype;

namespace {

std::string local_hostname() {
  char name[256] = {};
  KILN_CHECK(::gethostname(name, sizeof(name) - 1) == 0,
             "ProcessGroupGloo: cannot read this machine's host name: {}", std::strerror(errno));
  return name;
}

std::shared_ptr<gloo::transport::Device> make_device(const ProcessGroupGlooOptions& options) {
  gloo::transport::tcp::attr attr;
  if (!options.interface.empty()) {
    attr.iface = options.interface;
  } else {
    attr.hostname = options.hostname.empty() ? local_hostname() : options.hostname;
  }
  try {
    return gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    KILN_FAIL("ProcessGroupGloo: cannot open a TCP device on {} '{}': {}",
              attr.iface.empty() ? "host" : "interface",
              attr.iface.empty() ? attr.hostname : attr.iface, e.what());
  }
}

}  // namespace

// Everything that touches Gloo. The worker thread alone runs collectives, so next_tag needs no
// lock; the queue is the last member so that it is joined before the context it uses goes away.
struct ProcessGroupGloo::Impl {
  int rank;
  int world_size;
  ProcessGroupGlooOptions options;
  std::shared_ptr<Store> store;
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
  uint32_t next_tag = 0;
  std::unique_ptr<detail::WorkQueue> queue;

  void all_reduce(void* data, int64_t numel, DType dtype, ReduceOp op);
  void broadcast(void* data, int64_t numel, DType dtype, int src);
  void all_gather(const void* input, void* output, int64_t numel, DType dtype);
  void barrier();
  // Raises kiln::Error when another rank is about to run a different collective.
  void verify(const CollectiveFingerprint& mine);
};

void ProcessGroupGloo::Impl::verify(const CollectiveFingerprint& mine) {
  if (world_size == 1) return;
  constexpr size_t kWords = CollectiveFingerprint::kWords;
  auto words = mine.encode();
  std::vector<int64_t> all(kWords * world_size);
  gloo::AllgatherOptions opts(context);
  opts.setInput(words.data(), kWords);
  opts.setOutput(all.data(), all.size());
  opts.setTag(next_tag++);
  opts.setTimeout(options.timeout);
  gloo::allgather(opts);
  std::vector<std::string> others;
  for (int r = 0; r < world_size; ++r) {
    auto theirs =
        CollectiveFingerprint::decode(std::span<const int64_t, kWords>(&all[r * kWords], kWords));
    if (theirs != mine) others.push_back(fmt::format("rank {} runs {}", r, theirs.str()));
  }
  KILN_CHECK(others.empty(), "the ranks disagree on this collective: rank {} runs {}, but {}", rank,
             mine.str(), fmt::join(others, ", "));
}

void ProcessGroupGloo::Impl::all_reduce(void* data, int64_t numel, DType dtype, ReduceOp op) {
  if (numel == 0) return;
  visit_gloo_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* values = static_cast<T*>(data);
    gloo::AllreduceOptions opts(context);
    opts.setOutput(values, static_cast<size_t>(numel));
    opts.setReduceFunction(detail::gloo_reduce_function<T>(op));
    opts.setTag(next_tag++);
    opts.setTimeout(options.timeout);
    gloo::allreduce(opts);
    if constexpr (!std::is_integral_v<T>) {  // Avg is refused for integers beforehand
      if (op == ReduceOp::Avg) {
        using Wide = std::conditional_t<std::is_same_v<T, double>, double, float>;
        for (int64_t i = 0; i < numel; ++i)
          values[i] = static_cast<T>(static_cast<Wide>(values[i]) / static_cast<Wide>(world_size));
      }
    }
  });
}

void ProcessGroupGloo::Impl::broadcast(void* data, int64_t numel, DType dtype, int src) {
  if (numel == 0) return;
  visit_gloo_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    gloo::BroadcastOptions opts(context);
    opts.setOutput(static_cast<T*>(data), static_cast<size_t>(numel));
    opts.setRoot(src);
    opts.setTag(next_tag++);
    opts.setTimeout(options.timeout);
    gloo::broadcast(opts);
  });
}

void ProcessGroupGloo::Impl::all_gather(const void* input, void* output, int64_t numel,
                                        DType dtype) {
  if (numel == 0) return;
  visit_gloo_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    gloo::AllgatherOptions opts(context);
    // Gloo reads the input buffer only, but its API takes a mutable pointer.
    opts.setInput(const_cast<T*>(static_cast<const T*>(input)), static_cast<size_t>(numel));
    opts.setOutput(static_cast<T*>(output), static_cast<size_t>(numel) * world_size);
    opts.setTag(next_tag++);
    opts.setTimeout(options.timeout);
    gloo::allgather(opts);
  });
}

void ProcessGroupGloo::Impl::barrier() {
  gloo::BarrierOptions opts(context);
  opts.setTag(next_tag++);
  opts.setTimeout(options.timeout);
  gloo::barrier(opts);
}

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int world_size,
                                   ProcessGroupGlooOptions options)
    : ProcessGroup(rank, world_size), impl_(std::make_unique<Impl>()) {
  detail::check_group_arguments(store.get(), rank, world_size, options.timeout, "ProcessGroupGloo");
  impl_->rank = rank;
  impl_->world_size = world_size;
  impl_->options = options;
  impl_->store = store;
  // Gloo's event loop thread (started with the device) and the worker thread inherit this.
  detail::SigpipeBlocked sigpipe_blocked;
  impl_->device = make_device(options);
  impl_->context = std::make_shared<gloo::rendezvous::Context>(rank, world_size);
  impl_->context->setTimeout(options.timeout);
  try {
    detail::GlooStore gloo_store(store, options.store_prefix);
    impl_->context->connectFullMesh(gloo_store, impl_->device);
  } catch (const std::exception& e) {
    KILN_FAIL(
        "ProcessGroupGloo: rank {} of {} could not connect to its peers within the timeout of {} "
        "ms (did every rank start, with the same world size and master address?): {}",
        rank, world_size, options.timeout.count(), e.what());
  }
  impl_->queue = std::make_unique<detail::WorkQueue>(
      [rank, world_size, timeout = options.timeout](const std::string& description,
                                                    const std::string& what) {
        return fmt::format(
            "ProcessGroupGloo: {} failed on rank {} of {} (collective timeout {} ms; a peer that "
            "died or stopped calling collectives ends in this error): {}",
            description, rank, world_size, timeout.count(), what);
      });
}

ProcessGroupGloo::~ProcessGroupGloo() = default;

std::chrono::milliseconds ProcessGroupGloo::timeout() const { return impl_->options.timeout; }

Work ProcessGroupGloo::submit(std::string description, std::function<void()> task, bool async_op) {
  Work work = impl_->queue->enqueue(std::move(description), std::move(task));
  if (!async_op) work.wait();
  return work;
}

Work ProcessGroupGloo::all_reduce(Tensor& tensor, ReduceOp op, bool async_op) {
  check_collective_tensor(tensor, "all_reduce", "tensor");
  check_reduce_op(op, tensor.dtype(), "all_reduce");
  Impl* impl = impl_.get();
  return submit(
      detail::describe_collective(fmt::format("all_reduce ({})", reduce_op_name(op)), tensor),
      [impl, tensor, op] {
        impl->verify({CollectiveKind::AllReduce, tensor.dtype(), tensor.numel(), -1, op});
        impl->all_reduce(tensor.data_ptr(), tensor.numel(), tensor.dtype(), op);
      },
      async_op);
}

Work ProcessGroupGloo::broadcast(Tensor& tensor, int src, bool async_op) {
  check_collective_tensor(tensor, "broadcast", "tensor");
  detail::check_rank(src, world_size(), "broadcast", "src");
  Impl* impl = impl_.get();
  return submit(
      detail::describe_collective(fmt::format("broadcast from rank {}", src), tensor),
      [impl, tensor, src] {
        impl->verify({CollectiveKind::Broadcast, tensor.dtype(), tensor.numel(), src});
        impl->broadcast(tensor.data_ptr(), tensor.numel(), tensor.dtype(), src);
      },
      async_op);
}

Work ProcessGroupGloo::all_gather(std::vector<Tensor>& outputs, const Tensor& input,
                                  bool async_op) {
  check_collective_tensor(input, "all_gather", "input");
  KILN_CHECK(static_cast<int>(outputs.size()) == world_size(),
             "all_gather: expected one output tensor per rank ({}), got {}", world_size(),
             outputs.size());
  check_same_dtype_and_numel(outputs, input.dtype(), input.numel(), "all_gather", "outputs");
  // Gloo gathers into one buffer; the slices are then copied to the caller's tensors.
  Tensor gathered = empty({world_size() * input.numel()}, TensorOptions(input.dtype()));
  Impl* impl = impl_.get();
  return submit(
      detail::describe_collective("all_gather", input),
      [impl, input, outputs, gathered] {
        impl->verify({CollectiveKind::AllGather, input.dtype(), input.numel()});
        impl->all_gather(input.data_ptr(), gathered.data_ptr(), input.numel(), input.dtype());
        const auto* bytes = static_cast<const uint8_t*>(gathered.data_ptr());
        for (size_t r = 0; r < outputs.size(); ++r)
          std::memcpy(outputs[r].data_ptr(), bytes + r * input.nbytes(), input.nbytes());
      },
      async_op);
}

Work ProcessGroupGloo::all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op) {
  check_collective_tensor(input, "all_gather_into_tensor", "input");
  check_same_dtype_and_numel(std::span(&output, 1), input.dtype(), world_size() * input.numel(),
                             "all_gather_into_tensor", "output");
  Impl* impl = impl_.get();
  return submit(
      detail::describe_collective("all_gather_into_tensor", input),
      [impl, input, output] {
        impl->verify({CollectiveKind::AllGather, input.dtype(), input.numel()});
        impl->all_gather(input.data_ptr(), output.data_ptr(), input.numel(), input.dtype());
      },
      async_op);
}

// Gloo's reduce-scatter is an old-style algorithm without per-call timeouts; an all-reduce of the
// concatenated inputs followed by taking this rank's slice has the same result and keeps every
// collective under the group's timeout.
Work ProcessGroupGloo::reduce_scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                      ReduceOp op, bool async_op) {
  check_collective_tensor(output, "reduce_scatter", "output");
  check_reduce_op(op, output.dtype(), "reduce_scatter");
  KILN_CHECK(static_cast<int>(inputs.size()) == world_size(),
             "reduce_scatter: expected one input tensor per rank ({}), got {}", world_size(),
             inputs.size());
  check_same_dtype_and_numel(inputs, output.dtype(), output.numel(), "reduce_scatter", "inputs");
  Tensor reduced = empty({world_size() * output.numel()}, TensorOptions(output.dtype()));
  Impl* impl = impl_.get();
  return submit(
      detail::describe_collective(fmt::format("reduce_scatter ({})", reduce_op_name(op)), output),
      [impl, inputs, output, reduced, op] {
        impl->verify({CollectiveKind::ReduceScatter, output.dtype(), output.numel(), -1, op});
        auto* bytes = static_cast<uint8_t*>(reduced.data_ptr());
        for (size_t r = 0; r < inputs.size(); ++r)
          std::memcpy(bytes + r * output.nbytes(), inputs[r].data_ptr(), output.nbytes());
        impl->all_reduce(bytes, reduced.numel(), reduced.dtype(), op);
        std::memcpy(output.data_ptr(), bytes + impl->rank * output.nbytes(), output.nbytes());
      },
      async_op);
}

Work ProcessGroupGloo::reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                                             bool async_op) {
  check_collective_tensor(output, "reduce_scatter_tensor", "output");
  check_reduce_op(op, output.dtype(), "reduce_scatter_tensor");
  check_same_dtype_and_numel(std::span(&input, 1), output.dtype(), world_size() * output.numel(),
                             "reduce_scatter_tensor", "input");
  Tensor reduced = empty({input.numel()}, TensorOptions(input.dtype()));
  Impl* impl = impl_.get();
  return submit(
      detail::describe_collective(fmt::format("reduce_scatter_tensor ({})", reduce_op_name(op)),
                                  output),
      [impl, input, output, reduced, op] {
        impl->verify({CollectiveKind::ReduceScatter, output.dtype(), output.numel(), -1, op});
        auto* bytes = static_cast<uint8_t*>(reduced.data_ptr());
        std::memcpy(bytes, input.data_ptr(), input.nbytes());
        impl->all_reduce(bytes, reduced.numel(), reduced.dtype(), op);
        std::memcpy(output.data_ptr(), bytes + impl->rank * output.nbytes(), output.nbytes());
      },
      async_op);
}

Work ProcessGroupGloo::barrier(bool async_op) {
  Impl* impl = impl_.get();
  return submit(
      "barrier",
      [impl] {
        impl->verify({CollectiveKind::Barrier});
        impl->barrier();
      },
      async_op);
}

}  // namespace kiln::distributed
