#pragma once
// aot's tracer (make_fx's role): records the ops called on its proxy tensors into a new graph,
// functionalizing as it goes, so that the graph it makes is pure:
//   - an in-place or out= op becomes its functional op, and the written tensor takes the result
//     as its new value;
//   - copy_ becomes a cast and a broadcast of the source;
//   - a write into a tensor that shares its storage with other live tensors (a view, or the base
//     of views) becomes a write of the whole storage (index_put into a flat value), and the other
//     tensors are re-derived from it (as_strided) when next read.
// Other ops that write an argument (fill_, uniform_, native_batch_norm's running statistics) are
// traced through their decompositions, which write with copy_. Unlike capture's session, the
// tracer lets autograd run above it: calling the backward engine on its proxies records the
// backward ops, which is how the joint graph is made.
#include <kiln/graph/graph.h>
#include <kiln/ops/registry.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::aot {

class GraphTracer : public ops::DispatchMode {
 public:
  struct Options {
    // Trace every op with a decomposition as its prims.
    bool decompose = false;
  };
  explicit GraphTracer(Options options) : options_(options) {}

  // A new input node and the proxy that stands for it.
  Tensor add_input(graph::InputRole role, std::string label, const graph::ValueMeta& meta);

  std::vector<Tensor> dispatch(const ops::OpDef& op, ops::Stack& args) override;
  bool replaces_autograd() const override { return false; }

  // The graph value a tensor holds now: a proxy's (re-derived if its storage was written since),
  // or, for a real tensor, a new Constant input holding it.
  graph::Value value_of(const Tensor& t);
  // Whether an op wrote into t's storage during tracing.
  bool written(const Tensor& t) const;
  // Real tensors the graph read, one per Constant input, in input order.
  const std::vector<Tensor>& constants() const { return constants_; }
  graph::Graph& graph() { return graph_; }

 private:
  struct StorageState {
    std::shared_ptr<StorageImpl> storage;  // keeps the address unique while tracked
    uint64_t version = 0;
    // Once a write went through an alias, the storage's content is the value `flat`, a 1-D
    // tensor of the storage's elements, and the tensors on it are its as_strided views.
    bool flat_mode = false;
    Tensor flat;
    std::vector<std::weak_ptr<TensorImpl>> proxies;
    // The value and geometry of the tensor tracked last on it, current while version is, for
    // aliases made without an op after every traced tensor on the storage died.
    struct Anchor {
      graph::Value value;
      SymDimVector sizes, strides;
      SymInt offset = 0;
      uint64_t version = 0;
    };
    std::optional<Anchor> anchor;
  };
  struct ProxyState {
    graph::Value value;
    uint64_t version = 0;
    std::weak_ptr<TensorImpl> impl;
  };

  std::vector<Tensor> trace_functional(const ops::OpDef& op, ops::Stack& args);
  std::vector<Tensor> record(const ops::OpDef& op, ops::Stack& args);
  // Makes `value` the new content of `target` (cast to its dtype, broadcast to its sizes).
  void write(const Tensor& target, Tensor value);
  Tensor make_proxy(const Tensor& like, Device device, std::shared_ptr<StorageImpl> storage);
  void track(const Tensor& proxy, graph::Value value);
  // Sets a tracked tensor's current value (and the storage's anchor).
  void set_value(const Tensor& proxy, graph::Value value);
  StorageState& storage_state(const Tensor& t);

  Options options_;
  graph::Graph graph_;
  std::unordered_map<const StorageImpl*, StorageState> storages_;
  std::unordered_map<const TensorImpl*, ProxyState> proxies_;
  // Real tensors read by the graph: their inputs, and the proxy storage standing for theirs.
  std::unordered_map<const TensorImpl*, std::pair<graph::Value, std::weak_ptr<TensorImpl>>> reals_;
  std::unordered_map<const StorageImpl*, std::shared_ptr<StorageImpl>> proxy_storage_of_real_;
  std::vector<Tensor> constants_;
};

}  // namespace kiln::aot
