#include "inductor/graph_rebuild.h"

#include "graph/meta_twins.h"

#include <kiln/core/error.h>
#include <kiln/ops/schema.h>

#include <optional>

namespace kiln::inductor {

graph::Value GraphRebuild::operator[](graph::Value source) const {
  auto it = mapped_.find(source.node);
  KILN_INTERNAL_ASSERT(it != mapped_.end() && source.output >= 0 &&
                       static_cast<size_t>(source.output) < it->second.size());
  return it->second[static_cast<size_t>(source.output)];
}

void GraphRebuild::map(graph::Value source, graph::Value now) {
  std::vector<graph::Value>& outs = mapped_[source.node];
  outs.resize(source.node->outputs.size());
  outs[static_cast<size_t>(source.output)] = now;
}

graph::Node& GraphRebuild::copy(const graph::Node& source) {
  graph::Node* made = nullptr;
  if (source.kind == graph::NodeKind::Input) {
    made = &graph_.add_input(source.role, source.label, source.outputs[0]);
    made->number = source.number;
  } else {
    std::vector<graph::TensorUse> uses = source.uses;
    for (graph::TensorUse& u : uses) u.value = (*this)[u.value];
    made = &graph_.add_op(*source.op, source.args, std::move(uses), source.outputs, source.loc);
  }
  for (size_t i = 0; i < source.outputs.size(); ++i) {
    map({const_cast<graph::Node*>(&source), static_cast<int>(i)}, made->out(static_cast<int>(i)));
  }
  return *made;
}

graph::Node& GraphRebuild::add_input(graph::InputRole role, std::string label,
                                     graph::ValueMeta meta) {
  return graph_.add_input(role, std::move(label), std::move(meta));
}

graph::Node& GraphRebuild::emit(std::string_view op_name, std::vector<EmitArg> args,
                                graph::SourceLoc loc) {
  const ops::OpDef& op = ops::OpRegistry::instance().get(op_name);
  TwinStack twins;
  for (EmitArg& a : args) {
    if (const auto* v = std::get_if<graph::Value>(&a)) {
      twins.stack.push_back(ops::IValue(twins.twin_of(*v)));
    } else {
      twins.stack.push_back(std::move(std::get<ops::IValue>(a)));
    }
  }
  ops::normalize_args(op.schema, twins.stack);
  return add_with_meta(op, std::move(twins), loc);
}

graph::Node& GraphRebuild::rederive(const graph::Node& source) {
  KILN_INTERNAL_ASSERT(source.kind == graph::NodeKind::Op);
  TwinStack twins;
  twins.stack = source.bind([&](graph::Value v) { return twins.twin_of((*this)[v]); });
  graph::Node& made = add_with_meta(*source.op, std::move(twins), source.loc);
  for (size_t i = 0; i < source.outputs.size(); ++i) {
    map({const_cast<graph::Node*>(&source), static_cast<int>(i)}, made.out(static_cast<int>(i)));
  }
  return made;
}

Tensor GraphRebuild::TwinStack::twin_of(graph::Value v) {
  Tensor twin = graph::tensor_of_meta(v.meta(), kMeta);
  // A number the op layer wrapped into a tensor promotes as a number (f32 / 2 stays f32): a
  // plain 0-dim float64 twin made mean's division float64 when its node was derived again.
  if (v.node != nullptr && v.node->kind == graph::NodeKind::Input && v.node->number) {
    twin.impl()->set_wrapped_number(true);
  }
  value_of_twin.emplace(twin.impl(), v);
  return twin;
}

Device GraphRebuild::TwinStack::output_device() const {
  std::optional<Device> found;
  const auto see = [&](const Tensor& t) {
    if (!t.defined()) return;
    const Device d = value_of_twin.at(t.impl()).meta().device;
    if (!found || (found->is_cpu() && !d.is_cpu())) found = d;
  };
  for (const ops::IValue& v : stack) {
    if (std::holds_alternative<Device>(v.variant())) return v.to_device();
  }
  for (const ops::IValue& v : stack) {
    if (v.is_tensor()) see(v.to_tensor());
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) see(t);
    }
  }
  return found.value_or(Device::cpu());
}

graph::Node& GraphRebuild::add_with_meta(const ops::OpDef& op, TwinStack twins,
                                         graph::SourceLoc loc) {
  const Device device = twins.output_device();
  ops::Stack meta_args = twins.stack;
  // Factories (zeros, full) allocate nothing on the meta device.
  for (size_t i = 0; i < meta_args.size() && i < op.schema.arguments.size(); ++i) {
    if (op.schema.arguments[i].type == ops::ArgType::Device) meta_args[i] = ops::IValue(kMeta);
  }
  const std::vector<Tensor> meta_outputs = ops::call_kernel(op, meta_args);
  std::vector<graph::ValueMeta> metas;
  for (const Tensor& m : meta_outputs) {
    // An output the op leaves undefined (convolution_backward's unwanted gradients): a
    // placeholder, as the tracer records it.
    graph::ValueMeta vm = m.defined() ? graph::ValueMeta::of(m) : graph::ValueMeta{};
    vm.device = device;
    vm.requires_grad = false;
    metas.push_back(std::move(vm));
  }
  auto [node_args, uses] = graph::node_arguments(
      twins.stack, [&](const Tensor& t) { return twins.value_of_twin.at(t.impl()); });
  return graph_.add_op(op, std::move(node_args), std::move(uses), std::move(metas), loc);
}

graph::Graph GraphRebuild::finish() && {
  std::vector<graph::Value> outputs;
  for (const graph::Value& v : source_.outputs()) outputs.push_back((*this)[v]);
  graph_.set_outputs(std::move(outputs));
  return std::move(graph_);
}

// Layout predicates on a value's sizes and strides, symbolic ones as expressions (core's
// predicates record a guard where the expressions cannot settle a comparison).
bool is_channels_last(const graph::ValueMeta& meta) {
  return meta.storage_offset == SymInt(0) &&
         is_contiguous_in(SymIntList(meta.sizes), SymIntList(meta.strides),
                          MemoryFormat::ChannelsLast);
}

MemoryFormat suggest_memory_format(const graph::ValueMeta& meta) {
  if (meta.storage_offset != SymInt(0)) return MemoryFormat::Contiguous;
  return kiln::suggest_memory_format(SymIntList(meta.sizes), SymIntList(meta.strides));
}

graph::Value use_of(const graph::Node& n, int arg) {
  for (const graph::TensorUse& u : n.uses) {
    if (u.arg == arg && u.element < 0) return u.value;
  }
  return {};
}

bool is_per_channel(const graph::ValueMeta& meta, const SymDimVector& out_sizes) {
  const size_t rank = meta.sizes.size();
  if (rank > out_sizes.size() || out_sizes.size() < 2) return false;
  const size_t lead = out_sizes.size() - rank;
  for (size_t d = 0; d < rank; ++d) {
    const SymInt& s = meta.sizes[d];
    if (s == SymInt(1)) continue;
    if (lead + d != 1 || !(s == out_sizes[1])) return false;
  }
  return true;
}

bool is_op(const graph::Node* n, std::string_view full_name) {
  return n != nullptr && n->kind == graph::NodeKind::Op && n->op->full_name() == full_name;
}

}  // namespace kiln::inductor
