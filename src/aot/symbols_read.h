#pragma once
// Which size symbols graph nodes read and which values bind: a compiled graph with symbolic
// sizes binds each symbol from an input dimension that is exactly that symbol, so the
// partitioner checks that the backward's inputs bind every symbol the backward reads.
#include <kiln/graph/graph.h>

#include <cstdint>
#include <set>
#include <vector>

namespace kiln::aot {

// The symbols in the nodes' output sizes, strides and offsets and in their SymInt arguments.
std::set<int64_t> symbols_read(const std::vector<const graph::Node*>& nodes);
// The symbols that are a whole dimension of one of the values.
std::set<int64_t> symbols_bound(const std::vector<graph::Value>& values);

}  // namespace kiln::aot
