#pragma once
// Interpreting a graph traced with symbolic sizes: the sizes among its ops' arguments (a view's
// shape, a slice's bounds) are expressions of the input sizes, resolved per call by the caller
// (capture binds the symbols from the inputs; the graph layer knows nothing of expressions).
#include <kiln/graph/graph.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace kiln::graph {

// The value of a symbolic size in the current call.
using SizeOf = std::function<int64_t(const SymInt&)>;

// Replaces the symbolic sizes among an op's arguments (a view's sizes, a slice's bounds) by
// size_of(size).
void concretize(ops::Stack& args, const SizeOf& size_of);

// interpret, with every symbolic size argument replaced by size_of(size) before its op runs.
// An empty size_of interprets as the plain overload does (symbolic arguments then raise).
std::vector<Tensor> interpret(const Graph& graph, std::span<const Tensor> inputs,
                              const SizeOf& size_of);

}  // namespace kiln::graph
