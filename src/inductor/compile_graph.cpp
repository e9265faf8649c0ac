#include "inductor/autotune.h"
#include "inductor/code_cache.h"
#include "inductor/codegen_cpp.h"
#include "inductor/compiled_program.h"
#include "inductor/extern_epilogue.h"
#include "inductor/lowering.h"
#include "inductor/options.h"
#include "inductor/scheduler.h"

#include "capture/symbolic_interpreter.h"
#include "capture/warnings.h"

#include <kiln/capture/debug_dir.h>
#include <kiln/capture/logs.h>
#include <kiln/core/error.h>
#include <kiln/inductor/inductor.h>

#include <fmt/format.h>

namespace kiln::inductor {

namespace {

CompiledGraph interpreted(const graph::Graph& graph) {
  if (graph::has_symbolic_sizes(graph)) return capture::symbolic_interpreter(graph);
  auto owned = std::make_shared<const graph::Graph>(graph.clone());
  return [owned](std::span<const Tensor> inputs) { return graph::interpret(*owned, inputs); };
}

bool on_cpu(const graph::Graph& graph) {
  for (const auto& n : graph.nodes()) {
    for (const graph::ValueMeta& m : n->outputs) {
      if (!m.device.is_cpu()) return false;
    }
  }
  return true;
}

}  // namespace

CompiledGraph compile_graph(const graph::Graph& graph, std::span<const Tensor> /*example_inputs*/,
                            const BackendContext& context) {
  // max-autotune: variants and alternatives timed at the first call (autotune.h).
  AutotuneSettings autotune = autotune_settings(context);
  Program program;
  try {
    KILN_CHECK(on_cpu(graph), "inductor: only CPU graphs are generated yet");
    // Adds after extern products go into the extern calls (eager's fused bias) first, unless
    // options{"extern_epilogues": "false"} (for comparisons).
    graph::Graph fused = graph.clone();
    if (!option_is(context, "extern_epilogues", "false")) {
      fuse_extern_epilogues(fused);
    }
    // max-autotune: small matrix products get generated alternatives (gemm_alternative.h).
    program = schedule(lower(fused, {.gemm_alternatives = is_max_autotune(context.mode)}),
                       context.graph_name);
  } catch (const Error& e) {
    logs::log(logs::Channel::perf_hints, fmt::format("inductor: {} runs with the interpreter: {}",
                                                     context.graph_name, e.what()));
    return interpreted(graph);
  }
  const bool has_kernels = std::any_of(program.steps.begin(), program.steps.end(),
                                       [](const Step& s) { return !loop_nests(s).empty(); });
  std::shared_ptr<const LoadedModule> module;
  if (has_kernels) {
    const KernelSource source = generate_cpp(program, is_max_autotune(context.mode));
    if (logs::enabled(logs::Channel::output_code)) {
      logs::log(logs::Channel::output_code,
                fmt::format("generated code of {}:\n{}", context.graph_name, source.joined()));
    }
    if (auto dir = debug::DebugDir::for_compilation(context.graph_name + "_inductor")) {
      dir->write("kernels.cpp", source.joined());
    }
    try {
      module = load_or_compile(source, CompilerConfig::from_environment(), compile_arguments(),
                               context.graph_name);
    } catch (const Error& e) {
      if (!option_is(context, "fallback", "eager")) throw;
      capture::warn(fmt::format("inductor: {} could not be compiled and runs eagerly: {}",
                                context.graph_name, e.what()));
      return interpreted(graph);
    }
  }
  // reduce-overhead: the planned arena is kept across calls (no allocation for intermediates).
  if (module) autotune.cache_entry = module->path().parent_path();  // the winners file's folder
  auto compiled = std::make_shared<const CompiledProgram>(std::move(program), std::move(module),
                                                          context.mode == "reduce-overhead",
                                                          std::move(autotune));
  const MemoryPlan& plan = compiled->memory_plan();
  logs::log(logs::Channel::fusion,
            fmt::format("inductor: {}: intermediates in an arena of {} bytes ({} without reuse{})",
                        context.graph_name, plan.arena_bytes, plan.total_bytes,
                        context.mode == "reduce-overhead" ? ", kept across calls" : ""));
  return [compiled](std::span<const Tensor> inputs) { return compiled->run(inputs); };
}

}  // namespace kiln::inductor
