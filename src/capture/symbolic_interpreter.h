#pragma once
// Runs a graph traced with symbolic sizes on concrete inputs of any sizes its symbols stand for,
// by interpretation: each call binds the symbols from its inputs' sizes (an input dimension
// traced as a bare symbol) and resolves the graph's size arguments (view shapes, slice bounds)
// with them. The eager reference for symbolic graphs; the guards are the caller's to check.
#include <kiln/backends/backend.h>
#include <kiln/graph/graph.h>

namespace kiln::capture {

CompiledGraph symbolic_interpreter(const graph::Graph& graph);

}  // namespace kiln::capture
