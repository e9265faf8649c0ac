#include "aot/graph_tracer.h"

#include "graph/meta_twins.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/decomp/prims.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/indexing.h>
#include <kiln/ops/sym_size_ops.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include <algorithm>

namespace kiln::aot {

namespace {

// Ops the tracer calls itself (casts, views, the storage writes) are traced like the user's, but
// below autograd: they implement one op autograd already recorded.
class Reentry {
 public:
  explicit Reentry(ops::DispatchMode* mode) : mode_(mode) {}

 private:
  ops::DispatchModeGuard mode_;
  autograd::NoGradGuard no_grad_;
};

// Whether two tensors have one geometry (symbolic sizes compare through their environment).
bool same_geometry(const Tensor& a, const Tensor& b) {
  return a.sym_sizes() == b.sym_sizes() && a.sym_strides() == b.sym_strides() &&
         a.sym_storage_offset() == b.sym_storage_offset();
}

// `base` viewed with t's geometry (as_strided on symbolic sizes too).
Tensor view_like(const Tensor& base, const Tensor& t) {
  static const ops::OpDef& as_strided = ops::OpRegistry::instance().get("as_strided");
  return ops::call1(as_strided,
                    {base, t.sym_sizes().vec(), t.sym_strides().vec(), t.sym_storage_offset()});
}

graph::SourceLoc call_site() {
  const SourceLocation* site = ops::current_call_site();
  if (site == nullptr) return {};
  return graph::SourceLoc{site->file_name(), site->line()};
}

}  // namespace

GraphTracer::StorageState& GraphTracer::storage_state(const Tensor& t) {
  StorageState& s = storages_[t.storage().get()];
  if (!s.storage) s.storage = t.storage();
  return s;
}

void GraphTracer::track(const Tensor& proxy, graph::Value value) {
  storage_state(proxy).proxies.push_back(proxy.impl_ptr());
  set_value(proxy, value);
}

void GraphTracer::set_value(const Tensor& proxy, graph::Value value) {
  StorageState& s = storage_state(proxy);
  proxies_[proxy.impl()] = ProxyState{value, s.version, proxy.impl_ptr()};
  if (!value.defined()) return;
  const SymIntList sizes = proxy.sym_sizes(), strides = proxy.sym_strides();
  s.anchor = StorageState::Anchor{value, SymDimVector(sizes.begin(), sizes.end()),
                                  SymDimVector(strides.begin(), strides.end()),
                                  proxy.sym_storage_offset(), s.version};
}

Tensor GraphTracer::make_proxy(const Tensor& like, Device device,
                               std::shared_ptr<StorageImpl> storage) {
  if (!storage) storage = std::make_shared<StorageImpl>(like.storage()->nbytes(), device);
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), like.dtype(), like.sym_sizes(),
                                             like.sym_strides(), like.sym_storage_offset()));
}

Tensor GraphTracer::add_input(graph::InputRole role, std::string label,
                              const graph::ValueMeta& meta) {
  graph::Node& in = graph_.add_input(role, std::move(label), meta);
  Tensor proxy = graph::tensor_of_meta(meta, meta.device);
  track(proxy, in.out());
  return proxy;
}

graph::Value GraphTracer::value_of(const Tensor& t) {
  KILN_CHECK(t.defined(), "aot: an undefined tensor was used as a graph value");
  auto it = proxies_.find(t.impl());
  if (it != proxies_.end() && it->second.impl.lock().get() == t.impl()) {
    StorageState& s = storage_state(t);
    if (it->second.version == s.version) return it->second.value;
    // Its storage was written through another tensor: re-derive it from the storage's content.
    KILN_CHECK(s.flat_mode, "aot: internal error: a stale tensor on an unwritten storage");
    Tensor fresh;
    {
      Reentry again(this);
      fresh = view_like(s.flat, t);
    }
    const graph::Value v = value_of(fresh);
    set_value(t, v);
    return v;
  }
  if (auto storage = storages_.find(t.storage().get()); storage != storages_.end()) {
    // A tensor made on a traced storage without an op (autograd's saved variables alias their
    // tensor): the value of a traced tensor of the same geometry, or a view of one.
    Tensor same, any;
    for (const auto& p : storage->second.proxies) {
      auto impl = p.lock();
      if (!impl) continue;
      Tensor other(impl);
      if (!any.defined()) any = other;
      if (other.dtype() == t.dtype() && same_geometry(other, t)) {
        same = other;
        break;
      }
    }
    if (!any.defined() && !storage->second.flat_mode && storage->second.anchor &&
        storage->second.anchor->version == storage->second.version) {
      // Every traced tensor on the storage died: one of the anchor's geometry stands in.
      const StorageState::Anchor anchor = *storage->second.anchor;
      Tensor stand_in(std::make_shared<TensorImpl>(storage->second.storage, t.dtype(), anchor.sizes,
                                                   anchor.strides, anchor.offset));
      track(stand_in, anchor.value);
      any = stand_in;
      if (same_geometry(stand_in, t)) {
        same = stand_in;
      }
    }
    if (storage->second.flat_mode && !any.defined()) {
      Tensor view;
      {
        Reentry again(this);
        view = view_like(storage->second.flat, t);
      }
      const graph::Value v = value_of(view);
      track(t, v);
      return v;
    }
    if (same.defined() || any.defined()) {
      graph::Value v;
      if (same.defined()) {
        v = value_of(same);
      } else {
        Tensor view;
        {
          Reentry again(this);
          view = view_like(any, t);
        }
        v = value_of(view);
      }
      track(t, v);
      return v;
    }
  }
  auto real = reals_.find(t.impl());
  if (real != reals_.end() && real->second.second.lock().get() == t.impl()) {
    return real->second.first;
  }
  KILN_CHECK(!t.impl()->is_proxy(),
             "aot: a tensor traced elsewhere (another compiled call) was used while tracing");
  graph::Node& in =
      graph_.add_input(graph::InputRole::Constant, fmt::format("constant {}", constants_.size()),
                       graph::ValueMeta::of(t));
  if (t.impl()->is_wrapped_number() && t.dim() == 0 && t.device().is_cpu() &&
      t.storage()->data() != nullptr) {
    in.number = t.item();
  }
  constants_.push_back(t);
  reals_[t.impl()] = {in.out(), t.impl_ptr()};
  return in.out();
}

bool GraphTracer::written(const Tensor& t) const {
  auto it = storages_.find(t.storage().get());
  return it != storages_.end() && it->second.version > 0;
}

std::vector<Tensor> GraphTracer::record(const ops::OpDef& op, ops::Stack& args) {
  graph::MetaTwins twins;
  ops::Stack meta_args = twins.twin_args(op.schema, args);
  std::vector<Tensor> meta_outputs = ops::call_kernel(op, meta_args);
  const Device device = graph::output_device(args);

  auto [node_args, uses] =
      graph::node_arguments(args, [this](const Tensor& t) { return value_of(t); });
  std::vector<graph::ValueMeta> metas;
  for (const Tensor& m : meta_outputs) {
    // An output the op leaves undefined (convolution_backward's unwanted gradients) has no value
    // anyone reads: a placeholder keeps the output numbering.
    graph::ValueMeta vm = m.defined() ? graph::ValueMeta::of(m) : graph::ValueMeta{};
    vm.device = device;
    vm.requires_grad = false;
    metas.push_back(std::move(vm));
  }
  graph::Node& node = graph_.add_op(op, std::move(node_args), std::move(uses), metas, call_site());

  std::vector<Tensor> outputs;
  outputs.reserve(meta_outputs.size());
  for (size_t i = 0; i < meta_outputs.size(); ++i) {
    const Tensor& m = meta_outputs[i];
    if (!m.defined()) {
      outputs.emplace_back();
      continue;
    }
    if (const Tensor* arg = twins.original(m)) {
      outputs.push_back(*arg);  // an op returning its argument itself
      continue;
    }
    std::shared_ptr<StorageImpl> storage;
    const Tensor* base = twins.storage_origin(m);
    if (base != nullptr) {
      // A view shares its base's storage, so that writes through either are seen by both.
      if (proxies_.count(base->impl())) {
        storage = base->storage();
      } else {
        auto& shared = proxy_storage_of_real_[base->storage().get()];
        if (!shared) shared = std::make_shared<StorageImpl>(base->storage()->nbytes(), device);
        storage = shared;
      }
    }
    Tensor proxy = make_proxy(m, device, std::move(storage));
    if (base != nullptr && op.kind == ops::OpKind::View) {
      // Autograd tells views by their base (an in-place write through one gives the base a
      // CopySlices node), as for eager views.
      const std::shared_ptr<TensorImpl>& root =
          base->impl()->view_base() ? base->impl()->view_base() : base->impl_ptr();
      proxy.impl()->set_view_base(root);
    }
    track(proxy, node.out(static_cast<int>(i)));
    outputs.push_back(std::move(proxy));
  }
  return outputs;
}

namespace {

// Gives `t` the strides `meta` has, when they differ and describe a dense layout: the captured
// graph made layout-dependent choices (a reshape that viewed) on the op's own output strides, so a
// decomposition must hand back the same layout. A permutation that orders the meta strides
// outermost-first, a contiguous copy, and the inverse permutation do it.
Tensor match_layout(const Tensor& t, const Tensor& meta) {
  if (!t.defined() || !meta.defined()) return t;
  const SymIntList strides = meta.sym_strides();
  if (t.sym_strides() == strides || t.sym_numel() <= 1) return t;
  if (!graph::is_dense(meta.sym_sizes(), strides)) return t;  // no layout to match
  const std::vector<int64_t> order = graph::outermost_first(strides);
  std::vector<int64_t> inverse(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    inverse[static_cast<size_t>(order[k])] = static_cast<int64_t>(k);
  }
  return t.permute(order).contiguous().permute(inverse);
}

// Whether a tensor's layout covers its whole storage densely from offset 0 (then a value of that
// layout can stand for the storage).
bool covers_storage(const Tensor& t, int64_t storage_numel) {
  if (t.impl()->has_symbolic_sizes_strides()) {
    // A proxy of symbolic sizes has a storage sized by the hints: compare at the hints (a guard
    // on the element count would specialize the symbols).
    return t.sym_storage_offset().maybe_int() == 0 && t.sym_numel().maybe_int() == storage_numel &&
           graph::is_dense(t.sym_sizes(), t.sym_strides());
  }
  return t.storage_offset() == 0 && t.numel() == storage_numel &&
         graph::is_dense(t.sizes(), t.strides());
}

// The storage positions a tensor's elements occupy, in its element order.
Tensor storage_positions(const Tensor& t, int64_t storage_numel) {
  return arange(storage_numel, TensorOptions(kInt64).device(t.device()))
      .as_strided(t.sizes(), t.strides(), t.storage_offset())
      .reshape({-1});
}

}  // namespace

void GraphTracer::write(const Tensor& target, Tensor value) {
  {
    // What copy_ does to its source: cast to the target's dtype, broadcast to its sizes.
    Reentry again(this);
    if (value.dtype() != target.dtype()) value = value.to(target.dtype());
    if (value.sym_sizes() != target.sym_sizes()) value = expand_symint(value, target.sym_sizes());
  }
  target.impl()->bump_version();
  StorageState& s = storage_state(target);
  std::erase_if(s.proxies, [](const std::weak_ptr<TensorImpl>& p) { return p.expired(); });
  const bool aliased = std::any_of(s.proxies.begin(), s.proxies.end(),
                                   [&](const auto& p) { return p.lock().get() != target.impl(); });
  const int64_t numel = static_cast<int64_t>(s.storage->nbytes() / itemsize(target.dtype()));
  // A tensor's value always has the tensor's own layout (the ops recorded on it chose views and
  // strides by it).
  if (!s.flat_mode && !aliased && covers_storage(target, numel)) {
    // Nothing else sees this storage: the tensor simply holds the new value, laid out as it is.
    Tensor laid_out;
    {
      Reentry again(this);
      laid_out = match_layout(value, target);
      // The value then stands for the whole storage: what reads the storage directly (as_strided,
      // as autograd's CopySlices does on a gradient; views re-derived by geometry) must find each
      // element at the target's positions. A view into another storage (a slice of a tangent,
      // an expanded scalar) has other positions: copy it first.
      const int64_t value_numel =
          static_cast<int64_t>(laid_out.storage()->nbytes() / itemsize(laid_out.dtype()));
      if (!covers_storage(laid_out, value_numel)) laid_out = match_layout(laid_out.clone(), target);
    }
    const graph::Value v = value_of(laid_out);
    ++s.version;
    set_value(target, v);
    return;
  }
  KILN_CHECK(!target.impl()->has_symbolic_sizes_strides(),
             "aot: a write into a tensor of symbolic sizes {} that shares its storage with other "
             "tensors (its storage would need a symbolic size)",
             graph::ValueMeta::of(target).str());
  {
    Reentry again(this);
    if (!s.flat_mode) {
      // The storage's content so far: what each live tensor on it holds (nothing else can be
      // read), scattered into a flat buffer.
      // (The live tensors are listed first: the ops below add views of them to s.proxies.)
      std::vector<Tensor> live;
      for (const auto& p : s.proxies) {
        if (auto impl = p.lock()) live.emplace_back(std::move(impl));
      }
      Tensor flat = zeros({numel}, TensorOptions(target.dtype()).device(target.device()));
      for (const Tensor& t : live) {
        flat = index_put(flat, {storage_positions(t, numel)}, t.reshape({-1}));
      }
      s.flat = flat;
      s.flat_mode = true;
    }
    s.flat = index_put(s.flat, {storage_positions(target, numel)}, value.reshape({-1}));
  }
  // The target, like every tensor on the storage, is re-derived from the flat content when read.
  ++s.version;
}

std::vector<Tensor> GraphTracer::trace_functional(const ops::OpDef& op, ops::Stack& args) {
  if (options_.decompose && !decomp::is_prim(op) && op.decomposition) {
    graph::MetaTwins twins;
    ops::Stack meta_args = twins.twin_args(op.schema, args);
    const std::vector<Tensor> metas = ops::call_kernel(op, meta_args);
    Reentry again(this);
    std::vector<Tensor> results = op.decomposition(args);
    for (size_t i = 0; i < results.size() && i < metas.size(); ++i) {
      results[i] = match_layout(results[i], metas[i]);
    }
    return results;
  }
  return record(op, args);
}

std::vector<Tensor> GraphTracer::dispatch(const ops::OpDef& op, ops::Stack& args) {
  static const ops::OpDef& copy = ops::OpRegistry::instance().get("copy_");
  if (op.kind == ops::OpKind::Composite) {
    ops::DispatchModeGuard again(this);
    return op.composite(args);
  }
  switch (op.variant) {
    case ops::Variant::InPlace: {
      const Tensor self = args[0].to_tensor();
      std::vector<Tensor> result = trace_functional(*op.functional, args);
      write(self, result.at(0));
      return {self};
    }
    case ops::Variant::Out: {
      const size_t nout = op.schema.returns.size();
      ops::Stack fargs(args.begin(), args.end() - static_cast<std::ptrdiff_t>(nout));
      std::vector<Tensor> result = trace_functional(*op.functional, fargs);
      std::vector<Tensor> outs;
      for (size_t i = 0; i < nout; ++i) {
        const Tensor out = args[args.size() - nout + i].to_tensor();
        const Tensor& r = result.at(i);
        if (out.sym_sizes() != r.sym_sizes()) {
          // out= resizes its output: it becomes a new tensor of the result's geometry.
          out.impl()->set_storage(std::make_shared<StorageImpl>(
              static_cast<size_t>(r.numel()) * itemsize(out.dtype()), out.device()));
          const SymDimVector strides = contiguous_strides(r.sym_sizes());
          out.impl()->set_sizes_and_strides(r.sym_sizes(), strides, SymInt(0));
          track(out, graph::Value{});
        }
        write(out, r);
        outs.push_back(out);
      }
      return outs;
    }
    case ops::Variant::Functional:
      break;
  }
  if (&op == &copy) {
    const Tensor self = args[0].to_tensor();
    write(self, args[1].to_tensor());
    return {self};
  }
  const bool writes_argument = std::any_of(op.schema.arguments.begin(), op.schema.arguments.end(),
                                           [](const ops::Argument& a) { return a.is_mutable; });
  if (writes_argument) {
    // A declared functional counterpart ("_<name>_functional": the op's outputs, then the new
    // values of the arguments it writes) keeps the op's own kernel; decomposing, or without one,
    // the op's decomposition runs (it writes with copy_).
    const ops::OpDef* counterpart =
        options_.decompose ? nullptr
                           : ops::OpRegistry::instance().find("_" + op.schema.name + "_functional");
    if (counterpart != nullptr) {
      std::vector<Tensor> results = trace_functional(*counterpart, args);
      const size_t returns = op.schema.returns.size();
      size_t next = returns;
      for (size_t i = 0; i < op.schema.arguments.size() && i < args.size(); ++i) {
        if (!op.schema.arguments[i].is_mutable) continue;
        const Tensor& written = results.at(next++);
        if (args[i].is_tensor() && args[i].to_tensor().defined()) {
          write(args[i].to_tensor(), written);
        }
      }
      results.resize(returns);
      return results;
    }
    KILN_CHECK(static_cast<bool>(op.decomposition),
               "aot: {} writes its argument in place and has no decomposition to functionalize it "
               "with",
               op.full_name());
    Reentry again(this);
    return op.decomposition(args);
  }
  return trace_functional(op, args);
}

}  // namespace kiln::aot
