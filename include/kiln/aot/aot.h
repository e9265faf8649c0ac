#pragma once
// AOT autograd (DESIGN.md §4, AOTAutograd's role). A captured graph is re-traced on proxy tensors
// with functionalization (in-place ops, out= ops and writes through views become functional ops;
// writes into the graph's inputs, such as BatchNorm's running statistics and optimizer state,
// become extra outputs applied after the graph runs). When its inputs require grad, the backward
// is traced too, by running the derivative formulas on the proxies, into one joint graph; a
// partitioner splits it into a forward graph and a backward graph, choosing which values the
// forward saves and which the backward recomputes. The compiled forward returns its outputs with
// one autograd node attached, whose backward runs the compiled backward graph, so loss.backward()
// and optimizers work unchanged.
#include <kiln/backends/backend.h>
#include <kiln/graph/graph.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace kiln::aot {

enum class Partitioner {
  MinCut,   // save the cheapest set of values (min cut); recompute cheap pointwise chains
  SaveAll,  // save every forward value the backward reads; recompute nothing
};

struct AotOptions {
  // Compiles the forward graphs and the backward graphs.
  Backend forward_compiler = {};
  Backend backward_compiler = {};  // empty: the forward compiler
  // Compiles inference graphs (no gradient wanted: parameters may be treated as constants until
  // they change). Empty: the forward compiler.
  Backend inference_compiler = {};
  Partitioner partitioner = Partitioner::MinCut;
  // Trace every op with a decomposition as its prims (what a code generator lowers).
  bool decompose = false;
  // Rewrites a training joint graph before it is partitioned (decisions both halves must share,
  // such as the layout of the activations the backward reads); its inputs and outputs must keep
  // their order and metadata.
  std::function<void(graph::Graph&, const BackendContext&)> joint_graph_pass = {};
};

// A backend doing the above around two graph compilers. A graph it cannot trace ahead of time
// (a derivative formula needs a tensor's data, inputs that alias each other are written) runs
// with the interpreter and eager autograd instead, logged on the perf_hints channel.
Backend aot_autograd(AotOptions options);

// ---- the pieces (for tests, reports and other backends) ----

// What each input of a joint graph is.
enum class JointInput { Primal, Constant, Tangent };

// Where a captured-graph output comes from at run time.
struct OutputSource {
  enum class Kind {
    Computed,   // graph output `index`
    Input,      // captured-graph input `index` itself
    InputView,  // a view (geometry `meta`) of captured-graph input `index`
  };
  Kind kind = Kind::Computed;
  size_t index = 0;
  graph::ValueMeta meta;
};

struct JointGraph {
  // Inputs: the captured graph's inputs (primals, in order), then constants and tangents in the
  // order tracing met them. Outputs: the computed user outputs, the new values of written
  // primals, then the gradients of primals.
  graph::Graph graph;
  std::vector<JointInput> input_kinds;
  std::vector<Tensor> constants;      // one per Constant input, in input order
  std::vector<OutputSource> outputs;  // one per captured-graph output
  size_t num_computed = 0;            // computed user outputs
  // Per computed output: it views a differentiable input in eager (the compiled result shares
  // that input's memory); any other computed output is a fresh tensor.
  std::vector<bool> computed_views_input;
  std::vector<size_t> mutated_inputs;  // primal written, per mutation output
  std::vector<size_t> tangent_of;      // computed-output index, per Tangent input (input order)
  std::vector<size_t> grad_inputs;     // primal differentiated, per gradient output
  bool training = false;
};

// Traces `graph` functionalized; with `training`, its backward too (gradients of the primals
// whose metadata requires grad). Raises kiln::Error when that is impossible.
JointGraph trace_joint(const graph::Graph& graph, bool training, bool decompose = false);

struct Partition {
  // Inputs: the joint graph's primal and constant inputs, in order. Outputs: the computed user
  // outputs, the mutation values, then the saved activations.
  graph::Graph forward;
  // Inputs: one per saved value, then the tangents. Outputs: the gradients (joint order).
  graph::Graph backward;
  struct Saved {
    bool is_input = false;  // a joint-graph input, passed to the backward as it is
    size_t index = 0;       // the joint input's index, or the forward output's
  };
  std::vector<Saved> saved;
  int64_t saved_bytes = 0;    // saved activations (saved inputs are held anyway)
  size_t recomputed_ops = 0;  // forward ops the backward recomputes
};

Partition partition(const JointGraph& joint, Partitioner partitioner);

// Activation memory of one training step if its graphs run in order with every value freed
// after its last reader: bytes of op outputs (views are free) live at the peak, with the saved
// values held from the forward into the backward. Inputs are not counted.
int64_t estimate_peak_bytes(const Partition& partition);

}  // namespace kiln::aot
