#include "inductor/autotune.h"
#include "inductor/code_cache.h"
#include "inductor/codegen_cpp.h"
#include "inductor/codegen_cuda.h"
#include "inductor/compiled_program.h"
#include "inductor/cuda_graph_runner.h"
#include "inductor/cuda_kernels.h"
#include "inductor/extern_epilogue.h"
#include "inductor/graph_device.h"
#include "inductor/lowering.h"
#include "inductor/options.h"
#include "inductor/reduction_splitting.h"
#include "inductor/scheduler.h"
#include "inductor/streaming_stores.h"
#include "inductor/unread_pool_indices.h"

#include "capture/symbolic_interpreter.h"
#include "capture/warnings.h"

#include <kiln/capture/debug_dir.h>
#include <kiln/capture/logs.h>
#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/inductor/inductor.h>

#include <fmt/format.h>

#include <map>

namespace kiln::inductor {

namespace {

CompiledGraph interpreted(const graph::Graph& graph) {
  if (graph::has_symbolic_sizes(graph)) return capture::symbolic_interpreter(graph);
  auto owned = std::make_shared<const graph::Graph>(graph.clone());
  return [owned](std::span<const Tensor> inputs) { return graph::interpret(*owned, inputs); };
}

// A graph the inductor cannot generate runs with the interpreter, said on perf_hints; with
// options{"interpreter_fallback": "false"} (eager kernels generated from one op) it is an error.
CompiledGraph interpreted_because(const graph::Graph& graph, const BackendContext& context,
                                  const Error& why) {
  if (option_is(context, "interpreter_fallback", "false")) throw why;
  logs::log(logs::Channel::perf_hints, fmt::format("inductor: {} runs with the interpreter: {}",
                                                   context.graph_name, why.what()));
  return interpreted(graph);
}

// Why a graph has no one device: a value on each of two devices.
std::string several_devices(const graph::Graph& graph) {
  std::map<std::string, std::string> first_on;  // device -> a node computing there
  for (const auto& n : graph.nodes()) {
    for (const graph::ValueMeta& m : n->outputs) {
      if (m.device.is_cpu() && m.sizes.empty()) continue;
      first_on.emplace(m.device.str(), fmt::format("%{}", n->name));
    }
  }
  std::string text;
  for (const auto& [device, node] : first_on) text += fmt::format(" {} on {};", node, device);
  return fmt::format("inductor: a graph on several devices is not generated:{}", text);
}

// Extern calls on a GPU run eager CUDA kernels: an op without one cannot be part of the program.
void check_cuda_kernels(const Program& program) {
  for (const Step& step : program.steps) {
    const ExternCall* call = extern_call(step);
    KILN_CHECK(call == nullptr || call->op->has_kernel(DeviceType::CUDA),
               "inductor: {} has no CUDA kernel yet (an extern call of the graph)",
               call->op->full_name());
  }
}

bool uses_cuda_graphs(const BackendContext& context) {
  // As PyTorch: reduce-overhead and max-autotune replay CUDA graphs; options{"cudagraphs"}
  // turns them on or off in any mode.
  if (option_is(context, "cudagraphs", "true")) return true;
  if (option_is(context, "cudagraphs", "false")) return false;
  return context.mode == "reduce-overhead" || context.mode == "max-autotune";
}

// The CUDA path: kernels from generate_cuda, compiled by NVRTC; in max-autotune each kernel's
// launch variants are timed at the first call (winners kept per device model).
CompiledGraph compile_for_cuda(const graph::Graph& graph, Program program,
                               const BackendContext& context, AutotuneSettings autotune) {
  const int device = program.device.index();
  std::optional<KernelLoader> kernels;
  const bool has_kernels = std::any_of(program.steps.begin(), program.steps.end(),
                                       [](const Step& s) { return !loop_nests(s).empty(); });
  if (has_kernels) {
    CudaSource source;
    try {
      source = generate_cuda(program, autotune.enabled);
    } catch (const Error& e) {
      return interpreted_because(graph, context, e);
    }
    if (logs::enabled(logs::Channel::output_code)) {
      logs::log(logs::Channel::output_code,
                fmt::format("generated code of {}:\n{}", context.graph_name, source.text));
    }
    if (auto dir = debug::DebugDir::for_compilation(context.graph_name + "_inductor")) {
      dir->write("kernels.cu", source.text);
    }
    try {
      kernels = cuda_kernels(source, program.num_symbols, device, context.graph_name);
      if (autotune.enabled) autotune.cache_entry = cuda_autotune_entry(source, device);
    } catch (const Error& e) {
      if (!option_is(context, "fallback", "eager")) throw;
      capture::warn(fmt::format("inductor: {} could not be compiled and runs eagerly: {}",
                                context.graph_name, e.what()));
      return interpreted(graph);
    }
  }
  if (!uses_cuda_graphs(context)) {
    auto compiled = std::make_shared<const CompiledProgram>(
        std::move(program), kernels.value_or(KernelLoader()), context.mode == "reduce-overhead",
        std::move(autotune));
    return [compiled, device](std::span<const Tensor> inputs) {
      cuda::DeviceGuard on_device(device);
      return compiled->run(inputs);
    };
  }
  // A CUDA graph keeps the intermediates at the addresses of its capture: the arena is the
  // graph's, not one kept by the program. Random ops are captured too (cuda/graph_rng.h: each
  // replay draws new numbers); work that cannot be captured turns the graph off at its capture.
  auto compiled = std::make_shared<const CompiledProgram>(
      std::move(program), kernels.value_or(KernelLoader()), false, std::move(autotune));
  auto graphed = std::make_shared<CudaGraphRunner>(
      [compiled](std::span<const Tensor> inputs) { return compiled->run(inputs); },
      context.graph_name);
  return [graphed, device](std::span<const Tensor> inputs) {
    cuda::DeviceGuard on_device(device);
    return (*graphed)(inputs);
  };
}

}  // namespace

CompiledGraph compile_graph(const graph::Graph& graph, std::span<const Tensor> /*example_inputs*/,
                            const BackendContext& context) {
  // max-autotune: variants and alternatives timed at the first call (autotune.h).
  AutotuneSettings autotune = autotune_settings(context);
  Program program;
  const std::optional<Device> device = graph_device(graph);
  try {
    if (!device) throw Error(several_devices(graph));
    KILN_CHECK(device->is_cpu() || device->is_cuda(), "inductor: graphs on {} are not generated",
               device->str());
    // Adds after extern products go into the extern calls (eager's fused bias) first, unless
    // options{"extern_epilogues": "false"} (for comparisons). On a GPU the products are cuBLAS
    // calls without that epilogue yet.
    graph::Graph fused = graph.clone();
    drop_unread_pool_indices(fused);
    if (device->is_cpu() && !option_is(context, "extern_epilogues", "false")) {
      fuse_extern_epilogues(fused);
    }
    // max-autotune: small matrix products get generated alternatives (gemm_alternative.h).
    program =
        lower(fused, {.gemm_alternatives = device->is_cpu() && is_max_autotune(context.mode)});
    program.device = *device;
    if (device->is_cuda()) check_cuda_kernels(program);
    if (splits_reductions(context, *device)) {
      if (const size_t n = split_long_reductions(program)) {
        logs::log(logs::Channel::fusion,
                  fmt::format("inductor: {}: {} long reductions with few outputs split in two",
                              context.graph_name, n));
      }
    }
    program = schedule(std::move(program), context.graph_name);
  } catch (const Error& e) {
    return interpreted_because(graph, context, e);
  }
  if (device->is_cuda()) {
    return compile_for_cuda(graph, std::move(program), context, std::move(autotune));
  }
  const bool has_kernels = std::any_of(program.steps.begin(), program.steps.end(),
                                       [](const Step& s) { return !loop_nests(s).empty(); });
  std::shared_ptr<const LoadedModule> module;
  if (has_kernels) {
    const KernelSource source =
        generate_cpp(program, {.kernel_variants = is_max_autotune(context.mode),
                               .streaming_store_bytes = streaming_store_threshold(context)});
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
  auto compiled = std::make_shared<const CompiledProgram>(
      std::move(program), module ? cpu_kernels(module) : KernelLoader(),
      context.mode == "reduce-overhead", std::move(autotune));
  const MemoryPlan& plan = compiled->memory_plan();
  logs::log(logs::Channel::fusion,
            fmt::format("inductor: {}: intermediates in an arena of {} bytes ({} without reuse{})",
                        context.graph_name, plan.arena_bytes, plan.total_bytes,
                        context.mode == "reduce-overhead" ? ", kept across calls" : ""));
  return [compiled](std::span<const Tensor> inputs) { return compiled->run(inputs); };
}

}  // namespace kiln::inductor
