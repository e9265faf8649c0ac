// The aot_autograd backend wrapper: traces a captured graph ahead of time (functionalized, with
// its backward when it is run with grad), partitions it, compiles the halves with the given
// compilers, and at run time applies the graph's writes to its inputs and attaches the compiled
// backward to the outputs.
#include "aot/compiled_backward.h"
#include "aot/joint_graph.h"
#include "aot/storage_reads.h"
#include "autograd/autograd_meta.h"
#include "capture/symbolic_interpreter.h"

#include <kiln/aot/aot.h>
#include <kiln/autograd/grad_mode.h>
#include <kiln/capture/debug_dir.h>
#include <kiln/capture/logs.h>
#include <kiln/core/error.h>

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <optional>

namespace kiln::aot {

namespace {

// One mode (training or inference) of one captured graph, compiled.
struct CompiledMode {
  JointGraph layout;  // its graph moved into the partition (or the forward compiler)
  Partition partition;
  CompiledGraph forward;
  CompiledGraph backward;
};

class AotFunction {
 public:
  AotFunction(const graph::Graph& captured, AotOptions options, BackendContext context)
      : captured_(captured.clone()), options_(std::move(options)), context_(std::move(context)) {
    if (!options_.backward_compiler) options_.backward_compiler = options_.forward_compiler;
    if (!options_.inference_compiler) options_.inference_compiler = options_.forward_compiler;
    for (const graph::Node* in : captured_.inputs()) {
      any_requires_grad_ = any_requires_grad_ || in->outputs[0].requires_grad;
    }
  }

  std::vector<Tensor> operator()(std::span<const Tensor> inputs) {
    const bool training = any_requires_grad_ && autograd::GradMode::is_enabled();
    const CompiledMode* mode = compiled(training, inputs);
    if (mode == nullptr) return fallback(inputs);
    return run(*mode, inputs);
  }

 private:
  // The captured graph run by the interpreter (a symbolic one binding its sizes per call).
  std::vector<Tensor> fallback(std::span<const Tensor> inputs) {
    if (!graph::has_symbolic_sizes(captured_)) return graph::interpret(captured_, inputs);
    std::call_once(symbolic_fallback_once_,
                   [&] { symbolic_fallback_ = capture::symbolic_interpreter(captured_); });
    return symbolic_fallback_(inputs);
  }

  // The compiled mode, made on first use; null when the graph runs with the interpreter.
  const CompiledMode* compiled(bool training, std::span<const Tensor> inputs) {
    std::lock_guard lock(mutex_);
    std::optional<CompiledMode>& slot = training ? training_ : inference_;
    if (slot || fallback_) return slot ? &*slot : nullptr;
    // Tracing ahead of time may be impossible (the interpreter then runs the graph); a failing
    // graph compiler is the backend's error and propagates.
    CompiledMode m;
    try {
      m.layout = trace_joint_with_examples(captured_, training, options_.decompose, inputs);
      root_storage_reads(m.layout.graph);
      check_input_aliasing(m.layout, inputs);
      check_symbolic_outputs(m.layout);
      if (training) {
        if (options_.joint_graph_pass) options_.joint_graph_pass(m.layout.graph, context_);
        m.partition = partition(m.layout, options_.partitioner);
      }
    } catch (const Error& e) {
      fallback_ = true;
      logs::log(logs::Channel::perf_hints,
                fmt::format("aot: {} runs with the interpreter and eager autograd: {}",
                            context_.graph_name, e.what()));
      return nullptr;
    }
    slot = compile_halves(std::move(m), training, inputs);
    return &*slot;
  }

  // run() makes an output that views an input from its traced geometry, which must then be
  // concrete (a symbolic one would need the call's symbol values).
  static void check_symbolic_outputs(const JointGraph& layout) {
    for (const OutputSource& s : layout.outputs) {
      if (s.kind != OutputSource::Kind::InputView) continue;
      const graph::ValueMeta& m = s.meta;
      const bool symbolic = m.storage_offset.is_symbolic() ||
                            std::any_of(m.sizes.begin(), m.sizes.end(),
                                        [](const SymInt& v) { return v.is_symbolic(); }) ||
                            std::any_of(m.strides.begin(), m.strides.end(),
                                        [](const SymInt& v) { return v.is_symbolic(); });
      KILN_CHECK(!symbolic, "aot: an output views input {} with symbolic geometry {}", s.index,
                 m.str());
    }
  }

  static void check_input_aliasing(const JointGraph& layout, std::span<const Tensor> inputs) {
    // Inputs that share memory are separate graph inputs: a write into one would not be seen
    // through the other.
    if (!layout.mutated_inputs.empty()) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        for (size_t j = i + 1; j < inputs.size(); ++j) {
          KILN_CHECK(inputs[i].storage().get() != inputs[j].storage().get(),
                     "aot: inputs {} and {} share memory and the graph writes into its inputs", i,
                     j);
        }
      }
    }
  }

  // Runs the graph compilers on the traced (and, training, partitioned) graphs.
  CompiledMode compile_halves(CompiledMode m, bool training, std::span<const Tensor> inputs) {
    const std::vector<Tensor> constants = m.layout.constants;
    std::vector<Tensor> forward_examples(inputs.begin(), inputs.end());
    forward_examples.insert(forward_examples.end(), constants.begin(), constants.end());
    if (!training) {
      m.partition.forward = std::move(m.layout.graph);
      log_graph("forward (inference)", m.partition.forward);
      m.forward = run_backend("aot inference", options_.inference_compiler, m.partition.forward,
                              forward_examples, named("inference"));
      return m;
    }
    m.layout.graph = graph::Graph();
    log_graph("forward", m.partition.forward);
    log_graph("backward", m.partition.backward);
    m.forward = run_backend("aot forward", options_.forward_compiler, m.partition.forward,
                            forward_examples, named("forward"));
    // The backward's example inputs are only metadata to a backend: meta tensors do.
    std::vector<Tensor> backward_examples;
    for (const graph::Node* in : m.partition.backward.inputs()) {
      const graph::ValueMeta& meta = in->outputs[0];
      backward_examples.push_back(Tensor(std::make_shared<TensorImpl>(
          make_storage(0, kMeta), meta.dtype, meta.sizes, meta.strides, meta.storage_offset)));
    }
    m.backward = run_backend("aot backward", options_.backward_compiler, m.partition.backward,
                             backward_examples, named("backward"));
    return m;
  }

  BackendContext named(const char* half) const {
    BackendContext c = context_;
    c.graph_name = fmt::format("{} ({})", context_.graph_name, half);
    return c;
  }

  void log_graph(const char* half, const graph::Graph& g) const {
    if (auto dir =
            debug::DebugDir::for_compilation(fmt::format("{}_aot_{}", context_.graph_name, half))) {
      dir->write("graph.txt", g.str());
    }
    if (!logs::enabled(logs::Channel::aot_graphs)) return;
    logs::log(logs::Channel::aot_graphs,
              fmt::format("{} of {}:\n{}", half, context_.graph_name, g.str()));
  }

  std::vector<Tensor> run(const CompiledMode& m, std::span<const Tensor> inputs) {
    const JointGraph& layout = m.layout;
    // Joint-graph inputs at run time: the primals, then constants where the tracer met them.
    std::vector<Tensor> forward_inputs(inputs.begin(), inputs.end());
    forward_inputs.insert(forward_inputs.end(), layout.constants.begin(), layout.constants.end());
    std::vector<Tensor> results;
    {
      autograd::NoGradGuard no_grad;
      results = m.forward(forward_inputs);
      // A computed output the compiled graph returns as (a view of) one of its inputs
      // (functionalization reduces `c = x.clone(); c.copy_(x)` to x) is a fresh tensor in eager
      // unless it views a differentiable input there: the caller may write into it, and the
      // backward node must not become the input's grad_fn (a leaf would stop being one, and own
      // the node through its gradient accumulator: a cycle).
      for (size_t j = 0; j < layout.num_computed; ++j) {
        if (layout.computed_views_input.at(j)) continue;
        for (const Tensor& in : forward_inputs) {
          if (in.defined() && results[j].defined() &&
              results[j].storage().get() == in.storage().get()) {
            results[j] = results[j].clone();
            break;
          }
        }
      }
    }
    // Before the writes below: the backward keeps the values the inputs had during the forward.
    if (m.backward) attach_backward(m, inputs, forward_inputs, results);
    {
      autograd::NoGradGuard no_grad;
      // The graph's writes into its inputs (running statistics, optimizer state).
      for (size_t j = 0; j < layout.mutated_inputs.size(); ++j) {
        Tensor target = inputs[layout.mutated_inputs[j]];
        target.copy_(results[layout.num_computed + j]);
      }
    }

    std::vector<Tensor> outputs;
    outputs.reserve(layout.outputs.size());
    for (const OutputSource& s : layout.outputs) {
      switch (s.kind) {
        case OutputSource::Kind::Computed:
          outputs.push_back(results[s.index]);
          break;
        case OutputSource::Kind::Input:
          outputs.push_back(inputs[s.index]);
          break;
        case OutputSource::Kind::InputView: {
          DimVector sizes, strides;
          for (const SymInt& v : s.meta.sizes) sizes.push_back(v.raw());
          for (const SymInt& v : s.meta.strides) strides.push_back(v.raw());
          outputs.push_back(
              inputs[s.index].as_strided(sizes, strides, s.meta.storage_offset.raw()));
          break;
        }
      }
    }
    return outputs;
  }

  void attach_backward(const CompiledMode& m, std::span<const Tensor> inputs,
                       const std::vector<Tensor>& forward_inputs,
                       const std::vector<Tensor>& results) {
    const JointGraph& layout = m.layout;
    if (layout.tangent_of.empty() || layout.grad_inputs.empty()) return;
    // Saved values: a joint input by its position among all joint inputs (tangents included),
    // or a forward output.
    std::vector<Tensor> joint_inputs;
    std::vector<bool> mutated;  // per joint input: a primal the graph writes into
    size_t forward_input = 0;
    for (JointInput kind : layout.input_kinds) {
      const bool tangent = kind == JointInput::Tangent;
      mutated.push_back(!tangent &&
                        std::find(layout.mutated_inputs.begin(), layout.mutated_inputs.end(),
                                  forward_input) != layout.mutated_inputs.end());
      joint_inputs.push_back(tangent ? Tensor() : forward_inputs[forward_input++]);
    }
    std::vector<CompiledFunctionBackward::Saved> saved;
    for (const Partition::Saved& s : m.partition.saved) {
      if (s.is_input && mutated.at(s.index)) {
        // The graph's write into this input is copied into it after the forward; the backward
        // reads the value the forward read (what eager's autograd saved), so it keeps a copy.
        autograd::NoGradGuard no_grad;
        saved.push_back({joint_inputs.at(s.index).clone(), false, 0});
      } else if (s.is_input) {
        const Tensor& t = joint_inputs.at(s.index);
        saved.push_back({t, true, t.impl()->version()});
      } else {
        saved.push_back({results.at(s.index), false, 0});
      }
    }
    std::vector<autograd::Edge> edges;
    for (size_t primal : layout.grad_inputs)
      edges.push_back(autograd::gradient_edge(inputs[primal]));
    auto node = std::make_shared<CompiledFunctionBackward>(std::move(edges), m.backward,
                                                           std::move(saved), context_.graph_name);
    for (size_t slot = 0; slot < layout.tangent_of.size(); ++slot) {
      const Tensor& out = results[layout.tangent_of[slot]];
      node->add_input_metadata(out);
      autograd::set_history(out, node, static_cast<uint32_t>(slot));
    }
  }

  graph::Graph captured_;
  AotOptions options_;
  BackendContext context_;
  bool any_requires_grad_ = false;
  std::mutex mutex_;
  std::optional<CompiledMode> training_, inference_;
  bool fallback_ = false;
  std::once_flag symbolic_fallback_once_;
  CompiledGraph symbolic_fallback_;
};

}  // namespace

Backend aot_autograd(AotOptions options) {
  KILN_CHECK(static_cast<bool>(options.forward_compiler),
             "aot_autograd: a forward compiler is required");
  return [options](const graph::Graph& graph, std::span<const Tensor> /*example_inputs*/,
                   const BackendContext& context) -> CompiledGraph {
    auto function = std::make_shared<AotFunction>(graph, options, context);
    return [function](std::span<const Tensor> inputs) { return (*function)(inputs); };
  };
}

}  // namespace kiln::aot
