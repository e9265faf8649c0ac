#pragma once
// KILN_COMPILE_CHECK=1 (docs/COMPILE.md "Checking compiled code"): every compiled graph also runs
// eagerly, on copies of its inputs, and a difference beyond tolerance raises kiln::Error with a
// report: the differing output, the first differing node found by bisection over the graph, and
// the graph. The user-facing form of the fuzzer's oracle.
#include <kiln/backends/backend.h>

#include <optional>
#include <span>
#include <string>

namespace kiln::capture {

// What KILN_COMPILE_CHECK asks for, read from the environment at each compilation:
// KILN_COMPILE_CHECK=1 turns the check on; KILN_COMPILE_CHECK_RTOL and KILN_COMPILE_CHECK_ATOL
// replace the floating-point tolerances (defaults per dtype, see compile_check.cpp).
struct CompileCheckConfig {
  std::optional<double> rtol;
  std::optional<double> atol;
};
std::optional<CompileCheckConfig> compile_check_from_environment();

// `compiled` (what `backend` made of `graph`) wrapped so that each call also runs the graph with
// the eager backend and compares outputs, inputs written in place, and, when the call records
// history, the gradients of the inputs that require grad.
CompiledGraph checked_graph(const graph::Graph& graph, CompiledGraph compiled,
                            std::span<const Tensor> example_inputs, std::string backend_name,
                            Backend backend, BackendContext context, CompileCheckConfig config);

}  // namespace kiln::capture
