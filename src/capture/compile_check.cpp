#include "capture/compile_check.h"

#include "capture/tensor_difference.h"
#include "capture/trace_session.h"

#include <kiln/autograd/autograd.h>
#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/random.h>

#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <sstream>
#include <utility>

namespace kiln::capture {

namespace {

std::optional<double> number_from_environment(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  KILN_CHECK(end != text && *end == '\0' && value >= 0,
             "KILN_COMPILE_CHECK: {} must be a number >= 0, got \"{}\"", name, text);
  return value;
}

// The line of `graph.str()` that defines node `name`.
std::string node_line(const graph::Graph& graph, const std::string& name) {
  std::istringstream lines(graph.str());
  const std::string head = "%" + name + " ";
  for (std::string line; std::getline(lines, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, head.size(), head) == 0) {
      return line.substr(start);
    }
  }
  return "%" + name;
}

// The op nodes of `graph`, in execution order.
std::vector<const graph::Node*> op_nodes(const graph::Graph& graph) {
  std::vector<const graph::Node*> ops;
  for (const auto& n : graph.nodes()) {
    if (n->kind == graph::NodeKind::Op) ops.push_back(n.get());
  }
  return ops;
}

// The graph's first `count` op nodes, returning every value they compute that none of them reads
// (so the kept nodes still fuse as they did, and every one of them feeds an output).
graph::Graph prefix_graph(const graph::Graph& graph, size_t count) {
  graph::Graph prefix = graph.clone();
  prefix.set_outputs({});
  std::vector<graph::Node*> ops;
  for (const auto& n : prefix.nodes()) {
    if (n->kind == graph::NodeKind::Op) ops.push_back(n.get());
  }
  for (size_t i = ops.size(); i-- > count;) prefix.erase(ops[i]);
  std::vector<graph::Value> outputs;
  for (size_t i = 0; i < count; ++i) {
    for (int o = 0; o < static_cast<int>(ops[i]->outputs.size()); ++o) {
      const graph::Value v = ops[i]->out(o);
      if (prefix.users(v).empty()) outputs.push_back(v);
    }
  }
  prefix.set_outputs(std::move(outputs));
  return prefix;
}

// Each input's storage version (bumped by every in-place write).
std::vector<uint32_t> versions(std::span<const Tensor> inputs) {
  std::vector<uint32_t> v;
  v.reserve(inputs.size());
  for (const Tensor& t : inputs) v.push_back(t.defined() ? t.impl()->version() : 0);
  return v;
}

// The inputs written on either side (compared after the call; the others cannot differ).
std::vector<size_t> written_inputs(std::span<const Tensor> a, const std::vector<uint32_t>& a_before,
                                   std::span<const Tensor> b,
                                   const std::vector<uint32_t>& b_before) {
  const std::vector<uint32_t> a_after = versions(a);
  const std::vector<uint32_t> b_after = versions(b);
  std::vector<size_t> written;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a_after[i] != a_before[i] || b_after[i] != b_before[i]) written.push_back(i);
  }
  return written;
}

// Runs compiled and eager graphs on copies of the same inputs, from the same random offset.
class Comparison {
 public:
  Comparison(std::span<const Tensor> pristine, uint64_t random_offset, CompileCheckConfig config)
      : pristine_(pristine), random_offset_(random_offset), config_(config) {}

  // What differs between `compiled` and `eager` run on `pristine` (outputs, then inputs written
  // in place), or nullopt.
  std::optional<std::string> run(const CompiledGraph& compiled, const CompiledGraph& eager,
                                 bool grad_enabled) const {
    std::vector<Tensor> eager_inputs = copy_inputs_keeping_aliases(pristine_);
    std::vector<Tensor> compiled_inputs = copy_inputs_keeping_aliases(pristine_);
    std::vector<Tensor> expected;
    std::vector<Tensor> actual;
    const std::vector<uint32_t> eager_versions = versions(eager_inputs);
    const std::vector<uint32_t> compiled_versions = versions(compiled_inputs);
    GradModeScope grad(grad_enabled);
    default_generator().set_offset(random_offset_);
    expected = eager(eager_inputs);
    default_generator().set_offset(random_offset_);
    actual = compiled(compiled_inputs);
    return outputs_and_inputs_difference(
        actual, expected, compiled_inputs, eager_inputs,
        written_inputs(compiled_inputs, compiled_versions, eager_inputs, eager_versions));
  }

  std::optional<std::string> outputs_and_inputs_difference(
      std::span<const Tensor> actual, std::span<const Tensor> expected,
      std::span<const Tensor> actual_inputs, std::span<const Tensor> expected_inputs,
      const std::vector<size_t>& written) const {
    if (actual.size() != expected.size()) {
      return fmt::format("compiled returns {} tensors, eager {}", actual.size(), expected.size());
    }
    for (size_t i = 0; i < actual.size(); ++i) {
      if (auto why = tensor_difference(actual[i], expected[i], config_.rtol, config_.atol)) {
        return fmt::format("output {}: {}", i, *why);
      }
    }
    for (size_t i : written) {
      if (auto why =
              tensor_difference(actual_inputs[i], expected_inputs[i], config_.rtol, config_.atol)) {
        return fmt::format("input {} after the call (written in place): {}", i, *why);
      }
    }
    return std::nullopt;
  }

 private:
  std::span<const Tensor> pristine_;
  uint64_t random_offset_;
  CompileCheckConfig config_;
};

struct CheckedGraph {
  graph::Graph graph;
  CompiledGraph compiled;
  CompiledGraph eager;
  std::string backend_name;
  Backend backend;
  BackendContext context;
  CompileCheckConfig config;
  bool mutates = false;

  std::vector<Tensor> operator()(std::span<const Tensor> inputs) const;

 private:
  std::optional<std::string> gradient_difference(std::span<const Tensor> inputs,
                                                 uint64_t random_offset) const;
  std::string first_differing_node(std::span<const Tensor> pristine, uint64_t random_offset,
                                   bool grad_enabled) const;
  [[noreturn]] void fail(const std::string& what, const std::string& located) const;
};

std::vector<Tensor> CheckedGraph::operator()(std::span<const Tensor> inputs) const {
  Generator& generator = default_generator();
  const uint64_t random_offset = generator.offset();
  const bool grad_enabled = autograd::GradMode::is_enabled();
  // The graph may write its inputs: eager and the bisection run on copies of them as they were.
  std::vector<Tensor> pristine;
  if (mutates) pristine = copy_inputs_keeping_aliases(inputs);
  const std::span<const Tensor> before = mutates ? std::span<const Tensor>(pristine) : inputs;

  std::vector<Tensor> eager_inputs = copy_inputs_keeping_aliases(inputs);
  const std::vector<uint32_t> eager_versions = versions(eager_inputs);
  std::vector<Tensor> expected;
  {
    autograd::NoGradGuard no_grad;
    expected = eager(eager_inputs);
  }
  const std::vector<uint32_t> input_versions = versions(inputs);
  generator.set_offset(random_offset);
  std::vector<Tensor> actual = compiled(inputs);
  const uint64_t offset_after = generator.offset();

  const Comparison comparison(before, random_offset, config);
  if (auto why = comparison.outputs_and_inputs_difference(
          actual, expected, inputs, eager_inputs,
          written_inputs(inputs, input_versions, eager_inputs, eager_versions))) {
    std::string located = first_differing_node(before, random_offset, grad_enabled);
    generator.set_offset(offset_after);
    fail(*why, located);
  }
  if (grad_enabled) {
    if (auto why = gradient_difference(before, random_offset)) {
      generator.set_offset(offset_after);
      fail(*why, "");
    }
  }
  generator.set_offset(offset_after);
  return actual;
}

// Both graphs run again on leaf copies, then d sum(output * cotangent) / d input for the inputs
// that require grad, with the same random cotangents on both sides.
std::optional<std::string> CheckedGraph::gradient_difference(std::span<const Tensor> inputs,
                                                             uint64_t random_offset) const {
  std::vector<size_t> wrt;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined() && inputs[i].requires_grad()) wrt.push_back(i);
  }
  if (wrt.empty()) return std::nullopt;
  std::vector<Tensor> compiled_leaves = copy_inputs_as_leaves(inputs);
  std::vector<Tensor> eager_leaves = copy_inputs_as_leaves(inputs);
  autograd::EnableGradGuard grad;
  // A graph that writes an input in place gets a copy of each leaf: eager, like PyTorch, refuses
  // in-place writes to a leaf that requires grad.
  auto graph_inputs = [this](const std::vector<Tensor>& leaves) {
    std::vector<Tensor> in = leaves;
    if (mutates) {
      for (Tensor& t : in) {
        if (t.defined() && t.requires_grad()) t = t.clone();
      }
    }
    return in;
  };
  std::vector<Tensor> compiled_inputs = graph_inputs(compiled_leaves);
  std::vector<Tensor> eager_inputs = graph_inputs(eager_leaves);
  default_generator().set_offset(random_offset);
  std::vector<Tensor> actual = compiled(compiled_inputs);
  default_generator().set_offset(random_offset);
  std::vector<Tensor> expected = eager(eager_inputs);
  if (actual.size() != expected.size()) return std::nullopt;  // the forward check reports it

  std::vector<Tensor> actual_outputs, expected_outputs, cotangents;
  Generator cotangent_generator(0x6b696c6e);
  for (size_t i = 0; i < actual.size(); ++i) {
    const bool a = actual[i].defined() && actual[i].requires_grad();
    const bool e = expected[i].defined() && expected[i].requires_grad();
    if (a != e) {
      return fmt::format("output {} {} grad in compiled code but {} in eager", i,
                         a ? "requires" : "does not require", e ? "does" : "does not");
    }
    if (!a || !is_floating_point(actual[i].dtype()) || actual[i].numel() == 0) continue;
    actual_outputs.push_back(actual[i]);
    expected_outputs.push_back(expected[i]);
    autograd::NoGradGuard no_grad;
    cotangents.push_back(
        randn(actual[i].sizes(), TensorOptions(actual[i].dtype()), &cotangent_generator));
  }
  if (actual_outputs.empty()) return std::nullopt;
  std::vector<Tensor> compiled_wrt, eager_wrt;
  for (size_t i : wrt) {
    compiled_wrt.push_back(compiled_leaves[i]);
    eager_wrt.push_back(eager_leaves[i]);
  }
  const std::vector<Tensor> actual_grads =
      autograd::grad(actual_outputs, compiled_wrt, cotangents, false, false, true);
  const std::vector<Tensor> expected_grads =
      autograd::grad(expected_outputs, eager_wrt, cotangents, false, false, true);
  autograd::NoGradGuard no_grad;
  for (size_t k = 0; k < wrt.size(); ++k) {
    // An unused input's gradient is zero on either side.
    const Tensor a = actual_grads[k].defined() ? actual_grads[k] : zeros_like(compiled_wrt[k]);
    const Tensor e = expected_grads[k].defined() ? expected_grads[k] : zeros_like(eager_wrt[k]);
    if (auto why = tensor_difference(a, e, config.rtol, config.atol)) {
      return fmt::format("the gradient of input {} (%{}) in the backward pass: {}", wrt[k],
                         graph.inputs()[wrt[k]]->name, *why);
    }
  }
  return std::nullopt;
}

// Bisection over the graph's op nodes: the shortest prefix whose compiled values differ from
// eager's; its last node is the first that differs.
std::string CheckedGraph::first_differing_node(std::span<const Tensor> pristine,
                                               uint64_t random_offset, bool grad_enabled) const {
  const std::vector<const graph::Node*> ops = op_nodes(graph);
  const Comparison comparison(pristine, random_offset, config);
  const Backend& eager_backend = lookup_backend("eager");
  auto prefix_differs = [&](size_t count) -> std::optional<std::string> {
    const graph::Graph prefix = prefix_graph(graph, count);
    BackendContext prefix_context = context;
    prefix_context.graph_name = fmt::format("{} (first {} ops)", context.graph_name, count);
    try {
      CompiledGraph compiled_prefix =
          run_backend(backend_name, backend, prefix, pristine, prefix_context);
      CompiledGraph eager_prefix =
          run_backend("eager", eager_backend, prefix, pristine, prefix_context);
      return comparison.run(compiled_prefix, eager_prefix, grad_enabled);
    } catch (const Error& e) {
      return fmt::format("compiling or running it raised: {}", e.what());
    }
  };
  if (ops.empty() || !prefix_differs(ops.size())) {
    return fmt::format(
        "no prefix of the graph differs when compiled alone (bisection over {} ops): the "
        "difference needs the whole graph",
        ops.size());
  }
  size_t lo = 1, hi = ops.size();  // prefix_differs(hi) holds
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (prefix_differs(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  const std::optional<std::string> why = prefix_differs(hi);
  return fmt::format("first differing node (bisection over {} ops): {}\n  {}", ops.size(),
                     node_line(graph, ops[hi - 1]->name), why.value_or(""));
}

void CheckedGraph::fail(const std::string& what, const std::string& located) const {
  KILN_FAIL("KILN_COMPILE_CHECK: {} compiled by backend {} differs from eager: {}\n{}{}graph:\n{}",
            context.graph_name, backend_name, what, located, located.empty() ? "" : "\n",
            graph.str());
}

bool any_node_mutates(const graph::Graph& graph) {
  for (const auto& n : graph.nodes()) {
    if (n->kind == graph::NodeKind::Op && n->mutates()) return true;
  }
  return false;
}

}  // namespace

std::optional<CompileCheckConfig> compile_check_from_environment() {
  const char* flag = std::getenv("KILN_COMPILE_CHECK");
  if (flag == nullptr || std::string_view(flag).empty() || std::string_view(flag) == "0") {
    return std::nullopt;
  }
  return CompileCheckConfig{number_from_environment("KILN_COMPILE_CHECK_RTOL"),
                            number_from_environment("KILN_COMPILE_CHECK_ATOL")};
}

CompiledGraph checked_graph(const graph::Graph& graph, CompiledGraph compiled,
                            std::span<const Tensor> example_inputs, std::string backend_name,
                            Backend backend, BackendContext context, CompileCheckConfig config) {
  auto checked = std::make_shared<CheckedGraph>();
  checked->graph = graph.clone();
  checked->compiled = std::move(compiled);
  checked->eager = run_backend("eager", lookup_backend("eager"), graph, example_inputs, context);
  checked->backend_name = std::move(backend_name);
  checked->backend = std::move(backend);
  checked->context = std::move(context);
  checked->config = config;
  checked->mutates = any_node_mutates(graph);
  return [checked](std::span<const Tensor> inputs) { return (*checked)(inputs); };
}

}  // namespace kiln::capture
