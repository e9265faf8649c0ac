#include "inductor/cuda_graph_runner.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/capture/logs.h>
#include <kiln/core/error.h>
#include <kiln/core/tensor_impl.h>
#include <kiln/cuda/graph.h>
#include <kiln/ops/creation.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

namespace kiln::inductor {

namespace {

// What decides whether a graph serves a call: per input, whether it is defined, where it is, its
// dtype and its layout.
std::vector<int64_t> signature_of(std::span<const Tensor> inputs) {
  std::vector<int64_t> s;
  s.reserve(inputs.size() * 8);
  for (const Tensor& t : inputs) {
    s.push_back(t.defined() ? 1 : 0);
    if (!t.defined()) continue;
    s.push_back(static_cast<int64_t>(t.device().type()));
    s.push_back(t.device().index());
    s.push_back(static_cast<int64_t>(t.dtype()));
    s.push_back(t.dim());
    for (int64_t d : t.sizes()) s.push_back(d);
    for (int64_t d : t.strides()) s.push_back(d);
    s.push_back(t.storage_offset());
  }
  return s;
}

// A new tensor of `t`'s layout on `storage`, at storage offset `offset`.
Tensor alias_on(const Storage& storage, const Tensor& t, int64_t offset) {
  return Tensor(std::make_shared<TensorImpl>(storage, t.dtype(), t.sym_sizes(), t.sym_strides(),
                                             SymInt(offset)));
}

// The bytes of a host tensor (a number that kernels take by value).
std::vector<std::byte> host_bytes(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<std::byte> bytes(c.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), c.data_ptr(), bytes.size());
  return bytes;
}

// A tensor of `t`'s sizes, strides and storage offset, in memory of its own.
Tensor buffer_like(const Tensor& t) {
  int64_t extent = t.storage_offset() + 1;
  for (int64_t d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * t.stride(d);
  if (t.numel() == 0) extent = 1;
  return empty({extent}, TensorOptions(t.dtype()).device(t.device()))
      .as_strided(t.sizes(), t.strides(), t.storage_offset());
}

}  // namespace

struct CudaGraphRunner::Recorded {
  // An output of the graph: memory of its pool (`tensor`), or a view of input `input` (its
  // storage offset `delta` past the input's).
  struct Output {
    Tensor tensor;
    int input = -1;
    int64_t delta = 0;
    int sharing = 1;  // outputs (this one included) that view the same pool storage
  };
  std::vector<int64_t> signature;
  bool seen = false;      // a call ran (uncaptured) with this signature
  bool given_up = false;  // recorded kMaxRecordings times: runs without a graph
  int recordings = 0;
  std::vector<const void*> addresses;  // per input: where it was at the last call
  std::vector<bool> copied;            // per input: copied into `buffers` before each replay
  std::vector<Tensor> buffers;         // per copied input: what the graph reads
  std::vector<std::vector<std::byte>> values;  // per host input: its bytes at the recording
  std::unique_ptr<cuda::Graph> graph;
  std::vector<Output> outputs;
};

CudaGraphRunner::CudaGraphRunner(RunProgram run, std::string name)
    : run_(std::move(run)), name_(std::move(name)) {}

CudaGraphRunner::~CudaGraphRunner() = default;

void CudaGraphRunner::disable(std::string why) {
  logs::log(logs::Channel::perf_hints,
            fmt::format("inductor: {} runs without a CUDA graph: {}", name_, why));
  disabled_ = std::move(why);
  graphs_.clear();
}

CudaGraphRunner::Recorded* CudaGraphRunner::recorded_for(std::span<const Tensor> inputs) {
  std::vector<int64_t> signature = signature_of(inputs);
  for (auto& r : graphs_) {
    if (r->signature == signature) return r.get();
  }
  if (graphs_.size() == static_cast<size_t>(kMaxGraphs)) return nullptr;
  graphs_.push_back(std::make_unique<Recorded>());
  graphs_.back()->signature = std::move(signature);
  return graphs_.back().get();
}

std::vector<Tensor> CudaGraphRunner::operator()(std::span<const Tensor> inputs) {
  std::unique_lock lock(mutex_, std::try_to_lock);
  // Another thread replaying, or no graph for this program: as compiled, without one.
  if (!lock.owns_lock() || !disabled_.empty()) return run_(inputs);
  Recorded* r = recorded_for(inputs);
  if (r == nullptr || r->given_up) return run_(inputs);
  const size_t n = inputs.size();
  const auto address = [&](size_t i) -> const void* {
    const Tensor& t = inputs[i];
    return t.defined() && t.device().is_cuda() && t.numel() > 0 ? t.data_ptr() : nullptr;
  };
  if (!r->seen) {
    // The first call: initialization and tuning happen uncaptured; note the addresses.
    r->seen = true;
    r->addresses.resize(n);
    for (size_t i = 0; i < n; ++i) r->addresses[i] = address(i);
    return run_(inputs);
  }
  if (r->graph) {
    // Record again when inputs read in place moved (they are copied from then on) or numbers
    // taken by value changed.
    std::vector<std::string> why;
    for (size_t i = 0; i < n; ++i) {
      if (r->copied[i] || !inputs[i].defined()) continue;
      if (inputs[i].device().is_cuda()) {
        if (address(i) != r->addresses[i]) {
          r->copied[i] = true;
          why.push_back(fmt::format("input {} moved", i));
        }
      } else if (host_bytes(inputs[i]) != r->values[i]) {
        why.push_back(fmt::format("the number in input {} changed", i));
      }
    }
    if (why.empty()) return replay(*r, inputs);
    logs::log(
        logs::Channel::cudagraphs,
        fmt::format("inductor: {}: records its CUDA graph again: {}", name_, fmt::join(why, ", ")));
  } else {
    // The second call: inputs found where they were are read in place, and so are those in a
    // graph's memory (another graph's outputs: they stay where they are while it replays); the
    // others are copied.
    r->copied.assign(n, false);
    for (size_t i = 0; i < n; ++i) {
      r->copied[i] = inputs[i].defined() && inputs[i].device().is_cuda() &&
                     address(i) != r->addresses[i] && !cuda::is_graph_memory(address(i));
    }
  }
  if (r->recordings == kMaxRecordings) {
    r->given_up = true;
    r->graph.reset();
    r->outputs.clear();
    r->buffers.clear();
    logs::log(logs::Channel::perf_hints,
              fmt::format("inductor: {}: recorded {} CUDA graphs for one input signature; runs "
                          "without a graph for it from now on",
                          name_, kMaxRecordings));
    return run_(inputs);
  }
  return record(*r, inputs);
}

std::vector<Tensor> CudaGraphRunner::record(Recorded& r, std::span<const Tensor> inputs) {
  const size_t n = inputs.size();
  r.graph.reset();
  r.outputs.clear();
  r.buffers.assign(n, Tensor());
  r.values.assign(n, {});
  r.addresses.assign(n, nullptr);
  std::vector<Tensor> args(inputs.begin(), inputs.end());
  {
    autograd::NoGradGuard no_grad;
    for (size_t i = 0; i < n; ++i) {
      const Tensor& t = inputs[i];
      if (!t.defined()) continue;
      if (!t.device().is_cuda()) {
        r.values[i] = host_bytes(t);
      } else if (r.copied[i]) {
        r.buffers[i] = buffer_like(t);
        r.buffers[i].copy_(t);
        args[i] = r.buffers[i];
      } else if (t.numel() > 0) {
        r.addresses[i] = t.data_ptr();
      }
    }
  }
  auto graph = std::make_unique<cuda::Graph>();
  std::vector<Tensor> outputs;
  try {
    graph->capture_begin();
    outputs = run_(args);
    graph->capture_end();
  } catch (const Error& e) {
    graph->capture_abort();
    outputs.clear();
    disable(fmt::format("its calls cannot be captured: {}", e.what()));
    return run_(inputs);
  }
  ++r.recordings;
  const uint64_t counters = graph->random_counters();
  logs::log(logs::Channel::cudagraphs,
            fmt::format("inductor: {}: recorded a CUDA graph ({} of {} inputs copied in{})", name_,
                        std::count(r.copied.begin(), r.copied.end(), true), n,
                        counters == 0 ? std::string()
                                      : fmt::format("; {} Philox counters per replay", counters)));
  // Where each output lives: the pool, or an input's memory.
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor& o = outputs[k];
    // A tensor of the graph's own per output, so that each counts once on its storage.
    Recorded::Output out{o.defined() ? alias_on(o.storage(), o, o.storage_offset()) : Tensor()};
    if (o.defined() && o.numel() > 0 && !graph->owns(o.data_ptr())) {
      for (size_t i = 0; i < n && out.input < 0; ++i) {
        if (args[i].defined() && args[i].storage().get() == o.storage().get()) {
          out.input = static_cast<int>(i);
          out.delta = o.storage_offset() - args[i].storage_offset();
        }
      }
      if (out.input < 0) {
        disable(fmt::format("output {} is neither the graph's memory nor a view of an input", k));
        return run_(inputs);
      }
    }
    r.outputs.push_back(std::move(out));
  }
  for (Recorded::Output& out : r.outputs) {
    if (out.input >= 0 || !out.tensor.defined()) continue;
    out.sharing = static_cast<int>(
        std::count_if(r.outputs.begin(), r.outputs.end(), [&](const Recorded::Output& other) {
          return other.input < 0 && other.tensor.defined() &&
                 other.tensor.storage().get() == out.tensor.storage().get();
        }));
  }
  r.graph = std::move(graph);
  // The capture ran nothing (and reserved no random counters): this replay computes the call's
  // results, drawing what an uncaptured call would draw here.
  r.graph->replay();
  return results_of(r, inputs);
}

std::vector<Tensor> CudaGraphRunner::replay(Recorded& r, std::span<const Tensor> inputs) {
  autograd::NoGradGuard no_grad;
  // Outputs of the last replay that someone still holds move to memory of their own (the
  // storage they share keeps its identity; the graph keeps its address).
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    Recorded::Output& out = r.outputs[k];
    if (out.input >= 0 || !out.tensor.defined() || out.tensor.numel() == 0) continue;
    const Storage held = out.tensor.storage();
    // `held` itself and each of the graph's outputs on this storage count once.
    if (held.use_count() <= out.sharing + 1) continue;
    const auto bytes = static_cast<int64_t>(held->nbytes());
    const Device device = out.tensor.device();
    Tensor fresh = empty({bytes}, TensorOptions(DType::UInt8).device(device));
    fresh.copy_(from_blob(held->data(), {bytes}, {1}, DType::UInt8, {}, device));
    held->swap_data(*fresh.storage());
    for (Recorded::Output& other : r.outputs) {
      if (other.input < 0 && other.tensor.defined() && other.tensor.storage() == held) {
        other.tensor = alias_on(fresh.storage(), other.tensor, other.tensor.storage_offset());
      }
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (r.copied[i] && inputs[i].defined()) r.buffers[i].copy_(inputs[i]);
  }
  r.graph->replay();
  return results_of(r, inputs);
}

std::vector<Tensor> CudaGraphRunner::results_of(const Recorded& r,
                                                std::span<const Tensor> inputs) const {
  // New tensors each call: the caller's hold on them is what replay() counts.
  std::vector<Tensor> results;
  results.reserve(r.outputs.size());
  for (const Recorded::Output& out : r.outputs) {
    if (!out.tensor.defined()) {
      results.emplace_back();
    } else if (out.input >= 0) {
      const Tensor& in = inputs[static_cast<size_t>(out.input)];
      results.push_back(alias_on(in.storage(), out.tensor, in.storage_offset() + out.delta));
    } else {
      results.push_back(alias_on(out.tensor.storage(), out.tensor, out.tensor.storage_offset()));
    }
  }
  return results;
}

}  // namespace kiln::inductor
