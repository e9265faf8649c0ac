#include "ops/binary/elementwise_common.h"

namespace kiln::ops {
namespace {
// "add" from "add(Tensor self, ...)".
std::string b_name(const char* schema) {
  std::string s(schema);
  return s.substr(0, s.find_first_of(".("));
}
}  // namespace

TensorMeta elementwise_meta(std::initializer_list<Tensor> inputs, DType dtype, const char* op) {
  SymDimVector sizes;
  std::vector<Tensor> defined;
  std::optional<Device> device;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    sizes = broadcast_sym_shapes(sizes, t.sym_sizes(), op);
    defined.push_back(t);
    // A CPU 0-dim tensor (a scalar) may accompany tensors on another device.
    if (!device || (device->is_cpu() && t.dim() > 0)) device = t.device();
  }
  TensorMeta m;
  m.strides = layout_following_strides(sizes, defined);
  m.sizes = std::move(sizes);
  m.dtype = dtype;
  m.device = device.value_or(Device::cpu());
  return m;
}

TensorIterator elementwise_iter(const Tensor& out, std::initializer_list<Tensor> inputs,
                                DType compute, DType kernel_out, const char* op) {
  TensorIteratorConfig config;
  config.add_output(out);
  for (const Tensor& t : inputs) config.add_input(t);
  return config.compute_dtype(compute).output_dtype(kernel_out).op_name(op).build();
}

void run_binary(const BinaryPlan& plan, const Tensor& out, const char* op) {
  if (out.numel() == 0) return;
  DType kernel_out = returns_bool(plan.kind) ? DType::Bool : plan.compute;
  auto iter = elementwise_iter(out, {plan.a, plan.b}, plan.compute, kernel_out, op);
  binary_kernels(iter, plan.kind, plan.alpha);
}

void declare_binary(const BinaryDecl& decl) {
  OpBuilder b(decl.schema);
  const std::string name = b_name(decl.schema);
  PlanFn plan = decl.plan;
  std::move(b)
      .meta([plan, name](const Stack& args) {
        BinaryPlan p = plan(args);
        return std::vector<TensorMeta>{elementwise_meta({p.a, p.b}, p.result, name.c_str())};
      })
      .cpu([plan, name](const Stack& args, const std::vector<Tensor>& out) {
        run_binary(plan(args), out[0], name.c_str());
      })
      .samples(decl.samples);
  if (decl.inplace) std::move(b).inplace_variant();
  if (decl.out) std::move(b).out_variant();
  if (!decl.differentiable) std::move(b).not_differentiable();
  if (decl.derivative) std::move(b).derivative(decl.derivative, decl.derivative_reads);
  if (decl.decomposition) {
    std::move(b).decomposition([plan, decomposition = decl.decomposition](const Stack& args) {
      plan(args);  // the op's own dtype and value checks
      return decomposition(args);
    });
  }
  declare(std::move(b));
}

void unsupported(const char* op, DType dtype) {
  throw TypeError(fmt::format("{}: not supported for dtype {}", op, dtype_name(dtype)));
}

}  // namespace kiln::ops
