#include "capture/trace_session.h"

#include "autograd/autograd_meta.h"
#include "graph/meta_twins.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/capture/logs.h>
#include <kiln/core/error.h>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace kiln::capture {

namespace {

thread_local TraceSession* tls_session = nullptr;

void materialize_hook(TensorImpl& proxy, const char* what) {
  if (TraceSession* s = tls_session) s->materialize(proxy, what);
}

// Gives a proxy the memory and geometry of its computed value, in place.
void adopt(TensorImpl& proxy, const Tensor& real) {
  KILN_CHECK(real.defined() && real.dtype() == proxy.dtype(),
             "compile: a compiled graph returned {} where the traced value has dtype {}",
             real.defined() ? dtype_name(real.dtype()) : "an undefined tensor",
             dtype_name(proxy.dtype()));
  proxy.set_storage(real.storage());
  proxy.set_sizes_and_strides(real.sym_sizes(), real.sym_strides(), real.sym_storage_offset());
  proxy.set_requires_grad(real.requires_grad());
  // A leaf that requires grad gets its autograd record now if it has none yet, so that the proxy
  // shares it: gradients reaching the proxy (an op run concretely at a graph break) accumulate
  // into the leaf's .grad, not into a record of the proxy's own.
  if (real.requires_grad() && !real.impl()->shared_autograd_meta()) autograd::meta_of(real);
  proxy.set_autograd_meta(real.impl()->shared_autograd_meta());
  proxy.set_view_base(real.impl()->view_base());
}

}  // namespace

std::string GraphBreak::str() const {
  return loc.known() ? fmt::format("{} (at {})", reason, loc.str()) : reason;
}

TraceSession::TraceSession(Config config) : config_(std::move(config)) {
  TensorImpl::set_materialize_hook(&materialize_hook);
  if (config_.module) {
    for (const auto& item : config_.module->named_parameters()) {
      module_tensor_names_[item.second.impl()] = item.first;
      module_tensor_roles_[item.second.impl()] = graph::InputRole::Parameter;
    }
    for (const auto& item : config_.module->named_buffers()) {
      if (!item.second.defined()) continue;
      module_tensor_names_[item.second.impl()] = item.first;
      module_tensor_roles_[item.second.impl()] = graph::InputRole::Buffer;
    }
  }
}

TraceSession::~TraceSession() {
  if (!finished_) abandon_proxies();
  if (tls_session == this) tls_session = previous_;
}

TraceSession* TraceSession::current() { return tls_session; }

graph::SourceLoc TraceSession::here() const {
  const SourceLocation* site = ops::current_call_site();
  if (site == nullptr) return {};
  return graph::SourceLoc{site->file_name(), site->line()};
}

std::optional<graph::Value> TraceSession::known_value(const Tensor& t) const {
  auto it = values_.find(t.impl());
  if (it == values_.end()) return std::nullopt;
  // A dead tensor's address may be reused by a new one.
  auto live = it->second.impl.lock();
  if (!live || live.get() != t.impl()) return std::nullopt;
  return it->second.value;
}

graph::Value TraceSession::value_of(const Tensor& t) {
  if (auto v = known_value(t)) return *v;
  // `detach()` of a traced tensor is a new tensor on the same proxy storage with the same
  // geometry and no gradient history: recorded as the `detach` op on the traced value, so that
  // the graph cuts the gradient there as eager autograd does.
  if (t.impl()->is_proxy()) {
    if (auto traced = detached_from(t)) {
      static const ops::OpDef& detach = ops::OpRegistry::instance().get("detach");
      graph::ValueMeta meta = graph::ValueMeta::of(t);
      meta.device = t.device();
      meta.requires_grad = false;
      graph::Node& node = graph_.add_op(detach, {ops::IValue(Tensor())}, {{0, -1, *traced}},
                                        {std::move(meta)}, here());
      values_[t.impl()] = Tracked{node.out(0), t.impl_ptr()};
      return node.out(0);
    }
  }
  KILN_CHECK(!t.impl()->is_proxy(),
             "compile: a tensor traced by another compiled call was used in {} before that call "
             "finished",
             config_.function_name);
  graph::InputRole role = graph::InputRole::Constant;
  std::string label = "captured tensor";
  if (auto it = module_tensor_names_.find(t.impl()); it != module_tensor_names_.end()) {
    role = module_tensor_roles_.at(t.impl());
    label = it->second;
  }
  graph::Node& in = graph_.add_input(role, std::move(label), graph::ValueMeta::of(t));
  bindings_.push_back(InputBinding{InputBinding::Kind::Held, 0, t});
  values_[t.impl()] = Tracked{in.out(), t.impl_ptr()};
  return in.out();
}

std::optional<graph::Value> TraceSession::detached_from(const Tensor& t) const {
  // Raw encodings: the same sizes, symbols included, without guarding on them.
  const auto same = [](SymIntList a, SymIntList b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const SymInt& x, const SymInt& y) { return x.raw() == y.raw(); });
  };
  for (const auto& [impl, tracked] : values_) {
    const auto live = tracked.impl.lock();
    if (!live || live.get() != impl || live->storage() != t.impl()->storage()) continue;
    if (live->dtype() == t.dtype() && same(live->sym_sizes(), t.sym_sizes()) &&
        same(live->sym_strides(), t.sym_strides()) &&
        live->sym_storage_offset().raw() == t.sym_storage_offset().raw()) {
      return tracked.value;
    }
  }
  return std::nullopt;
}

Tensor TraceSession::make_proxy(const Tensor& like, Device device,
                                std::shared_ptr<StorageImpl> storage, bool requires_grad) {
  if (!storage) storage = std::make_shared<StorageImpl>(like.storage()->nbytes(), device);
  auto impl = std::make_shared<TensorImpl>(std::move(storage), like.dtype(), like.sym_sizes(),
                                           like.sym_strides(), like.sym_storage_offset());
  impl->set_requires_grad(requires_grad);
  return Tensor(std::move(impl));
}

std::vector<SymDimVector> TraceSession::symbolic_arg_sizes(const Leaves& args) const {
  if (!config_.shape_env) {
    KILN_CHECK(config_.dynamic_dims.empty(),
               "compile: {} lists dynamic dimensions but has no shape environment",
               config_.function_name);
    return {};
  }
  std::vector<SymDimVector> sizes(args.size());
  for (const DynamicDim& d : config_.dynamic_dims) {
    KILN_CHECK(d.arg < args.size() && args[d.arg].is_tensor() && args[d.arg].to_tensor().defined(),
               "compile: {}: dynamic dimension {} of argument {}, which is not a tensor",
               config_.function_name, d.dim, d.arg);
    const Tensor& real = args[d.arg].to_tensor();
    const int64_t dim = wrap_dim(d.dim, real.dim(), "compile: dynamic dimension");
    SymDimVector& arg_sizes = sizes[d.arg];
    if (arg_sizes.empty()) arg_sizes.assign(real.sym_sizes().begin(), real.sym_sizes().end());
    const auto u = static_cast<size_t>(dim);
    KILN_CHECK(!arg_sizes[u].is_symbolic(), "compile: {}: dimension {} of argument {} listed twice",
               config_.function_name, dim, d.arg);
    arg_sizes[u] = config_.shape_env->create_symbol(
        real.size(dim), fmt::format("arg{}.size({})", d.arg, dim), d.min, d.max);
  }
  return sizes;
}

Tensor TraceSession::make_symbolic_proxy(const Tensor& real, const SymDimVector& sizes) {
  // The storage's byte size is only a hint here: graph values of symbolic size own no memory.
  auto storage = std::make_shared<StorageImpl>(real.storage()->nbytes(), real.device());
  auto impl = std::make_shared<TensorImpl>(std::move(storage), real.dtype(), SymIntList(sizes),
                                           SymIntList(contiguous_strides(SymIntList(sizes))),
                                           SymInt(int64_t{0}));
  impl->set_requires_grad(real.requires_grad());
  return Tensor(std::move(impl));
}

Leaves TraceSession::trace(const Leaves& args, const std::function<Leaves(const Leaves&)>& run) {
  args_ = &args;
  Leaves proxied = args;
  const std::vector<SymDimVector> symbolic_sizes = symbolic_arg_sizes(args);
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_tensor() || !args[i].to_tensor().defined()) continue;
    const Tensor& real = args[i].to_tensor();
    Tensor proxy = symbolic_sizes.empty() || symbolic_sizes[i].empty()
                       ? make_proxy(real, real.device(), nullptr, real.requires_grad())
                       : make_symbolic_proxy(real, symbolic_sizes[i]);
    // A number wrapped as a tensor traces as one (type promotion ignores it; guards keep it so).
    proxy.impl()->set_wrapped_number(real.impl()->is_wrapped_number());
    graph::Node& in = graph_.add_input(graph::InputRole::UserArg, fmt::format("arg {}", i),
                                       graph::ValueMeta::of(proxy));
    bindings_.push_back(InputBinding{InputBinding::Kind::UserArg, i, Tensor()});
    values_[proxy.impl()] = Tracked{in.out(), proxy.impl_ptr()};
    proxies_.push_back(Tracked{in.out(), proxy.impl_ptr()});
    proxied[i] = ops::IValue(std::move(proxy));
  }
  previous_ = tls_session;
  tls_session = this;
  Leaves result;
  {
    ops::DispatchModeGuard mode(this);
    result = run(proxied);
  }
  // The result's tensors are the last graph's outputs; constants are kept as they are.
  std::vector<graph::Value> extra;
  std::vector<ResultSlot> slots;
  for (const ops::IValue& leaf : result) {
    ResultSlot slot;
    if (leaf.is_tensor() && leaf.to_tensor().defined()) {
      const graph::Value v = value_of(leaf.to_tensor());
      auto it = std::find(extra.begin(), extra.end(), v);
      slot.output = static_cast<size_t>(it - extra.begin());
      if (it == extra.end()) extra.push_back(v);
    } else {
      slot.constant = leaf;
    }
    slots.push_back(std::move(slot));
  }
  flush(extra, /*final=*/true);
  result_slots_ = std::move(slots);
  finished_ = true;
  tls_session = previous_;
  return result;
}

std::vector<Tensor> TraceSession::dispatch(const ops::OpDef& op, ops::Stack& args) {
  if (op.kind == ops::OpKind::Composite) {
    // Traced through: its inner ops come back here (the graph holds what the composite calls).
    ops::DispatchModeGuard again(this);
    return op.composite(args);
  }
  const bool has_meta = op.kind != ops::OpKind::Custom ||
                        static_cast<bool>(op.custom[static_cast<size_t>(DeviceType::Meta)]);
  if (!has_meta) {
    return run_concretely(op, args, fmt::format("{} has no meta function", op.full_name()));
  }
  graph::MetaTwins twins;
  ops::Stack meta_args = twins.twin_args(op.schema, args);
  std::vector<Tensor> meta_outputs;
  try {
    meta_outputs = ops::call_kernel(op, meta_args);
  } catch (const Error& e) {
    // Ops whose output sizes depend on the data refuse meta tensors; anything else is the user's
    // error, raised as eager would.
    if (op.kind != ops::OpKind::Custom) throw;
    return run_concretely(
        op, args,
        fmt::format("{} has a data-dependent output size ({})", op.full_name(), e.what()));
  }
  // out= ops resize their outputs: a proxy takes the new geometry; a real tensor cannot change
  // inside a graph, so its resize runs concretely.
  for (const Tensor& m : meta_outputs) {
    if (!m.defined()) continue;
    const Tensor* arg = twins.original(m);
    if (arg == nullptr ||
        (arg->sym_sizes() == m.sym_sizes() && arg->sym_strides() == m.sym_strides())) {
      continue;
    }
    if (!arg->impl()->is_proxy()) {
      return run_concretely(
          op, args,
          fmt::format("{} resizes a tensor made outside the compiled function", op.full_name()));
    }
  }
  for (const Tensor& m : meta_outputs) {
    if (!m.defined()) continue;
    const Tensor* arg = twins.original(m);
    if (arg == nullptr ||
        (arg->sym_sizes() == m.sym_sizes() && arg->sym_strides() == m.sym_strides())) {
      continue;
    }
    arg->impl()->set_storage(std::make_shared<StorageImpl>(m.storage()->nbytes(), arg->device()));
    arg->impl()->set_sizes_and_strides(m.sym_sizes(), m.sym_strides(), m.sym_storage_offset());
  }
  const Device device = graph::output_device(args);
  const bool grad_now = autograd::GradMode::is_enabled();
  const bool differentiates = op.differentiable && graph::any_requires_grad(args);
  if (differentiates && graph_grad_ && *graph_grad_ != grad_now) {
    graph_break(
        fmt::format("grad mode was {} inside the function", grad_now ? "enabled" : "disabled"),
        here());
  }
  if (differentiates && !graph_grad_) graph_grad_ = grad_now;
  const bool requires_grad = grad_now && differentiates;

  auto [node_args, uses] =
      graph::node_arguments(args, [this](const Tensor& t) { return value_of(t); });
  std::vector<graph::ValueMeta> metas;
  for (const Tensor& m : meta_outputs) {
    // An output the op leaves undefined (a backward op's unwanted gradient) has a placeholder.
    graph::ValueMeta vm = m.defined() ? graph::ValueMeta::of(m) : graph::ValueMeta{};
    vm.device = device;
    vm.requires_grad = requires_grad && m.defined() && is_floating_point(m.dtype());
    metas.push_back(std::move(vm));
  }
  graph::Node& node = graph_.add_op(op, std::move(node_args), std::move(uses), metas, here());

  std::vector<Tensor> outputs;
  outputs.reserve(meta_outputs.size());
  for (size_t i = 0; i < meta_outputs.size(); ++i) {
    const Tensor& m = meta_outputs[i];
    if (!m.defined()) {
      outputs.emplace_back();
      continue;
    }
    if (const Tensor* arg = twins.original(m)) {
      // In-place and out= ops return their argument itself, as in eager.
      outputs.push_back(*arg);
      continue;
    }
    std::shared_ptr<StorageImpl> storage;
    if (const Tensor* base = twins.storage_origin(m)) {
      // A view: it shares its base's (proxy) storage.
      if (base->impl()->is_proxy()) {
        storage = base->storage();
      } else {
        auto& shared = proxy_storage_of_[base->storage().get()];
        if (!shared) shared = std::make_shared<StorageImpl>(base->storage()->nbytes(), device);
        storage = shared;
      }
    }
    // As in eager, only floating outputs carry gradients (an index output does not).
    Tensor proxy =
        make_proxy(m, device, std::move(storage), requires_grad && is_floating_point(m.dtype()));
    const graph::Value v = node.out(static_cast<int>(i));
    values_[proxy.impl()] = Tracked{v, proxy.impl_ptr()};
    proxies_.push_back(Tracked{v, proxy.impl_ptr()});
    outputs.push_back(std::move(proxy));
  }
  return outputs;
}

std::vector<Tensor> TraceSession::run_concretely(const ops::OpDef& op, ops::Stack& args,
                                                 const std::string& reason) {
  graph_break(reason, here());
  ops::DispatchModeGuard off(nullptr);
  return ops::call(op, args);
}

void TraceSession::graph_break(const std::string& reason, graph::SourceLoc loc) {
  GraphBreak b{reason, loc};
  KILN_CHECK(!config_.fullgraph, "compile(fullgraph=true): graph break in {}: {}",
             config_.function_name, b.str());
  logs::log(logs::Channel::graph_breaks,
            fmt::format("graph break in {}: {}", config_.function_name, b.str()));
  breaks_.push_back(std::move(b));
  flush({}, /*final=*/false);
}

void TraceSession::materialize(TensorImpl& proxy, const char* what) {
  auto it = values_.find(&proxy);
  if (it == values_.end() || it->second.impl.lock().get() != &proxy) return;
  const graph::Value v = it->second.value;
  graph_break(fmt::format("{} needs the value of %{} ({})", what, v.node->name, v.meta().str()),
              here());
}

std::vector<Tensor> TraceSession::flush(const std::vector<graph::Value>& extra, bool final) {
  // The graph runs real kernels: no interception, the call's own grad mode, and no session for
  // data reads to report to.
  TraceSession* saved = tls_session;
  tls_session = nullptr;
  struct Restore {
    TraceSession* s;
    ~Restore() { tls_session = s; }
  } restore{saved};
  ops::DispatchModeGuard off(nullptr);

  std::vector<graph::Value> outputs = extra;
  std::vector<std::pair<std::shared_ptr<TensorImpl>, size_t>> targets;
  // Proxies of the graph's inputs (user arguments still referenced) take their memory straight
  // from the input, without becoming graph outputs.
  const std::vector<graph::Node*> in_nodes = graph_.inputs();
  std::vector<std::pair<std::shared_ptr<TensorImpl>, size_t>> input_targets;
  for (const Tracked& p : proxies_) {
    auto impl = p.impl.lock();
    // Every proxy of this window takes its value, the empty ones too: no memory is not "already
    // computed" for them (a zero-element proxy would otherwise keep its traced sizes, symbolic
    // ones included).
    if (!impl || impl->storage()->data() != nullptr || impl->storage()->device().is_meta()) {
      continue;
    }
    if (p.value.node->kind == graph::NodeKind::Input) {
      const auto pos = std::find(in_nodes.begin(), in_nodes.end(), p.value.node) - in_nodes.begin();
      input_targets.emplace_back(std::move(impl), static_cast<size_t>(pos));
      continue;
    }
    auto it = std::find(outputs.begin(), outputs.end(), p.value);
    targets.emplace_back(std::move(impl), static_cast<size_t>(it - outputs.begin()));
    if (it == outputs.end()) outputs.push_back(p.value);
  }
  graph_.set_outputs(outputs);

  std::vector<Tensor> inputs;
  inputs.reserve(bindings_.size());
  for (const InputBinding& b : bindings_) {
    inputs.push_back(b.kind == InputBinding::Kind::UserArg ? (*args_)[b.leaf].to_tensor() : b.held);
  }
  std::vector<Tensor> results;
  if (graph_.num_ops() == 0 && !final) {
    // Nothing recorded since the last flush: every output is an input.
    for (const graph::Value& v : outputs) {
      auto pos = std::find(in_nodes.begin(), in_nodes.end(), v.node) - in_nodes.begin();
      results.push_back(inputs[static_cast<size_t>(pos)]);
    }
  } else {
    graph::PassManager passes;
    passes.add(graph::dead_code_elimination()).add(graph::common_subexpression_elimination());
    passes.run(graph_);
    CompiledGraph compiled = config_.compile(graph_, inputs, graphs_.size());
    const bool grad = graph_grad_.value_or(config_.grad_enabled);
    {
      GradModeScope scope(grad);
      results = compiled(inputs);
    }
    KILN_CHECK(results.size() == graph_.outputs().size(),
               "compile: the compiled graph {} of {} returned {} tensors, expected {}",
               graphs_.size(), config_.function_name, results.size(), graph_.outputs().size());
    graphs_.push_back(TracedGraph{std::move(graph_), bindings_, std::move(compiled), grad});
  }
  for (auto& [impl, index] : targets) adopt(*impl, results[index]);
  for (auto& [impl, index] : input_targets) adopt(*impl, inputs[index]);
  reset_graph();
  results.resize(extra.size());
  return results;
}

void TraceSession::reset_graph() {
  graph_ = graph::Graph();
  bindings_.clear();
  values_.clear();
  proxies_.clear();
  proxy_storage_of_.clear();
  graph_grad_.reset();
}

void TraceSession::abandon_proxies() {
  // Proxies that outlive a failed trace become meta tensors: using them raises clear errors
  // instead of reading memory that does not exist.
  for (const Tracked& p : proxies_) {
    auto impl = p.impl.lock();
    if (impl && impl->is_proxy()) {
      impl->set_storage(make_storage(impl->storage()->nbytes(), kMeta));
    }
  }
  proxies_.clear();
}

}  // namespace kiln::capture
