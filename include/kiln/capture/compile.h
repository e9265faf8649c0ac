#pragma once
// kiln::compile (DESIGN.md §3 and §6, TorchDynamo's role): a function or a Module in, a callable
// out that captures what it computes as graphs and runs them through a backend.
//
//   auto fast = kiln::compile(model);                              // Module in, Module out
//   auto f = kiln::compile([](const Tensor& x) { return x.sin() * x.cos(); },
//                          {.fullgraph = true});
//
// The first call traces: tensor arguments become proxies that record each op into a graph (meta
// functions give sizes and dtypes) instead of computing. Guards record what the graph assumed;
// later calls whose guards pass run the compiled graph without calling the function again. A call
// whose guards fail recompiles (logged with the reason), up to cache_size_limit() entries, after
// which the function runs eagerly with one warning.
//
// A graph break (anything needing a concrete value: item(), reading data, printing, an op whose
// output size depends on the data such as nonzero, kiln::graph_break()) compiles and runs the graph
// so far, gives the value, and tracing continues in a new graph; such functions are re-run on every
// call with each graph looked up in a cache, so results are always right. With fullgraph a break
// raises kiln::Error naming the op and the source line.
//
// Contract (as jax.jit): a compiled function is a function of its arguments, the compiled module's
// parameters, buffers and training flags, and tensors it captures. Host side effects (printing,
// counters, reads of tensor data) happen while tracing and are not replayed on cache hits.
#include <kiln/backends/backend.h>
#include <kiln/capture/pytree.h>
#include <kiln/nn/module.h>

#include <kiln/core/source_location.h>
#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace kiln {

struct CompileOptions {
  // "default", "reduce-overhead", "max-autotune" or "max-autotune-no-cudagraphs" (passed to the
  // backend).
  std::string mode = "default";
  // A graph break is an error instead of a split.
  bool fullgraph = false;
  // Dynamic shapes (docs/DYNAMIC.md), for the backends that take symbolic graphs (inductor,
  // eager, aot_eager, aot_eager_decomp_partition; a backend function stays static per size):
  // true traces every tensor-argument dimension as a symbol; false specializes every size;
  // unset (automatic dynamic) starts static and makes a dimension dynamic once a changed size of
  // it causes a recompile. mark_dynamic / mark_static override per tensor.
  std::optional<bool> dynamic = std::nullopt;
  // A registered backend name, a backend function, or a named backend (a function with the name
  // and traits it goes by). "inductor" (as PyTorch) generates C++; "eager" runs the captured
  // graphs with the eager kernels, "aot_eager" their aot graphs.
  std::variant<std::string, Backend, NamedBackend> backend = std::string("inductor");
  // Passed to the backend.
  std::map<std::string, std::string> options = {};
  // Run the function eagerly (compile() becomes a no-op wrapper).
  bool disable = false;
};

// How many compiled entries one function keeps before it falls back to eager (PyTorch's
// torch._dynamo.config.cache_size_limit, default 8).
int cache_size_limit();
void set_cache_size_limit(int limit);

// Drops every compiled function's cache (PyTorch's torch._dynamo.reset()).
void reset();

// Ends the current graph here when called inside a compiled function; a no-op in eager code.
void graph_break(const SourceLocation& loc = SourceLocation::current());

// Receives compile warnings (the eager fallback); prints "kiln: warning: ..." to stderr by
// default. Returns the previous handler; an empty one restores the default.
using WarningHandler = std::function<void(std::string_view)>;
WarningHandler set_warning_handler(WarningHandler handler);

namespace capture {

class FunctionCache;

// The untyped core of one compiled function (src/capture).
class CompiledFunctionCore {
 public:
  // `module` (may be null): the compiled Module, whose parameters, buffers and training flags are
  // guarded and bound as graph inputs.
  CompiledFunctionCore(CompileOptions options, std::string name,
                       std::shared_ptr<nn::Module> module);
  ~CompiledFunctionCore();
  CompiledFunctionCore(const CompiledFunctionCore&) = delete;
  CompiledFunctionCore& operator=(const CompiledFunctionCore&) = delete;

  // Calls the user's function on (possibly proxy) argument leaves; returns the result's leaves.
  using RunUser = std::function<Leaves(const Leaves& args)>;
  Leaves call(const Leaves& args, const RunUser& run);

  // What explain() reports, for a call with these arguments (runs the function once, eagerly
  // where it breaks; compiles nothing into the cache).
  std::string explain(const Leaves& args, const RunUser& run);

  const std::string& name() const;
  // Compiled entries currently cached (graphs with their guards).
  size_t cache_entries() const;

 private:
  std::shared_ptr<FunctionCache> cache_;
};

std::string callable_name(const SourceLocation& loc);

}  // namespace capture

// A compiled callable: call it with the same arguments as the original.
template <typename F>
class Compiled {
 public:
  Compiled(F fn, CompileOptions options, std::string name,
           std::shared_ptr<nn::Module> module = nullptr)
      : fn_(std::move(fn)),
        core_(std::make_shared<capture::CompiledFunctionCore>(std::move(options), std::move(name),
                                                              std::move(module))) {}

  template <typename... Args>
  auto operator()(Args&&... args) {
    static_assert(std::is_invocable_v<F&, const std::decay_t<Args>&...>,
                  "kiln::compile: the compiled function cannot be called with these arguments");
    using R = std::invoke_result_t<F&, const std::decay_t<Args>&...>;
    capture::Leaves in;
    (capture::Pytree<std::decay_t<Args>>::flatten(args, in), ...);
    capture::Leaves out = core_->call(in, runner<R, std::decay_t<Args>...>());
    if constexpr (!std::is_void_v<R>) {
      size_t pos = 0;
      return capture::Pytree<std::decay_t<R>>::unflatten(out, pos);
    }
  }

  // explain(): graphs, graph breaks with reasons and source lines, ops per graph, guards.
  template <typename... Args>
  std::string explain(Args&&... args) {
    using R = std::invoke_result_t<F&, const std::decay_t<Args>&...>;
    capture::Leaves in;
    (capture::Pytree<std::decay_t<Args>>::flatten(args, in), ...);
    return core_->explain(in, runner<R, std::decay_t<Args>...>());
  }

  const capture::CompiledFunctionCore& core() const { return *core_; }

 private:
  template <typename R, typename... A>
  capture::CompiledFunctionCore::RunUser runner() {
    return [this](const capture::Leaves& leaves) {
      [[maybe_unused]] size_t pos = 0;  // unused by functions of no arguments
      std::tuple<A...> rebuilt{capture::Pytree<A>::unflatten(leaves, pos)...};
      capture::Leaves result;
      if constexpr (std::is_void_v<R>) {
        std::apply(fn_, rebuilt);
      } else {
        capture::Pytree<std::decay_t<R>>::flatten(std::apply(fn_, rebuilt), result);
      }
      return result;
    };
  }

  F fn_;
  std::shared_ptr<capture::CompiledFunctionCore> core_;
};

// A compiled Module: the original is its submodule "_orig_mod" (so parameters(), state_dict() and
// optimizers see the same tensors, under PyTorch's OptimizedModule names); forward and operator()
// take the original forward's arguments.
template <typename M>
class CompiledModule : public nn::Module {
 public:
  CompiledModule(std::shared_ptr<M> module, CompileOptions options)
      : nn::Module("OptimizedModule"),
        orig_(module),
        compiled_(Forward{module.get()}, std::move(options), module->name(), module) {
    register_module("_orig_mod", module);
  }

  template <typename... Args>
  auto operator()(Args&&... args) {
    return compiled_(std::forward<Args>(args)...);
  }
  Tensor forward(const Tensor& input) override { return compiled_(input); }
  template <typename A, typename... Rest>
  auto forward(A&& a, Rest&&... rest) {
    return compiled_(std::forward<A>(a), std::forward<Rest>(rest)...);
  }
  const std::shared_ptr<M>& orig_mod() const { return orig_; }
  const capture::CompiledFunctionCore& core() const { return compiled_.core(); }
  template <typename... Args>
  std::string explain(Args&&... args) {
    return compiled_.explain(std::forward<Args>(args)...);
  }

 private:
  struct Forward {
    M* m;
    template <typename... A>
    auto operator()(const A&... args) const {
      return m->forward(args...);
    }
  };
  std::shared_ptr<M> orig_;
  Compiled<Forward> compiled_;
};

namespace capture {
template <typename T>
struct IsModulePtr : std::false_type {};
template <typename M>
struct IsModulePtr<std::shared_ptr<M>> : std::bool_constant<std::derived_from<M, nn::Module>> {};
template <typename T>
inline constexpr bool is_module_ptr_v = IsModulePtr<std::remove_cvref_t<T>>::value;
}  // namespace capture

template <typename M>
requires std::derived_from<M, nn::Module> std::shared_ptr<CompiledModule<M>> compile(
    const std::shared_ptr<M>& module, CompileOptions options = {}) {
  KILN_CHECK(module != nullptr, "compile: expected a module, got a null pointer");
  return std::make_shared<CompiledModule<M>>(module, std::move(options));
}

template <typename F>
requires(!capture::is_module_ptr_v<F>) Compiled<std::decay_t<F>> compile(
    F&& fn, CompileOptions options = {}, const SourceLocation& loc = SourceLocation::current()) {
  if constexpr (std::is_constructible_v<bool, const std::decay_t<F>&>) {
    KILN_CHECK(static_cast<bool>(fn), "compile: expected a callable, got an empty function");
  }
  return Compiled<std::decay_t<F>>(std::forward<F>(fn), std::move(options),
                                   capture::callable_name(loc));
}

// explain(fn, args...): what compiling fn would do for these arguments.
template <typename F, typename... Args>
std::string explain(F&& fn, Args&&... args) {
  auto compiled = compile(std::forward<F>(fn));
  if constexpr (capture::is_module_ptr_v<F>) {
    return compiled->explain(std::forward<Args>(args)...);
  } else {
    return compiled.explain(std::forward<Args>(args)...);
  }
}

}  // namespace kiln
