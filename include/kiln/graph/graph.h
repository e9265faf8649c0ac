#pragma once
// The graph IR (DESIGN.md §1 "graph", torch.fx's role): what capture records and every later layer
// (aot, decomp, inductor, backends) reads and rewrites.
//
// A Graph is a list of nodes in execution order. Input nodes stand for tensors the graph receives
// (user arguments, module parameters and buffers, tensors captured from outside); op nodes call one
// registry op; the graph's outputs are a list of values. A Value is one output of one node. Op
// nodes keep the op's full argument stack: non-tensor arguments as constants, tensor slots filled
// from their TensorUses when the node runs. Each value carries the metadata the op's meta function
// gave (sizes and strides may be symbolic), and each op node the user's source line.
#include <kiln/core/tensor.h>
#include <kiln/ops/registry.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::graph {

// Where the user's code called an op (SourceLocation's file and line); empty when unknown.
struct SourceLoc {
  const char* file = nullptr;
  uint32_t line = 0;

  bool known() const { return file != nullptr && line != 0; }
  // "model.cpp:12" (the file's last path component), or "<unknown>".
  std::string str() const;
};

// A value's metadata: what the op's meta function produced, plus requires_grad.
struct ValueMeta {
  SymDimVector sizes;
  SymDimVector strides;
  SymInt storage_offset = 0;
  DType dtype = DType::Float32;
  Device device = Device::cpu();
  bool requires_grad = false;

  static ValueMeta of(const Tensor& t);
  // "f32[64, 1024]", with strides appended when not contiguous: "f32[4, 3](1, 4)", and the
  // device when not the CPU: "f32[8]@cuda:0".
  std::string str() const;
  bool operator==(const ValueMeta&) const = default;
};

class Node;

// One output of one node.
struct Value {
  Node* node = nullptr;
  int output = 0;

  bool defined() const { return node != nullptr; }
  const ValueMeta& meta() const;
  bool operator==(const Value&) const = default;
};

// A tensor argument of an op node: args[arg] itself (element == -1, a Tensor or Tensor? argument)
// or element `element` of the tensor list args[arg].
struct TensorUse {
  int arg = 0;
  int element = -1;
  Value value;
};

enum class NodeKind { Input, Op };

// What an input node stands for.
enum class InputRole {
  UserArg,    // a tensor among the compiled function's arguments
  Parameter,  // a module parameter (label: its dotted name)
  Buffer,     // a module buffer (label: its dotted name)
  Constant,   // a tensor the function read from elsewhere (a captured tensor)
};
std::string_view role_name(InputRole role);

class Node {
 public:
  NodeKind kind = NodeKind::Op;
  // Unique within the graph: inputs by label ("x", "fc1_weight"), op nodes by op name with a
  // counter ("addmm", "addmm_1").
  std::string name;

  // Op nodes.
  const ops::OpDef* op = nullptr;
  ops::Stack args;  // constants; tensor slots hold undefined tensors, filled from `uses`
  std::vector<TensorUse> uses;
  SourceLoc loc;

  // Input nodes.
  InputRole role = InputRole::UserArg;
  std::string label;  // "arg 0", "fc1.weight"
  // A Constant input holding a number the op layer wrapped into a tensor (relu's 0, a scale):
  // its value. Nothing outside the graph holds such a tensor, so passes may rely on the value.
  std::optional<Scalar> number;

  // One entry per output (an input node has one).
  std::vector<ValueMeta> outputs;

  Value out(int i = 0) { return Value{this, i}; }
  // Writes one of its arguments in place (an in-place or out= variant, or a mutable argument).
  bool mutates() const;
  // Must not be removed or merged even if its outputs are unused (mutates, or draws random
  // numbers, whose removal would shift later draws).
  bool has_side_effects() const;
  // The node's arguments with tensors filled in from `value_of` (one tensor per use).
  template <typename F>
  ops::Stack bind(F&& value_of) const {
    ops::Stack bound = args;
    for (const TensorUse& u : uses) {
      Tensor t = value_of(u.value);
      if (u.element < 0) {
        bound[static_cast<size_t>(u.arg)] = ops::IValue(std::move(t));
      } else {
        auto list = bound[static_cast<size_t>(u.arg)].to_tensor_list();
        list[static_cast<size_t>(u.element)] = std::move(t);
        bound[static_cast<size_t>(u.arg)] = ops::IValue(std::move(list));
      }
    }
    return bound;
  }
};

class Graph {
 public:
  Graph() = default;
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;
  // Deep copy (values remapped to the copy's nodes).
  Graph clone() const;

  // Appends an input node; inputs keep the order they were added in.
  Node& add_input(InputRole role, std::string label, ValueMeta meta);
  // Appends an op node. `args` is the full normalized stack with tensor slots left undefined;
  // `uses` says where tensors go. Names the node after the op.
  Node& add_op(const ops::OpDef& op, ops::Stack args, std::vector<TensorUse> uses,
               std::vector<ValueMeta> outputs, SourceLoc loc = {});
  void set_outputs(std::vector<Value> outputs) { outputs_ = std::move(outputs); }
  const std::vector<Value>& outputs() const { return outputs_; }

  // Every node in execution order (inputs first).
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  std::vector<Node*> inputs() const;
  size_t num_inputs() const;
  size_t num_ops() const;

  // Op nodes that read `v` (each once, in order).
  std::vector<Node*> users(Value v) const;
  // Points every use of `from` (op arguments and graph outputs) at `to`.
  void replace_all_uses(Value from, Value to);
  // Removes an op node none of whose outputs is used; raises kiln::Error otherwise.
  void erase(Node* node);
  // Renames a node of this graph to `base` (made an identifier), with a counter if taken
  // (capture names user arguments after their parameter names).
  void rename(Node& node, std::string_view base);

  // FX's print_readable: one line per node,
  //   %addmm : f32[64, 1024] = addmm(%fc1_bias, %x, %t, beta=1, alpha=1)  # train.cpp:12
  // then "return (%gelu_1,)". Inputs print as "%x : f32[64, 1024] = input[user_arg](arg 0)".
  std::string str() const;
  // A string equal for two graphs exactly when they run the same ops with the same constants on
  // inputs of the same metadata, wired the same way (names and source lines ignored).
  std::string structural_key() const;

 private:
  std::string unique_name(std::string_view base);
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value> outputs_;
  // Names ever given out (erased nodes keep theirs reserved), and the next counter per base, so
  // that naming stays O(log n) per node.
  std::set<std::string, std::less<>> names_;
  std::map<std::string, size_t, std::less<>> next_suffix_;
};

// Runs the graph with eager kernels (ops::call, so autograd records as in eager code): one tensor
// per input node, in order; returns one tensor per graph output. Values are released after their
// last use. Raises kiln::Error naming the node (and its source line) when an op fails.
std::vector<Tensor> interpret(const Graph& graph, std::span<const Tensor> inputs);

// Whether the graph was traced with symbolic input sizes (dynamic shapes): such a graph holds for
// every size its symbols stand for, and runs only on backends that bind them per call.
bool has_symbolic_sizes(const Graph& graph);

// ---- passes (LLVM-style: each pass is a named transformation reporting whether it changed) ----

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  // Returns whether the graph changed.
  virtual bool run(Graph& graph) = 0;
};

class PassManager {
 public:
  PassManager& add(std::unique_ptr<Pass> pass);
  // Runs each pass once, in order; returns whether any changed the graph.
  bool run(Graph& graph) const;
  std::vector<std::string_view> names() const;

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

// Removes op nodes whose outputs are unused and that have no side effects.
std::unique_ptr<Pass> dead_code_elimination();
// Merges op nodes that call the same op with the same constants on the same values, unless a
// node with side effects between them could have changed what they read.
std::unique_ptr<Pass> common_subexpression_elimination();

}  // namespace kiln::graph
