#pragma once
// Splitting a graph into a chain of sub-graphs at given cut points (torch.fx's split_module, as
// DDPOptimizer uses it): piece k holds the op nodes between cut k-1 and cut k. A piece's inputs
// are what its nodes read from the graph's inputs or from earlier pieces; its outputs are the
// values later pieces or the graph's outputs read. Running the pieces in order computes what the
// whole graph computes.
//
// Cuts never separate nodes that must run in one graph: an in-place write from the nodes that
// produce or read its target (through any alias), and a view of a parameter from its readers (a
// piece would otherwise receive the view, and differentiate it, instead of the parameter). A cut
// falling inside such a span moves to its start.
#include <kiln/graph/graph.h>

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace kiln::graph {

// Where a piece's input (or the split graph's output) comes from.
struct PieceSource {
  enum class Kind { GraphInput, PieceOutput };
  Kind kind = Kind::GraphInput;
  size_t piece = 0;  // PieceOutput: the piece
  size_t index = 0;  // the graph input, or the piece's output
  bool operator==(const PieceSource&) const = default;
};

struct GraphPiece {
  // Inputs: the original graph's inputs it reads keep their role and label; values of earlier
  // pieces are user arguments labelled "<node name>". A symbolic size a piece reads that none of
  // its inputs binds (a dimension traced as that bare symbol) brings in a graph input that does.
  Graph graph;
  std::vector<PieceSource> inputs;  // one per input node, in order
  size_t first_op = 0;              // the original op positions [first_op, end_op)
  size_t end_op = 0;
};

struct SplitGraph {
  std::vector<GraphPiece> pieces;
  std::vector<PieceSource> outputs;  // one per original graph output
};

// The cuts made legal (see above), sorted, without duplicates or empty pieces. A cut c puts op
// nodes [.., c) before it and [c, ..) after it (op positions count op nodes only).
std::vector<size_t> legal_cuts(const Graph& graph, std::vector<size_t> cuts);

// Splits `graph` at legal_cuts(graph, cuts): one piece when none remains.
SplitGraph split_graph(const Graph& graph, std::vector<size_t> cuts);

// Runs a split graph's pieces in order: run_piece(k, inputs) returns piece k's outputs.
using PieceRunner = std::function<std::vector<Tensor>(size_t piece, std::span<const Tensor>)>;
std::vector<Tensor> run_pieces(const SplitGraph& split, std::span<const Tensor> inputs,
                               const PieceRunner& run_piece);

}  // namespace kiln::graph
