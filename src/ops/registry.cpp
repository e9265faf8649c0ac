#include <kiln/ops/registry.h>

#include "ops/current_dispatch_mode.h"
#include "ops/sizes_str.h"

#include <map>
#include <mutex>

namespace kiln::ops {

// ---------------------------------------------------------------- TensorMeta, allocation

TensorMeta TensorMeta::contiguous(SymDimVector sizes, DType dtype, Device device) {
  TensorMeta m;
  m.strides = contiguous_strides(SymIntList(sizes));
  m.sizes = std::move(sizes);
  m.dtype = dtype;
  m.device = device;
  return m;
}

namespace {
// Elements the storage must hold for this geometry (0 when unknown because symbolic).
int64_t required_elements(const TensorMeta& m) {
  int64_t extent = 1;
  for (size_t i = 0; i < m.sizes.size(); ++i) {
    auto size = m.sizes[i].maybe_int();
    auto stride = m.strides[i].maybe_int();
    if (!size || !stride) return 0;
    if (*size == 0) return 0;
    extent += (*size - 1) * *stride;
  }
  auto off = m.storage_offset.maybe_int();
  return extent + off.value_or(0);
}
}  // namespace

Tensor empty_from_meta(const TensorMeta& meta) {
  int64_t n = required_elements(meta);
  Storage storage = make_storage(static_cast<size_t>(n) * itemsize(meta.dtype), meta.device);
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), meta.dtype, meta.sizes,
                                             meta.strides, meta.storage_offset));
}

void resize_output(const Tensor& out, const TensorMeta& meta, const char* op) {
  KILN_CHECK(out.device() == meta.device, "{}: out= tensor is on {}, expected {}", op,
             out.device().str(), meta.device.str());
  if (SymIntList(meta.sizes) == out.sym_sizes()) return;
  // PyTorch's resize_: keep the storage if it is large enough, else reallocate; strides become
  // contiguous.
  TensorMeta m = TensorMeta::contiguous(meta.sizes, out.dtype(), out.device());
  int64_t need = required_elements(m);
  TensorImpl* impl = out.impl();
  size_t need_bytes = static_cast<size_t>(need + out.storage_offset()) * out.itemsize();
  if (need_bytes > impl->storage()->nbytes()) {
    impl->set_storage(make_storage(need_bytes, out.device()));
  }
  impl->set_sizes_and_strides(m.sizes, m.strides, impl->sym_storage_offset());
}

// ---------------------------------------------------------------- registry

struct OpRegistry::Impl {
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops;
};

OpRegistry& OpRegistry::instance() {
  static OpRegistry registry;
  return registry;
}

OpRegistry::Impl& OpRegistry::state() const {
  static Impl impl;
  return impl;
}

const OpDef& OpRegistry::add(OpDef def) {
  std::string key = def.full_name();
  auto& ops = state().ops;
  KILN_CHECK(ops.find(key) == ops.end(), "op registry: '{}' is declared twice", key);
  auto owned = std::make_unique<OpDef>(std::move(def));
  const OpDef& ref = *owned;
  ops.emplace(std::move(key), std::move(owned));
  return ref;
}

const OpDef* OpRegistry::find(std::string_view full_name) const {
  auto& ops = state().ops;
  auto it = ops.find(full_name);
  return it == ops.end() ? nullptr : it->second.get();
}

const OpDef& OpRegistry::get(std::string_view full_name) const {
  const OpDef* op = find(full_name);
  KILN_CHECK(op != nullptr, "op registry: no op named '{}'", full_name);
  return *op;
}

OpDef& OpRegistry::mutable_def(std::string_view full_name) {
  auto& ops = state().ops;
  auto it = ops.find(full_name);
  KILN_CHECK(it != ops.end(), "op registry: no op named '{}'", full_name);
  return *it->second;
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> out;
  for (const auto& [name, op] : state().ops) out.push_back(op.get());
  return out;
}

bool OpDef::has_kernel(DeviceType d) const {
  switch (kind) {
    case OpKind::Composite:
    case OpKind::View:
      return true;
    case OpKind::Custom:
      return static_cast<bool>(custom[static_cast<size_t>(d)]);
    case OpKind::Structured: {
      const OpDef& f = functional ? *functional : *this;
      return d == DeviceType::Meta || static_cast<bool>(f.impl[static_cast<size_t>(d)]);
    }
  }
  return false;
}

// ---------------------------------------------------------------- builder

OpBuilder::OpBuilder(std::string_view schema) { def_.schema = parse_schema(schema); }

OpBuilder&& OpBuilder::meta(MetaFn fn) && {
  def_.meta = std::move(fn);
  return std::move(*this);
}
OpBuilder&& OpBuilder::impl(DeviceType device, ImplFn fn) && {
  def_.impl[static_cast<size_t>(device)] = std::move(fn);
  return std::move(*this);
}
OpBuilder&& OpBuilder::view(MetaFn fn) && {
  def_.kind = OpKind::View;
  def_.meta = std::move(fn);
  return std::move(*this);
}
OpBuilder&& OpBuilder::composite(CompositeFn fn) && {
  def_.kind = OpKind::Composite;
  def_.composite = std::move(fn);
  return std::move(*this);
}
OpBuilder&& OpBuilder::custom(DeviceType device, CustomFn fn) && {
  def_.kind = OpKind::Custom;
  def_.custom[static_cast<size_t>(device)] = std::move(fn);
  return std::move(*this);
}
OpBuilder&& OpBuilder::inplace_variant() && {
  with_inplace_ = true;
  return std::move(*this);
}
OpBuilder&& OpBuilder::out_variant() && {
  with_out_ = true;
  return std::move(*this);
}
OpBuilder&& OpBuilder::samples(SampleFn fn) && {
  def_.samples = std::move(fn);
  return std::move(*this);
}
OpBuilder&& OpBuilder::random() && {
  def_.is_random = true;
  return std::move(*this);
}
OpBuilder&& OpBuilder::not_differentiable() && {
  def_.differentiable = false;
  return std::move(*this);
}
OpBuilder&& OpBuilder::tolerance(double rtol, double atol) && {
  def_.sample_rtol = rtol;
  def_.sample_atol = atol;
  return std::move(*this);
}
OpBuilder&& OpBuilder::derivative(DerivativeFn fn, DerivativeReads reads) && {
  def_.derivative = std::move(fn);
  def_.derivative_reads = reads;
  return std::move(*this);
}
OpBuilder&& OpBuilder::derivative(DerivativeFn fn, DerivativeReads reads,
                                  std::initializer_list<int> outputs_read) && {
  def_.derivative_output_mask = 0;
  for (int i : outputs_read) {
    KILN_CHECK(i >= 0 && i < 32, "{}: derivative output index {} out of range", def_.schema.name,
               i);
    def_.derivative_output_mask |= 1u << i;
  }
  return std::move(*this).derivative(std::move(fn), reads);
}
OpBuilder&& OpBuilder::decomposition(DecompositionFn fn) && {
  def_.decomposition = std::move(fn);
  return std::move(*this);
}

const OpDef& OpBuilder::finish() && {
  const std::string name = def_.full_name();
  switch (def_.kind) {
    case OpKind::Structured:
      KILN_CHECK(def_.meta, "op '{}': a structured op needs a meta function", name);
      break;
    case OpKind::View:
      KILN_CHECK(def_.meta, "op '{}': a view op needs a meta function", name);
      break;
    case OpKind::Composite:
      break;
    case OpKind::Custom:
      break;
  }
  KILN_CHECK(!((with_inplace_ || with_out_) && def_.kind != OpKind::Structured),
             "op '{}': in-place and out= variants are derived only for structured ops", name);
  KILN_CHECK(!def_.schema.arguments.empty() || !with_inplace_,
             "op '{}': an in-place variant needs a first argument", name);

  Schema base = def_.schema;
  OpRegistry& reg = OpRegistry::instance();
  OpDef& functional = const_cast<OpDef&>(reg.add(std::move(def_)));

  if (with_inplace_) {
    OpDef d;
    d.schema = base;
    d.schema.name = base.name + "_";
    d.schema.arguments[0].is_mutable = true;
    d.schema.arguments[0].alias_set = "a";
    d.schema.returns = {d.schema.arguments[0]};
    d.schema.returns[0].name.clear();
    d.variant = Variant::InPlace;
    d.kind = OpKind::Structured;
    d.functional = &functional;
    d.differentiable = functional.differentiable;
    d.is_random = functional.is_random;
    d.sample_rtol = functional.sample_rtol;
    d.sample_atol = functional.sample_atol;
    functional.inplace = &reg.add(std::move(d));
  }
  if (with_out_) {
    OpDef d;
    d.schema = base;
    // aten's naming: "add.out", and "<overload>_out" for an overloaded op ("scatter.src_out").
    d.schema.overload = base.overload.empty() ? "out" : base.overload + "_out";
    size_t nret = base.returns.size();
    d.schema.returns.clear();
    for (size_t i = 0; i < nret; ++i) {
      Argument out;
      out.name = nret == 1 ? "out" : "out" + std::to_string(i);
      out.type = ArgType::Tensor;
      out.type_str = "Tensor";
      out.kwarg_only = true;
      out.is_mutable = true;
      out.alias_set = std::string(1, static_cast<char>('a' + i));
      d.schema.arguments.push_back(out);
      Argument ret = out;
      ret.name.clear();
      d.schema.returns.push_back(ret);
    }
    d.variant = Variant::Out;
    d.kind = OpKind::Structured;
    d.functional = &functional;
    d.differentiable = false;
    d.is_random = functional.is_random;
    functional.out = &reg.add(std::move(d));
  }
  return functional;
}

// ---------------------------------------------------------------- dispatch

namespace {
thread_local DispatchMode* tls_mode = nullptr;
thread_local bool tls_autocast_active = false;
std::atomic<AutocastHook> autocast_hook{nullptr};
std::atomic<AutogradHook> autograd_hook{nullptr};
std::atomic<GradModeQuery> grad_mode_query{nullptr};

Device dispatch_device(const OpDef& op, const Stack& args) {
  // The first tensor that is not a CPU scalar decides (a 0-dim CPU tensor may accompany tensors on
  // any device, as in PyTorch); else a Device argument; else the CPU.
  std::optional<Device> found;
  for (const IValue& v : args) {
    if (v.is_tensor()) {
      const Tensor& t = v.to_tensor();
      if (!t.defined()) continue;
      if (!found || (found->is_cpu() && !t.device().is_cpu())) found = t.device();
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined() && (!found || (found->is_cpu() && !t.device().is_cpu())))
          found = t.device();
      }
    }
  }
  if (found) return *found;
  for (const IValue& v : args) {
    if (std::holds_alternative<Device>(v.variant())) return v.to_device();
  }
  (void)op;
  return Device::cpu();
}

bool any_requires_grad(const Stack& args) {
  for (const IValue& v : args) {
    if (v.is_tensor()) {
      const Tensor& t = v.to_tensor();
      if (t.defined() && t.requires_grad()) return true;
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined() && t.requires_grad()) return true;
      }
    }
  }
  return false;
}

const ImplFn& structured_impl(const OpDef& f, Device device, const OpDef& called) {
  const ImplFn& impl = f.impl[static_cast<size_t>(device.type())];
  KILN_CHECK(static_cast<bool>(impl), "{}: no kernel for device {}", called.full_name(),
             device.str());
  return impl;
}

std::vector<Tensor> run_structured(const OpDef& op, Stack& args) {
  if (op.variant == Variant::Functional) {
    std::vector<TensorMeta> metas = op.meta(args);
    std::vector<Tensor> outs;
    outs.reserve(metas.size());
    for (const TensorMeta& m : metas) outs.push_back(empty_from_meta(m));
    Device device = metas.empty() ? dispatch_device(op, args) : metas[0].device;
    if (device.is_meta()) return outs;
    structured_impl(op, device, op)(args, outs);
    return outs;
  }
  const OpDef& f = *op.functional;
  if (op.variant == Variant::InPlace) {
    const Tensor& self = args[0].to_tensor();
    std::vector<TensorMeta> metas = f.meta(args);
    KILN_CHECK(SymIntList(metas[0].sizes) == self.sym_sizes(),
               "{}: output with shape {} doesn't match the broadcast shape {}", op.full_name(),
               sizes_str(self.sym_sizes()), sizes_str(metas[0].sizes));
    KILN_CHECK_T(TypeError, can_cast(metas[0].dtype, self.dtype()),
                 "{}: result type {} can't be cast to the desired output type {}", op.full_name(),
                 dtype_name(metas[0].dtype), dtype_name(self.dtype()));
    std::vector<Tensor> outs{self};
    if (!self.device().is_meta()) structured_impl(f, self.device(), op)(args, outs);
    self.impl()->bump_version();
    return outs;
  }
  // out= variant: the trailing arguments are the outputs.
  size_t nout = op.schema.returns.size();
  std::vector<Tensor> outs;
  for (size_t i = args.size() - nout; i < args.size(); ++i) outs.push_back(args[i].to_tensor());
  Stack fargs(args.begin(), args.end() - static_cast<std::ptrdiff_t>(nout));
  std::vector<TensorMeta> metas = f.meta(fargs);
  for (size_t i = 0; i < nout; ++i) {
    KILN_CHECK_T(TypeError, can_cast(metas[i].dtype, outs[i].dtype()),
                 "{}: result type {} can't be cast to the desired output type {}", op.full_name(),
                 dtype_name(metas[i].dtype), dtype_name(outs[i].dtype()));
    resize_output(outs[i], metas[i], op.full_name().c_str());
  }
  Device device = outs.empty() ? Device::cpu() : outs[0].device();
  if (!device.is_meta()) structured_impl(f, device, op)(fargs, outs);
  for (const Tensor& o : outs) o.impl()->bump_version();
  return outs;
}

std::vector<Tensor> run_view(const OpDef& op, Stack& args) {
  std::vector<TensorMeta> metas = op.meta(args);
  const Tensor& base = args[0].to_tensor();
  std::vector<Tensor> outs;
  outs.reserve(metas.size());
  const std::shared_ptr<TensorImpl>& root =
      base.impl()->view_base() ? base.impl()->view_base() : base.impl_ptr();
  for (const TensorMeta& m : metas) {
    auto impl =
        std::make_shared<TensorImpl>(base.storage(), m.dtype, m.sizes, m.strides, m.storage_offset);
    impl->set_view_base(root);
    outs.emplace_back(std::move(impl));
  }
  return outs;
}

}  // namespace

DispatchModeGuard::DispatchModeGuard(DispatchMode* mode) : previous_(tls_mode) { tls_mode = mode; }
DispatchMode* current_dispatch_mode() { return tls_mode; }
DispatchModeGuard::~DispatchModeGuard() { tls_mode = previous_; }

void set_autograd_hook(AutogradHook hook) { autograd_hook.store(hook); }
void set_grad_mode_query(GradModeQuery query) { grad_mode_query.store(query); }

std::vector<Tensor> call_kernel(const OpDef& op, Stack& args) {
  switch (op.kind) {
    case OpKind::Composite:
      return op.composite(args);
    case OpKind::View:
      return run_view(op, args);
    case OpKind::Custom: {
      Device device = dispatch_device(op, args);
      const CustomFn& fn = op.custom[static_cast<size_t>(device.type())];
      KILN_CHECK(static_cast<bool>(fn), "{}: no kernel for device {}", op.full_name(),
                 device.str());
      return fn(args);
    }
    case OpKind::Structured:
      return run_structured(op, args);
  }
  return {};
}

std::vector<Tensor> call_below_autograd(const OpDef& op, Stack& args) {
  if (DispatchMode* mode = tls_mode) {
    DispatchModeGuard outside(nullptr);  // ops the mode runs itself are not intercepted again
    return mode->dispatch(op, args);
  }
  return call_kernel(op, args);
}

namespace {
thread_local const kiln::SourceLocation* tls_call_site = nullptr;
// The address is the marker; the value is never read.
const kiln::SourceLocation kNoCallSite{};

// The scope's logic, inline here so that call() pays no function call for it.
inline bool enter_call_site(const kiln::SourceLocation* site) noexcept {
  if (site == nullptr || tls_call_site != nullptr) return false;
  tls_call_site = site;
  return true;
}

class InlineCallSiteScope {
 public:
  explicit InlineCallSiteScope(const kiln::SourceLocation* site) noexcept
      : set_(enter_call_site(site)) {}
  ~InlineCallSiteScope() {
    if (set_) tls_call_site = nullptr;
  }
  InlineCallSiteScope(const InlineCallSiteScope&) = delete;
  InlineCallSiteScope& operator=(const InlineCallSiteScope&) = delete;

 private:
  bool set_;
};
}  // namespace

CallSiteScope::CallSiteScope(const kiln::SourceLocation* site) noexcept
    : set_(enter_call_site(site)) {}
CallSiteScope::~CallSiteScope() {
  if (set_) tls_call_site = nullptr;
}

const kiln::SourceLocation* no_call_site() { return &kNoCallSite; }

const kiln::SourceLocation* current_call_site() {
  return tls_call_site == &kNoCallSite ? nullptr : tls_call_site;
}

void set_autocast_hook(AutocastHook hook) { autocast_hook.store(hook); }
bool autocast_active() { return tls_autocast_active; }
void set_autocast_active(bool active) { tls_autocast_active = active; }

namespace {
// Autocast inactive while an op it cast runs; restored afterwards (also on an exception).
class AutocastPause {
 public:
  AutocastPause() { tls_autocast_active = false; }
  ~AutocastPause() { tls_autocast_active = true; }
  AutocastPause(const AutocastPause&) = delete;
  AutocastPause& operator=(const AutocastPause&) = delete;
};
}  // namespace

std::vector<Tensor> call(const OpDef& op, Stack args, const kiln::SourceLocation* site) {
  InlineCallSiteScope scope(site);
  normalize_args(op.schema, args);
  if (tls_autocast_active) {
    AutocastHook cast = autocast_hook.load(std::memory_order_relaxed);
    if (cast != nullptr && cast(op, args)) {
      AutocastPause paused;
      return call(op, std::move(args), site);
    }
  }
  AutogradHook hook = autograd_hook.load(std::memory_order_relaxed);
  if (hook != nullptr && op.kind != OpKind::Composite &&
      (tls_mode == nullptr || !tls_mode->replaces_autograd())) {
    GradModeQuery q = grad_mode_query.load(std::memory_order_relaxed);
    if ((q == nullptr || q()) && any_requires_grad(args)) return hook(op, args);
  }
  return call_below_autograd(op, args);
}

}  // namespace kiln::ops
