#include "inductor/weight_prepacking.h"

#include "inductor/constant_folding.h"
#include "inductor/gemm_alternative.h"
#include "inductor/graph_rebuild.h"

#include "ops/linalg/onednn_matmul.h"

#include <kiln/core/error.h>

#include <unordered_set>

namespace kiln::inductor {

namespace {

bool row_major(const graph::ValueMeta& m) {
  return m.strides == contiguous_strides(SymIntList(m.sizes)) && m.storage_offset == SymInt(0);
}

// The activations' layout the packed weight is for: the convolution's own decision
// (conv::output_format) for a row-major weight, channels-last where its input suggests it.
bool reads_channels_last(const graph::ValueMeta& in) {
  return suggest_memory_format(in) == MemoryFormat::ChannelsLast;
}

bool packable(const graph::Node& n, const std::unordered_set<const graph::Node*>& constant) {
  if (!is_op(&n, "convolution") || n.args.at(6).to_bool()) return false;
  const graph::Value input = use_of(n, 0), weight = use_of(n, 1);
  if (!input.defined() || !weight.defined() || constant.count(weight.node) == 0) return false;
  const graph::ValueMeta& in = input.meta();
  const graph::ValueMeta& w = weight.meta();
  if (in.dtype != DType::Float32 || w.dtype != DType::Float32 || !in.device.is_cpu()) return false;
  if (!row_major(w)) return false;
  const graph::Value bias = use_of(n, 2);
  if (bias.defined() && bias.meta().dtype != DType::Float32) return false;
  // Channels-last activations: oneDNN reads them as they are and wants every weight blocked.
  if (reads_channels_last(in)) return true;
  if (!row_major(in) || !row_major(n.outputs[0])) return false;
  // Row-major: a 1x1 kernel is read as it is: nothing to pack.
  int64_t kernel = 1;
  for (size_t d = 2; d < w.sizes.size(); ++d) kernel *= w.sizes[d].raw();
  return kernel > 1;
}

graph::Value emit_packed(GraphRebuild& rebuild, const graph::Node& conv) {
  const graph::Value input = rebuild[use_of(conv, 0)];
  const graph::Value weight = rebuild[use_of(conv, 1)];
  const graph::Value source_bias = use_of(conv, 2);
  // Packed for the traced geometry: symbolic sizes pack for their hints (the packed copy is a
  // hint itself: a geometry whose primitive wants another layout reads the weight instead).
  std::vector<SymInt> input_size;
  for (const SymInt& s : input.meta().sizes) input_size.emplace_back(*s.maybe_int());
  const ops::IValue& stride = conv.args.at(3);
  const ops::IValue& padding = conv.args.at(4);
  const ops::IValue& dilation = conv.args.at(5);
  const ops::IValue& groups = conv.args.at(8);
  const graph::Value packed =
      rebuild
          .emit("_pack_convolution_weight",
                {weight, ops::IValue(input_size), ops::IValue(source_bias.defined()), stride,
                 padding, dilation, groups, ops::IValue(reads_channels_last(input.meta()))},
                conv.loc)
          .out();
  const EmitArg bias =
      source_bias.defined() ? EmitArg(rebuild[source_bias]) : EmitArg(ops::IValue());
  return rebuild
      .emit("_convolution_packed", {input, weight, packed, bias, stride, padding, dilation, groups},
            conv.loc)
      .out();
}

bool packable_product(const graph::Node& n,
                      const std::unordered_set<const graph::Node*>& constant) {
  if (!is_op(&n, "mm")) return false;
  const graph::Value self = use_of(n, 0), mat2 = use_of(n, 1);
  if (!self.defined() || !mat2.defined()) return false;
  if (constant.count(mat2.node) == 0 || constant.count(self.node) != 0) return false;
  const graph::ValueMeta& a = self.meta();
  const graph::ValueMeta& b = mat2.meta();
  if (a.dtype != DType::Float32 || b.dtype != DType::Float32 || !a.device.is_cpu()) return false;
  // The packed kernel reads a row-major self; others would fall back to mm's kernel and a copy.
  if (!row_major(a) || !row_major(n.outputs[0])) return false;
  const std::optional<int64_t> m = a.sizes[0].maybe_int(), k = a.sizes[1].maybe_int(),
                               cols = b.sizes[1].maybe_int();
  if (!m || !k || !cols) return false;
  // Small products are generated kernels' (gemm_alternative.h), not the library's.
  return *m * *k * *cols > kSmallGemmWork;
}

// packable_product, where oneDNN reads the weight in a blocked layout (or `plain_too`).
auto packable_product_for(bool plain_too) {
  return [plain_too](const graph::Node& n, const std::unordered_set<const graph::Node*>& constant) {
    if (!packable_product(n, constant)) return false;
    if (plain_too) return true;
    const graph::ValueMeta& a = use_of(n, 0).meta();
    return ops::linalg::onednn_blocks_matmul_weight(*a.sizes[0].maybe_int(),
                                                    *a.sizes[1].maybe_int(),
                                                    *use_of(n, 1).meta().sizes[1].maybe_int());
  };
}

graph::Value emit_packed_product(GraphRebuild& rebuild, const graph::Node& mm) {
  const graph::Value self = rebuild[use_of(mm, 0)];
  const graph::Value mat2 = rebuild[use_of(mm, 1)];
  // Packed for the traced rows: a dynamic row count packs for its hint.
  const int64_t rows = *self.meta().sizes[0].maybe_int();
  const graph::Value packed =
      rebuild.emit("_pack_mm_weight", {mat2, ops::IValue(SymInt(rows))}, mm.loc).out();
  return rebuild.emit("_mm_packed", {self, mat2, packed, ops::IValue()}, mm.loc).out();
}

// Rewrites the nodes `pick` accepts with `emit`; returns how many.
template <typename Pick, typename Emit>
size_t rewrite_nodes(graph::Graph& graph, Pick pick, Emit emit) {
  const std::unordered_set<const graph::Node*> constant = constant_nodes(graph);
  std::unordered_set<const graph::Node*> picked;
  for (const auto& n : graph.nodes()) {
    if (pick(*n, constant)) picked.insert(n.get());
  }
  if (picked.empty()) return 0;
  GraphRebuild rebuild(graph);
  for (const auto& n : graph.nodes()) {
    if (picked.count(n.get()) == 0) {
      rebuild.copy(*n);
      continue;
    }
    const graph::Value replaced = emit(rebuild, *n);
    KILN_INTERNAL_ASSERT(replaced.meta().sizes == n->outputs[0].sizes &&
                         replaced.meta().strides == n->outputs[0].strides);
    rebuild.map(n->out(), replaced);
  }
  graph = std::move(rebuild).finish();
  return picked.size();
}

}  // namespace

size_t prepack_matmul_weights(graph::Graph& graph, bool plain_too) {
  return rewrite_nodes(graph, packable_product_for(plain_too), emit_packed_product);
}

size_t prepack_convolution_weights(graph::Graph& graph) {
  return rewrite_nodes(graph, packable, emit_packed);
}

}  // namespace kiln::inductor
