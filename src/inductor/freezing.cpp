#include "inductor/freezing.h"

#include "inductor/conv_activation_fusion.h"
#include "inductor/conv_affine_folding.h"
#include "inductor/conv_widening.h"
#include "inductor/graph_device.h"
#include "inductor/layout_optimization.h"
#include "inductor/options.h"
#include "inductor/weight_prepacking.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/capture/debug_dir.h>
#include <kiln/capture/logs.h>
#include <kiln/core/error.h>
#include <kiln/inductor/inductor.h>
#include <kiln/ops/creation.h>

#include <fmt/format.h>

namespace kiln::inductor {

namespace {

// A folded value in the layout the main graph was compiled for (the interpreter's kernels follow
// the meta functions, so this copies only if one of them does not).
Tensor with_layout(const Tensor& t, const graph::ValueMeta& meta) {
  DimVector sizes, strides;
  for (const SymInt& s : meta.sizes) sizes.push_back(s.raw());
  for (const SymInt& s : meta.strides) strides.push_back(s.raw());
  KILN_CHECK(t.sizes() == IntList(sizes) && t.dtype() == meta.dtype,
             "freezing: a folded value came out as {}, the graph expects {}",
             graph::ValueMeta::of(t).str(), meta.str());
  if (t.strides() == IntList(strides) && t.storage_offset() == meta.storage_offset.raw()) return t;
  Tensor laid_out =
      empty_strided(sizes, strides, TensorOptions().dtype(meta.dtype).device(t.device()));
  laid_out.copy_(t);
  return laid_out;
}

}  // namespace

ConstantSplit freeze(const graph::Graph& graph, const FreezeOptions& options) {
  graph::Graph g = graph.clone();
  widen_half_float_convolutions(g);
  fold_affine_into_convolutions(g);
  if (options.channels_last) convolutions_to_channels_last(g);
  if (options.prepack_weights) {
    prepack_convolution_weights(g);
    fuse_convolution_activations(g);
    prepack_matmul_weights(g, options.pack_plain_matmul_weights);
  }
  return split_constants(g);
}

bool FrozenGraph::Watched::same(const Tensor& t) const {
  return impl.lock().get() == t.impl() && t.data_ptr() == data && t.impl()->version() == version;
}

void FrozenGraph::compile(std::span<const Tensor> example_inputs, const BackendContext& context) {
  name_ = context.graph_name;
  std::vector<Tensor> examples(example_inputs.begin(), example_inputs.end());
  const std::vector<Tensor> values = folded(example_inputs);
  examples.insert(examples.end(), values.begin(), values.end());
  main_ = compile_graph(split_.main, examples, context);
}

std::vector<Tensor> FrozenGraph::folded(std::span<const Tensor> inputs) {
  std::lock_guard lock(mutex_);
  const std::vector<size_t>& read = split_.constant_inputs;
  if (watched_.size() == read.size()) {
    size_t changed = 0;
    while (changed < read.size() && watched_[changed].same(inputs[read[changed]])) ++changed;
    if (changed == read.size()) return folded_;
    logs::log(logs::Channel::perf_hints,
              fmt::format("freezing: the constant graph of {} runs again: input {} ({}) changed",
                          name_, read[changed], split_.constants.inputs()[changed]->label));
  }

  // What is watched is recorded before the run (a tensor written meanwhile counts as changed) and
  // kept only once the values are made (a failing run leaves nothing stale behind).
  std::vector<Tensor> constant_inputs;
  std::vector<Watched> watched;
  for (size_t i : read) {
    const Tensor& t = inputs[i];
    constant_inputs.push_back(t);
    watched.push_back({t.impl_ptr(), t.data_ptr(), t.impl()->version()});
  }
  std::vector<Tensor> values;
  {
    autograd::NoGradGuard no_grad;
    values = graph::interpret(split_.constants, constant_inputs);
  }
  const std::vector<graph::Node*> main_inputs = split_.main.inputs();
  const size_t first_folded = main_inputs.size() - values.size();
  for (size_t k = 0; k < values.size(); ++k) {
    values[k] = with_layout(values[k], main_inputs[first_folded + k]->outputs[0]);
  }
  folded_ = std::move(values);
  watched_ = std::move(watched);
  ++constant_runs_;
  return folded_;
}

std::vector<Tensor> FrozenGraph::operator()(std::span<const Tensor> inputs) {
  std::vector<Tensor> all(inputs.begin(), inputs.end());
  const std::vector<Tensor> values = folded(inputs);
  all.insert(all.end(), values.begin(), values.end());
  return main_(all);
}

size_t FrozenGraph::constant_runs() const {
  std::lock_guard lock(mutex_);
  return constant_runs_;
}

namespace {

// The main graph compiled with the constant graph's values as extra inputs (the graph as it is
// when nothing folded).
CompiledGraph compile_frozen(ConstantSplit split, std::span<const Tensor> example_inputs,
                             const BackendContext& context) {
  if (split.num_folded() == 0) return compile_graph(split.main, example_inputs, context);
  if (logs::enabled(logs::Channel::aot_graphs)) {
    logs::log(logs::Channel::aot_graphs,
              fmt::format("frozen {}: constant graph:\n{}\nmain graph:\n{}", context.graph_name,
                          split.constants.str(), split.main.str()));
  }
  if (auto dir = debug::DebugDir::for_compilation(context.graph_name + "_freezing")) {
    dir->write("constant_graph.txt", split.constants.str());
    dir->write("main_graph.txt", split.main.str());
  }
  auto frozen = std::make_shared<FrozenGraph>(std::move(split));
  frozen->compile(example_inputs, context);
  return [frozen](std::span<const Tensor> inputs) { return (*frozen)(inputs); };
}

}  // namespace

CompiledGraph compile_inference_graph(const graph::Graph& graph,
                                      std::span<const Tensor> example_inputs,
                                      const BackendContext& context) {
  const bool freezing = !option_is(context, "freezing", "false");
  // GPU graphs: 16-bit convolutions go channels-last, then what parameters alone determine (their
  // autocast copies, channels-last weights, batch norms' scales and shifts) folds into constants,
  // computed on the GPU once rather than by kernels on every call (about 0.2 ms of resnet18's
  // 1.6 ms bfloat16 inference on an H100). The CPU's passes for oneDNN do not apply.
  if (const std::optional<Device> device = graph_device(graph); device && device->is_cuda()) {
    graph::Graph g = graph.clone();
    optimize_layout(g, context, /*training=*/false);
    if (!freezing) return compile_graph(g, example_inputs, context);
    return compile_frozen(split_constants(g), example_inputs, context);
  }
  // Freezing's passes prepare weights for oneDNN and OpenBLAS: CPU graphs only.
  if (!freezing || !on_cpu(graph)) return compile_graph(graph, example_inputs, context);
  // Symbolic sizes are frozen as concrete ones: batch norms fold into the convolutions,
  // activations go channels-last and weights are packed for the example's sizes (other sizes read
  // the same layout where oneDNN's primitive for them does).
  return compile_frozen(
      freeze(graph, {.prepack_weights = !option_is(context, "prepack_weights", "false"),
                     .pack_plain_matmul_weights = option_is(context, "prepack_weights", "true"),
                     .channels_last = cpu_channels_last(context)}),
      example_inputs, context);
}

}  // namespace kiln::inductor
