// split_graph: cut legality (spans of nodes that must share a piece), the pieces' wiring, and
// the symbolic sizes each piece must be able to bind.
#include "graph/split_graph.h"

#include "graph/interpret_symbolic.h"

#include <kiln/core/error.h>
#include <kiln/symbolic/sym_expr.h>
#include <kiln/symbolic/sym_node.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace kiln::graph {

namespace {

using ValueKey = std::pair<const Node*, int>;
ValueKey key_of(Value v) { return {v.node, v.output}; }

// Op positions (op nodes only, in order).
std::unordered_map<const Node*, size_t> op_positions(const Graph& graph) {
  std::unordered_map<const Node*, size_t> pos;
  for (const auto& n : graph.nodes()) {
    if (n->kind == NodeKind::Op) pos.emplace(n.get(), pos.size());
  }
  return pos;
}

// Only a functional structured op is known to return fresh tensors; the others (views, in-place
// and out= variants, custom ops) may return an alias of what they read.
bool may_alias_inputs(const Node& n) {
  return !(n.op->kind == ops::OpKind::Structured && n.op->variant == ops::Variant::Functional);
}

bool writes_argument(const Node& n, int arg) {
  const auto& args = n.op->schema.arguments;
  if (arg >= 0 && static_cast<size_t>(arg) < args.size() &&
      args[static_cast<size_t>(arg)].is_mutable)
    return true;
  return n.op->variant == ops::Variant::InPlace && arg == 0;
}

// Whether an op that may alias its inputs may return (a view of) argument `arg`: a writing op
// returns what it writes, a view op its first argument; any other, any argument.
bool may_be_returned(const Node& n, int arg) {
  if (n.mutates()) return writes_argument(n, arg);
  if (n.op->kind == ops::OpKind::View) return arg == 0;
  return true;
}

// Values that may share memory, as union-find sets.
class AliasSets {
 public:
  explicit AliasSets(const Graph& graph) {
    for (const auto& n : graph.nodes()) {
      for (int k = 0; k < static_cast<int>(n->outputs.size()); ++k) {
        index_.emplace(ValueKey{n.get(), k}, parent_.size());
        parent_.push_back(parent_.size());
      }
    }
    for (const auto& n : graph.nodes()) {
      if (n->kind != NodeKind::Op || !may_alias_inputs(*n)) continue;
      for (const TensorUse& u : n->uses) {
        if (!may_be_returned(*n, u.arg)) continue;
        for (int k = 0; k < static_cast<int>(n->outputs.size()); ++k) unite(n->out(k), u.value);
      }
    }
  }
  size_t set_of(Value v) { return find(index_.at(key_of(v))); }

 private:
  size_t find(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void unite(Value a, Value b) { parent_[find(index_.at(key_of(a)))] = find(index_.at(key_of(b))); }
  std::map<ValueKey, size_t> index_;
  std::vector<size_t> parent_;
};

// Op positions [first, last] that must share one piece.
struct Span {
  size_t first = 0, last = 0;
};

std::vector<Span> unsplittable_spans(const Graph& graph) {
  const auto pos = op_positions(graph);
  AliasSets aliases(graph);
  // Per alias set: the op positions producing or reading one of its values.
  std::map<size_t, Span> touched;
  std::set<size_t> parameter_sets;
  const auto touch = [&touched](size_t set, size_t p) {
    auto [it, fresh] = touched.emplace(set, Span{p, p});
    if (!fresh) {
      it->second.first = std::min(it->second.first, p);
      it->second.last = std::max(it->second.last, p);
    }
  };
  for (const auto& n : graph.nodes()) {
    if (n->kind == NodeKind::Input) {
      if (n->role == InputRole::Parameter) parameter_sets.insert(aliases.set_of(n->out()));
      continue;
    }
    const size_t p = pos.at(n.get());
    for (const TensorUse& u : n->uses) touch(aliases.set_of(u.value), p);
    for (int k = 0; k < static_cast<int>(n->outputs.size()); ++k)
      touch(aliases.set_of(n->out(k)), p);
  }
  std::vector<Span> spans;
  for (const auto& n : graph.nodes()) {
    if (n->kind != NodeKind::Op) continue;
    const size_t p = pos.at(n.get());
    // A write, with everything that touches what it writes (before and after it).
    for (const TensorUse& u : n->uses) {
      if (writes_argument(*n, u.arg)) spans.push_back(touched.at(aliases.set_of(u.value)));
    }
    // A view of a parameter, with its readers.
    if (may_alias_inputs(*n) && !n->outputs.empty() &&
        parameter_sets.count(aliases.set_of(n->out())) > 0) {
      Span s{p, p};
      for (int k = 0; k < static_cast<int>(n->outputs.size()); ++k) {
        for (const Node* reader : graph.users(n->out(k))) s.last = std::max(s.last, pos.at(reader));
      }
      spans.push_back(s);
    }
  }
  return spans;
}

// ---- symbolic sizes ----

// The symbols (ids) a size reads; none for a plain size or one that is not a shape
// environment's.
void add_symbols(const SymInt& s, std::set<int64_t>& into) {
  if (!s.is_symbolic() || symbolic::sym_node_of(s) == nullptr) return;
  for (int64_t id : symbolic::free_symbols(symbolic::expr_of(s))) into.insert(id);
}

void add_symbols(const ValueMeta& m, std::set<int64_t>& into) {
  for (const SymInt& s : m.sizes) add_symbols(s, into);
  for (const SymInt& s : m.strides) add_symbols(s, into);
  add_symbols(m.storage_offset, into);
}

// The symbol a dimension binds: its size when that is a bare symbol.
std::optional<int64_t> bare_symbol(const SymInt& s) {
  if (!s.is_symbolic() || symbolic::sym_node_of(s) == nullptr) return std::nullopt;
  const symbolic::SymExpr e = symbolic::expr_of(s);
  if (e.kind() != symbolic::SymExpr::Kind::Symbol) return std::nullopt;
  return e.value();
}

std::set<int64_t> symbols_read(const Graph& g) {
  std::set<int64_t> read;
  for (const auto& n : g.nodes()) {
    for (const ValueMeta& m : n->outputs) add_symbols(m, read);
    if (n->kind != NodeKind::Op) continue;
    ops::Stack args = n->args;
    concretize(args, [&read](const SymInt& s) {
      add_symbols(s, read);
      return int64_t{0};
    });
  }
  return read;
}

std::set<int64_t> symbols_bound(const Graph& g) {
  std::set<int64_t> bound;
  for (const Node* in : g.inputs()) {
    for (const SymInt& s : in->outputs[0].sizes) {
      if (auto id = bare_symbol(s)) bound.insert(*id);
    }
  }
  return bound;
}

// Gives the piece the original inputs that bind the symbols it reads but cannot bind.
void add_size_inputs(const Graph& original, GraphPiece& piece) {
  std::set<int64_t> missing = symbols_read(piece.graph);
  for (int64_t id : symbols_bound(piece.graph)) missing.erase(id);
  const std::vector<Node*> inputs = original.inputs();
  for (size_t i = 0; i < inputs.size() && !missing.empty(); ++i) {
    bool binds = false;
    for (const SymInt& s : inputs[i]->outputs[0].sizes) {
      if (auto id = bare_symbol(s); id && missing.count(*id) > 0) {
        missing.erase(*id);
        binds = true;
      }
    }
    if (!binds) continue;
    const PieceSource source{PieceSource::Kind::GraphInput, 0, i};
    if (std::find(piece.inputs.begin(), piece.inputs.end(), source) != piece.inputs.end()) continue;
    piece.graph.add_input(inputs[i]->role, inputs[i]->label, inputs[i]->outputs[0]);
    piece.inputs.push_back(source);
  }
  KILN_CHECK(missing.empty(),
             "split_graph: a piece reads symbolic size s{} that no input of the graph binds",
             *missing.begin());
}

}  // namespace

std::vector<size_t> legal_cuts(const Graph& graph, std::vector<size_t> cuts) {
  const size_t num_ops = graph.num_ops();
  const std::vector<Span> spans = unsplittable_spans(graph);
  for (size_t& c : cuts) {
    // Moving a cut to a span's start may put it inside another span: repeat until none holds it
    // (c only decreases).
    for (bool moved = true; moved;) {
      moved = false;
      for (const Span& s : spans) {
        if (s.first < c && c <= s.last) {
          c = s.first;
          moved = true;
        }
      }
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::erase_if(cuts, [num_ops](size_t c) { return c == 0 || c >= num_ops; });
  return cuts;
}

SplitGraph split_graph(const Graph& graph, std::vector<size_t> cuts) {
  cuts = legal_cuts(graph, std::move(cuts));
  const auto pos = op_positions(graph);
  const auto piece_at = [&cuts](size_t p) {
    return static_cast<size_t>(std::upper_bound(cuts.begin(), cuts.end(), p) - cuts.begin());
  };
  const auto piece_of = [&](const Node* n) { return piece_at(pos.at(n)); };

  // Op values read outside the piece that makes them (by a later piece or as graph outputs).
  std::set<ValueKey> exported;
  for (const auto& n : graph.nodes()) {
    if (n->kind != NodeKind::Op) continue;
    for (const TensorUse& u : n->uses) {
      if (u.value.node->kind == NodeKind::Op && piece_of(u.value.node) != piece_of(n.get()))
        exported.insert(key_of(u.value));
    }
  }
  for (const Value& v : graph.outputs()) {
    if (v.node->kind == NodeKind::Op) exported.insert(key_of(v));
  }

  std::map<ValueKey, PieceSource> available;
  const std::vector<Node*> graph_inputs = graph.inputs();
  for (size_t i = 0; i < graph_inputs.size(); ++i) {
    available[key_of(graph_inputs[i]->out())] = {PieceSource::Kind::GraphInput, 0, i};
  }

  SplitGraph split;
  split.pieces.resize(cuts.size() + 1);
  for (size_t k = 0; k < split.pieces.size(); ++k) {
    GraphPiece& piece = split.pieces[k];
    piece.first_op = k == 0 ? 0 : cuts[k - 1];
    piece.end_op = k < cuts.size() ? cuts[k] : graph.num_ops();
    std::map<ValueKey, Value> local;  // original value -> the piece's value
    const auto value_in_piece = [&](Value v) {
      if (auto it = local.find(key_of(v)); it != local.end()) return it->second;
      const PieceSource& source = available.at(key_of(v));
      Node& in =
          v.node->kind == NodeKind::Input
              ? piece.graph.add_input(v.node->role, v.node->label, v.meta())
              : piece.graph.add_input(
                    InputRole::UserArg,
                    v.output == 0 ? v.node->name : fmt::format("{}_{}", v.node->name, v.output),
                    v.meta());
      piece.inputs.push_back(source);
      return local[key_of(v)] = in.out();
    };
    std::vector<Value> outputs;
    for (const auto& n : graph.nodes()) {
      if (n->kind != NodeKind::Op || piece_of(n.get()) != k) continue;
      std::vector<TensorUse> uses = n->uses;
      for (TensorUse& u : uses) u.value = value_in_piece(u.value);
      Node& copy = piece.graph.add_op(*n->op, n->args, std::move(uses), n->outputs, n->loc);
      piece.graph.rename(copy, n->name);
      for (int j = 0; j < static_cast<int>(n->outputs.size()); ++j) {
        local[key_of(n->out(j))] = copy.out(j);
        if (exported.count(key_of(n->out(j))) == 0) continue;
        available[key_of(n->out(j))] = {PieceSource::Kind::PieceOutput, k, outputs.size()};
        outputs.push_back(copy.out(j));
      }
    }
    piece.graph.set_outputs(std::move(outputs));
    add_size_inputs(graph, piece);
  }
  for (const Value& v : graph.outputs()) split.outputs.push_back(available.at(key_of(v)));
  return split;
}

std::vector<Tensor> run_pieces(const SplitGraph& split, std::span<const Tensor> inputs,
                               const PieceRunner& run_piece) {
  std::vector<std::vector<Tensor>> results(split.pieces.size());
  const auto tensor_of = [&](const PieceSource& s) -> const Tensor& {
    return s.kind == PieceSource::Kind::GraphInput ? inputs[s.index] : results[s.piece][s.index];
  };
  // The last piece reading each piece output: held no longer than that (graph outputs to the end).
  std::map<std::pair<size_t, size_t>, size_t> last_reader;
  for (size_t k = 0; k < split.pieces.size(); ++k) {
    for (const PieceSource& s : split.pieces[k].inputs) {
      if (s.kind == PieceSource::Kind::PieceOutput) last_reader[{s.piece, s.index}] = k;
    }
  }
  for (const PieceSource& s : split.outputs) {
    if (s.kind == PieceSource::Kind::PieceOutput) last_reader[{s.piece, s.index}] = SIZE_MAX;
  }
  for (size_t k = 0; k < split.pieces.size(); ++k) {
    std::vector<Tensor> piece_inputs;
    piece_inputs.reserve(split.pieces[k].inputs.size());
    for (const PieceSource& s : split.pieces[k].inputs) piece_inputs.push_back(tensor_of(s));
    for (const PieceSource& s : split.pieces[k].inputs) {
      if (s.kind == PieceSource::Kind::PieceOutput && last_reader.at({s.piece, s.index}) == k)
        results[s.piece][s.index] = Tensor();
    }
    results[k] = run_piece(k, piece_inputs);
    KILN_CHECK(results[k].size() == split.pieces[k].graph.outputs().size(),
               "run_pieces: piece {} returned {} tensors; it has {} outputs", k, results[k].size(),
               split.pieces[k].graph.outputs().size());
  }
  std::vector<Tensor> outputs;
  outputs.reserve(split.outputs.size());
  for (const PieceSource& s : split.outputs) outputs.push_back(tensor_of(s));
  return outputs;
}

}  // namespace kiln::graph
