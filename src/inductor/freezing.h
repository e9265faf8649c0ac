#pragma once
// Inference freezing: parameters, buffers and captured tensors treated as constants while they
// stay the same tensors with the same contents. What is computed from them alone (batch norm's
// scale and shift, a weight folded with a batch norm, a transposed weight copy) runs once in a
// constant graph; the main graph takes its results as inputs. The values are never baked into
// generated code: each call checks the tensors the constant graph read and re-runs it when one
// changed.
#include "inductor/constant_folding.h"

#include <kiln/backends/backend.h>

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace kiln::inductor {

struct FreezeOptions {
  bool prepack_weights = true;  // weights packed into oneDNN's layouts once
  // Linear layers' weights packed even where oneDNN's layout for them is a plain one (by default
  // only blocked layouts are worth it: weight_prepacking.h).
  bool pack_plain_matmul_weights = false;
  bool channels_last = true;  // convolution nets run on channels-last activations
};

// The graph with affine chains folded into convolutions, its convolutions on channels-last
// activations and their weights pre-packed, then split into constant and main graphs.
ConstantSplit freeze(const graph::Graph& graph, const FreezeOptions& options = {});

// Runs a frozen graph: the constant graph (interpreted) when a tensor it reads changed since it
// last ran, then the compiled main graph on the inputs and the folded values.
class FrozenGraph {
 public:
  explicit FrozenGraph(ConstantSplit split) : split_(std::move(split)) {}
  // Compiles the main graph with compile_graph; the examples' folded values are computed now
  // (and kept for the first call).
  void compile(std::span<const Tensor> example_inputs, const BackendContext& context);
  std::vector<Tensor> operator()(std::span<const Tensor> inputs);
  // The folded values for `inputs`, computed again when stale (said on perf_hints).
  std::vector<Tensor> folded(std::span<const Tensor> inputs);
  // How many times the constant graph ran (for tests).
  size_t constant_runs() const;

 private:
  // One tensor the constant graph read: the same tensor object, storage and contents version.
  struct Watched {
    std::weak_ptr<TensorImpl> impl;
    const void* data = nullptr;
    uint32_t version = 0;
    bool same(const Tensor& t) const;
  };
  ConstantSplit split_;
  CompiledGraph main_;
  std::string name_;  // the graph's, for logs
  mutable std::mutex mutex_;
  std::vector<Watched> watched_;
  std::vector<Tensor> folded_;
  size_t constant_runs_ = 0;
};

}  // namespace kiln::inductor
