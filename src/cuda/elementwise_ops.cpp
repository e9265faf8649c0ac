// The CUDA slots of elementwise ops: add/sub (with alpha), mul, div, maximum/minimum, fmod,
// remainder, the bitwise shifts, the comparisons, where, and unary math. The op's meta function
// already checked the arguments and the dispatcher allocated the output with the broadcast shape
// and result dtype; these kernels reproduce the CPU ops' type promotion: operands are converted to
// the dtype the CPU computes in (result_type of the operands; the default float for true division
// of integers), the kernel runs in it, and a different output dtype (an in-place or out= call) gets
// a converted copy.
#include "cuda/device_state.h"
#include "cuda/launch_args.h"
#include "cuda/register.h"
#include "inductor/generated_eager_kernel.h"

#include <kiln/core/error.h>
#include <kiln/cuda/cuda.h>
#include <kiln/ops/binary.h>

#include <string>

namespace kiln::cuda {
namespace {

using kernels::BinaryKind;
using kernels::UnaryKind;
using ops::Stack;
using Outs = std::vector<Tensor>;

void run_binary(BinaryKind kind, const char* name, const Tensor& a, const Tensor& b,
                const Tensor& out, DType compute, const Scalar& alpha) {
  const Device device = out.device();
  DeviceGuard guard(device.index());
  const Tensor x = as_input(a, device, compute, name);
  const Tensor y = as_input(b, device, compute, name);
  const DType kernel_out = kernels::is_comparison(kind) ? DType::Bool : compute;
  into_output(out, kernel_out, [&](const Tensor& o) {
    LaunchArgs l = launch_args(o, {x, y}, name);
    kernels::binary(kind, l.geometry, l.operands[0], l.operands[1], l.operands[2],
                    alpha.to<double>(), alpha.is_floating_point() ? 0 : alpha.to<int64_t>(),
                    stream_of(device.index()));
  });
}

Scalar negated(const Scalar& s) {
  if (s.is_floating_point()) return Scalar(-s.to<double>());
  if (s.is_bool()) return s;  // sub rejects bool operands before this
  return Scalar(-s.to<int64_t>());
}

void register_binary(const char* name, BinaryKind kind) {
  structured(name, [name, kind](const Stack& args, const Outs& out) {
    const Tensor& a = args[0].to_tensor();
    const Tensor& b = args[1].to_tensor();
    DType compute = result_type(a, b);
    Scalar alpha = 1;
    const std::string op = name;
    if (op == "add" || op == "sub") {
      alpha = args[2].to_scalar();
      if (op == "sub") alpha = negated(alpha);
    } else if (op == "div") {
      if (!args[2].is_none()) {
        // Rounding modes: a kernel generated from the div prim (generated_eager_kernel.h).
        static const ops::OpDef& div = ops::OpRegistry::instance().get("div");
        Tensor result = out[0];
        result.copy_(inductor::run_generated_kernel(div, args).at(0));
        return;
      }
      if (!is_floating_point(compute)) compute = default_float_dtype();
    } else if ((op == "fmod" || op == "remainder") && !is_floating_point(compute)) {
      // The CPU raises for an integer divisor of 0; the kernel cannot, so the host looks first
      // (one synchronization, for these integer ops only).
      const Tensor divisor = as_input(b, out[0].device(), compute, name);
      KILN_CHECK(!divisor.eq(0).any().item<bool>(), "ZeroDivisionError");
    }
    run_binary(kind, name, a, b, out[0], compute, alpha);
  });
}

void register_unary(const char* name, UnaryKind kind) {
  structured(name, [name, kind](const Stack& args, const Outs& out) {
    const Device device = out[0].device();
    DeviceGuard guard(device.index());
    // The output dtype is the one the CPU computes in (the meta's rule: floats for the math ops).
    const Tensor x = as_input(args[0].to_tensor(), device, out[0].dtype(), name);
    LaunchArgs l = launch_args(out[0], {x}, name);
    kernels::unary(kind, l.geometry, l.operands[0], l.operands[1], stream_of(device.index()));
  });
}

}  // namespace

KILN_CUDA_REGISTER(elementwise_ops) {
  register_binary("add", BinaryKind::Add);
  register_binary("sub", BinaryKind::Add);  // a - alpha * b is a + (-alpha) * b, as on the CPU
  register_binary("mul", BinaryKind::Mul);
  register_binary("div", BinaryKind::Div);
  register_binary("maximum", BinaryKind::Maximum);
  register_binary("minimum", BinaryKind::Minimum);
  register_binary("fmod", BinaryKind::Fmod);
  register_binary("remainder", BinaryKind::Remainder);
  register_binary("bitwise_left_shift", BinaryKind::ShiftLeft);
  register_binary("bitwise_right_shift", BinaryKind::ShiftRight);
  register_binary("eq", BinaryKind::Eq);
  register_binary("ne", BinaryKind::Ne);
  register_binary("lt", BinaryKind::Lt);
  register_binary("le", BinaryKind::Le);
  register_binary("gt", BinaryKind::Gt);
  register_binary("ge", BinaryKind::Ge);

  structured("where", [](const Stack& args, const Outs& out) {
    const Device device = out[0].device();
    DeviceGuard guard(device.index());
    const Tensor& self = args[1].to_tensor();
    const Tensor& other = args[2].to_tensor();
    const DType compute = result_type(self, other);
    const Tensor c = as_input(args[0].to_tensor(), device, DType::Bool, "where");
    const Tensor x = as_input(self, device, compute, "where");
    const Tensor y = as_input(other, device, compute, "where");
    into_output(out[0], compute, [&](const Tensor& o) {
      LaunchArgs l = launch_args(o, {c, x, y}, "where");
      kernels::where(l.geometry, l.operands[0], l.operands[1], l.operands[2], l.operands[3],
                     stream_of(device.index()));
    });
  });

  register_unary("neg", UnaryKind::Neg);
  register_unary("abs", UnaryKind::Abs);
  register_unary("exp", UnaryKind::Exp);
  register_unary("log", UnaryKind::Log);
  register_unary("sqrt", UnaryKind::Sqrt);
  register_unary("rsqrt", UnaryKind::Rsqrt);
  register_unary("sin", UnaryKind::Sin);
  register_unary("cos", UnaryKind::Cos);
  register_unary("tanh", UnaryKind::Tanh);
  register_unary("sigmoid", UnaryKind::Sigmoid);
  register_unary("relu", UnaryKind::Relu);
  register_unary("sign", UnaryKind::Sign);
  register_unary("erfinv", UnaryKind::Erfinv);

  structured("gelu", [](const Stack& args, const Outs& out) {
    const std::string approximate = args[1].to_string();
    KILN_CHECK(approximate == "none" || approximate == "tanh",
               "gelu: approximate must be 'none' or 'tanh', got '{}'", approximate);
    const Device device = out[0].device();
    DeviceGuard guard(device.index());
    const Tensor x = as_input(args[0].to_tensor(), device, out[0].dtype(), "gelu");
    LaunchArgs l = launch_args(out[0], {x}, "gelu");
    kernels::unary(approximate == "tanh" ? UnaryKind::GeluTanh : UnaryKind::GeluErf, l.geometry,
                   l.operands[0], l.operands[1], stream_of(device.index()));
  });
}

}  // namespace kiln::cuda
