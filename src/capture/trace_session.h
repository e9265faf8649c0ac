#pragma once
// One traced call of a compiled function. Installed as the thread's dispatch mode, it records
// each op into a graph instead of running it: outputs are proxies (tensors with sizes, strides and
// dtype but no memory yet) computed from the op's meta function on meta-device twins of the
// arguments. Real tensors the function reads (module parameters, captured tensors) become graph
// inputs. When a concrete value is needed (a graph break) or the function returns, the session
// flushes: the graph so far is compiled and run, and every proxy still referenced gets the memory
// of its computed value, in place, so user code holding it sees a normal tensor.
#include "capture/dynamic_dim.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/backends/backend.h>
#include <kiln/capture/pytree.h>
#include <kiln/graph/graph.h>
#include <kiln/nn/module.h>
#include <kiln/ops/registry.h>
#include <kiln/symbolic/shape_env.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::capture {

// Sets the thread's grad mode for a scope.
class GradModeScope {
 public:
  explicit GradModeScope(bool on) : previous_(autograd::GradMode::is_enabled()) {
    autograd::GradMode::set_enabled(on);
  }
  ~GradModeScope() { autograd::GradMode::set_enabled(previous_); }
  GradModeScope(const GradModeScope&) = delete;
  GradModeScope& operator=(const GradModeScope&) = delete;

 private:
  bool previous_;
};

// Where a graph input's tensor comes from when the graph runs.
struct InputBinding {
  enum class Kind { UserArg, Held };
  Kind kind = Kind::Held;
  size_t leaf = 0;  // UserArg: index into the call's argument leaves
  Tensor held;      // Held: a module tensor, a captured tensor, or a value of an earlier graph
};

struct GraphBreak {
  std::string reason;
  graph::SourceLoc loc;
  std::string str() const;  // "<reason> (at file.cpp:12)"
};

// A result leaf of the function: graph output `output`, or a constant.
struct ResultSlot {
  std::optional<size_t> output;
  ops::IValue constant;
};

// A graph the session finished and ran.
struct TracedGraph {
  graph::Graph graph;  // after the cleanup passes
  std::vector<InputBinding> bindings;
  CompiledGraph compiled;
  bool grad_enabled = true;  // the grad mode its ops ran under (autograd records accordingly)
};

class TraceSession : public ops::DispatchMode {
 public:
  struct Config {
    std::string function_name;
    bool fullgraph = false;
    // The call's grad mode.
    bool grad_enabled = true;
    // Compiles one finished graph (backend, caches, logs); `inputs` are the real tensors.
    std::function<CompiledGraph(const graph::Graph& graph, std::span<const Tensor> inputs,
                                size_t graph_index)>
        compile;
    // Module tensors by identity: graph inputs named by their dotted names.
    std::shared_ptr<nn::Module> module;
    // Dynamic shapes: with an environment, each listed dimension of a tensor argument is traced
    // as a symbol (ShapeEnv::create_symbol, in this order, source "arg<i>.size(<d>)"), and its
    // proxy has contiguous strides over the symbolic sizes. Without one, dynamic_dims must be
    // empty and tracing is static.
    std::shared_ptr<symbolic::ShapeEnv> shape_env;
    std::vector<DynamicDim> dynamic_dims;
  };

  explicit TraceSession(Config config);
  ~TraceSession() override;
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  // The session tracing on this thread, or null.
  static TraceSession* current();

  // Runs `run` on proxies of the argument leaves with this session installed, flushes at the end
  // and returns the result leaves (real tensors). The session must be fresh.
  Leaves trace(const Leaves& args, const std::function<Leaves(const Leaves&)>& run);

  std::vector<Tensor> dispatch(const ops::OpDef& op, ops::Stack& args) override;
  // Autograd is not run on proxies: the graph records ops, and running it records autograd.
  bool replaces_autograd() const override { return true; }

  // A graph break: compile and run what was recorded, then continue in a new graph.
  void graph_break(const std::string& reason, graph::SourceLoc loc);
  // Called when user code reads a proxy's data.
  void materialize(TensorImpl& proxy, const char* what);

  const std::vector<GraphBreak>& breaks() const { return breaks_; }
  // The graphs run so far, in order (for explain and logs).
  const std::vector<TracedGraph>& graphs() const { return graphs_; }
  // For a call that produced exactly one graph: its result slots (graph outputs or constants).
  const std::vector<ResultSlot>& result_slots() const { return result_slots_; }

 private:
  struct Tracked {
    graph::Value value;
    std::weak_ptr<TensorImpl> impl;
  };

  // The graph value of a tensor argument: a proxy's, or a (new) input for a real tensor.
  graph::Value value_of(const Tensor& t);
  // The traced value an untracked proxy is a detached copy of (same storage and geometry).
  std::optional<graph::Value> detached_from(const Tensor& t) const;
  std::optional<graph::Value> known_value(const Tensor& t) const;
  // A proxy with `like`'s geometry and dtype on `device`, in `storage` (a new memory-less
  // storage of like's size when null).
  Tensor make_proxy(const Tensor& like, Device device, std::shared_ptr<StorageImpl> storage,
                    bool requires_grad);
  // Each tensor argument's traced sizes: symbols for its dynamic dimensions (empty when static).
  std::vector<SymDimVector> symbolic_arg_sizes(const Leaves& args) const;
  // A proxy of a user argument traced with symbolic `sizes` and contiguous strides.
  static Tensor make_symbolic_proxy(const Tensor& real, const SymDimVector& sizes);
  std::vector<Tensor> run_concretely(const ops::OpDef& op, ops::Stack& args,
                                     const std::string& reason);
  // Ends the current graph: outputs = `extra` values then every live proxy's value; compiles, runs
  // and materializes; returns the tensors of `extra`. `final`: the function returned (the graph is
  // compiled even if it has no ops, so that the call has one graph to replay).
  std::vector<Tensor> flush(const std::vector<graph::Value>& extra, bool final);
  void reset_graph();
  void abandon_proxies();
  graph::SourceLoc here() const;

  Config config_;
  TraceSession* previous_ = nullptr;
  const Leaves* args_ = nullptr;
  graph::Graph graph_;
  std::vector<InputBinding> bindings_;
  std::unordered_map<const TensorImpl*, Tracked> values_;
  std::vector<Tracked> proxies_;  // every proxy made in the current graph
  // Real storages read through views: their views' proxies share one memory-less storage.
  std::unordered_map<const StorageImpl*, std::shared_ptr<StorageImpl>> proxy_storage_of_;
  std::unordered_map<const TensorImpl*, std::string> module_tensor_names_;
  std::unordered_map<const TensorImpl*, graph::InputRole> module_tensor_roles_;
  std::vector<GraphBreak> breaks_;
  std::vector<TracedGraph> graphs_;
  std::vector<ResultSlot> result_slots_;
  // The grad mode of the current graph's differentiable ops; a change inside the function (a
  // no_grad block) starts a new graph, since one graph runs under one mode.
  std::optional<bool> graph_grad_;
  bool finished_ = false;
};

}  // namespace kiln::capture
