// The cache of one compiled function: entries (guards plus what to run), recompiles, the cache
// size limit with its eager fallback, and the per-graph compile step (passes, logs, debug folder,
// backend).
#include "amp/autocast_state.h"
#include "capture/chosen_backend.h"
#include "capture/compile_check.h"
#include "capture/dynamic_policy.h"
#include "capture/guards.h"
#include "capture/symbolic_interpreter.h"
#include "capture/trace_session.h"
#include "capture/warnings.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/capture/compile.h>
#include <kiln/capture/debug_dir.h>
#include <kiln/capture/logs.h>
#include <kiln/core/error.h>
#include <kiln/core/small_vector.h>
#include <kiln/symbolic/guard_checker.h>
#include <kiln/symbolic/shape_env.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <unordered_map>

namespace kiln {

namespace {

std::atomic<int> g_cache_size_limit{8};

std::mutex& warning_mutex() {
  static std::mutex m;
  return m;
}
WarningHandler& warning_handler() {
  static WarningHandler h;
  return h;
}

}  // namespace

int cache_size_limit() { return g_cache_size_limit.load(); }
void set_cache_size_limit(int limit) {
  KILN_CHECK(limit >= 0, "set_cache_size_limit: expected a limit >= 0, got {}", limit);
  g_cache_size_limit.store(limit);
}

WarningHandler set_warning_handler(WarningHandler handler) {
  std::lock_guard lock(warning_mutex());
  return std::exchange(warning_handler(), std::move(handler));
}

void graph_break(const SourceLocation& loc) {
  if (capture::TraceSession* s = capture::TraceSession::current()) {
    s->graph_break("kiln::graph_break() was called", graph::SourceLoc{loc.file_name(), loc.line()});
  }
}

namespace capture {

void warn(std::string_view message) {
  std::lock_guard lock(warning_mutex());
  if (warning_handler()) {
    warning_handler()(message);
  } else {
    std::cerr << "kiln: warning: " << message << "\n";
  }
}

std::string callable_name(const SourceLocation& loc) {
  return fmt::format("function compiled at {}:{}",
                     std::filesystem::path(loc.file_name()).filename().string(), loc.line());
}

// One cached compilation: the guards, and either one graph to run without calling the function
// again, or (the function breaks into several graphs) a mark that it is re-traced on every call.
// Traced with dynamic dimensions, its size guards on those dimensions are the ShapeEnv's
// GuardChecker, which reads their sizes in `dynamic_dims` order.
struct CacheEntry {
  std::unique_ptr<Guards> guards;
  std::vector<DynamicDim> dynamic_dims;
  std::optional<symbolic::GuardChecker> shape_guards;
  bool breaks = false;
  std::vector<InputBinding> bindings;
  CompiledGraph compiled;
  bool grad_enabled = true;
  std::vector<ResultSlot> results;

  // The sizes of the dynamic dimensions (the checker's inputs); inline for up to 16 of them.
  SmallVector<int64_t, 16> dynamic_sizes(const Leaves& args) const {
    SmallVector<int64_t, 16> sizes;
    for (const DynamicDim& d : dynamic_dims) sizes.push_back(args[d.arg].to_tensor().size(d.dim));
    return sizes;
  }
  // The cache-hit check: the guards first (they verify ranks, so the sizes can be read).
  bool check(const Leaves& args, GlobalState state) const {
    if (!guards->check(args, state)) return false;
    if (!shape_guards) return true;
    const auto sizes = dynamic_sizes(args);
    return shape_guards->check(std::span<const int64_t>(sizes.data(), sizes.size()));
  }
  std::optional<std::string> first_failure(const Leaves& args, GlobalState state) const {
    if (auto failure = guards->first_failure(args, state)) return failure;
    if (!shape_guards) return std::nullopt;
    const auto sizes = dynamic_sizes(args);
    std::string why =
        shape_guards->explain_failure(std::span<const int64_t>(sizes.data(), sizes.size()));
    if (why.empty()) return std::nullopt;
    return "size guard failed: " + why;
  }
};

class FunctionCache {
 public:
  FunctionCache(CompileOptions options, std::string name, std::shared_ptr<nn::Module> module)
      : options_(std::move(options)), name_(std::move(name)), module_(std::move(module)) {
    NamedBackend chosen = chosen_backend(options_.backend);
    backend_name_ = std::move(chosen.name);
    backend_ = std::move(chosen.backend);
    symbolic_backend_ = chosen.traits.symbolic_graphs;
    static const char* kModes[] = {"default", "reduce-overhead", "max-autotune",
                                   "max-autotune-no-cudagraphs"};
    bool known = false;
    for (const char* m : kModes) known = known || options_.mode == m;
    KILN_CHECK(known,
               "compile: unknown mode \"{}\"; expected default, reduce-overhead, max-autotune or "
               "max-autotune-no-cudagraphs",
               options_.mode);
  }

  Leaves call(const Leaves& args, const CompiledFunctionCore::RunUser& run);
  std::string explain(const Leaves& args, const CompiledFunctionCore::RunUser& run);
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
    segments_.clear();
    segment_order_.clear();
    warned_ = false;
    automatic_dynamic_.clear();
  }
  size_t size() {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }
  const std::string& name() const { return name_; }

 private:
  TraceSession::Config session_config(GlobalState state, bool cache_segments,
                                      std::vector<std::string>* explain_log,
                                      std::vector<DynamicDim> dynamic_dims = {});
  CompiledGraph compile_graph(const graph::Graph& g, std::span<const Tensor> inputs, size_t index,
                              bool cache_segments, std::vector<std::string>* explain_log,
                              symbolic::ShapeEnv* env);
  void remember_segment(const std::string& key, const CompiledGraph& compiled,
                        std::vector<symbolic::Guard> added_guards);
  // The dimensions to trace as symbols for `args` (empty for a backend without symbolic graphs).
  std::vector<DynamicDim> dynamic_dims_for(const Leaves& args);
  // Automatic dynamic: a miss on `last` caused only by changed sizes marks those dims dynamic.
  void note_size_changes(const CacheEntry& last, const Leaves& args, GlobalState state);
  Leaves run_entry(const CacheEntry& e, const Leaves& args);
  // The entry whose guards pass, else why the newest failed and whether the function now runs
  // eagerly (the cache size limit).
  struct Lookup {
    std::shared_ptr<CacheEntry> hit;
    std::optional<std::string> reason;
    bool eager = false;
  };
  Lookup lookup(const Leaves& args, GlobalState state);

  CompileOptions options_;
  std::string name_;
  std::shared_ptr<nn::Module> module_;
  std::string backend_name_;
  Backend backend_;
  std::mutex mutex_;
  // Held while a cache miss traces and compiles (never while a cache hit runs).
  std::mutex compile_mutex_;
  std::vector<std::shared_ptr<CacheEntry>> entries_;
  // Graphs of functions that break, by structural key: re-traced calls reuse them. A backend may
  // add guards while it compiles a symbolic graph (a decomposition branching on a size); the
  // code holds only where they do, so they are kept with it and checked on reuse.
  struct Segment {
    CompiledGraph compiled;
    std::vector<symbolic::Guard> added_guards;
  };
  std::unordered_map<std::string, std::vector<Segment>> segments_;
  std::deque<std::string> segment_order_;  // insertion order, for eviction
  static constexpr size_t kMaxSegments = 64;
  static constexpr size_t kMaxSegmentsPerKey = 8;  // differing only in the backend's guards
  bool warned_ = false;
  size_t compilations_ = 0;
  bool symbolic_backend_ = false;
  bool logged_static_backend_ = false;
  // Set once a trace with symbolic sizes failed on an op that needs concrete ones: the function
  // is traced with static sizes from then on (under mutex_).
  bool static_only_ = false;
  AutomaticDynamicDims automatic_dynamic_;  // under mutex_
};

namespace {

// Every live function cache, for reset().
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::weak_ptr<FunctionCache>>& registry() {
  static std::vector<std::weak_ptr<FunctionCache>> r;
  return r;
}

}  // namespace

CompiledGraph FunctionCache::compile_graph(const graph::Graph& g, std::span<const Tensor> inputs,
                                           size_t index, bool cache_segments,
                                           std::vector<std::string>* explain_log,
                                           symbolic::ShapeEnv* env) {
  const bool symbolic = graph::has_symbolic_sizes(g);
  KILN_CHECK(!symbolic || symbolic_backend_,
             "compile: backend {} was given a graph with symbolic sizes", backend_name_);
  std::string key;
  if (cache_segments) {
    key = g.structural_key();
    // A symbolic graph holds for the sizes its guards allow: the same structure under other
    // guards is another graph.
    if (symbolic && env) key += "\n" + env->guards_str();
    std::lock_guard lock(mutex_);
    if (auto it = segments_.find(key); it != segments_.end()) {
      for (const Segment& segment : it->second) {
        const auto& added = segment.added_guards;
        if (env && !std::all_of(added.begin(), added.end(),
                                [env](const symbolic::Guard& g) { return env->holds(g); })) {
          continue;
        }
        for (const symbolic::Guard& g : added) env->replay(g);
        return segment.compiled;
      }
    }
  }
  const size_t guards_before = env ? env->guards().size() : 0;
  const std::string graph_name = fmt::format("graph {} of {}", index, name_);
  if (explain_log) explain_log->push_back(g.str());
  logs::log(logs::Channel::graph, fmt::format("{}:\n{}", graph_name, g.str()));
  if (auto dir = debug::DebugDir::for_compilation(
          fmt::format("{}_graph_{}_{}", name_, index, compilations_++))) {
    dir->write("graph.txt", g.str());
  }
  BackendContext context{options_.mode, options_.options, graph_name};
  CompiledGraph compiled = run_backend(backend_name_, backend_, g, inputs, context);
  if (auto check = compile_check_from_environment()) {
    compiled = checked_graph(g, std::move(compiled), inputs, backend_name_, backend_,
                             std::move(context), *check);
  }
  if (!cache_segments) return compiled;
  // Kept once its first call (the trace session's, right after this) succeeds: a backend may
  // compile lazily on that call (aot traces then) and add guards to `env` there too.
  auto pending = std::make_shared<std::atomic<bool>>(true);
  return [this, pending, compiled = std::move(compiled), key = std::move(key), env,
          guards_before](std::span<const Tensor> in) {
    if (!pending->load()) return compiled(in);
    std::vector<Tensor> out = compiled(in);
    std::vector<symbolic::Guard> added;
    if (env) {
      added.assign(env->guards().begin() + static_cast<std::ptrdiff_t>(guards_before),
                   env->guards().end());
    }
    remember_segment(key, compiled, std::move(added));
    pending->store(false);
    return out;
  };
}

void FunctionCache::remember_segment(const std::string& key, const CompiledGraph& compiled,
                                     std::vector<symbolic::Guard> added_guards) {
  std::lock_guard lock(mutex_);
  // Bounded: a function whose graph changes every call (a host counter baked into it) must not
  // grow the cache without end.
  if (segment_order_.size() >= kMaxSegments) {
    segments_.erase(segment_order_.front());
    segment_order_.pop_front();
  }
  auto [it, inserted] = segments_.try_emplace(key);
  if (it->second.size() >= kMaxSegmentsPerKey) it->second.erase(it->second.begin());
  it->second.push_back({compiled, std::move(added_guards)});
  if (inserted) segment_order_.push_back(key);
}

TraceSession::Config FunctionCache::session_config(GlobalState state, bool cache_segments,
                                                   std::vector<std::string>* explain_log,
                                                   std::vector<DynamicDim> dynamic_dims) {
  TraceSession::Config c;
  c.function_name = name_;
  c.fullgraph = options_.fullgraph && explain_log == nullptr;
  c.grad_enabled = state.grad_enabled;
  c.module = module_;
  if (!dynamic_dims.empty()) {
    c.shape_env = symbolic::ShapeEnv::create();
    c.dynamic_dims = std::move(dynamic_dims);
  }
  c.compile = [this, cache_segments, explain_log, env = c.shape_env.get()](
                  const graph::Graph& g, std::span<const Tensor> inputs, size_t index) {
    return compile_graph(g, inputs, index, cache_segments, explain_log, env);
  };
  return c;
}

std::vector<DynamicDim> FunctionCache::dynamic_dims_for(const Leaves& args) {
  AutomaticDynamicDims automatic;
  {
    std::lock_guard lock(mutex_);
    automatic = automatic_dynamic_;
  }
  std::vector<DynamicDim> dims = plan_dynamic_dims(args, options_.dynamic, automatic);
  {
    std::lock_guard lock(mutex_);
    if (static_only_) return {};
  }
  if (dims.empty() || symbolic_backend_) return dims;
  std::lock_guard lock(mutex_);
  if (!logged_static_backend_) {
    logged_static_backend_ = true;
    logs::log(logs::Channel::dynamic,
              fmt::format("{}: backend {} takes only static graphs; its dimensions stay static "
                          "(one compilation per size)",
                          name_, backend_name_));
  }
  return {};
}

void FunctionCache::note_size_changes(const CacheEntry& last, const Leaves& args,
                                      GlobalState state) {
  if (options_.dynamic.has_value()) return;
  const auto changed = last.guards->size_only_changes(args, state);
  if (!changed) return;
  for (const DynamicDim& d : *changed) {
    if (automatic_dynamic_.insert({d.arg, d.dim}).second) {
      logs::log(logs::Channel::dynamic,
                fmt::format("{}: automatic dynamic: arg {} dim {} changed size; it is dynamic "
                            "from now on",
                            name_, d.arg, d.dim));
    }
  }
}

Leaves FunctionCache::run_entry(const CacheEntry& e, const Leaves& args) {
  std::vector<Tensor> inputs;
  inputs.reserve(e.bindings.size());
  for (const InputBinding& b : e.bindings) {
    inputs.push_back(b.kind == InputBinding::Kind::UserArg ? args[b.leaf].to_tensor() : b.held);
  }
  // The function's ops may have run under another grad mode than the call's (a no_grad body).
  GradModeScope grad(e.grad_enabled);
  // Autocast's casts are in the graph already (traced under the state the guards hold).
  amp::AutocastPause casts_recorded;
  std::vector<Tensor> outputs = e.compiled(inputs);
  Leaves result;
  result.reserve(e.results.size());
  for (const ResultSlot& slot : e.results) {
    result.push_back(slot.output ? ops::IValue(outputs[*slot.output]) : slot.constant);
  }
  return result;
}

// A graph that reads tensors the function captured (optimizer state, gradients, a tensor held by
// reference) cannot be replayed without running the function: what it captures, and the host
// values around it (an optimizer's step count, which gradients exist), may change between calls.
// Scalars wrapped into tensors are constants of the trace and do not count.
namespace {
bool reads_captured_tensors(const TraceSession& session) {
  const TracedGraph& g = session.graphs().front();
  const std::vector<graph::Node*> inputs = g.graph.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputBinding& b = g.bindings[i];
    if (inputs[i]->role == graph::InputRole::Constant && b.kind == InputBinding::Kind::Held &&
        !b.held.impl()->is_wrapped_number()) {
      return true;
    }
  }
  return false;
}
}  // namespace

FunctionCache::Lookup FunctionCache::lookup(const Leaves& args, GlobalState state) {
  Lookup found;
  std::lock_guard lock(mutex_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if ((*it)->check(args, state)) {
      found.hit = *it;
      return found;
    }
  }
  if (!entries_.empty()) {
    found.reason = entries_.back()->first_failure(args, state);
    note_size_changes(*entries_.back(), args, state);
  }
  if (static_cast<int>(entries_.size()) >= cache_size_limit()) {
    found.eager = true;
    if (!warned_) {
      warned_ = true;
      warn(fmt::format(
          "{} reached the cache size limit ({} compiled entries) and runs eagerly from now on; "
          "last recompile reason: {}",
          name_, cache_size_limit(), found.reason.value_or("none")));
    }
  }
  return found;
}

Leaves FunctionCache::call(const Leaves& args, const CompiledFunctionCore::RunUser& run) {
  // Disabled, or called while another compiled function traces (the outer trace records it).
  if (options_.disable || TraceSession::current() != nullptr) return run(args);
  const GlobalState state = GlobalState::current();
  Lookup found = lookup(args, state);
  // Threads that miss together compile once: the first traces, the others wait for it and then
  // find its entry (as PyTorch's compiles, serialized by the GIL), instead of each adding one.
  std::unique_lock<std::mutex> compiling;
  if (!found.hit && !found.eager) {
    compiling = std::unique_lock(compile_mutex_);
    found = lookup(args, state);
  }
  auto& [hit, reason, eager] = found;
  if (eager || (hit && !hit->breaks)) {
    if (compiling.owns_lock()) compiling.unlock();  // another thread compiled it meanwhile
    return eager ? run(args) : run_entry(*hit, args);
  }
  if (reason)
    logs::log(logs::Channel::recompiles, fmt::format("recompiling {}: {}", name_, *reason));
  // Trace (first call, a recompile, or a function that breaks into several graphs).
  // A function that breaks is re-traced with the dimensions its entry was traced with.
  std::vector<DynamicDim> dims = hit ? hit->dynamic_dims : dynamic_dims_for(args);
  TraceSession::Config config = session_config(state, /*cache_segments=*/true, nullptr, dims);
  std::shared_ptr<symbolic::ShapeEnv> env = config.shape_env;
  auto traced = std::make_unique<TraceSession>(std::move(config));
  Leaves result;
  try {
    result = traced->trace(args, run);
  } catch (const Error& e) {
    // An op on the way needs concrete sizes (its meta function or decomposition reads them): the
    // call is traced again with static sizes, and so is every later one, as PyTorch specializes
    // what it cannot trace symbolically. Only before any graph ran: a graph break that already
    // ran part of the function must not run it twice.
    if (dims.empty() || !traced->graphs().empty() ||
        std::string_view(e.what()).find("symbolic size") == std::string_view::npos) {
      throw;
    }
    logs::log(logs::Channel::dynamic,
              fmt::format("{}: tracing with symbolic sizes failed ({}); traced with static sizes, "
                          "now and for every later call",
                          name_, e.what()));
    {
      std::lock_guard lock(mutex_);
      static_only_ = true;
    }
    dims.clear();
    env = nullptr;
    traced.reset();  // the failed session first: it still holds this thread's current session
    traced = std::make_unique<TraceSession>(
        session_config(state, /*cache_segments=*/true, nullptr, dims));
    result = traced->trace(args, run);
  }
  TraceSession& session = *traced;
  if (hit) return result;
  auto entry = std::make_shared<CacheEntry>();
  entry->guards = std::make_unique<Guards>(args, state, module_, dims);
  if (env) {
    entry->shape_guards.emplace(*env);
    entry->dynamic_dims = std::move(dims);
  }
  entry->breaks = session.graphs().size() != 1 || reads_captured_tensors(session);
  if (session.graphs().size() == 1 && entry->breaks) {
    logs::log(logs::Channel::perf_hints,
              fmt::format("{} reads tensors it captured (neither arguments nor module state): it "
                          "is re-traced on every call, reusing its compiled graph while the "
                          "graph is unchanged",
                          name_));
  }
  if (!entry->breaks) {
    const TracedGraph& g = session.graphs().front();
    entry->bindings = g.bindings;
    for (InputBinding& b : entry->bindings) {
      // Keep module and captured tensors; user arguments come from each call.
      if (b.kind == InputBinding::Kind::UserArg) b.held = Tensor();
    }
    entry->compiled = g.compiled;
    entry->grad_enabled = g.grad_enabled;
    entry->results = session.result_slots();
  }
  if (auto dir = debug::DebugDir::for_compilation(fmt::format("{}_guards_{}", name_, size()))) {
    std::string text;
    for (const std::string& line : entry->guards->describe()) text += line + "\n";
    if (env) text += env->guards_str() + "\n";
    dir->write("guards.txt", text);
  }
  if (logs::enabled(logs::Channel::guards)) {
    std::string text = fmt::format("guards of {} (entry {}):", name_, size());
    for (const std::string& line : entry->guards->describe()) text += "\n  " + line;
    if (const auto& checker = entry->shape_guards) {
      for (size_t i = 0; i < checker->num_checks(); ++i) text += "\n  " + checker->description(i);
    }
    logs::log(logs::Channel::guards, text);
  }
  std::lock_guard lock(mutex_);
  entries_.push_back(std::move(entry));
  return result;
}

std::string FunctionCache::explain(const Leaves& args, const CompiledFunctionCore::RunUser& run) {
  const GlobalState state = GlobalState::current();
  std::vector<std::string> graph_texts;
  TraceSession session(session_config(state, /*cache_segments=*/false, &graph_texts));
  session.trace(args, run);
  const Guards guards(args, state, module_);
  std::string out = fmt::format("explain: {}\n", name_);
  out += fmt::format("graphs: {}\n", session.graphs().size());
  out += fmt::format("graph breaks: {}\n", session.breaks().size());
  for (size_t i = 0; i < session.breaks().size(); ++i) {
    out += fmt::format("  {}. {}\n", i + 1, session.breaks()[i].str());
  }
  out += "ops per graph: [";
  for (size_t i = 0; i < session.graphs().size(); ++i) {
    out += fmt::format("{}{}", i ? ", " : "", session.graphs()[i].graph.num_ops());
  }
  out += "]\n";
  for (size_t i = 0; i < session.graphs().size(); ++i) {
    out += fmt::format("graph {}:\n{}\n", i, session.graphs()[i].graph.str());
  }
  out += "guards:\n";
  for (const std::string& line : guards.describe()) out += "  " + line + "\n";
  return out;
}

CompiledFunctionCore::CompiledFunctionCore(CompileOptions options, std::string name,
                                           std::shared_ptr<nn::Module> module)
    : cache_(
          std::make_shared<FunctionCache>(std::move(options), std::move(name), std::move(module))) {
  std::lock_guard lock(registry_mutex());
  auto& r = registry();
  std::erase_if(r, [](const std::weak_ptr<FunctionCache>& w) { return w.expired(); });
  r.push_back(cache_);
}

CompiledFunctionCore::~CompiledFunctionCore() = default;

Leaves CompiledFunctionCore::call(const Leaves& args, const RunUser& run) {
  return cache_->call(args, run);
}

std::string CompiledFunctionCore::explain(const Leaves& args, const RunUser& run) {
  return cache_->explain(args, run);
}

const std::string& CompiledFunctionCore::name() const { return cache_->name(); }

size_t CompiledFunctionCore::cache_entries() const { return cache_->size(); }

}  // namespace capture

void reset() {
  std::vector<std::shared_ptr<capture::FunctionCache>> live;
  {
    std::lock_guard lock(capture::registry_mutex());
    for (const auto& w : capture::registry()) {
      if (auto c = w.lock()) live.push_back(std::move(c));
    }
  }
  for (const auto& c : live) c->clear();
}

}  // namespace kiln
