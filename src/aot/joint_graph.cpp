// trace_joint: the captured graph re-traced functionalized, with its backward when training.
#include "aot/joint_graph.h"

#include "aot/graph_tracer.h"
#include "capture/trace_session.h"

#include <kiln/aot/aot.h>
#include <kiln/autograd/autograd.h>
#include <kiln/core/error.h>

#include <fmt/format.h>

#include <algorithm>

namespace kiln::aot {

namespace {

bool same_static_geometry(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.storage_offset() == b.storage_offset();
}

}  // namespace

JointGraph trace_joint(const graph::Graph& captured, bool training, bool decompose) {
  return trace_joint_with_examples(captured, training, decompose, {});
}

JointGraph trace_joint_with_examples(const graph::Graph& captured, bool training, bool decompose,
                                     std::span<const Tensor> examples) {
  GraphTracer tracer(GraphTracer::Options{decompose});
  JointGraph joint;
  joint.training = training;

  std::vector<Tensor> primals;
  for (const graph::Node* in : captured.inputs()) {
    graph::ValueMeta meta = in->outputs[0];
    const bool differentiable = training && meta.requires_grad && is_floating_point(meta.dtype);
    meta.requires_grad = differentiable;
    Tensor p = tracer.add_input(in->role, in->label, meta);
    if (differentiable) p.set_requires_grad(true);
    const size_t index = primals.size();
    if (index < examples.size() && examples[index].defined() &&
        examples[index].impl()->is_wrapped_number()) {
      p.impl()->set_wrapped_number(true);
    }
    primals.push_back(std::move(p));
    joint.input_kinds.push_back(JointInput::Primal);
  }

  std::vector<Tensor> results;
  {
    ops::DispatchModeGuard mode(&tracer);
    capture::GradModeScope grad(training);
    results = graph::interpret(captured, primals);
  }

  // Outputs that are inputs, or views of inputs, are made from the real inputs after the graph
  // runs (they must alias them, as in eager); the others are computed.
  std::vector<graph::Value> outputs;
  std::vector<Tensor> computed;
  for (const Tensor& r : results) {
    OutputSource source;
    source.meta = graph::ValueMeta::of(r);
    auto same_storage = std::find_if(primals.begin(), primals.end(), [&](const Tensor& p) {
      return p.storage().get() == r.storage().get();
    });
    // Outputs aliasing an input are rebuilt from the real input after the graph runs, unless the
    // input is differentiated: then they are graph outputs (a view the backward graph
    // differentiates), which still alias the input when the graph computes them as views. An
    // output that is the input itself is that input, as in eager: were it a graph output, the
    // compiled backward would become the grad_fn of the user's leaf (which then owns the node
    // through its gradient accumulator: a reference cycle).
    const bool is_an_input = same_storage != primals.end() && r.impl() == same_storage->impl();
    if (same_storage != primals.end() && (!same_storage->requires_grad() || is_an_input)) {
      const size_t index = static_cast<size_t>(same_storage - primals.begin());
      // After the graph's writes are applied, the input holds what the output must show.
      source.kind = is_an_input || same_static_geometry(r, primals[index])
                        ? OutputSource::Kind::Input
                        : OutputSource::Kind::InputView;
      source.index = index;
    } else {
      source.kind = OutputSource::Kind::Computed;
      auto known = std::find_if(computed.begin(), computed.end(),
                                [&](const Tensor& c) { return c.impl() == r.impl(); });
      source.index = static_cast<size_t>(known - computed.begin());
      if (known == computed.end()) {
        computed.push_back(r);
        outputs.push_back(tracer.value_of(r));
        joint.computed_views_input.push_back(same_storage != primals.end());
      }
    }
    joint.outputs.push_back(std::move(source));
  }
  joint.num_computed = outputs.size();

  for (size_t i = 0; i < primals.size(); ++i) {
    if (!tracer.written(primals[i])) continue;
    KILN_CHECK(!primals[i].requires_grad(),
               "aot: input {} ({}) requires grad and is written in place by the graph", i,
               captured.inputs()[i]->label);
    joint.mutated_inputs.push_back(i);
    outputs.push_back(tracer.value_of(primals[i]));
  }

  if (training) {
    std::vector<Tensor> differentiated, tangents;
    for (size_t k = 0; k < computed.size(); ++k) {
      const Tensor& c = computed[k];
      if (!c.requires_grad() || !is_floating_point(c.dtype())) continue;
      graph::ValueMeta meta = graph::ValueMeta::of(c);
      meta.requires_grad = false;
      // Gradients arrive in any layout: tangents are traced contiguous (the runtime lays an
      // incoming gradient out so), never with an output's expanded or strided layout.
      meta.strides = contiguous_strides(SymIntList(meta.sizes));
      meta.storage_offset = 0;
      differentiated.push_back(c);
      tangents.push_back(tracer.add_input(
          graph::InputRole::UserArg, fmt::format("tangent {}", joint.tangent_of.size()), meta));
      joint.tangent_of.push_back(k);
    }
    std::vector<Tensor> wrt;
    std::vector<size_t> wrt_index;
    for (size_t i = 0; i < primals.size(); ++i) {
      if (primals[i].requires_grad()) {
        wrt.push_back(primals[i]);
        wrt_index.push_back(i);
      }
    }
    if (!differentiated.empty() && !wrt.empty()) {
      std::vector<Tensor> grads;
      {
        ops::DispatchModeGuard mode(&tracer);
        grads = autograd::grad(differentiated, wrt, tangents, /*retain_graph=*/false,
                               /*create_graph=*/false, /*allow_unused=*/true);
      }
      for (size_t j = 0; j < grads.size(); ++j) {
        if (!grads[j].defined()) continue;
        joint.grad_inputs.push_back(wrt_index[j]);
        outputs.push_back(tracer.value_of(grads[j]));
      }
    }
  }
  // Inputs the tracer added after the primals: constants and tangents, in creation order.
  const std::vector<graph::Node*> inputs = tracer.graph().inputs();
  size_t constant = 0;
  for (size_t i = primals.size(); i < inputs.size(); ++i) {
    if (inputs[i]->role == graph::InputRole::Constant) {
      joint.input_kinds.push_back(JointInput::Constant);
      joint.constants.push_back(tracer.constants().at(constant++));
    } else {
      joint.input_kinds.push_back(JointInput::Tangent);
    }
  }
  tracer.graph().set_outputs(std::move(outputs));
  joint.graph = std::move(tracer.graph());
  graph::dead_code_elimination()->run(joint.graph);
  return joint;
}

}  // namespace kiln::aot
