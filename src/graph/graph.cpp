// The graph IR's structure: nodes, values, naming, copying and rewiring (printing, the structural
// key, the interpreter and the passes live in their own files).
#include <kiln/graph/graph.h>

#include <algorithm>
#include <unordered_map>

namespace kiln::graph {

std::string SourceLoc::str() const {
  if (!known()) return "<unknown>";
  std::string_view path(file);
  size_t slash = path.find_last_of("/\\");
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  return fmt::format("{}:{}", path, line);
}

ValueMeta ValueMeta::of(const Tensor& t) {
  KILN_CHECK(t.defined(), "ValueMeta::of: the tensor is undefined");
  ValueMeta m;
  m.sizes = SymDimVector(t.sym_sizes().begin(), t.sym_sizes().end());
  m.strides = SymDimVector(t.sym_strides().begin(), t.sym_strides().end());
  m.storage_offset = t.sym_storage_offset();
  m.dtype = t.dtype();
  m.device = t.device();
  m.requires_grad = t.requires_grad();
  return m;
}

const ValueMeta& Value::meta() const {
  KILN_CHECK(node != nullptr, "Value::meta: the value is undefined");
  KILN_CHECK(output >= 0 && static_cast<size_t>(output) < node->outputs.size(),
             "Value::meta: node %{} has {} outputs, asked for output {}", node->name,
             node->outputs.size(), output);
  return node->outputs[static_cast<size_t>(output)];
}

std::string_view role_name(InputRole role) {
  switch (role) {
    case InputRole::UserArg:
      return "user_arg";
    case InputRole::Parameter:
      return "parameter";
    case InputRole::Buffer:
      return "buffer";
    case InputRole::Constant:
      return "constant";
  }
  return "unknown";
}

bool Node::mutates() const {
  if (kind != NodeKind::Op || op == nullptr) return false;
  if (op->variant == ops::Variant::InPlace || op->variant == ops::Variant::Out) return true;
  return std::any_of(op->schema.arguments.begin(), op->schema.arguments.end(),
                     [](const ops::Argument& a) { return a.is_mutable; });
}

bool Node::has_side_effects() const {
  return mutates() || (kind == NodeKind::Op && op != nullptr && op->is_random);
}

namespace {

// Node names are identifiers (they print as %name): other characters become '_'.
std::string identifier(std::string_view base) {
  std::string s(base);
  for (char& c : s) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) c = '_';
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s.insert(s.begin(), '_');
  return s;
}

}  // namespace

std::string Graph::unique_name(std::string_view base) {
  std::string name = identifier(base);
  if (names_.insert(name).second) return name;
  size_t& next = next_suffix_[name];
  for (;;) {
    std::string candidate = fmt::format("{}_{}", name, ++next);
    if (names_.insert(candidate).second) return candidate;
  }
}

Graph Graph::clone() const {
  Graph copy;
  copy.names_ = names_;
  copy.next_suffix_ = next_suffix_;
  std::unordered_map<const Node*, Node*> remap;
  remap.reserve(nodes_.size());
  auto remapped = [&remap](Value v) {
    if (!v.defined()) return v;
    auto it = remap.find(v.node);
    KILN_INTERNAL_ASSERT(it != remap.end());
    return Value{it->second, v.output};
  };
  copy.nodes_.reserve(nodes_.size());
  for (const auto& n : nodes_) {
    auto node = std::make_unique<Node>(*n);
    for (TensorUse& u : node->uses) u.value = remapped(u.value);
    remap.emplace(n.get(), node.get());
    copy.nodes_.push_back(std::move(node));
  }
  copy.outputs_.reserve(outputs_.size());
  for (const Value& v : outputs_) copy.outputs_.push_back(remapped(v));
  return copy;
}

Node& Graph::add_input(InputRole role, std::string label, ValueMeta meta) {
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::Input;
  node->name = unique_name(label);
  node->role = role;
  node->label = std::move(label);
  node->outputs.push_back(std::move(meta));
  // Inputs stay a prefix of the node list, in the order they were added.
  auto first_op = std::find_if(nodes_.begin(), nodes_.end(),
                               [](const auto& n) { return n->kind != NodeKind::Input; });
  return **nodes_.insert(first_op, std::move(node));
}

Node& Graph::add_op(const ops::OpDef& op, ops::Stack args, std::vector<TensorUse> uses,
                    std::vector<ValueMeta> outputs, SourceLoc loc) {
  KILN_CHECK(args.size() == op.schema.arguments.size(),
             "Graph::add_op: {} takes {} arguments, got a stack of {}", op.full_name(),
             op.schema.arguments.size(), args.size());
  for (const TensorUse& u : uses) {
    KILN_CHECK(u.arg >= 0 && static_cast<size_t>(u.arg) < args.size(),
               "Graph::add_op: {}: a tensor use names argument {} of {}", op.full_name(), u.arg,
               args.size());
    KILN_CHECK(u.value.defined(), "Graph::add_op: {}: argument {} uses an undefined value",
               op.full_name(), u.arg);
    if (u.element >= 0) {
      const ops::IValue& list = args[static_cast<size_t>(u.arg)];
      KILN_CHECK(
          list.is_tensor_list() && static_cast<size_t>(u.element) < list.to_tensor_list().size(),
          "Graph::add_op: {}: argument {} element {} is not a slot of a tensor list",
          op.full_name(), u.arg, u.element);
    }
  }
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::Op;
  node->name = unique_name(op.full_name());
  node->op = &op;
  node->args = std::move(args);
  node->uses = std::move(uses);
  node->outputs = std::move(outputs);
  node->loc = loc;
  nodes_.push_back(std::move(node));
  return *nodes_.back();
}

std::vector<Node*> Graph::inputs() const {
  std::vector<Node*> result;
  for (const auto& n : nodes_) {
    if (n->kind == NodeKind::Input) result.push_back(n.get());
  }
  return result;
}

size_t Graph::num_inputs() const {
  return static_cast<size_t>(std::count_if(
      nodes_.begin(), nodes_.end(), [](const auto& n) { return n->kind == NodeKind::Input; }));
}

size_t Graph::num_ops() const { return nodes_.size() - num_inputs(); }

std::vector<Node*> Graph::users(Value v) const {
  std::vector<Node*> result;
  for (const auto& n : nodes_) {
    bool reads = std::any_of(n->uses.begin(), n->uses.end(),
                             [&v](const TensorUse& u) { return u.value == v; });
    if (reads) result.push_back(n.get());
  }
  return result;
}

void Graph::replace_all_uses(Value from, Value to) {
  KILN_CHECK(to.defined(), "Graph::replace_all_uses: the replacement value is undefined");
  for (const auto& n : nodes_) {
    for (TensorUse& u : n->uses) {
      if (u.value == from) u.value = to;
    }
  }
  for (Value& v : outputs_) {
    if (v == from) v = to;
  }
}

void Graph::erase(Node* node) {
  auto it =
      std::find_if(nodes_.begin(), nodes_.end(), [node](const auto& n) { return n.get() == node; });
  KILN_CHECK(it != nodes_.end(), "Graph::erase: the node is not in this graph");
  KILN_CHECK(node->kind == NodeKind::Op,
             "Graph::erase: %{} is an input node (inputs are the graph's calling convention)",
             node->name);
  for (int i = 0; i < static_cast<int>(node->outputs.size()); ++i) {
    Value v = node->out(i);
    std::vector<Node*> readers = users(v);
    KILN_CHECK(readers.empty(), "Graph::erase: %{} is still used by %{}{}", node->name,
               readers.front()->name,
               readers.size() > 1 ? fmt::format(" and {} other nodes", readers.size() - 1) : "");
    bool is_output = std::find(outputs_.begin(), outputs_.end(), v) != outputs_.end();
    KILN_CHECK(!is_output, "Graph::erase: %{} is a graph output", node->name);
  }
  nodes_.erase(it);
}

void Graph::rename(Node& node, std::string_view base) {
  KILN_CHECK(std::any_of(nodes_.begin(), nodes_.end(),
                         [&node](const auto& n) { return n.get() == &node; }),
             "Graph::rename: %{} is not a node of this graph", node.name);
  if (identifier(base) == node.name) return;
  node.name = unique_name(base);
}

bool has_symbolic_sizes(const Graph& graph) {
  for (const Node* n : graph.inputs()) {
    for (const SymInt& s : n->outputs[0].sizes) {
      if (s.is_symbolic()) return true;
    }
  }
  return false;
}

}  // namespace kiln::graph
