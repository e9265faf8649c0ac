#include "inductor/layout_optimization.h"

#include "inductor/constant_folding.h"
#include "inductor/conv_widening.h"
#include "inductor/graph_device.h"
#include "inductor/graph_rebuild.h"
#include "inductor/loop_ir.h"
#include "inductor/options.h"
#include "ops/cpu/capability.h"

#include <kiln/capture/logs.h>
#include <kiln/core/error.h>
#include <kiln/inductor/inductor.h>

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace kiln::inductor {

namespace {

// Whether `m` has `strides` (where its size is not 1). Symbolic strides compare as expressions;
// a comparison the expressions cannot settle records a guard, as a trace's layout checks do.
bool has_strides(const graph::ValueMeta& m, SymIntList strides) {
  if (m.strides.size() != strides.size()) return false;
  for (size_t d = 0; d < strides.size(); ++d) {
    if (m.sizes[d] != SymInt(1) && m.strides[d] != strides[d]) return false;
  }
  return true;
}

// A 2-d convolution whose weight is constant (unless `constant` is null) in a library that
// prefers channels-last: oneDNN's float32 kernels on the CPU, cuDNN's 16-bit ones on a GPU (their
// tensor-core kernels read NHWC; for NCHW bfloat16 cuDNN ran its legacy implicit GEMM, 2 ms of
// resnet18's 7 ms forward on an H100). Float32 GPU convolutions keep their layout (without TF32
// cuDNN has no faster NHWC kernels for them).
bool convertible(const graph::Node& n, const std::unordered_set<const graph::Node*>* constant) {
  if (!is_op(&n, "convolution") || n.args.at(6).to_bool()) return false;
  const graph::Value input = use_of(n, 0), weight = use_of(n, 1);
  if (!input.defined() || !weight.defined()) return false;
  if (constant != nullptr && constant->count(weight.node) == 0) return false;
  const graph::ValueMeta& in = input.meta();
  if (in.sizes.size() != 4 || weight.meta().dtype != in.dtype) return false;
  if (in.device.is_cpu()) return in.dtype == DType::Float32;
  return in.device.is_cuda() && is_half_float(in.dtype);
}

// Whether a new layout of a node's inputs could change its values (not only its strides).
bool layout_sensitive(const graph::Node& n) { return n.mutates() || n.op->name() == "as_strided"; }

// `v` (NCHW sizes) copied into channels-last strides: NHWC made row-major, permuted back.
graph::Value to_channels_last(GraphRebuild& rebuild, graph::Value v, graph::SourceLoc loc) {
  const std::vector<int64_t> to_nhwc = {0, 2, 3, 1}, to_nchw = {0, 3, 1, 2};
  const graph::Value nhwc = rebuild.emit("permute", {v, ops::IValue(to_nhwc)}, loc).out();
  const graph::Value dense =
      rebuild.emit("_to_copy", {nhwc, ops::IValue(), ops::IValue(true)}, loc).out();
  return rebuild.emit("permute", {dense, ops::IValue(to_nchw)}, loc).out();
}

// Makes source value `v` stand for a copy in its source layout, when that was row-major and the
// new one differs. False where the source layout was another one (nothing to copy into).
bool restore_layout(GraphRebuild& rebuild, graph::Value v) {
  const graph::Value now = rebuild[v];
  const graph::ValueMeta& source = v.meta();
  if (has_strides(now.meta(), source.strides)) return true;
  if (!has_strides(source,
                   strides_for_memory_format(SymIntList(source.sizes), MemoryFormat::Contiguous))) {
    return false;
  }
  rebuild.map(v, rebuild.emit("_to_copy", {now, ops::IValue(), ops::IValue(true)}).out());
  return true;
}

}  // namespace

size_t convolutions_to_channels_last(graph::Graph& graph, bool constant_weights_only,
                                     std::string* why_not) {
  const auto refuse = [why_not](std::string reason) -> size_t {
    if (why_not != nullptr) *why_not = std::move(reason);
    return 0;
  };
  const std::unordered_set<const graph::Node*> constant_set =
      constant_weights_only ? constant_nodes(graph) : std::unordered_set<const graph::Node*>{};
  const auto* constant = constant_weights_only ? &constant_set : nullptr;
  size_t convolutions = 0;
  for (const auto& n : graph.nodes()) {
    if (n->kind != graph::NodeKind::Op) continue;
    if (convertible(*n, constant)) ++convolutions;
  }
  if (convolutions == 0) return 0;

  GraphRebuild rebuild(graph);
  try {
    for (const auto& n : graph.nodes()) {
      if (n->kind == graph::NodeKind::Input) {
        rebuild.copy(*n);
        continue;
      }
      if (convertible(*n, constant)) {
        // The input's readers all see the channels-last copy (the same values).
        const graph::Value source_input = use_of(*n, 0);
        const graph::Value input = rebuild[source_input];
        if (!is_channels_last(input.meta())) {
          rebuild.map(source_input, to_channels_last(rebuild, input, n->loc));
        }
        // cuDNN reads the filter in the activations' layout: a row-major one would be copied by
        // every call (14 copies per resnet18 inference); here the copy is a node, which freezing
        // folds and a training step fuses with the weight's autocast cast. oneDNN on the CPU packs
        // weights its own way.
        const graph::Value source_weight = use_of(*n, 1);
        const graph::Value weight = rebuild[source_weight];
        if (n->outputs[0].device.is_cuda() && !is_channels_last(weight.meta())) {
          rebuild.map(source_weight, to_channels_last(rebuild, weight, n->loc));
        }
      }
      // A node that writes into its inputs or reads their storage directly sees what the
      // source graph gave it, or the graph stays as it was.
      if (layout_sensitive(*n)) {
        for (const graph::TensorUse& u : n->uses) {
          if (!has_strides(rebuild[u.value].meta(), u.value.meta().strides)) {
            return refuse(fmt::format("{} would see another layout", n->op->name()));
          }
        }
      }
      try {
        rebuild.rederive(*n);
      } catch (const Error&) {
        // A view the new layout does not allow (flattening a feature map): its input goes back
        // to its row-major layout first.
        for (const graph::TensorUse& u : n->uses) {
          if (!restore_layout(rebuild, u.value)) {
            return refuse(fmt::format("{} reads a value of another layout", n->op->name()));
          }
        }
        rebuild.rederive(*n);
      }
    }
    // Outputs leave in the layouts the graph gave them before.
    for (const graph::Value& out : graph.outputs()) {
      if (!restore_layout(rebuild, out)) return refuse("an output of another layout");
    }
  } catch (const Error& e) {
    return refuse(e.what());  // a layout not derived: keep the graph as it was
  }
  graph = std::move(rebuild).finish();
  return convolutions;
}

bool cpu_channels_last(const BackendContext& context) {
  if (option_is(context, "layout_optimization", "true")) return true;
  if (option_is(context, "layout_optimization", "false")) return false;
  return cpu::detected_capability() == cpu::Capability::AVX512;
}

void optimize_layout(graph::Graph& graph, const BackendContext& context, bool training) {
  if (option_is(context, "layout_optimization", "false")) return;
  const bool has_convolutions =
      std::any_of(graph.nodes().begin(), graph.nodes().end(),
                  [](const auto& n) { return is_op(n.get(), "convolution"); });
  if (!has_convolutions) return;
  const std::optional<Device> device = graph_device(graph);
  if (device && device->is_cpu() && !cpu_channels_last(context)) {
    logs::log(logs::Channel::perf_hints,
              fmt::format("inductor: {}: convolutions keep their layout: channels-last is the "
                          "default on CPUs with AVX-512 only (options{{\"layout_optimization\": "
                          "\"true\"}} forces it)",
                          context.graph_name));
    return;
  }
  if (device && device->is_cuda() && graph::has_symbolic_sizes(graph)) {
    // Symbolic channels-last is exercised on the CPU only so far (the CUDA tests run on the lent
    // machine): GPU graphs with symbolic sizes keep their layout for now.
    logs::log(logs::Channel::perf_hints,
              fmt::format("inductor: {}: convolutions keep their layout: a GPU graph with "
                          "symbolic sizes",
                          context.graph_name));
    return;
  }
  std::string why_not;
  if (const size_t n =
          convolutions_to_channels_last(graph, /*constant_weights_only=*/false, &why_not)) {
    logs::log(logs::Channel::fusion,
              fmt::format("inductor: {}: {} convolutions{} run channels-last", context.graph_name,
                          n, training ? " and their backward" : ""));
  } else if (!why_not.empty()) {
    logs::log(logs::Channel::perf_hints,
              fmt::format("inductor: {}: convolutions keep their layout: {}", context.graph_name,
                          why_not));
  }
}

void optimize_joint_graph(graph::Graph& joint, const BackendContext& context) {
  const std::optional<Device> device = graph_device(joint);
  if (!device) return;
  // oneDNN computes 16-bit convolutions in float32 (CPU ones only: cuDNN runs them as they are).
  if (const size_t n = widen_half_float_convolutions(joint)) {
    logs::log(logs::Channel::fusion,
              fmt::format("inductor: {}: {} 16-bit convolutions run in float32 between casts",
                          context.graph_name, n));
  }
  optimize_layout(joint, context, /*training=*/true);
}

}  // namespace kiln::inductor
