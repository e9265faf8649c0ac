#pragma once
// The op registry (DESIGN.md §2): every op is declared once, and every layer reads that
// declaration — the schema, the meta function (output sizes/strides/dtype from metadata alone),
// eager kernels per device, and the slots that autograd, decompositions and the inductor fill.
//
// An op is one of four kinds:
//   Structured: meta + per-device impl writing into outputs the dispatcher allocates. In-place
//               ("add_") and out= ("add.out") variants are derived from the functional op.
//   View:       meta computes each output's sizes/strides/offset; outputs alias input 0's storage.
//   Composite:  written in other kiln ops; runs on any device (meta too).
//   Custom:     a per-device function that makes its own outputs (data-dependent shapes).
#include <kiln/core/source_location.h>
#include <kiln/ops/ivalue.h>
#include <kiln/ops/schema.h>

#include <any>
#include <array>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ops {

// What a meta function produces for one output.
struct TensorMeta {
  SymDimVector sizes;
  SymDimVector strides;
  SymInt storage_offset = 0;
  DType dtype = DType::Float32;
  Device device = Device::cpu();

  static TensorMeta contiguous(SymDimVector sizes, DType dtype, Device device);
};

enum class OpKind { Structured, View, Composite, Custom };
enum class Variant { Functional, InPlace, Out };

// One sample input for the op-info tests: arguments for a boxed call, and what it exercises.
struct Sample {
  Stack args;
  std::string description;
  // False for a sample placed on a non-smooth point on purpose (ties, a kink): the forward is
  // checked there, but finite differences cannot check a (sub)gradient convention.
  bool differentiable_point = true;
};

struct BackwardArgs {
  const Stack& inputs;
  const std::vector<Tensor>& outputs;
  const std::vector<Tensor>& grad_outputs;
  // The i-th argument, a tensor.
  const Tensor& input(size_t i) const { return inputs[i].to_tensor(); }
  // Which grad_outputs flowed from the graph (the others are zeros the engine made): formulas may
  // skip terms for outputs nobody used (statistics outputs of the norm ops). Null: all flowed.
  const std::vector<bool>* grad_flowed = nullptr;
  bool flowed(size_t i) const { return grad_flowed == nullptr || (*grad_flowed)[i]; }
  // One flag per tensor argument, flattened as the returned gradients: whether that gradient is
  // wanted (PyTorch's output_mask). A formula may return an undefined tensor where it is not,
  // skipping the work (a first layer's input gradient, a loss target's). Absent: all wanted.
  const std::vector<bool>* needs_grad_mask = nullptr;
  bool needs_grad(size_t i) const { return needs_grad_mask == nullptr || (*needs_grad_mask)[i]; }
};

using MetaFn = std::function<std::vector<TensorMeta>(const Stack& args)>;
using ImplFn = std::function<void(const Stack& args, const std::vector<Tensor>& outputs)>;
using CompositeFn = std::function<std::vector<Tensor>(const Stack& args)>;
using CustomFn = std::function<std::vector<Tensor>(const Stack& args)>;
using SampleFn = std::function<std::vector<Sample>()>;
// One gradient per tensor argument, list elements flattened and None arguments included
// (undefined where none flows), written in kiln ops. A gradient may keep broadcast dims: the
// engine sums it back to its input's shape and casts it to the input's dtype.
using DerivativeFn = std::function<std::vector<Tensor>(const BackwardArgs&)>;
// Which values a derivative formula reads beyond sizes and dtypes: only those are checked against
// later in-place changes (PyTorch's "modified by an inplace operation" error), and outputs are
// kept for backward only when read.
enum class DerivativeReads : uint8_t { Nothing = 0, Inputs = 1, Outputs = 2, InputsAndOutputs = 3 };
// The op written in other ops (prims, for the decomposition layer). An op with no derivative
// formula but a decomposition is differentiated through it (autograd records the decomposition).
using DecompositionFn = std::function<std::vector<Tensor>(const Stack& args)>;

struct OpDef {
  Schema schema;
  OpKind kind = OpKind::Structured;
  Variant variant = Variant::Functional;
  MetaFn meta;
  std::array<ImplFn, kNumDeviceTypes> impl;
  std::array<CustomFn, kNumDeviceTypes> custom;
  CompositeFn composite;
  SampleFn samples;
  DerivativeFn derivative;
  DerivativeReads derivative_reads = DerivativeReads::Inputs;
  // Which outputs the formula reads when it reads outputs (bit i: output i); the others are not
  // kept, so that an in-place op on them (relu_ after batch_norm) is no error.
  uint32_t derivative_output_mask = ~0u;
  DecompositionFn decomposition;
  std::any lowering;           // the inductor's lowering for prims; its type is the inductor's own
  bool is_random = false;      // draws from the Philox generator
  bool differentiable = true;  // false for ops whose outputs carry no gradient (comparisons)
  double sample_rtol = 1e-5;   // tolerances for the op-info tests (float32)
  double sample_atol = 1e-6;
  const OpDef* functional = nullptr;  // for in-place/out variants: the functional op
  const OpDef* inplace = nullptr;     // for functional ops with an in-place variant
  const OpDef* out = nullptr;         // for functional ops with an out= variant

  const std::string& name() const { return schema.name; }
  std::string full_name() const { return schema.full_name(); }
  bool has_kernel(DeviceType d) const;
};

class OpRegistry {
 public:
  static OpRegistry& instance();
  // Registers def under its full name; raises kiln::Error on a duplicate.
  const OpDef& add(OpDef def);
  // Looks an op up by full name ("add", "add_", "add.out"); raises kiln::Error if absent.
  const OpDef& get(std::string_view full_name) const;
  const OpDef* find(std::string_view full_name) const;
  // Every registered op, in name order.
  std::vector<const OpDef*> all() const;
  // A mutable definition, for layers that fill slots (derivative, decomposition, lowering) after
  // the op's own declaration. Call only during static initialization or single-threaded setup.
  OpDef& mutable_def(std::string_view full_name);

 private:
  OpRegistry() = default;
  struct Impl;
  std::shared_ptr<Impl> impl_;
  Impl& state() const;
};

// OpRegistry::instance().get(full_name): the op a composite or a decomposition calls by name.
inline const OpDef& op_named(std::string_view full_name) {
  return OpRegistry::instance().get(full_name);
}

// The fluent declaration:
//   KILN_OP("add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
//       .meta(binary_meta).cpu(add_impl).inplace_variant().out_variant().samples(...);
// registers the op (and its variants) when the statement completes.
class OpBuilder {
 public:
  explicit OpBuilder(std::string_view schema);

  OpBuilder&& meta(MetaFn fn) &&;
  OpBuilder&& impl(DeviceType device, ImplFn fn) &&;
  OpBuilder&& cpu(ImplFn fn) && { return std::move(*this).impl(DeviceType::CPU, std::move(fn)); }
  OpBuilder&& view(MetaFn fn) &&;
  OpBuilder&& composite(CompositeFn fn) &&;
  OpBuilder&& custom(DeviceType device, CustomFn fn) &&;
  // Also register "name_" (in place on the first argument) and/or "name.out".
  OpBuilder&& inplace_variant() &&;
  OpBuilder&& out_variant() &&;
  OpBuilder&& samples(SampleFn fn) &&;
  OpBuilder&& random() &&;
  OpBuilder&& not_differentiable() &&;
  OpBuilder&& tolerance(double rtol, double atol) &&;
  OpBuilder&& derivative(DerivativeFn fn, DerivativeReads reads = DerivativeReads::Inputs) &&;
  // The same, reading only the listed outputs (the others appear undefined in BackwardArgs).
  OpBuilder&& derivative(DerivativeFn fn, DerivativeReads reads,
                         std::initializer_list<int> outputs_read) &&;
  OpBuilder&& decomposition(DecompositionFn fn) &&;

  // Validates the declaration and adds it (and its variants) to the registry.
  const OpDef& finish() &&;

 private:
  OpDef def_;
  bool with_inplace_ = false;
  bool with_out_ = false;
};

// Registers a finished builder; the target of KILN_OP's assignment.
struct OpRegistration {
  OpRegistration(OpBuilder&& b) : def(&std::move(b).finish()) {}  // NOLINT: implicit by design
  const OpDef* def;
};
inline const OpDef& declare(OpBuilder&& b) { return std::move(b).finish(); }

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)
// Declares one op at namespace scope (in a .cpp file).
#define KILN_OP(schema)                                                                          \
  [[maybe_unused]] static const ::kiln::ops::OpRegistration KILN_CONCAT(kiln_op_, __COUNTER__) = \
      ::kiln::ops::OpBuilder(schema)
// Runs a block of op declarations (loops over op families) during static initialization.
#define KILN_REGISTER_OPS(name)                                                               \
  static void kiln_register_##name();                                                         \
  [[maybe_unused]] static const bool kiln_registered_##name = (kiln_register_##name(), true); \
  static void kiln_register_##name()

// ---- calling ops ----

// Intercepts every op call on this thread while installed (capture's tracer, test recorders).
class DispatchMode {
 public:
  virtual ~DispatchMode() = default;
  virtual std::vector<Tensor> dispatch(const OpDef& op, Stack& args) = 0;
  // True for modes that stand in for computation (capture's tracer): the autograd hook does not
  // run for ops they intercept, whatever the grad mode, which they record themselves.
  virtual bool replaces_autograd() const { return false; }
};

// Installs a mode for the guard's lifetime; the mode itself may call ops, which bypass it.
class DispatchModeGuard {
 public:
  explicit DispatchModeGuard(DispatchMode* mode);
  ~DispatchModeGuard();
  DispatchModeGuard(const DispatchModeGuard&) = delete;
  DispatchModeGuard& operator=(const DispatchModeGuard&) = delete;

 private:
  DispatchMode* previous_;
};

// The autograd layer installs one hook, called for ops with a tensor argument that requires grad
// while grad mode is on; it runs the op below autograd via call_below_autograd and records the
// backward node.
using AutogradHook = std::vector<Tensor> (*)(const OpDef& op, Stack& args);
void set_autograd_hook(AutogradHook hook);
// Asked by the dispatcher before running the autograd hook (grad mode, set by that layer).
using GradModeQuery = bool (*)();
void set_grad_mode_query(GradModeQuery query);

// Autocast (kiln/amp/autocast.h) installs one hook, called for every op call on a thread while
// autocast is active there, before the autograd hook: it casts the op's tensor arguments in place
// as the op's autocast policy says and returns whether the op has a policy (the op then runs with
// autocast inactive, so that the ops inside it are not cast again).
using AutocastHook = bool (*)(const OpDef& op, Stack& args);
void set_autocast_hook(AutocastHook hook);
// Whether autocast is active on this thread (set by kiln/amp/autocast.h's guards).
bool autocast_active();
void set_autocast_active(bool active);

// Calls an op: checks and completes args from the schema, then routes through the mode, the
// autograd hook and the kernel for the arguments' device. `site` is the user's call site (the
// typed API's defaulted kiln::SourceLocation parameter); it becomes current_call_site() for the
// call unless an enclosing op call already set one (a composite's inner calls keep the user's).
std::vector<Tensor> call(const OpDef& op, Stack args, const kiln::SourceLocation* site = nullptr);
// The user's call site of the outermost op call in progress on this thread, or null. Capture
// stores it on graph nodes and names it in graph-break errors.
const kiln::SourceLocation* current_call_site();

// Makes `site` the thread's call site for the scope's lifetime unless an enclosing scope (or op
// call) already set one: the outermost site wins. Typed wrappers that run several ops, or code
// that is no op call itself but may stop a capture (Tensor::item), open one with the user's
// location so every op inside reports the user's line. Null sets nothing.
class CallSiteScope {
 public:
  explicit CallSiteScope(const kiln::SourceLocation* site) noexcept;
  ~CallSiteScope();
  CallSiteScope(const CallSiteScope&) = delete;
  CallSiteScope& operator=(const CallSiteScope&) = delete;

 private:
  bool set_;
};
// A site that names no location: passed to an op call (or held by a CallSiteScope) it is set like
// any site, so the ops inside record no site of their own, but current_call_site() reports null.
// The Tensor operators (+, *, ==, ...), which cannot take a defaulted source_location parameter,
// pass it so that kiln's own line is never reported.
const kiln::SourceLocation* no_call_site();
// call() without normalization or the mode/autograd layers: straight to kernels.
std::vector<Tensor> call_kernel(const OpDef& op, Stack& args);
// Calls below the autograd hook (what the hook itself uses), still honouring a dispatch mode.
std::vector<Tensor> call_below_autograd(const OpDef& op, Stack& args);

// Convenience for typed wrappers: `return call1(op, {a, b, alpha});`
inline Tensor call1(const OpDef& op, Stack args, const kiln::SourceLocation* site = nullptr) {
  return call(op, std::move(args), site)[0];
}

// Allocates an uninitialized tensor with the given geometry (the structured ops' outputs).
Tensor empty_from_meta(const TensorMeta& meta);
// Resizes `out` for an out= call: reallocates if its storage is too small (PyTorch's resize_).
void resize_output(const Tensor& out, const TensorMeta& meta, const char* op);

}  // namespace kiln::ops
